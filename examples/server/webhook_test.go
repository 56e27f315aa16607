package main_test

import (
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/corebank/corebank/webhooks"
)

// TestWebhookFlagsAndFakeClock runs the binary with -memory, -fake-clock,
// -clock-start and -webhook-ca and checks that a local TLS receiver gets
// deliveries that verify against the wall clock (as a production receiver
// checks them), and that a pending inflow settles only when the fake clock
// is advanced.
func TestWebhookFlagsAndFakeClock(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server binary")
	}
	t.Parallel()
	type got struct {
		event string
		ts    string
		sig   string
		body  []byte
	}
	var (
		mu       sync.Mutex
		received []got
	)
	recv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var env struct {
			Event string `json:"event"`
		}
		json.Unmarshal(body, &env)
		mu.Lock()
		received = append(received, got{env.Event, r.Header.Get("x-service-event-timestamp"), r.Header.Get("x-service-event-signature"), body})
		mu.Unlock()
	}))
	defer recv.Close()
	dir := t.TempDir()
	caPath := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: recv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	boot := filepath.Join(dir, "bootstrap.json")
	p := startServer(t, buildServer(t), "-memory", "-fake-clock", "-clock-start", "2026-02-02T10:00:00Z",
		"-webhook-ca", caPath, "-bootstrap-out", boot)
	raw, err := os.ReadFile(boot)
	if err != nil {
		t.Fatal(err)
	}
	var keys struct {
		APIKey string `json:"api_key"`
	}
	json.Unmarshal(raw, &keys)
	c := &client{base: "http://" + p.addr, key: keys.APIKey, http: &http.Client{Timeout: 10 * time.Second}}

	status, body, err := c.do("GET", "/sandbox/clock", nil)
	if err != nil || status != 200 || body["now"] != "2026-02-02T10:00:00Z" {
		t.Fatalf("GET /sandbox/clock = %d %v %v", status, body, err)
	}
	status, body, err = c.do("POST", "/entity-webhooks", map[string]any{
		"url": recv.URL + "/hooks", "expires_in": 86400,
		"enabled_events": map[string]any{"inflows": map[string]bool{"completed": true}},
	})
	if err != nil || status != 201 {
		t.Fatalf("create webhook = %d %v %v", status, body, err)
	}
	secret, _ := dataField(body, "secret").(string)
	status, body, err = c.do("POST", "/accounts", map[string]any{"type": "checking", "currency": "USD", "display_name": "Ops"})
	if err != nil || status != 201 {
		t.Fatalf("create account = %d %v %v", status, body, err)
	}
	acct := dataField(body, "id").(string)
	if status, body, err = c.do("POST", "/sandbox/inflows", map[string]any{"account_id": acct, "amount": 500, "settle": false}); err != nil || status != 201 {
		t.Fatalf("inflow = %d %v %v", status, body, err)
	}
	balance := func() map[string]any {
		_, body, _ := c.do("GET", "/accounts/"+acct, nil)
		b, _ := dataField(body, "balance").(map[string]any)
		return b
	}
	if b := balance(); b["available"] != 0.0 || b["current"] != 500.0 {
		t.Fatalf("pending inflow balance = %v", b)
	}
	// The real clock passing changes nothing under -fake-clock.
	time.Sleep(1500 * time.Millisecond)
	if b := balance(); b["available"] != 0.0 {
		t.Fatalf("inflow settled without the fake clock moving: %v", b)
	}
	if status, body, err = c.do("POST", "/sandbox/clock/advance", map[string]any{"seconds": 60}); err != nil || status != 200 {
		t.Fatalf("advance = %d %v %v", status, body, err)
	}
	if b := balance(); b["available"] != 500.0 {
		t.Fatalf("inflow not settled after advancing 60 s: %v", b)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		mu.Lock()
		n := len(received)
		mu.Unlock()
		if n > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(received) != 1 || received[0].event != "inflows.completed" {
		t.Fatalf("received %d deliveries %+v, want one inflows.completed", len(received), received)
	}
	r := received[0]
	// A production receiver: it checks the signature against its own
	// clock with a 5-minute tolerance. The server signs with the real time
	// of sending, whatever its fake clock says; the event it reports keeps
	// the fake time.
	if err := webhooks.Verify(secret, r.ts, r.sig, r.body, 5*time.Minute, time.Now()); err != nil {
		t.Fatalf("delivery does not verify against the wall clock: %v", err)
	}
	var ev struct {
		Data struct {
			Created int64 `json:"created"`
		} `json:"data"`
	}
	if err := json.Unmarshal(r.body, &ev); err != nil || ev.Data.Created != time.Date(2026, 2, 2, 10, 0, 0, 0, time.UTC).UnixMilli() {
		t.Errorf("inflow created %d (%v), want the fake clock's 10:00, when the inflow was made", ev.Data.Created, err)
	}
}

