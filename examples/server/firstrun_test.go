package main_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestFirstRun: a sandbox on a new bolt store, started with no flag about
// keys (as go run ./examples/server is), writes the root's keys beside
// the store with mode 0600 and prints the file and a curl line that
// works as printed; no key reaches the output or the log. A restart on
// the same store prints them again and writes nothing.
func TestFirstRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server binary")
	}
	t.Parallel()
	bin := buildServer(t)
	db := filepath.Join(t.TempDir(), "corebank.db")
	p := startServer(t, bin, "-db", db)
	keys := db + ".root-keys.json"
	info, err := os.Stat(keys)
	if err != nil {
		t.Fatalf("no keys file beside the store: %v\n%s", err, p.out)
	}
	if mode := info.Mode().Perm(); mode != 0o600 {
		t.Errorf("keys file mode %o, want 600", mode)
	}
	raw, err := os.ReadFile(keys)
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		APIKey         string `json:"api_key"`
		ReadOnlyAPIKey string `json:"read_only_api_key"`
	}
	if err := json.Unmarshal(raw, &k); err != nil || k.APIKey == "" || k.ReadOnlyAPIKey == "" {
		t.Fatalf("keys file %s: %v", raw, err)
	}
	out := p.out.String()
	if !strings.Contains(out, "root API keys in "+keys+"\n") {
		t.Errorf("stdout does not name the keys file:\n%s", out)
	}
	var curl string
	for line := range strings.Lines(out) {
		if c, ok := strings.CutPrefix(line, "try: "); ok {
			curl = strings.TrimSpace(c)
		}
	}
	if !strings.Contains(curl, "curl ") || !strings.Contains(curl, p.addr) {
		t.Fatalf("no curl line for %s in stdout:\n%s", p.addr, out)
	}
	for _, secret := range []string{k.APIKey, k.ReadOnlyAPIKey} {
		if strings.Contains(out, secret) || strings.Contains(p.logs.String(), secret) {
			t.Errorf("a root key is in the output or the log")
		}
	}
	if tool := missingTool(t, "bash", "curl", "jq"); tool != "" {
		t.Logf("skipping the curl line's run: %s not found (apt-get install curl jq)", tool)
	} else {
		got, err := exec.Command("bash", "-c", curl).CombinedOutput()
		if err != nil || !strings.Contains(string(got), `"accounts retrieved"`) {
			t.Errorf("the printed line %s answered %s (%v)", curl, got, err)
		}
	}
	stop(t, p) // the store is the first server's until it exits (bbolt's lock)

	again := startServer(t, bin, "-db", db)
	if !strings.Contains(again.out.String(), "root API keys in "+keys+"\n") {
		t.Errorf("a restart does not name the keys file:\n%s", again.out)
	}
	if raw2, err := os.ReadFile(keys); err != nil || string(raw2) != string(raw) {
		t.Errorf("a restart changed the keys file (%v)", err)
	}

	// Without the file (a store from before, or the file removed), a
	// restart says how to get keys.
	stop(t, again)
	if err := os.Remove(keys); err != nil {
		t.Fatal(err)
	}
	third := startServer(t, bin, "-db", db)
	if strings.Contains(third.out.String(), "root API keys in") {
		t.Errorf("announced a keys file that is gone:\n%s", third.out)
	}
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(third.logs.String(), "-issue-root-keys") && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond) // stderr is copied from a pipe
	}
	if !strings.Contains(third.logs.String(), "server: the store has a root entity but no keys file beside it") {
		t.Errorf("no word on how to get keys:\n%s", third.logs)
	}
}
