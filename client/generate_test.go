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

// TestGeneratedFresh runs the package's in-tree generator (doc.go's second
// generate line) into a temporary directory and fails unless it gives
// operations.gen.go byte for byte. That file records the SHA-256 of the
// document both generated files came from, so a document changed without
// go generate fails here too. Running oapi-codegen as well would build it
// and its dependencies, half a minute of a cold go test ./... on a small
// machine; .ci/run regenerates both files and fails on any difference.
func TestGeneratedFresh(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("skipped: no go command on PATH to run the generator with")
	}
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	for _, line := range strings.Split(string(src), "\n") {
		if rest, ok := strings.CutPrefix(line, "//go:generate go run ./internal/gen "); ok {
			args = append([]string{"run", "./internal/gen"}, strings.Fields(rest)...)
		}
	}
	i := slices.Index(args, "-o")
	if i < 0 || i+1 >= len(args) || args[i+1] != "operations.gen.go" {
		t.Fatalf("no go:generate line running ./internal/gen -o operations.gen.go in doc.go: %q", args)
	}
	args[i+1] = filepath.Join(t.TempDir(), "operations.gen.go")
	if msg, err := exec.Command(goBin, args...).CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, msg)
	}
	got, err := os.ReadFile(args[i+1])
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("operations.gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("operations.gen.go is stale: httpapi/openapi.json generates another; run go generate ./client and commit both files")
	}
}
