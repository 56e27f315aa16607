package pgtest

import (
	"os"
	"path/filepath"
	"testing"
)

func TestFindBin(t *testing.T) {
	root := t.TempDir()
	t.Setenv("PATH", t.TempDir())
	glob := filepath.Join(root, "*", "bin")
	if dir, ok := findBin(glob); ok {
		t.Fatalf("findBin with no binaries = %q, true; want false", dir)
	}
	for _, v := range []string{"9", "15", "13"} {
		dir := filepath.Join(root, v, "bin")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "initdb"), nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if dir, ok := findBin(glob); !ok || dir != filepath.Join(root, "15", "bin") {
		t.Errorf("findBin = %q, %v; want the newest version, 15", dir, ok)
	}
}