// TestProductionHasNoSandbox checks that -env production mounts no
// /sandbox/* route, issues live keys, and refuses the fake clock.
func TestProductionHasNoSandbox(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server binary")
	}
	t.Parallel()
	bin := buildServer(t)
	boot := filepath.Join(t.TempDir(), "bootstrap.json")
	p := startServer(t, bin, "-memory", "-env", "production", "-bootstrap-out", boot)
	raw, _ := os.ReadFile(boot)
	var keys struct {
		APIKey string `json:"api_key"`
	}
	json.Unmarshal(raw, &keys)
	if len(keys.APIKey) < 8 || keys.APIKey[:8] != "sk_live_" {
		t.Fatalf("production key %q lacks the sk_live_ prefix", keys.APIKey)
	}
	c := &client{base: "http://" + p.addr, key: keys.APIKey, http: &http.Client{Timeout: 10 * time.Second}}
	for _, path := range []string{"/sandbox/clock", "/sandbox/inflows"} {
		method := "GET"
		if path == "/sandbox/inflows" {
			method = "POST"
		}
		if status, body, err := c.do(method, path, map[string]any{}); err != nil || status != 404 {
			t.Errorf("%s %s in production = %d %v %v, want 404", method, path, status, body, err)
		}
	}
	out, err := exec.Command(bin, "-memory", "-env", "production", "-fake-clock").CombinedOutput()
	if err == nil {
		t.Fatalf("-fake-clock in production started: %s", out)
	}
}

// TestRootKeyRecovery checks that a bad -bootstrap-out path fails before
// the store changes (so the next start still bootstraps), and that
// -issue-root-keys gives working keys to a store whose bootstrap keys were
// never saved.
func TestRootKeyRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server binary")
	}
	t.Parallel()
	bin := buildServer(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "corebank.db")
	out, err := exec.Command(bin, "-addr", "127.0.0.1:0", "-db", db, "-bootstrap-out", filepath.Join(dir, "missing", "boot.json")).CombinedOutput()
	if err == nil {
		t.Fatalf("a bootstrap file in a missing folder was accepted: %s", out)
	}
	boot := filepath.Join(dir, "boot.json")
	p := startServer(t, bin, "-db", db, "-bootstrap-out", boot)
	if _, err := os.Stat(boot); err != nil {
		t.Fatalf("the failed start consumed the bootstrap: %v", err)
	}
	p.cmd.Process.Signal(os.Interrupt)
	<-p.done

	keysPath := filepath.Join(dir, "recovered.json")
	p = startServer(t, bin, "-db", db, "-issue-root-keys", keysPath)
	raw, err := os.ReadFile(keysPath)
	if err != nil {
		t.Fatal(err)
	}
	var keys struct {
		EntityID string `json:"entity_id"`
		APIKey   string `json:"api_key"`
		ReadOnly string `json:"read_only_api_key"`
	}
	json.Unmarshal(raw, &keys)
	if info, _ := os.Stat(keysPath); info.Mode().Perm() != 0o600 {
		t.Errorf("recovered keys file mode %v, want 0600", info.Mode().Perm())
	}
	c := &client{base: "http://" + p.addr, key: keys.APIKey, http: &http.Client{Timeout: 10 * time.Second}}
	if status, body, err := c.do("POST", "/accounts", map[string]any{"type": "checking", "currency": "USD", "display_name": "Ops"}); err != nil || status != 201 {
		t.Fatalf("recovered full key: %d %v %v", status, body, err)
	}
	c.key = keys.ReadOnly
	if status, _, err := c.do("POST", "/accounts", map[string]any{"type": "checking", "currency": "USD", "display_name": "Ops"}); err != nil || status != 403 {
		t.Fatalf("recovered read-only key on POST: %d %v", status, err)
	}
}
