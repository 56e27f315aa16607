package httpapi

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"path"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/corebank/corebank"
	"github.com/corebank/corebank/acquiring"
	"github.com/corebank/corebank/capital"
	"github.com/corebank/corebank/cards"
	"github.com/corebank/corebank/entities"
	"github.com/corebank/corebank/funding"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/payments"
	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/webhooks"
)

// handler is the http.Handler New returns.
type handler struct {
	*routing
	db       storage.Backend
	log      *slog.Logger
	clock    clock.Clock
	fake     *clock.Mock
	runJobs  func(ctx context.Context, now time.Time) error
	advancer func(ctx context.Context, d time.Duration) (time.Time, error) // Options.AdvanceClock
	env      string
	cursors  cursors
	idemTTL  time.Duration
	sealer   *corebank.Sealer // nil: idempotency records in clear, secrets removed
	advance  sync.Mutex       // serialises sandbox clock advances
	inflight inflight
	noStore  atomic.Bool // tests: answer without storing, as a crash would
	// completer stores completions after the answer (Options.DeferCompletion).
	completer *completer

	led      *ledger.Service
	ent      *entities.Service
	funding  *funding.Service
	sessions *funding.SessionService
	acq      *acquiring.Service
	cards    *cards.Service
	capital  *capital.Service
	pay      *payments.Service
	wh       *webhooks.Service

	// auth authenticates a bearer secret (entities.AuthenticatePrincipal
	// through New; tests swap it). It decides no scope: services do.
	auth func(ctx context.Context, secret string) (corebank.Caller, error)

	logRequests  bool
	onRequest    func(RequestInfo)
	clientAddr   func(*http.Request) string // Options.ClientAddr
	readyTimeout time.Duration

	// Rate limits (limits.go): nil when off.
	limits *limiters
}

// handlerFunc serves one route. A returned error is written as the error
// response; a handler that returns nil has written its response.
type handlerFunc func(h *handler, x *exchange, r *http.Request) error

// exchange is the ResponseWriter every route handler receives. It carries
// the caller and the request body, and can capture the response so that an
// idempotent request stores what it answered.
type exchange struct {
	w       http.ResponseWriter
	h       *handler
	c       corebank.Caller
	body    []byte
	status  int
	wrote   bool // the handler wrote a status
	sent    bool // a status went to the client (not only to capture)
	capture *bytes.Buffer
	reqID   string // the X-Request-Id answered
}

// caller is the request's caller, as the services take it.
func (x *exchange) caller() corebank.Caller { return x.c }

func (x *exchange) Header() http.Header { return x.w.Header() }

func (x *exchange) WriteHeader(status int) {
	if x.wrote {
		return
	}
	x.wrote = true
	x.status = status
	if x.capture == nil {
		x.sent = true
		x.w.WriteHeader(status)
	}
}

func (x *exchange) Write(b []byte) (int, error) {
	if !x.wrote {
		x.WriteHeader(http.StatusOK)
	}
	if x.capture != nil {
		return x.capture.Write(b)
	}
	return x.w.Write(b)
}

func (x *exchange) Unwrap() http.ResponseWriter { return x.w }

var exchangePool = sync.Pool{New: func() any { return new(exchange) }}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	x := exchangePool.Get().(*exchange)
	*x = exchange{w: w, h: h, reqID: requestID(r.Header.Get(HeaderRequestID))}
	w.Header()[HeaderRequestID] = []string{x.reqID}
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			h.log.ErrorContext(r.Context(), "panic serving request",
				slog.String("method", r.Method), slog.String("path", r.URL.Path),
				slog.String("request_id", x.reqID),
				slog.Any("panic", v), slog.String("stack", string(debug.Stack())))
			x.capture = nil
			if !x.sent {
				x.wrote = false
				h.writeError(x, r, errPanic)
			}
		}
		h.served(x, r, start)
		*x = exchange{}
		exchangePool.Put(x)
	}()

	if p := r.URL.Path; p != "*" && (p == "" || path.Clean(p) != p) {
		// net/http's mux would redirect to the cleaned path with an HTML
		// body (or open a prefix by "..": /sandbox/checkout/../accounts);
		// no route of the API is unclean, so it is not found, in JSON.
		h.writeError(x, r, errRouteMissing)
		return
	}
	// Rate limits (limits.go): the client address's bucket before
	// anything, the failed-authentication one around the key lookup, the
	// key's after it. Off, they cost these nil checks.
	var addr string
	if h.limits != nil {
		addr = limitAddr(h.clientAddr(r))
		if err := h.limits.before(r, addr); err != nil {
			h.writeError(x, r, err)
			return
		}
	}
	if h.isOpen(r.URL.Path) {
		h.mux.ServeHTTP(x, r)
		return
	}
	c, err := h.authenticate(r, addr)
	if err != nil {
		h.writeError(x, r, err)
		return
	}
	x.c = c
	if h.limits != nil {
		if err := h.limits.after(c); err != nil {
			h.writeError(x, r, err)
			return
		}
	}
	// Every service refuses a read-only caller's change itself; refusing
	// every other method here too covers the routes that reach no service
	// (the sandbox clock and FX switches) with the same error.
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		if err := c.CheckWrite(); err != nil {
			h.writeError(x, r, err)
			return
		}
	}
	h.mux.ServeHTTP(x, r)
}

