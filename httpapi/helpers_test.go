package httpapi_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"io"
	"log/slog"
	mrand "math/rand"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/corebank/corebank"
	"github.com/corebank/corebank/acquiring"
	"github.com/corebank/corebank/capital"
	"github.com/corebank/corebank/cards"
	"github.com/corebank/corebank/entities"
	"github.com/corebank/corebank/funding"
	"github.com/corebank/corebank/httpapi"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/payments"
	"github.com/corebank/corebank/service"
	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/memory"
	"github.com/corebank/corebank/webhooks"
)

var (
	rsaOnce sync.Once
	rsaKey  *rsa.PrivateKey
)

// testKey returns one cached RSA key so that API key creation is fast.
func testKey() (*rsa.PrivateKey, error) {
	rsaOnce.Do(func() {
		var err error
		rsaKey, err = rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
	})
	return rsaKey, nil
}

// fakeFunding is the real funding service over a store that counts the
// service's transactions; block, when set, is waited on before each (to
// hold a request in flight).
type fakeFunding struct {
	storage.Backend
	svc     *funding.Service
	calls   atomic.Int64
	block   chan struct{}
	entered chan struct{}
}

func (f *fakeFunding) Update(ctx context.Context, fn func(storage.Tx) error) error {
	f.calls.Add(1)
	if f.block != nil {
		f.entered <- struct{}{}
		<-f.block
	}
	return f.Backend.Update(ctx, fn)
}

// env is one API over a fresh in-memory store with a bootstrapped root.
type env struct {
	t        testing.TB
	h        http.Handler
	clock    *clock.Mock
	led      *ledger.Service
	ent      *entities.Service
	funding  *fakeFunding
	sessions *funding.SessionService
	pay      *payments.Service
	acq      *acquiring.Service
	cards    *cards.Service
	capital  *capital.Service
	// afterDebit, when set, runs between a capital confirmation's debit
	// and its capital account (capital.Options.AfterDebit).
	afterDebit atomic.Pointer[func(orderID string) error]
	wh         *webhooks.Service
	db         storage.Backend
	root       string // root entity ID
	key        string // root full-access key
	roKey      string // root read-only key
	jobs       atomic.Int64
}

type envOpt func(*httpapi.Options)

func newEnv(t testing.TB, opts ...envOpt) *env {
	t.Helper()
	return build(t, memory.New(), 0, opts...)
}

// newEnvDB is newEnv over db, which it closes when the test ends.
func newEnvDB(t testing.TB, db storage.Backend, opts ...envOpt) *env {
	t.Helper()
	return build(t, db, 0, opts...)
}

// newEnvSeeded is newEnv with reproducible IDs (for golden files).
func newEnvSeeded(t testing.TB, seed int64) *env {
	t.Helper()
	return build(t, memory.New(), seed)
}

func build(t testing.TB, db storage.Backend, seed int64, opts ...envOpt) *env {
	t.Helper()
	e := &env{t: t, clock: clock.NewMock(), db: db}
	e.clock.Set(time.Date(2026, 3, 15, 12, 0, 0, 0, time.UTC))
	t.Cleanup(func() { e.db.Close() })
	sealer, err := corebank.NewSealer(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	var ids *corebank.IDs
	if seed != 0 {
		ids = corebank.NewIDs(mrand.New(mrand.NewSource(seed)))
	}
	e.led = ledger.NewService(e.db, &ledger.Options{Deps: service.Deps{Clock: e.clock, Tree: entities.Gate{}, IDs: ids}, Gate: entities.Gate{}})
	e.ent = entities.NewService(e.db, e.led, sealer, &entities.Options{Deps: service.Deps{Clock: e.clock, IDs: ids}, GenerateKey: testKey})
	boot, created, err := e.ent.Bootstrap(context.Background())
	if err != nil || !created {
		t.Fatalf("bootstrap: %v %v", created, err)
	}
	e.root, e.key, e.roKey = boot.EntityID, boot.APIKey, boot.ReadOnlyAPIKey
	e.funding = &fakeFunding{Backend: e.db}
	fund := funding.NewService(e.funding, e.led, &funding.Options{Deps: service.Deps{Clock: e.clock, IDs: ids, Tree: entities.Gate{}}})
	e.funding.svc = fund
	e.sessions = funding.NewSessionService(fund, nil)
	e.pay = payments.NewService(e.db, e.led, &payments.Options{Deps: service.Deps{Clock: e.clock, IDs: ids,
		Tree: e.ent}, Receiver: fund})
	e.acq = acquiring.NewService(e.db, e.led, &acquiring.Options{Deps: service.Deps{Clock: e.clock, IDs: ids, Tree: e.ent}, Keys: e.ent})
	e.cards = cards.NewService(e.db, e.led, sealer, &cards.Options{Deps: service.Deps{Clock: e.clock, IDs: ids, Tree: e.ent}, NumberKey: []byte("test number key")})
	e.capital = capital.NewService(e.db, e.led, &capital.Options{Deps: service.Deps{Clock: e.clock, IDs: ids, Tree: e.ent},
		AfterDebit: func(id string) error {
			if f := e.afterDebit.Load(); f != nil {
				return (*f)(id)
			}
			return nil
		}})
	e.wh = webhooks.NewService(e.db, webhooks.LedgerOutbox(e.led), sealer, &webhooks.Options{Deps: service.Deps{Clock: e.clock,
		IDs: ids, Tree: e.ent}, Env: webhooks.EnvSandbox})
	o := &httpapi.Options{Env: httpapi.EnvSandbox, FakeClock: e.clock,
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil)),
		CursorKey: []byte("test cursor key"),
		RunJobs: func(ctx context.Context, now time.Time) error {
			e.jobs.Add(1)
			if _, err := e.led.RunDue(ctx, now); err != nil {
				return err
			}
			if _, err := fund.RunDue(ctx, now); err != nil {
				return err
			}
			if _, err := e.sessions.RunDue(ctx, now); err != nil {
				return err
			}
			if _, err := e.pay.RunDue(ctx, now); err != nil {
				return err
			}
			if _, err := e.acq.RunDue(ctx, now); err != nil {
				return err
			}
			_, err := e.capital.RunDue(ctx, now)
			return err
		}}
	for _, f := range opts {
		f(o)
	}
	e.h = httpapi.New(httpapi.Services{DB: e.db, Ledger: e.led, Entities: e.ent, Funding: e.funding.svc,
		FundingSessions: e.sessions, Payments: e.pay, Webhooks: e.wh, Acquiring: e.acq, Cards: e.cards, Capital: e.capital}, o)
	return e
}

