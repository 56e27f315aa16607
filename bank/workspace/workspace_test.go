package workspace_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/corebank/corebank/bank"
	"github.com/corebank/corebank/bank/workspace"
	"github.com/corebank/corebank/corebanktest"
)

type created struct {
	ID           string `json:"id"`
	APIKey       string `json:"api_key"`
	RootEntityID string `json:"root_entity_id"`
	Clock        struct {
		NowMS int64 `json:"now_ms"`
		Fake  bool  `json:"fake"`
	} `json:"clock"`
}

func newServer(t *testing.T, o workspace.Options) (*workspace.Manager, *httptest.Server) {
	t.Helper()
	o.Bank = bank.Options{SecretKey: make([]byte, 32), Logger: slog.New(slog.DiscardHandler)}
	o.Bank.Entities.GenerateKey = corebanktest.KeyPool()
	m := workspace.New(o)
	own := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "own bank") })
	srv := httptest.NewServer(m.Handler(own))
	t.Cleanup(srv.Close)
	return m, srv
}

func call(t *testing.T, srv *httptest.Server, key, method, path string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, srv.URL+path, rd)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw
}

func create(t *testing.T, srv *httptest.Server, body any) created {
	t.Helper()
	status, raw := call(t, srv, "", "POST", "/sandbox/workspaces", body)
	if status != 201 {
		t.Fatalf("create: %d %s", status, raw)
	}
	var c created
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestIsolation creates two workspaces and checks each key reaches its
// own bank only: accounts, clocks and deletes stay apart, and the
// server's own bank is untouched.
func TestIsolation(t *testing.T) {
	_, srv := newServer(t, workspace.Options{})
	start := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	a := create(t, srv, map[string]any{"fake_clock": true, "clock_start": start.Format(time.RFC3339)})
	b := create(t, srv, map[string]any{"fake_clock": true, "clock_start": start.UnixMilli()})
	if a.ID == b.ID || !strings.HasPrefix(a.APIKey, "sk_sandbox_ws"+a.ID+"_") || a.Clock.NowMS != start.UnixMilli() || !a.Clock.Fake {
		t.Fatalf("workspaces %+v and %+v", a, b)
	}
	status, raw := call(t, srv, a.APIKey, "POST", "/accounts", map[string]any{"type": "checking", "currency": "USD", "display_name": "A"})
	if status != 201 {
		t.Fatalf("account in A: %d %s", status, raw)
	}
	var acct struct {
		Data struct{ ID string } `json:"data"`
	}
	json.Unmarshal(raw, &acct)
	if s, _ := call(t, srv, a.APIKey, "GET", "/accounts/"+acct.Data.ID, nil); s != 200 {
		t.Errorf("A reads its account: %d", s)
	}
	if s, _ := call(t, srv, b.APIKey, "GET", "/accounts/"+acct.Data.ID, nil); s != 404 {
		t.Errorf("B reads A's account: %d, want 404 (B's bank has none)", s)
	}
	if s, raw := call(t, srv, a.APIKey, "POST", "/sandbox/clock/advance", map[string]any{"seconds": 3600}); s != 200 {
		t.Fatalf("A advances: %d %s", s, raw)
	}
	var clk struct {
		NowMS int64 `json:"now_ms"`
	}
	_, raw = call(t, srv, b.APIKey, "GET", "/sandbox/clock", nil)
	json.Unmarshal(raw, &clk)
	if got := clk.NowMS; got != start.UnixMilli() {
		t.Errorf("B's clock after A advanced: %d, want %d (%s)", got, start.UnixMilli(), raw)
	}
	if s, raw := call(t, srv, "sk_sandbox_owncompletelydifferentkey", "GET", "/accounts", nil); s != 200 || string(raw) != "own bank" {
		t.Errorf("a key of the server's own bank went to %d %q", s, raw)
	}
	if s, _ := call(t, srv, b.APIKey, "DELETE", "/sandbox/workspaces/"+a.ID, nil); s != 401 {
		t.Errorf("B deletes A: %d, want 401", s)
	}
	if s, _ := call(t, srv, a.APIKey, "DELETE", "/sandbox/workspaces/"+a.ID, nil); s != 204 {
		t.Errorf("A deletes itself: %d, want 204", s)
	}
	if s, _ := call(t, srv, a.APIKey, "GET", "/accounts", nil); s != 401 {
		t.Errorf("a deleted workspace's key: %d, want 401", s)
	}
	if s, _ := call(t, srv, "sk_sandbox_wsNOSUCH_x", "GET", "/accounts", nil); s != 401 {
		t.Errorf("an unknown workspace's key: %d, want 401", s)
	}
	if s, _ := call(t, srv, b.APIKey, "GET", "/accounts", nil); s != 200 {
		t.Errorf("B after A's delete: %d", s)
	}
}

// TestCapAndExpiry checks the cap answers 429 with retry_after, and idle
// workspaces expire after TTL on the manager's clock.
func TestCapAndExpiry(t *testing.T) {
	mock := clock.NewMock()
	m, srv := newServer(t, workspace.Options{Max: 2, TTL: time.Minute, Clock: mock})
	a := create(t, srv, nil)
	create(t, srv, map[string]any{})
	status, raw := call(t, srv, "", "POST", "/sandbox/workspaces", nil)
	var refusal struct {
		Code       string `json:"code"`
		RetryAfter int    `json:"retry_after"`
	}
	json.Unmarshal(raw, &refusal)
	if status != 429 || refusal.Code != "rate_limited" || refusal.RetryAfter != 60 {
		t.Fatalf("third create: %d %s", status, raw)
	}
	mock.Add(30 * time.Second)
	call(t, srv, a.APIKey, "GET", "/accounts", nil) // a is used, the other idles on
	mock.Add(45 * time.Second)
	if n := m.Sweep(mock.Now()); n != 1 || m.Len() != 1 {
		t.Errorf("swept %d, %d left; want 1 and 1", n, m.Len())
	}
	create(t, srv, nil)
	for _, body := range []string{`{"clock_start": "yesterday"}`, `{"nope": 1}`, `[`} {
		req, _ := http.NewRequest("POST", srv.URL+"/sandbox/workspaces", strings.NewReader(body))
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 422 {
			t.Errorf("create with %s: %d, want 422", body, resp.StatusCode)
		}
	}
}

// BenchmarkCreate is the cost of a workspace, created and deleted.
func BenchmarkCreate(b *testing.B) {
	o := workspace.Options{Max: 1 << 30, Bank: bank.Options{SecretKey: make([]byte, 32), Logger: slog.New(slog.DiscardHandler)}}
	o.Bank.Entities.GenerateKey = corebanktest.KeyPool()
	m := workspace.New(o)
	ctx := b.Context()
	for b.Loop() {
		s, err := m.Create(ctx, workspace.Params{Fake: true})
		if err != nil {
			b.Fatal(err)
		}
		m.Delete(s.ID)
	}
}
