package client_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/corebank/corebank/client"
	"github.com/corebank/corebank/httpapi"
)

// TestCoversDocument checks the client has a method for every operation
// of the document the server serves, and a Page twin for every list.
func TestCoversDocument(t *testing.T) {
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(httpapi.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, item := range doc.Paths {
		for method, raw := range item {
			if method == "parameters" {
				continue
			}
			var op struct {
				OperationID string `json:"operationId"`
			}
			if err := json.Unmarshal(raw, &op); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, strings.ToUpper(op.OperationID[:1])+op.OperationID[1:])
		}
	}
	slices.Sort(ids)
	if !slices.Equal(ids, client.Operations) {
		t.Fatalf("the client was generated from %d operations, the document has %d: run go generate ./client", len(client.Operations), len(ids))
	}
	typ := reflect.TypeFor[*client.Client]()
	lists := 0
	for _, id := range ids {
		m, ok := typ.MethodByName(id)
		if !ok {
			t.Errorf("no method %s", id)
			continue
		}
		if out := m.Type.Out(0); out.Kind() == reflect.Func { // an iter.Seq2
			lists++
			if _, ok := typ.MethodByName(id + "Page"); !ok {
				t.Errorf("no method %sPage beside the iterator %s", id, id)
			}
		}
	}
	t.Logf("%d operations, %d of them lists", len(ids), lists)
}

// TestGeneratedFresh runs the package's go:generate commands into a
// temporary directory and fails unless they give the committed files byte
// for byte. oapi-codegen is fetched by go run at the pinned version (from
// the module cache or the Go proxy), so a fresh machine needs nothing
// installed.
func TestGeneratedFresh(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("skipped: no go command on PATH to run the generators with")
	}
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	n := 0
	for _, line := range strings.Split(string(src), "\n") {
		rest, ok := strings.CutPrefix(line, "//go:generate go ")
		if !ok {
			continue
		}
		args := strings.Fields(rest)
		i := slices.Index(args, "-o")
		if i < 0 || i+1 >= len(args) {
			t.Fatalf("no -o in the go:generate line: %q", args)
		}
		name := args[i+1]
		args[i+1] = filepath.Join(dir, name)
		if msg, err := exec.Command(goBin, args...).CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, msg)
		}
		got, err := os.ReadFile(args[i+1])
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale: httpapi/openapi.json generates another; run go generate ./client and commit", name)
		}
		n++
	}
	if n != 2 {
		t.Fatalf("%d go:generate lines in doc.go, want 2", n)
	}
}
