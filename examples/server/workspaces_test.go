package main_test

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestWorkspacesServed: with -workspaces the server creates a workspace
// without a key, its key works, its checkout page is linked under its
// prefix on the listen address, and its key deletes it. Without the flag,
// and in production with it, both routes answer 404, key or none.
func TestWorkspacesServed(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server binary")
	}
	t.Parallel()
	bin := buildServer(t)
	hc := &http.Client{Timeout: 10 * time.Second}
	call := func(base, key, method, path, body string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var out map[string]any
		json.Unmarshal(raw, &out)
		return resp.StatusCode, out
	}

	p := startServer(t, bin, "-memory", "-workspaces")
	base := "http://" + p.addr
	status, ws := call(base, "", "POST", "/sandbox/workspaces", `{"fake_clock": true, "clock_start": "2026-01-05T09:00:00Z"}`)
	if status != 201 {
		t.Fatalf("create: %d %v", status, ws)
	}
	key, id := ws["api_key"].(string), ws["id"].(string)
	status, acct := call(base, key, "POST", "/accounts", `{"type": "checking", "currency": "USD", "display_name": "W"}`)
	if status != 201 {
		t.Fatalf("account: %d %v", status, acct)
	}
	status, sess := call(base, key, "POST", "/funding-sessions", `{"amount": 500, "currency": "USD", "account_id": "`+
		dataField(acct, "id").(string)+`", "unique_reference": "ws", "redirect_url": "https://shop.example/back"}`)
	u, _ := dataField(sess, "checkout_url").(string)
	if want := base + "/sandbox/workspaces/" + id + "/sandbox/checkout/"; status != 201 || !strings.HasPrefix(u, want) {
		t.Fatalf("session: %d, checkout_url %q, want %s<token>", status, u, want)
	}
	if resp, err := hc.Get(u); err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET checkout_url: %v %v", resp, err)
	}
	if status, _ := call(base, key, "DELETE", "/sandbox/workspaces/"+id, ""); status != 204 {
		t.Errorf("delete: %d", status)
	}
	if status, _ := call(base, key, "GET", "/accounts", ""); status != 401 {
		t.Errorf("the deleted workspace's key: %d, want 401", status)
	}

	// Without -workspaces the sandbox answers 404 whatever the key (the
	// routes are open, as with them); production has no /sandbox/ route,
	// so that its own key gets the 404 there, and any other key the 401
	// of every unknown path.
	off := startServer(t, bin, "-memory")
	boot := filepath.Join(t.TempDir(), "bootstrap.json")
	prod := startServer(t, bin, "-memory", "-env", "production", "-workspaces", "-bootstrap-out", boot)
	raw, _ := os.ReadFile(boot)
	var prodKeys struct {
		APIKey string `json:"api_key"`
	}
	json.Unmarshal(raw, &prodKeys)
	for _, c := range []struct{ name, base, key string }{
		{"without -workspaces, no key", off.addr, ""},
		{"without -workspaces, a workspace's key", off.addr, key},
		{"without -workspaces, a forged one", off.addr, "sk_sandbox_ws" + id + "_x"},
		{"in production with -workspaces", prod.addr, prodKeys.APIKey},
	} {
		base := "http://" + c.base
		if status, body := call(base, c.key, "POST", "/sandbox/workspaces", "{}"); status != 404 {
			t.Errorf("%s: POST /sandbox/workspaces: %d %v, want 404", c.name, status, body)
		}
		if status, body := call(base, c.key, "DELETE", "/sandbox/workspaces/"+id, ""); status != 404 {
			t.Errorf("%s: DELETE /sandbox/workspaces/{id}: %d %v, want 404", c.name, status, body)
		}
	}
	if !strings.Contains(prod.logs.String(), "-workspaces is for the sandbox") {
		t.Errorf("production did not say it ignores -workspaces:\n%s", prod.logs)
	}
}
