package corebanktest

import (
	"context"
	"crypto/x509"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/corebank/corebank/bank"
	"github.com/corebank/corebank/entities"
	"github.com/corebank/corebank/internal/keypool"
	"github.com/corebank/corebank/storage/memory"
)

// Start is where a bank's clock starts unless WithClockStart says
// otherwise: a fixed instant, so that times in a test are the same on
// every run.
var Start = time.Date(2026, time.January, 5, 9, 0, 0, 0, time.UTC)

// Bank is a corebank for one test: every service (the embedded *bank.Bank),
// its mock clock, its root entity's keys and an HTTP server of its API.
type Bank struct {
	*bank.Bank
	// Clock is the bank's own clock (the embedded Bank's Clock, as a
	// *clock.Mock). Move it with Advance, which also runs the work that
	// falls due.
	Clock *clock.Mock
	// Server serves the REST API; its Client trusts it, TLS or not.
	Server *httptest.Server
	// Root is the root entity and its full-access and read-only API keys.
	Root entities.BootstrapResult

	t       testing.TB
	api     *Client
	advance sync.Mutex

	mu        sync.Mutex
	receivers []*Receiver // closed after the dispatcher stops
}

// Option configures New.
type Option func(*config)

type config struct {
	start time.Time
	tls   bool
	opts  []func(*bank.Options)
}

// WithClockStart starts the bank's clock at t instead of Start.
func WithClockStart(t time.Time) Option { return func(c *config) { c.start = t } }

// WithTLS serves the API over HTTPS (httptest.NewTLSServer) instead of
// plain HTTP. Bank.Server.Client and the Client helpers trust it.
func WithTLS() Option { return func(c *config) { c.tls = true } }

// WithOptions lets fn change the bank.Options New passes to bank.New (fees,
// providers, webhook retry timing, a logger, ...). New has already set
// SecretKey, Clock, Logger (discarding), Entities.GenerateKey (the key
// pool) and Webhooks.RootCAs (httptest's certificate); fn may replace any
// of them. Several WithOptions apply in order.
func WithOptions(fn func(*bank.Options)) Option {
	return func(c *config) { c.opts = append(c.opts, fn) }
}

var discard = slog.New(slog.NewTextHandler(io.Discard, nil))

// New returns a bootstrapped bank on the in-memory backend for t and
// registers its cleanup with t.Cleanup. It fails t (t.Fatalf) if the bank
// cannot be built, which happens only on options bank.New refuses.
func New(t testing.TB, opts ...Option) *Bank {
	t.Helper()
	c := config{start: Start}
	for _, o := range opts {
		o(&c)
	}
	mock := clock.NewMock()
	mock.Set(c.start)
	o := bank.Options{
		// The key that seals secrets at rest: the store lives in memory and
		// dies with the test, so a fixed key hides nothing worth hiding.
		SecretKey: make([]byte, 32),
		Clock:     mock,
		Logger:    discard,
	}
	o.Entities.GenerateKey = keypool.New()
	o.Webhooks.RootCAs = httptestRoots()
	// The server starts first, so that the links the bank makes (a funding
	// session's checkout_url) are absolute URLs of it; it answers 503
	// until the bank is built.
	late := &lateHandler{}
	var srv *httptest.Server
	if c.tls {
		srv = httptest.NewTLSServer(late)
	} else {
		srv = httptest.NewServer(late)
	}
	o.FundingSessions.CheckoutBase = srv.URL
	for _, fn := range c.opts {
		fn(&o)
	}
	db := memory.New()
	inner, err := bank.New(db, o)
	if err != nil {
		srv.Close()
		db.Close()
		t.Fatalf("corebanktest: %v", err)
	}
	b := &Bank{Bank: inner, Clock: mock, t: t}
	ctx := context.Background()
	if _, err := b.Migrate(ctx); err != nil {
		srv.Close()
		db.Close()
		t.Fatalf("corebanktest: migrate: %v", err)
	}
	root, _, err := b.Entities.Bootstrap(ctx)
	if err != nil {
		srv.Close()
		db.Close()
		t.Fatalf("corebanktest: bootstrap: %v", err)
	}
	b.Root = *root

	bg, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = b.Run(bg)
	}()
	late.h.Store(&b.Handler)
	b.Server = srv
	b.api = b.Client(b.Root.APIKey)
	t.Cleanup(func() {
		b.Server.Close()
		stop()
		<-done // attempts in flight are recorded
		b.mu.Lock()
		for _, r := range b.receivers {
			r.Server.Close()
		}
		b.mu.Unlock()
		db.Close()
	})
	return b
}

// httptestRoots is a pool holding the certificate every httptest TLS
// server presents (net/http/httptest serves them all with one built-in
// certificate), read once per process from a server started and closed
// for the purpose.
var httptestRoots = sync.OnceValue(func() *x509.CertPool {
	s := httptest.NewTLSServer(nil)
	defer s.Close()
	pool := x509.NewCertPool()
	pool.AddCert(s.Certificate())
	return pool
})

// Advance moves the bank's clock forward by d, runs every job due at the
// new time (bank.Bank.RunDue), waits until every webhook attempt due then
// has been made and recorded, to any endpoint (the test's own receivers
// as well as CaptureWebhooks'), and returns the new time. Calls are
// serialised. It fails the test if due work fails or an attempt is still
// in flight after WaitTimeout.
func (b *Bank) Advance(d time.Duration) time.Time {
	b.t.Helper()
	b.advance.Lock()
	defer b.advance.Unlock()
	b.Clock.Add(d)
	now := b.Clock.Now()
	if _, err := b.RunDue(context.Background(), now); err != nil {
		b.t.Fatalf("corebanktest: due work at %s: %v", now.Format(time.RFC3339), err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), WaitTimeout)
	defer cancel()
	if err := b.Webhooks.Settle(ctx); err != nil {
		b.t.Fatalf("corebanktest: webhook attempts still in flight after %s: %v", WaitTimeout, err)
	}
	return now
}

// lateHandler serves through the handler stored in h, and 503 until one
// is: the test server exists before the bank it serves.
type lateHandler struct{ h atomic.Pointer[http.Handler] }

func (l *lateHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := l.h.Load()
	if h == nil {
		http.Error(w, "corebanktest: the bank is not built yet", http.StatusServiceUnavailable)
		return
	}
	(*h).ServeHTTP(w, r)
}
