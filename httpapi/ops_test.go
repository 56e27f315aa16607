package httpapi_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank/httpapi"
	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/memory"
)

// recorder is a slog.Handler that keeps every record's message and
// attributes.
type recorder struct {
	mu    sync.Mutex
	lines []map[string]any
}

func (r *recorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *recorder) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r *recorder) WithGroup(string) slog.Handler            { return r }
func (r *recorder) Handle(_ context.Context, rec slog.Record) error {
	m := map[string]any{"msg": rec.Message, "level": rec.Level.String()}
	rec.Attrs(func(a slog.Attr) bool {
		m[a.Key] = a.Value.Any()
		return true
	})
	r.mu.Lock()
	r.lines = append(r.lines, m)
	r.mu.Unlock()
	return nil
}

// take returns the records so far and forgets them.
func (r *recorder) take() []map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.lines
	r.lines = nil
	return out
}

// TestRequestLog: one line per request, naming its method, route pattern,
// status, duration, entity and request ID, and OnRequest sees the same.
func TestRequestLog(t *testing.T) {
	rec := &recorder{}
	var infos []httpapi.RequestInfo
	e := newEnv(t, func(o *httpapi.Options) {
		o.Logger = slog.New(rec)
		o.LogRequests = true
		o.OnRequest = func(i httpapi.RequestInfo) { infos = append(infos, i) }
	})
	acct := e.account(e.key, "", "USD")
	rec.take()
	infos = nil
	tests := []struct {
		name, method, path, key, id string
		status                      int
		route, entity               string
	}{
		{"Get", "GET", "/accounts/" + acct, e.key, "req-get-1", 200, "/accounts/{id}", e.root},
		{"NotFound", "GET", "/accounts/01HZZZZZZZZZZZZZZZZZZZZZZZ", e.key, "req-404", 404, "/accounts/{id}", e.root},
		{"Invalid", "POST", "/accounts", e.key, "req-422", 422, "/accounts", e.root},
		{"NoKey", "GET", "/accounts", "", "req-401", 401, "/accounts", ""},
		{"ReadOnly", "POST", "/accounts", e.roKey, "req-403", 403, "/accounts", e.root},
		{"NoRoute", "GET", "/nowhere", e.key, "req-nowhere", 404, httpapi.RouteUnmatched, e.root},
		{"NoRouteNoKey", "GET", "/nowhere", "", "req-nowhere-2", 401, httpapi.RouteUnmatched, ""},
		{"WrongMethod", "PUT", "/accounts", e.key, "req-405", 405, httpapi.RouteUnmatched, e.root},
		{"Probe", "GET", "/healthz", "", "req-probe", 200, "/healthz", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var body any
			if tc.method == "POST" {
				body = map[string]any{"type": "savings"}
			}
			r := e.do(tc.method, tc.path, tc.key, body, "X-Request-Id", tc.id)
			if r.Status != tc.status {
				t.Fatalf("%d, want %d: %s", r.Status, tc.status, r.Raw)
			}
			lines := rec.take()
			if len(lines) != 1 {
				t.Fatalf("%d log lines, want 1: %v", len(lines), lines)
			}
			got := lines[0]
			d, _ := got["duration"].(time.Duration)
			if d <= 0 {
				t.Errorf("duration %v, want > 0", got["duration"])
			}
			delete(got, "duration")
			want := map[string]any{"msg": "request", "level": "INFO", "method": tc.method, "route": tc.route,
				"status": int64(tc.status), "entity": tc.entity, "request_id": tc.id,
				"client": "192.0.2.1"} // httptest.NewRequest's RemoteAddr, without its port
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("log line (-want +got):\n%s", diff)
			}
			if len(infos) != 1 {
				t.Fatalf("OnRequest called %d times, want 1", len(infos))
			}
			info := infos[0]
			infos = nil
			if info.Duration <= 0 {
				t.Errorf("OnRequest duration %v", info.Duration)
			}
			info.Duration = 0
			wantInfo := httpapi.RequestInfo{Method: tc.method, Route: tc.route, Status: tc.status, Entity: tc.entity, RequestID: tc.id}
			if diff := cmp.Diff(wantInfo, info); diff != "" {
				t.Errorf("OnRequest (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRequestLogClientAddr: the request line names the client that
// Options.ClientAddr names, not the direct peer.
func TestRequestLogClientAddr(t *testing.T) {
	rec := &recorder{}
	e := newEnv(t, func(o *httpapi.Options) {
		o.Logger = slog.New(rec)
		o.LogRequests = true
		o.ClientAddr = func(r *http.Request) string { return "client-of-" + r.Header.Get("X-Test-Client") }
	})
	e.must(200, "GET", "/healthz", "", nil, "X-Test-Client", "203.0.113.9")
	lines := rec.take()
	if len(lines) != 1 {
		t.Fatalf("%d log lines, want 1: %v", len(lines), lines)
	}
	if got, want := lines[0]["client"], "client-of-203.0.113.9"; got != want {
		t.Errorf("client %q, want %q", got, want)
	}
}

// TestRequestLogOff: without LogRequests, a request writes nothing.
func TestRequestLogOff(t *testing.T) {
	rec := &recorder{}
	e := newEnv(t, func(o *httpapi.Options) { o.Logger = slog.New(rec) })
	e.must(200, "GET", "/accounts", e.key, nil)
	e.must(404, "GET", "/nowhere", e.key, nil)
	if lines := rec.take(); len(lines) != 0 {
		t.Errorf("logged %v", lines)
	}
}

// TestRequestID: a valid X-Request-Id is answered as given; a missing,
// over-long or non-printable one is replaced by a new one. The header and
// the error body (checkRequestID, in every request of every test) agree.
func TestRequestID(t *testing.T) {
	e := newEnv(t)
	generated := regexp.MustCompile(`^[0-9a-f]{32}$`)
	long := strings.Repeat("a", 128)
	tests := []struct {
		name, given string
		kept        bool
	}{
		{"Given", "9f1c-abc_DEF.123", true},
		{"Punctuation", "req:1/2?x=y&z=[w]", true},
		{"Longest", long, true},
		{"Missing", "", false},
		{"TooLong", long + "a", false},
		{"Space", "req 1", false},
		{"Control", "req\x01", false},
		{"NonASCII", "req-é", false},
	}
	seen := map[string]bool{}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, path := range []string{"/accounts", "/accounts/01HZZZZZZZZZZZZZZZZZZZZZZZ"} {
				r := e.do("GET", path, e.key, nil, "X-Request-Id", tc.given)
				id := r.Header.Get("X-Request-Id")
				switch {
				case tc.kept && id != tc.given:
					t.Errorf("%s: answered %q, want %q", path, id, tc.given)
				case !tc.kept && !generated.MatchString(id):
					t.Errorf("%s: answered %q, want a new 32-hex-digit ID", path, id)
				case !tc.kept && seen[id]:
					t.Errorf("%s: generated ID %q twice", path, id)
				}
				seen[id] = true
			}
		})
	}
	// The 401/403 form names it inside "error".
	r := e.do("GET", "/accounts", "", nil, "X-Request-Id", "req-401")
	if r.Status != 401 || r.Header.Get("X-Request-Id") != "req-401" {
		t.Errorf("401: %d %q", r.Status, r.Header.Get("X-Request-Id"))
	}
}

// flaky is a store whose reads fail or hang on demand.
type flaky struct {
	storage.Backend
	fail  atomic.Bool
	hang  atomic.Bool
	stuck chan struct{}
}

func (f *flaky) View(ctx context.Context, fn func(storage.Tx) error) error {
	if f.fail.Load() {
		return errors.New("disk on fire")
	}
	if f.hang.Load() {
		<-f.stuck // ignores ctx, as a wedged store would
	}
	return f.Backend.View(ctx, fn)
}

// TestProbes: /healthz and /readyz need no key; /readyz answers 503 when a
// read of the store fails or does not finish within ReadyTimeout.
func TestProbes(t *testing.T) {
	db := &flaky{Backend: memory.New(), stuck: make(chan struct{})}
	t.Cleanup(func() { close(db.stuck) })
	rec := &recorder{}
	e := newEnvDB(t, db, func(o *httpapi.Options) {
		o.ReadyTimeout = 50 * time.Millisecond
		o.Logger = slog.New(rec)
	})
	ok := func(s string) map[string]any { return map[string]any{"status": s} }
	notReady := map[string]any{"status": "error", "code": "unavailable", "message": "the store is not answering",
		"details": map[string]any{}}
	tests := []struct {
		name, method, path, key string
		fail, hang              bool
		status                  int
		body                    map[string]any
	}{
		{"Health", "GET", "/healthz", "", false, false, 200, ok("ok")},
		{"HealthWithKey", "GET", "/healthz", e.key, false, false, 200, ok("ok")},
		{"HealthBadKey", "GET", "/healthz", "sk_sandbox_unknown", false, false, 200, ok("ok")},
		{"Ready", "GET", "/readyz", "", false, false, 200, ok("ready")},
		{"HealthStoreDown", "GET", "/healthz", "", true, false, 200, ok("ok")},
		{"ReadyStoreFails", "GET", "/readyz", "", true, false, 503, notReady},
		{"ReadyStoreHangs", "GET", "/readyz", "", false, true, 503, notReady},
		{"OtherMethod", "POST", "/healthz", "", false, false, 405, map[string]any{"status": "error",
			"code": "method_not_allowed", "message": "POST is not allowed on this path", "details": map[string]any{}}},
		{"Neighbour", "GET", "/healthz/x", "", false, false, 401, map[string]any{"error": map[string]any{
			"code": "unauthorized", "message": "a valid API key is required: send Authorization: Bearer <key>"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db.fail.Store(tc.fail)
			db.hang.Store(tc.hang)
			defer db.fail.Store(false)
			defer db.hang.Store(false)
			start := time.Now()
			r := e.do(tc.method, tc.path, tc.key, nil)
			if took := time.Since(start); took > 2*time.Second {
				t.Errorf("took %v", took)
			}
			if r.Status != tc.status {
				t.Errorf("%d, want %d", r.Status, tc.status)
			}
			if diff := cmp.Diff(tc.body, r.Body); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
		})
	}
	var warned int
	for _, l := range rec.take() {
		if l["msg"] == "readiness check failed" && l["request_id"] != "" {
			warned++
		}
	}
	if warned != 2 {
		t.Errorf("%d readiness warnings with a request_id, want 2", warned)
	}
}
