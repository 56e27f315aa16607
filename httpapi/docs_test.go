package httpapi_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestDocsServed checks that GET /docs answers the committed docs.html
// without a key, as HTML that may load nothing and run no script, and that
// HEAD answers the headers alone.
func TestDocsServed(t *testing.T) {
	want, err := os.ReadFile("docs.html")
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t)
	r := e.must(200, "GET", "/docs", "", nil)
	if r.Raw != string(want) {
		t.Errorf("GET /docs: %d bytes, not docs.html's %d", len(r.Raw), len(want))
	}
	for name, want := range map[string]string{
		"Content-Type":           "text/html; charset=utf-8",
		"X-Content-Type-Options": "nosniff",
		"X-Frame-Options":        "DENY",
	} {
		if got := r.Header.Get(name); got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
	csp := r.Header.Get("Content-Security-Policy")
	for _, part := range []string{"default-src 'none'", "style-src 'sha256-", "frame-ancestors 'none'", "base-uri 'none'"} {
		if !strings.Contains(csp, part) {
			t.Errorf("Content-Security-Policy %q lacks %q", csp, part)
		}
	}
	if strings.Contains(csp, "script-src") || strings.Contains(r.Raw, "<script") || strings.Contains(r.Raw, ` src="`) {
		t.Errorf("the page may run a script or load something; Content-Security-Policy %q", csp)
	}

	h := e.must(200, "HEAD", "/docs", "", nil)
	if h.Raw != "" || h.Header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Errorf("HEAD /docs: %q, %d bytes", h.Header.Get("Content-Type"), len(h.Raw))
	}
}

// TestGeneratedDocsFresh runs docs.go's go:generate command into a
// temporary file and fails unless it gives docs.html byte for byte: the
// committed reference is what the committed openapi.json renders.
func TestGeneratedDocsFresh(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("skipped: no go command on PATH to run internal/docgen with")
	}
	src, err := os.ReadFile("docs.go")
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	for _, line := range strings.Split(string(src), "\n") {
		if rest, ok := strings.CutPrefix(line, "//go:generate go "); ok {
			args = strings.Fields(rest)
		}
	}
	out := filepath.Join(t.TempDir(), "docs.html")
	i := slices.Index(args, "-o")
	if i < 0 || i+1 >= len(args) {
		t.Fatalf("no -o in docs.go's go:generate line: %q", args)
	}
	args[i+1] = out
	if msg, err := exec.Command(goBin, args...).CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, msg)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("docs.html")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("docs.html is stale: openapi.json renders another page; run go generate ./httpapi/ and commit")
	}
}