// isOpen reports whether path is served without a key.
func (h *handler) isOpen(path string) bool {
	if h.openPaths[path] {
		return true
	}
	for _, p := range h.openPrefixes {
		if strings.HasPrefix(path, p) {
			return true
		}
	}
	return false
}

// errPanic is a plain error so that writeError answers a sanitised 500.
var errPanic = plainError("panic while serving the request")

type plainError string

func (e plainError) Error() string { return string(e) }

// fallback answers a request no route matched (it is mounted at "/"):
// 405 with Allow when the path exists under another method, else 404, both
// in the JSON error form. Like every route it finds its handler in the
// exchange (see routing).
func fallback(w http.ResponseWriter, r *http.Request) {
	x, ok := w.(*exchange)
	if !ok { // mounted without ServeHTTP; cannot happen through New
		writeJSON(w, http.StatusInternalServerError, &errorBody{Status: "error", Code: "internal_error",
			Message: "httpapi: route served outside the handler", Details: emptyDetails})
		return
	}
	h := x.h
	var allow []string
	for _, m := range [...]string{http.MethodGet, http.MethodPost, http.MethodPatch, http.MethodPut, http.MethodDelete} {
		if m == r.Method {
			continue
		}
		r2 := *r
		r2.Method = m
		if _, pat := h.mux.Handler(&r2); pat != "" && pat != "/" {
			allow = append(allow, m)
		}
	}
	if len(allow) == 0 {
		h.writeError(w, r, errRouteMissing)
		return
	}
	w.Header().Set("Allow", strings.Join(allow, ", "))
	writeJSON(w, http.StatusMethodNotAllowed, &errorBody{Status: "error", Code: codeMethodNotAllowed,
		Message: r.Method + " is not allowed on this path", Details: emptyDetails, RequestID: responseID(w)})
}

// authenticate reads the bearer key of a request from the client address
// addr (the rate limits' key for it; "" when they are off).
func (h *handler) authenticate(r *http.Request, addr string) (corebank.Caller, error) {
	secret := BearerKey(r)
	if secret == "" || len(secret) > 512 {
		return corebank.Caller{}, errUnauthorized
	}
	if h.limits != nil {
		return h.guardedLookup(r.Context(), addr, secret)
	}
	return h.lookup(r.Context(), secret)
}

// BearerKey returns the API key r carries as "Authorization: Bearer
// <key>" ("Bearer" in any case, the key trimmed), or "" when it carries
// none. A layer in front of the handler that routes by key
// (bank/workspace) reads it the same way.
func BearerKey(r *http.Request) string {
	a := r.Header.Get("Authorization")
	const prefix = "Bearer "
	if len(a) <= len(prefix) || !strings.EqualFold(a[:len(prefix)], prefix) {
		return ""
	}
	return strings.TrimSpace(a[len(prefix):])
}

// lookup finds the API key whose secret is secret: errUnauthorized when
// none has it.
func (h *handler) lookup(ctx context.Context, secret string) (corebank.Caller, error) {
	c, err := h.auth(ctx, secret)
	if err != nil {
		switch corebank.KindOf(err) {
		case corebank.KindUnauthorized, corebank.KindNotFound, corebank.KindInvalid, corebank.KindForbidden:
			return corebank.Caller{}, errUnauthorized
		}
		return corebank.Caller{}, err
	}
	return c, nil
}

// hasBody lists the methods whose body a route may read.
func hasBody(method string) bool {
	switch method {
	case http.MethodPost, http.MethodPatch, http.MethodPut, http.MethodDelete:
		return true
	}
	return false
}

// wrap adapts a handlerFunc to the mux: it reads the body and runs the
// handler of the exchange's bank, through the idempotency layer for POST
// unless the route is open (it has no entity to keep the key under).
func wrap(fn handlerFunc, open bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		x, ok := w.(*exchange)
		if !ok { // mounted without ServeHTTP; cannot happen through New
			fallback(w, r)
			return
		}
		h := x.h
		if hasBody(r.Method) {
			buf := getBuf()
			defer putBuf(buf)
			if err := readBody(r, buf); err != nil {
				h.writeError(x, r, err)
				return
			}
			x.body = buf.Bytes()
		}
		if r.Method == http.MethodPost && !open {
			if key := r.Header.Get("Idempotency-Key"); key != "" {
				h.idempotent(x, r, key, fn)
				return
			}
		}
		if err := fn(h, x, r); err != nil {
			h.writeError(x, r, err)
		}
	})
}
