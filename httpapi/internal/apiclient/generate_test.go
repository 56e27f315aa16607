package apiclient

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestGeneratedClientFresh runs the package's go:generate command into a
// temporary file and fails unless it gives client.gen.go byte for byte: the
// committed client is what the committed document generates. The generator
// is fetched by go run at the pinned version (from the module cache or the
// Go proxy), so a fresh machine needs nothing installed.
func TestGeneratedClientFresh(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("skipped: no go command on PATH to run oapi-codegen with")
	}
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	for _, line := range strings.Split(string(src), "\n") {
		if rest, ok := strings.CutPrefix(line, "//go:generate go "); ok {
			args = strings.Fields(rest)
		}
	}
	out := filepath.Join(t.TempDir(), "client.gen.go")
	i := slices.Index(args, "-o")
	if i < 0 || i+1 >= len(args) {
		t.Fatalf("no -o in the go:generate line: %q", args)
	}
	args[i+1] = out
	cmd := exec.Command(goBin, args...)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, msg)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("client.gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("client.gen.go is stale: openapi.json generates another client; run go generate ./httpapi/... and commit")
	}
}
