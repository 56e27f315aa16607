package httpapi

import (
	"context"
	"crypto/rand"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/corebank/corebank"
	"github.com/corebank/corebank/storage"
)

// Environments accepted by Options.Env.
const (
	EnvSandbox    = "sandbox"
	EnvProduction = "production"
)

// DefaultIdempotencyTTL is how long a completed idempotent response is kept
// when Options.IdempotencyTTL is zero.
const DefaultIdempotencyTTL = 24 * time.Hour

// Options configures New. A nil *Options, and every zero field, takes the
// documented default.
type Options struct {
	// Env is EnvSandbox or EnvProduction (default EnvSandbox). The
	// /sandbox/* routes exist only in the sandbox.
	Env string
	// Clock is the time source for idempotency expiry and the sandbox clock
	// (default FakeClock when set, else the real clock).
	Clock clock.Clock
	// FakeClock, when non-nil, enables POST /sandbox/clock/advance, which
	// moves it forward and then calls RunJobs.
	FakeClock *clock.Mock
	// AdvanceClock, when set with FakeClock, is how the clock advance route
	// moves the time (bank.New sets it to a storage.SharedClock's Advance,
	// so that every node over the store sees the advance); it returns the
	// new time. Without it the route adds to FakeClock.
	AdvanceClock func(ctx context.Context, d time.Duration) (time.Time, error)
	// RunJobs runs every job due at now (expiries, settlement, retries,
	// accrual). The clock advance route calls it before answering; nil means
	// no jobs.
	RunJobs func(ctx context.Context, now time.Time) error
	// Logger receives server errors and panics (default slog.Default()),
	// each naming its request ID. Secrets and request bodies are never
	// logged.
	Logger *slog.Logger
	// LogRequests, when true, writes one Info line per request to Logger,
	// "request" with method, route (the matched pattern's path, or
	// RouteUnmatched), status, duration, entity (the caller's, empty
	// without a valid key), request_id and client (ClientAddr's).
	LogRequests bool
	// OnRequest, when set, is called once per request after its response
	// is written, on the request's goroutine (metrics: examples/server
	// counts requests by route and status with it). It must not block.
	OnRequest func(RequestInfo)
	// ReadyTimeout bounds the store read of GET /readyz (default
	// DefaultReadyTimeout).
	ReadyTimeout time.Duration
	// CursorKey is the HMAC key that signs list cursors (default 32 random
	// bytes, so cursors do not survive a restart; set it to keep them).
	CursorKey []byte
	// Sealer seals what an Idempotency-Key keeps (the request hash and the
	// response, API keys and webhook secrets included) so that nothing
	// readable rests in the store, and replays are the original bytes. Give
	// it a key of its own (corebank.DeriveKey with its own purpose). Without
	// one, records are kept in clear with their secrets removed first, and a
	// replay of a response that held one lacks it. See "Idempotency" in the
	// package doc.
	Sealer *corebank.Sealer
	// IdempotencyTTL is how long a completed Idempotency-Key response is
	// replayed (default DefaultIdempotencyTTL, the promise the API docs make).
	IdempotencyTTL time.Duration
	// DeferCompletion, when true, stores the completed response of a
	// request whose writes are already journaled in its Idempotency-Key
	// record after answering, several per transaction, instead of in a
	// transaction of its own before answering. A retry that comes first
	// runs the handler over the journaled steps, as after a crash, and
	// answers the same bytes (TestIdempotentRetryAfterCrash holds for every
	// route). A completion waits up to 50 ms for others to share its
	// transaction. It halves the transactions of a keyed POST, which counts
	// where each costs round trips to a database (examples/server sets it
	// on PostgreSQL).
	DeferCompletion bool

	// Limits, when non-nil, limits the rate of requests per API key and
	// per client address, and of failed authentications per client
	// address, answering 429 rate_limited past them (see Limits). Nil
	// limits nothing and costs a nil check per request.
	Limits *Limits
	// ClientAddr names the client of a request, for the request log and
	// Limits (default: the host part of RemoteAddr, the direct peer).
	// Behind a proxy, examples/server passes one that believes
	// X-Forwarded-For from the proxies it trusts only; otherwise every
	// client would share the proxy's buckets. It must not block.
	ClientAddr func(*http.Request) string
}

