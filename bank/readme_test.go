package bank_test

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestReadmeEmbedding: the README's embedding snippet is the body of
// Example, which compiles and runs with the tests, so the snippet cannot
// rot.
func TestReadmeEmbedding(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n## Embedding\n")
	if !ok {
		t.Fatal(`README.md has no "## Embedding" section`)
	}
	_, block, ok := strings.Cut(section, "```go\n")
	block, _, closed := strings.Cut(block, "```")
	if !ok || !closed {
		t.Fatal("README.md's Embedding section has no ```go block")
	}

	src, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, body, ok := strings.Cut(string(src), "func Example() {\n")
	body, _, ended := strings.Cut(body, "\t// Output:")
	if !ok || !ended {
		t.Fatal("example_test.go has no func Example with an Output comment")
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(body, "\n"), "\n") {
		lines = append(lines, strings.TrimPrefix(l, "\t"))
	}
	if diff := cmp.Diff(strings.Join(lines, "\n")+"\n", block); diff != "" {
		t.Errorf("README.md's embedding snippet is not Example's body (-example +readme):\n%s", diff)
	}
}