type resp struct {
	Status int
	Header http.Header
	Body   map[string]any
	Raw    string
}

// do sends one request; body is a string, []byte, or any value to encode.
// hdr is name, value pairs.
func (e *env) do(method, path, key string, body any, hdr ...string) resp {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	r := httptest.NewRequest(method, path, rd)
	if key != "" {
		r.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	w := e.serve(r)
	out := resp{Status: w.Code, Header: w.Header(), Raw: w.Body.String()}
	_ = json.Unmarshal(w.Body.Bytes(), &out.Body)
	checkRequestID(e.t, r, &out)
	return out
}

// checkRequestID asserts what CONTRACT.md promises of every response: an
// X-Request-Id header (the caller's valid one, else a new one), named by
// every error body as request_id (error.request_id in the 401/403 form).
// A replay of a stored response names the request that did the work. It
// then takes the field out of Body and Raw, so that the tests comparing
// bodies compare what does not change from request to request.
func checkRequestID(t testing.TB, r *http.Request, out *resp) {
	t.Helper()
	id := out.Header.Get(httpapi.HeaderRequestID)
	if id == "" {
		t.Fatalf("%s %s: no %s header", r.Method, r.URL, httpapi.HeaderRequestID)
	}
	if given := r.Header.Get(httpapi.HeaderRequestID); given != "" && given != id && len(given) <= 128 && !strings.ContainsFunc(given, func(c rune) bool { return c <= ' ' || c > '~' }) {
		t.Errorf("%s %s: request ID %q answered as %q", r.Method, r.URL, given, id)
	}
	obj := out.Body
	if e, ok := obj["error"].(map[string]any); ok {
		obj = e
	}
	named, has := obj["request_id"].(string)
	if out.Status >= 400 && out.Body != nil && !has {
		t.Errorf("%s %s: %d error body names no request_id: %.300s", r.Method, r.URL, out.Status, out.Raw)
	}
	if !has {
		return
	}
	if named != id && out.Header.Get("Idempotent-Replayed") == "" {
		t.Errorf("%s %s: the body names request %q, the header %q", r.Method, r.URL, named, id)
	}
	delete(obj, "request_id")
	quoted, _ := json.Marshal(named)
	out.Raw = strings.Replace(out.Raw, `,"request_id":`+string(quoted), "", 1)
}

// must sends a request and fails the test unless it answers status.
func (e *env) must(status int, method, path, key string, body any, hdr ...string) resp {
	e.t.Helper()
	r := e.do(method, path, key, body, hdr...)
	if r.Status != status {
		e.t.Fatalf("%s %s: got %d, want %d: %.500s", method, path, r.Status, status, r.Raw)
	}
	return r
}

func (r resp) code() string {
	if e, ok := r.Body["error"].(map[string]any); ok {
		s, _ := e["code"].(string)
		return s
	}
	s, _ := r.Body["code"].(string)
	return s
}

func (r resp) details() map[string]any {
	d, _ := r.Body["details"].(map[string]any)
	return d
}

// data is the envelope's data object.
func (r resp) data() map[string]any {
	d, _ := r.Body["data"].(map[string]any)
	return d
}

func (r resp) str(path ...string) string {
	var v any = r.Body
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		v = m[p]
	}
	s, _ := v.(string)
	return s
}

// account opens an account for entity ("" for the root) and returns its ID.
func (e *env) account(key, entity, currency string) string {
	e.t.Helper()
	body := map[string]any{"type": "checking", "currency": currency, "display_name": "Main " + currency}
	if entity != "" {
		body["entity_id"] = entity
	}
	r := e.must(201, "POST", "/accounts", key, body)
	return r.str("data", "id")
}

// newKey creates an API key on entity through the sandbox route.
func (e *env) newKey(key, entity string, readOnly bool) (id, secret string) {
	e.t.Helper()
	r := e.must(201, "POST", "/sandbox/api-keys", key, map[string]any{"entity_id": entity, "read_only": readOnly})
	return r.str("id"), r.str("api_key")
}