// remoteHost is the default Options.ClientAddr: the host part of
// r.RemoteAddr (the direct peer's IP), or RemoteAddr whole when it has no
// port.
func remoteHost(r *http.Request) string {
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}

// newHandler builds the handler's machinery shared by every route.
func newHandler(db storage.Backend, opt *Options) *handler {
	var o Options
	if opt != nil {
		o = *opt
	}
	h := &handler{db: db, env: o.Env, fake: o.FakeClock, runJobs: o.RunJobs, advancer: o.AdvanceClock}
	if h.env == "" {
		h.env = EnvSandbox
	}
	switch {
	case o.Clock != nil:
		h.clock = o.Clock
	case o.FakeClock != nil:
		h.clock = o.FakeClock
	default:
		h.clock = clock.New()
	}
	h.log = o.Logger
	if h.log == nil {
		h.log = slog.Default()
	}
	key := o.CursorKey
	if len(key) == 0 {
		key = make([]byte, 32)
		if _, err := io.ReadFull(rand.Reader, key); err != nil {
			panic("httpapi: no randomness for the cursor key: " + err.Error())
		}
	}
	h.cursors = cursors{key: append([]byte(nil), key...)}
	h.sealer = o.Sealer
	h.logRequests, h.onRequest = o.LogRequests, o.OnRequest
	h.readyTimeout = o.ReadyTimeout
	if h.readyTimeout <= 0 {
		h.readyTimeout = DefaultReadyTimeout
	}
	if o.DeferCompletion {
		h.completer = newCompleter(h)
	}
	h.limits, h.clientAddr = o.Limits.build(), o.ClientAddr
	if h.clientAddr == nil {
		h.clientAddr = remoteHost
	}
	h.idemTTL = o.IdempotencyTTL
	if h.idemTTL <= 0 {
		h.idemTTL = DefaultIdempotencyTTL
	}
	return h
}

// route is one row of the route table: a ServeMux pattern with its method.
type route struct {
	pattern string
	fn      handlerFunc
}

// routing is a route table mounted on a mux, with the paths of its open
// routes: ServeHTTP serves those without authenticating. It holds no
// bank's state (each route finds its handler in the exchange), so every
// handler of an environment shares one (sharedRouting): a process that
// hosts many banks, bank/workspace's, builds and keeps it once.
type routing struct {
	mux      *http.ServeMux
	patterns []string
	// openPaths are the paths of the routes that need no key (open in
	// routes.go), openPrefixes those of open routes with a wildcard, up to
	// it.
	openPaths    map[string]bool
	openPrefixes []string
}

// newRouting mounts routes, skipping /sandbox/ ones outside the sandbox,
// and the JSON 404/405 fallback at "/".
func newRouting(routes []route, env string) *routing {
	rt := &routing{mux: http.NewServeMux(), openPaths: map[string]bool{}}
	for _, r := range routes {
		if strings.Contains(r.pattern, " /sandbox/") && env != EnvSandbox {
			continue
		}
		rt.mux.Handle(r.pattern, wrap(r.fn, open[r.pattern]))
		rt.patterns = append(rt.patterns, r.pattern)
		if open[r.pattern] {
			_, path, _ := strings.Cut(r.pattern, " ")
			if prefix, _, wild := strings.Cut(path, "{"); wild {
				if !slices.Contains(rt.openPrefixes, prefix) {
					rt.openPrefixes = append(rt.openPrefixes, prefix)
				}
				continue
			}
			rt.openPaths[path] = true
		}
	}
	rt.mux.HandleFunc("/", fallback)
	return rt
}

// sharedRouting is newRouting(routes, env), built once per environment.
func sharedRouting(env string) *routing {
	routings.mu.Lock()
	defer routings.mu.Unlock()
	rt := routings.byEnv[env]
	if rt == nil {
		rt = newRouting(routes, env)
		routings.byEnv[env] = rt
	}
	return rt
}

var routings = struct {
	mu    sync.Mutex
	byEnv map[string]*routing
}{byEnv: map[string]*routing{}}

// register mounts routes on h alone (tests mount tables of their own).
func (h *handler) register(routes []route) { h.routing = newRouting(routes, h.env) }
