package workspace_test

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/bank"
	"github.com/corebank/corebank/bank/workspace"
	"github.com/corebank/corebank/internal/keypool"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/storage/memory"
)

type created struct {
	ID             string `json:"id"`
	APIKey         string `json:"api_key"`
	ReadOnlyAPIKey string `json:"read_only_api_key"`
	RootEntityID   string `json:"root_entity_id"`
	Clock          struct {
		NowMS int64 `json:"now_ms"`
		Fake  bool  `json:"fake"`
	} `json:"clock"`
}

// harness is a server of workspaces in front of a stand-in for the
// server's own bank; its Manager runs until the test ends.
type harness struct {
	m   *workspace.Manager
	srv *httptest.Server
	// hooks receives webhook deliveries over TLS; the workspaces trust it.
	hooks *httptest.Server
	got   chan []byte
	// own is the server's own bank, and ownKey its root's key.
	own    *bank.Bank
	ownKey string
}

func newHarness(t *testing.T, o workspace.Options) *harness {
	t.Helper()
	h := &harness{got: make(chan []byte, 100)}
	h.hooks = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		select {
		case h.got <- raw:
		default: // a test that does not read them
		}
	}))
	t.Cleanup(h.hooks.Close)
	roots := x509.NewCertPool()
	roots.AddCert(h.hooks.Certificate())
	o.Bank = bank.Options{SecretKey: make([]byte, 32), Logger: slog.New(slog.DiscardHandler)}
	o.Bank.Webhooks.RootCAs = roots
	ownOpts := o.Bank
	ownOpts.Entities.GenerateKey = keypool.New()
	var err error
	if h.own, err = bank.New(memory.New(), ownOpts); err != nil {
		t.Fatal(err)
	}
	if _, err := h.own.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	root, _, err := h.own.Entities.Bootstrap(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	h.ownKey = root.APIKey
	late := &lateBase{}
	h.srv = httptest.NewServer(late)
	t.Cleanup(h.srv.Close)
	o.BaseURL = h.srv.URL
	h.m = workspace.New(o)
	late.h = h.m.Handler(h.own.Handler)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); h.m.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return h
}

// lateBase lets the server start before the Manager, which needs its URL.
type lateBase struct{ h http.Handler }

func (l *lateBase) ServeHTTP(w http.ResponseWriter, r *http.Request) { l.h.ServeHTTP(w, r) }

func (h *harness) call(t *testing.T, key, method, path string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, _ := json.Marshal(b)
		rd = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, h.srv.URL+path, rd)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := h.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw
}

