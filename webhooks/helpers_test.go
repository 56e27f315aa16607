package webhooks_test

import (
	"context"
	"crypto/x509"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/service"
	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/bolt"
	"github.com/corebank/corebank/storage/memory"
	"github.com/corebank/corebank/webhooks"
)

var ctx = context.Background()

// start is the mock clock's starting instant in every test.
var start = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// testOutbox is the ledger's outbox on the test's store, with a helper
// that appends an event in a transaction of its own.
type testOutbox struct {
	webhooks.Outbox
	led *ledger.Service
	clk clock.Clock
	db  storage.Backend
}

func newOutbox(clk clock.Clock, db storage.Backend) *testOutbox {
	led := ledger.NewService(db, &ledger.Options{Deps: service.Deps{Clock: clk}})
	return &testOutbox{Outbox: webhooks.LedgerOutbox(led), led: led, clk: clk, db: db}
}

func (o *testOutbox) Append(t testing.TB, typ, entityID string, data any) webhooks.Event {
	t.Helper()
	ev, err := storage.Update(context.Background(), o.db, func(tx storage.Tx) (*ledger.Event, error) {
		return o.led.AppendEventTx(tx, o.clk.Now(), typ, entityID, data)
	})
	if err != nil {
		t.Fatal(err)
	}
	return webhooks.Event{ID: ev.ID, Type: ev.Type, EntityID: ev.EntityID, Data: ev.Object, Created: ev.Created}
}

func mustSealer(t testing.TB) *corebank.Sealer {
	t.Helper()
	s, err := corebank.NewSealer(make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// hit is one request a receiver got.
type hit struct {
	Header http.Header
	Body   []byte
	// Offset is the x-service-event-timestamp minus the clock's start.
	Offset time.Duration
}

// receiver is a TLS endpoint answering with status(n) to its n-th request
// (from 1).
type receiver struct {
	srv    *httptest.Server
	mu     sync.Mutex
	hits   []hit
	status func(n int) int
	notify chan struct{}
}

func newReceiver(t testing.TB, status func(n int) int) *receiver {
	t.Helper()
	r := &receiver{status: status, notify: make(chan struct{}, 1000)}
	r.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		ms, _ := strconv.ParseInt(req.Header.Get(webhooks.HeaderTimestamp), 10, 64)
		r.mu.Lock()
		r.hits = append(r.hits, hit{Header: req.Header.Clone(), Body: body, Offset: time.UnixMilli(ms).Sub(start)})
		n := len(r.hits)
		r.mu.Unlock()
		code := http.StatusOK
		if r.status != nil {
			code = r.status(n)
		}
		if code >= 300 && code < 400 {
			w.Header().Set("Location", r.srv.URL+"/elsewhere")
		}
		w.WriteHeader(code)
		select {
		case r.notify <- struct{}{}:
		default:
		}
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) Hits() []hit {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]hit(nil), r.hits...)
}

func (r *receiver) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(r.srv.Certificate())
	return p
}

func always(code int) func(int) int { return func(int) int { return code } }

// env is one service under test.
type env struct {
	clk    *clock.Mock
	db     storage.Backend
	outbox *testOutbox
	svc    *webhooks.Service
	recv   *receiver
	opts   webhooks.Options
}

func newEnv(t testing.TB, db storage.Backend, status func(int) int, mod func(*webhooks.Options)) *env {
	t.Helper()
	clk := clock.NewMock()
	clk.Set(start)
	if db == nil {
		db = memory.New()
		t.Cleanup(func() { db.Close() })
	}
	e := &env{clk: clk, db: db, outbox: newOutbox(clk, db), recv: newReceiver(t, status)}
	// Signed on the mock clock, so that tests read an attempt's time (the
	// retry schedule) from its timestamp; TestSignedAtWallClock covers the
	// default.
	e.opts = webhooks.Options{Deps: service.Deps{Clock: clk}, SignClock: clk, Env: webhooks.EnvSandbox, RootCAs: e.recv.Pool()}
	if mod != nil {
		mod(&e.opts)
	}
	e.svc = webhooks.NewService(db, e.outbox, mustSealer(t), &e.opts)
	return e
}

func openBolt(t testing.TB, path string) storage.Backend {
	t.Helper()
	db, err := bolt.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func boltPath(t testing.TB) string { return filepath.Join(t.TempDir(), "db") }

func ptr[T any](v T) *T { return &v }

func events(all bool, pairs ...string) *webhooks.EnabledEvents {
	e := &webhooks.EnabledEvents{All: all, Groups: map[string]map[string]bool{}}
	for _, p := range pairs {
		g, k, _ := cut(p)
		if e.Groups[g] == nil {
			e.Groups[g] = map[string]bool{}
		}
		e.Groups[g][k] = true
	}
	return e
}

func cut(s string) (string, string, bool) {
	for i := range s {
		if s[i] == '.' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

func (e *env) mustCreate(t testing.TB, entity string, ev *webhooks.EnabledEvents) *webhooks.Webhook {
	t.Helper()
	w, err := e.svc.CreateWebhook(ctx, corebank.As(entity), webhooks.NewWebhook{
		EntityID: entity, URL: e.recv.srv.URL + "/hook", ExpiresIn: ptr(int64(86400)), EnabledEvents: ev,
	})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func (e *env) mustDrain(t testing.TB) int {
	t.Helper()
	n, err := e.svc.Drain(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// fakeResolver answers every host with addrs.
type fakeResolver struct {
	mu    sync.Mutex
	addrs []netip.Addr
}

func (f *fakeResolver) Set(a ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.addrs = nil
	for _, s := range a {
		f.addrs = append(f.addrs, netip.MustParseAddr(s))
	}
}

func (f *fakeResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]netip.Addr(nil), f.addrs...), nil
}
