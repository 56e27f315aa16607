package httpapi_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden.json from the current responses")

// golden compares a response with testdata/<name>.golden.json (indented).
func golden(t *testing.T, name string, r resp) {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(r.Raw), &v); err != nil {
		t.Fatalf("%s: %v: %s", name, err, r.Raw)
	}
	got, _ := json.MarshalIndent(map[string]any{"status": r.Status, "body": v}, "", "  ")
	got = append(got, '\n')
	path := filepath.Join("testdata", name+".golden.json")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s differs from %s (run go test ./httpapi -run TestGolden -update to accept):\n%s", name, path, got)
	}
}

// TestGolden pins the whole shape of the main responses.
func TestGolden(t *testing.T) {
	e := newEnvSeeded(t, 42)
	r := e.must(201, "POST", "/accounts", e.key, map[string]any{"type": "checking", "currency": "USD", "display_name": "Main", "meta": map[string]string{"team": "ops"}})
	golden(t, "account_create", r)
	id := r.str("data", "id")
	golden(t, "inflow", e.must(201, "POST", "/sandbox/inflows", e.key, map[string]any{"account_id": id, "amount": 1234, "narration": "seed"}))
	e.clock.Add(1e9)
	golden(t, "account_patch", e.must(200, "PATCH", "/accounts/"+id, e.key, map[string]any{"display_name": "Operating"}))
	other := e.must(201, "POST", "/accounts", e.key, map[string]any{"type": "debit", "currency": "EUR", "display_name": "Euro"}).str("data", "id")
	golden(t, "account_get", e.must(200, "GET", "/accounts/"+id, e.key, nil))
	golden(t, "account_list", e.must(200, "GET", "/accounts?limit=1", e.key, nil))
	golden(t, "statement", e.must(200, "GET", "/accounts/"+id+"/statements?year=2026&month=3", e.key, nil))
	golden(t, "account_delete", e.must(200, "DELETE", "/accounts/"+other, e.key, nil))
	golden(t, "clock", e.must(200, "GET", "/sandbox/clock", e.key, nil))
	golden(t, "error_validation", e.must(422, "POST", "/accounts", e.key, map[string]any{"type": "savings"}))
	golden(t, "error_unknown_field", e.must(422, "POST", "/accounts", e.key, map[string]any{"entity_idd": "x"}))
	golden(t, "error_not_found", e.must(404, "GET", "/accounts/01HZZZZZZZZZZZZZZZZZZZZZZZ", e.key, nil))
	golden(t, "error_unauthorized", e.must(401, "GET", "/accounts", "", nil))
	golden(t, "error_forbidden", e.must(403, "POST", "/accounts", e.roKey, nil))
	golden(t, "error_not_empty", e.must(422, "DELETE", "/accounts/"+id, e.key, nil))
}