func (h *harness) create(t *testing.T, body any) created {
	t.Helper()
	status, raw := h.call(t, "", "POST", "/sandbox/workspaces", body)
	if status != 201 {
		t.Fatalf("create: %d %s", status, raw)
	}
	var c created
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// data decodes raw's envelope data into a map.
func data(t *testing.T, raw []byte) map[string]any {
	t.Helper()
	var env struct {
		Data map[string]any `json:"data"`
	}
	if err := json.Unmarshal(raw, &env); err != nil || env.Data == nil {
		t.Fatalf("no data in %s", raw)
	}
	return env.Data
}

// TestIsolation creates two workspaces and checks each key reaches its
// own bank only: accounts, clocks and deletes stay apart, and the
// server's own bank is untouched.
func TestIsolation(t *testing.T) {
	h := newHarness(t, workspace.Options{})
	start := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	a := h.create(t, map[string]any{"fake_clock": true, "clock_start": start.Format(time.RFC3339)})
	b := h.create(t, map[string]any{"fake_clock": true, "clock_start": start.UnixMilli()})
	if a.ID == b.ID || !strings.HasPrefix(a.APIKey, "sk_sandbox_ws"+a.ID+"_") || a.Clock.NowMS != start.UnixMilli() || !a.Clock.Fake {
		t.Fatalf("workspaces %+v and %+v", a, b)
	}
	status, raw := h.call(t, a.APIKey, "POST", "/accounts", map[string]any{"type": "checking", "currency": "USD", "display_name": "A"})
	if status != 201 {
		t.Fatalf("account in A: %d %s", status, raw)
	}
	id, _ := data(t, raw)["id"].(string)
	if s, _ := h.call(t, a.APIKey, "GET", "/accounts/"+id, nil); s != 200 {
		t.Errorf("A reads its account: %d", s)
	}
	if s, _ := h.call(t, b.APIKey, "GET", "/accounts/"+id, nil); s != 404 {
		t.Errorf("B reads A's account: %d, want 404 (B's bank has none)", s)
	}
	if s, raw := h.call(t, a.APIKey, "POST", "/sandbox/clock/advance", map[string]any{"seconds": 3600}); s != 200 {
		t.Fatalf("A advances: %d %s", s, raw)
	}
	clocks := map[string]int64{}
	for name, key := range map[string]string{"A": a.APIKey, "B": b.APIKey} {
		var clk struct {
			NowMS int64 `json:"now_ms"`
		}
		_, raw = h.call(t, key, "GET", "/sandbox/clock", nil)
		json.Unmarshal(raw, &clk)
		clocks[name] = clk.NowMS
	}
	want := map[string]int64{"A": start.Add(time.Hour).UnixMilli(), "B": start.UnixMilli()}
	if diff := cmp.Diff(want, clocks); diff != "" {
		t.Errorf("clocks after A advanced an hour (-want +got):\n%s", diff)
	}
	if s, raw := h.call(t, h.ownKey, "GET", "/accounts/"+id, nil); s != 404 {
		t.Errorf("the server's own key on A's account: %d %s, want 404 (its bank has none)", s, raw)
	}
	if s, raw := h.call(t, h.ownKey, "GET", "/accounts", nil); s != 200 || strings.Contains(string(raw), id) {
		t.Errorf("the server's own bank lists %d %s", s, raw)
	}
	// A key the workspace issues later carries it too.
	s, raw := h.call(t, a.APIKey, "POST", "/sandbox/api-keys", map[string]any{})
	var issued struct {
		APIKey string `json:"api_key"`
	}
	json.Unmarshal(raw, &issued)
	if s != 201 || !strings.HasPrefix(issued.APIKey, "sk_sandbox_ws"+a.ID+"_") {
		t.Fatalf("a new key of A: %d %s", s, raw)
	}
	if s, _ := h.call(t, issued.APIKey, "GET", "/accounts/"+id, nil); s != 200 {
		t.Errorf("A's new key reads A's account: %d", s)
	}
	if s, _ := h.call(t, a.APIKey, "DELETE", "/sandbox/workspaces/"+a.ID, nil); s != 204 {
		t.Errorf("A deletes itself: %d, want 204", s)
	}
	if s, _ := h.call(t, a.APIKey, "GET", "/accounts", nil); s != 401 {
		t.Errorf("a deleted workspace's key: %d, want 401", s)
	}
	if s, _ := h.call(t, b.APIKey, "GET", "/accounts", nil); s != 200 {
		t.Errorf("B after A's delete: %d", s)
	}
}

// TestCreateRefusals: the cap answers 429 with retry_after and
// Retry-After; idle workspaces expire after TTL on the manager's clock;
// bad bodies get 422 naming the field, and other methods 405.
func TestCreateRefusals(t *testing.T) {
	mock := clock.NewMock()
	h := newHarness(t, workspace.Options{Max: 2, TTL: time.Minute, Clock: mock})
	a := h.create(t, nil)
	h.create(t, map[string]any{})
	status, raw := h.call(t, "", "POST", "/sandbox/workspaces", nil)
	var refusal map[string]any
	json.Unmarshal(raw, &refusal)
	want := map[string]any{"status": "error", "code": "rate_limited", "message": refusal["message"], "retry_after": 60.0,
		"details": map[string]any{"retry_after": 60.0, "limit_type": "workspaces", "current_count": 2.0, "limit": 2.0}}
	if diff := cmp.Diff(want, refusal); status != 429 || diff != "" {
		t.Fatalf("third create: %d (-want +got):\n%s", status, diff)
	}
	mock.Add(30 * time.Second)
	h.call(t, a.APIKey, "GET", "/accounts", nil) // a is used, the other idles on
	mock.Add(45 * time.Second)
	if n := h.m.Sweep(mock.Now()); n != 1 || h.m.Len() != 1 {
		t.Errorf("swept %d, %d left; want 1 and 1", n, h.m.Len())
	}
	h.create(t, nil)

	for _, c := range []struct{ body, field string }{
		{`{"clock_start": "yesterday", "fake_clock": true}`, "clock_start"},
		{`{"clock_start": -1, "fake_clock": true}`, "clock_start"},
		{`{"clock_start": "2026-01-05T09:00:00Z"}`, "clock_start"}, // a real clock starts now
		{`{"fake_clock": "yes"}`, "fake_clock"},
		{`{"nope": 1}`, "nope"},
		{`[`, "body"},
		{`[1]`, "body"},
		{`null`, "body"},
	} {
		h.m.Sweep(mock.Now().Add(time.Hour)) // room to create
		status, raw := h.call(t, "", "POST", "/sandbox/workspaces", c.body)
		var got struct {
			Code    string            `json:"code"`
			Details map[string]string `json:"details"`
		}
		json.Unmarshal(raw, &got)
		if status != 422 || got.Code != "validation_error" || got.Details[c.field] == "" {
			t.Errorf("create with %s: %d %s, want 422 naming %s", c.body, status, raw, c.field)
		}
	}
	if s, _ := h.call(t, "", "GET", "/sandbox/workspaces", nil); s != 405 {
		t.Errorf("GET /sandbox/workspaces: %d, want 405", s)
	}
	if s, _ := h.call(t, a.APIKey, "GET", "/sandbox/workspaces/"+a.ID, nil); s != 405 {
		t.Errorf("GET /sandbox/workspaces/{id}: %d, want 405", s)
	}
}

// BenchmarkCreate is the cost of a workspace, created and deleted.
func BenchmarkCreate(b *testing.B) {
	o := workspace.Options{Max: 1 << 30, Bank: bank.Options{SecretKey: make([]byte, 32), Logger: slog.New(slog.DiscardHandler)}}
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

// BenchmarkIdle is the memory an idle workspace holds (B/workspace): each
// iteration creates one and keeps it, with an account in it.
func BenchmarkIdle(b *testing.B) {
	m := workspace.New(workspace.Options{Max: 1 << 30, Bank: bank.Options{SecretKey: make([]byte, 32), Logger: slog.New(slog.DiscardHandler)}})
	ctx := b.Context()
	before := heapNow()
	n := 0
	for b.Loop() {
		s, err := m.Create(ctx, workspace.Params{Fake: true})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Bank.Ledger.CreateAccount(ctx, corebank.As(s.Root.EntityID), ledger.NewAccount{
			Type: "checking", Currency: "USD", DisplayName: "Idle"}); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.StopTimer()
	b.ReportMetric(float64(heapNow()-before)/float64(n), "B/workspace")
	runtime.KeepAlive(m)
}

func heapNow() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// BenchmarkRouteOwn is what the router adds to a request of the server's
// own bank (a key that is no workspace's): two prefix checks.
func BenchmarkRouteOwn(b *testing.B) {
	m := workspace.New(workspace.Options{Bank: bank.Options{SecretKey: make([]byte, 32), Logger: slog.New(slog.DiscardHandler)}})
	h := m.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	req := httptest.NewRequest("POST", "/transfers", nil)
	req.Header.Set("Authorization", "Bearer sk_sandbox_GldceIt7TCOBwEbZpqwruyLIrFy60vlfmAge9fxTZFT")
	for b.Loop() {
		h.ServeHTTP(nil, req)
	}
}

// TestBearerAsHTTPAPI: the router reads a key as httpapi does ("bearer"
// in any case, spaces around the secret), so that it never sends to the
// server's bank a workspace key the bank would read.
func TestBearerAsHTTPAPI(t *testing.T) {
	h := newHarness(t, workspace.Options{})
	a := h.create(t, nil)
	for _, hdr := range []string{"bearer " + a.APIKey, "BEARER  " + a.APIKey + " "} {
		req, _ := http.NewRequest("GET", h.srv.URL+"/accounts", nil)
		req.Header.Set("Authorization", hdr)
		resp, err := h.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("Authorization %q: %d, want 200 from the workspace", hdr, resp.StatusCode)
		}
	}
	big := `{"fake_clock": true, "x": "` + strings.Repeat("a", 11<<20) + `"}`
	if s, raw := h.call(t, "", "POST", "/sandbox/workspaces", big); s != 413 {
		t.Errorf("an 11 MiB body: %d %.200s, want 413", s, raw)
	}
}
