package httpapi_test

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/httpapi"
	"github.com/corebank/corebank/service"
	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/memory"
	"github.com/corebank/corebank/webhooks"
	"github.com/google/go-cmp/cmp"
)

// hit is one delivery a receiver got.
type hit struct {
	Header http.Header
	Body   []byte
}

// receiver is a TLS endpoint that records every delivery and answers 200.
type receiver struct {
	srv    *httptest.Server
	mu     sync.Mutex
	hits   []hit
	notify chan struct{}
}

func newReceiver(t testing.TB) *receiver {
	t.Helper()
	rc := &receiver{notify: make(chan struct{}, 1)}
	rc.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.hits = append(rc.hits, hit{Header: r.Header.Clone(), Body: body})
		rc.mu.Unlock()
		select {
		case rc.notify <- struct{}{}:
		default:
		}
		w.WriteHeader(http.StatusOK)
	}))
	// Idle delivery connections cut at Close are not worth a log line.
	rc.srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	rc.srv.StartTLS()
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) url() string { return rc.srv.URL + "/hook" }

func (rc *receiver) pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(rc.srv.Certificate())
	return p
}

func (rc *receiver) Hits() []hit {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.hits)
}

// wait returns the hits once there are at least n. The deadline only ends
// a test that would otherwise hang; no assertion depends on timing.
func (rc *receiver) wait(t testing.TB, n int) []hit {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		if h := rc.Hits(); len(h) >= n {
			return h
		}
		select {
		case <-rc.notify:
		case <-deadline:
			t.Fatalf("receiver got %d deliveries, want %d: %s", len(rc.Hits()), n, eventTypes(rc.Hits()))
		}
	}
}

// eventTypes lists the "event" of each hit's body.
func eventTypes(hits []hit) []string {
	out := []string{}
	for _, h := range hits {
		var b struct {
			Event string `json:"event"`
		}
		_ = json.Unmarshal(h.Body, &b)
		out = append(out, b.Event)
	}
	return out
}

// hookEnv is env with the webhooks service wired as an embedder wires it:
// the ledger, entities, funding and payments services write through the
// store wrapped by storage.WithCommitHook(db, wh.Wake); the webhooks
// service keeps its own bookkeeping on the unwrapped store; deliveries go
// to a TLS receiver it trusts; the clock advance runs every service's jobs.
type hookEnv struct {
	*env
	wh   *webhooks.Service
	recv *receiver
}

// newHookEnv builds a hookEnv. With run, wh.Run delivers in a goroutine
// until the test ends; without, tests call wh.Drain.
func newHookEnv(t *testing.T, run bool) *hookEnv {
	t.Helper()
	return newHookEnvDB(t, memory.New(), run)
}

// newHookEnvDB is newHookEnv over raw, which it closes when the test ends.
func newHookEnvDB(t *testing.T, raw storage.Backend, run bool, opts ...envOpt) *hookEnv {
	t.Helper()
	var wake atomic.Pointer[webhooks.Service]
	hooked := storage.WithCommitHook(raw, func() {
		if w := wake.Load(); w != nil {
			w.Wake()
		}
	})
	e := newEnvDB(t, hooked)
	recv := newReceiver(t)
	sealer, err := corebank.NewSealer(bytes.Repeat([]byte{9}, 32))
	if err != nil {
		t.Fatal(err)
	}
	wh := webhooks.NewService(raw, webhooks.LedgerOutbox(e.led), sealer, &webhooks.Options{
		Deps: service.Deps{Clock: e.clock, Tree: e.ent,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))},
		Env: webhooks.EnvSandbox, RootCAs: recv.pool(),
	})
	wake.Store(wh)
	e.wh = wh
	fund := e.funding.svc
	o := &httpapi.Options{Env: httpapi.EnvSandbox, FakeClock: e.clock,
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil)),
		CursorKey: []byte("test cursor key"),
		RunJobs: func(ctx context.Context, now time.Time) error {
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
			if _, err := e.capital.RunDue(ctx, now); err != nil {
				return err
			}
			_, err := wh.RunDue(ctx, now)
			return err
		}}
	for _, f := range opts {
		f(o)
	}
	e.h = httpapi.New(httpapi.Services{DB: hooked, Ledger: e.led, Entities: e.ent, Funding: e.funding.svc,
		FundingSessions: e.sessions, Payments: e.pay, Webhooks: wh, Acquiring: e.acq, Cards: e.cards, Capital: e.capital}, o)
	if run {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = wh.Run(ctx)
		}()
		// Cleanups run last-in first-out: stop Run before the store closes.
		t.Cleanup(func() { cancel(); <-done })
	}
	return &hookEnv{env: e, wh: wh, recv: recv}
}

// drain delivers everything pending now.
func (e *hookEnv) drain() {
	e.t.Helper()
	if _, err := e.wh.Drain(context.Background()); err != nil {
		e.t.Fatal(err)
	}
}

// hookBody is a valid create body for the receiver; pairs are
// "group.key" events to enable (none: all).
func (e *hookEnv) hookBody(pairs ...string) map[string]any {
	ev := map[string]any{}
	if len(pairs) == 0 {
		ev["all"] = true
	}
	for _, p := range pairs {
		g, k, _ := strings.Cut(p, ".")
		m, _ := ev[g].(map[string]any)
		if m == nil {
			m = map[string]any{}
			ev[g] = m
		}
		m[k] = true
	}
	return map[string]any{"url": e.recv.url(), "expires_in": 86400, "enabled_events": ev,
		"description": "main hook", "tags": []string{"ops"}}
}

// createHook creates a webhook with key (entity "" for the key's own) and
// returns its ID and secret.
func (e *hookEnv) createHook(key, entity string, pairs ...string) (id, secret string) {
	e.t.Helper()
	body := e.hookBody(pairs...)
	if entity != "" {
		body["entity_id"] = entity
	}
	r := e.must(201, "POST", "/entity-webhooks", key, body)
	return r.str("data", "id"), r.str("data", "secret")
}

// verify checks a hit's signature with secret at the real time, which
// the bank signs with whatever its clock.
func (e *hookEnv) verify(h hit, secret string) error {
	return webhooks.Verify(secret, h.Header.Get(webhooks.HeaderTimestamp), h.Header.Get(webhooks.HeaderSignature),
		h.Body, time.Hour, time.Now())
}

func TestWebhookRoutes(t *testing.T) {
	e := newHookEnv(t, false)
	tr := newTrees(e.env)
	id, secret := e.createHook(e.key, "")
	idB, _ := e.createHook(tr.keyB, "")
	bad := func(mod func(m map[string]any)) map[string]any {
		b := e.hookBody()
		mod(b)
		return b
	}
	const missing = "01HZZZZZZZZZZZZZZZZZZZZZZZ"
	e.run(t, []call{
		{"OKCreate", "POST", "/entity-webhooks", e.hookBody("outflows.completed"), e.key, 201, "", ""},
		{"OKCreateForChild", "POST", "/entity-webhooks", bad(func(m map[string]any) { m["entity_id"] = tr.a1 }), tr.keyA, 201, "", ""},
		{"OKGet", "GET", "/entity-webhooks/" + id, nil, e.key, 200, "", ""},
		{"OKGetReadOnly", "GET", "/entity-webhooks/" + id, nil, e.roKey, 200, "", ""},
		{"OKGetEntityParam", "GET", "/entity-webhooks/" + idB + "?entity_id=" + tr.b, nil, e.key, 200, "", ""},
		{"OKList", "GET", "/entity-webhooks", nil, e.key, 200, "", ""},
		{"OKListChild", "GET", "/entity-webhooks?entity_id=" + tr.b, nil, e.key, 200, "", ""},
		{"OKPatch", "PATCH", "/entity-webhooks/" + id, map[string]any{"description": "renamed", "tags": []string{"a", "b"}}, e.key, 200, "", ""},
		{"OKDeliveries", "GET", "/entity-webhooks/" + id + "/deliveries", nil, e.key, 200, "", ""},

		{"ErrURLNotHTTPS", "POST", "/entity-webhooks", bad(func(m map[string]any) { m["url"] = "http://example.com/hook" }), e.key, 422, "validation_error", "url"},
		{"ErrURLMissing", "POST", "/entity-webhooks", bad(func(m map[string]any) { delete(m, "url") }), e.key, 422, "validation_error", "url"},
		{"ErrExpiresInMissing", "POST", "/entity-webhooks", bad(func(m map[string]any) { delete(m, "expires_in") }), e.key, 422, "validation_error", "expires_in"},
		{"ErrExpiresInZero", "POST", "/entity-webhooks", bad(func(m map[string]any) { m["expires_in"] = 0 }), e.key, 422, "validation_error", "expires_in"},
		{"ErrExpiresInType", "POST", "/entity-webhooks", bad(func(m map[string]any) { m["expires_in"] = "1d" }), e.key, 422, "validation_error", "expires_in"},
		{"ErrEnabledEventsMissing", "POST", "/entity-webhooks", bad(func(m map[string]any) { delete(m, "enabled_events") }), e.key, 422, "validation_error", "enabled_events"},
		{"ErrUnknownEventKey", "POST", "/entity-webhooks", bad(func(m map[string]any) {
			m["enabled_events"] = map[string]any{"outflows": map[string]any{"completed": true, "exploded": true}}
		}), e.key, 422, "validation_error", "enabled_events.outflows.exploded"},
		{"ErrUnknownEventGroup", "POST", "/entity-webhooks", bad(func(m map[string]any) {
			m["enabled_events"] = map[string]any{"rockets": map[string]any{"launched": true}}
		}), e.key, 422, "validation_error", "enabled_events.rockets"},
		{"ErrEventNotBoolean", "POST", "/entity-webhooks", bad(func(m map[string]any) {
			m["enabled_events"] = map[string]any{"outflows": map[string]any{"completed": "yes"}}
		}), e.key, 422, "validation_error", "enabled_events.outflows.completed"},
		{"ErrUnknownField", "POST", "/entity-webhooks", bad(func(m map[string]any) { m["entityid"] = tr.b }), e.key, 422, "validation_error", "entityid"},
		{"ErrTagsType", "POST", "/entity-webhooks", bad(func(m map[string]any) { m["tags"] = "ops" }), e.key, 422, "validation_error", "tags"},
		{"ErrPatchURL", "PATCH", "/entity-webhooks/" + id, map[string]any{"url": "ftp://x"}, e.key, 422, "validation_error", "url"},
		{"ErrPatchStatus", "PATCH", "/entity-webhooks/" + id, map[string]any{"status": "paused"}, e.key, 422, "validation_error", "status"},
		{"ErrPatchUnknownField", "PATCH", "/entity-webhooks/" + id, map[string]any{"secret": "whsec_mine"}, e.key, 422, "validation_error", "secret"},
		{"ErrListLimit", "GET", "/entity-webhooks?limit=0", nil, e.key, 422, "validation_error", "limit"},
		{"ErrListCursor", "GET", "/entity-webhooks?cursor=abc", nil, e.key, 422, "validation_error", "cursor"},
		{"ErrDeliveriesCursor", "GET", "/entity-webhooks/" + id + "/deliveries?cursor=abc", nil, e.key, 422, "validation_error", "cursor"},

		{"ErrNoKey", "POST", "/entity-webhooks", e.hookBody(), "", 401, "unauthorized", ""},
		{"ErrUnknownKey", "GET", "/entity-webhooks", nil, "sk_sandbox_nope", 401, "unauthorized", ""},
		{"ErrReadOnlyCreate", "POST", "/entity-webhooks", e.hookBody(), e.roKey, 403, "forbidden", ""},
		{"ErrReadOnlyPatch", "PATCH", "/entity-webhooks/" + id, map[string]any{"description": "x"}, e.roKey, 403, "forbidden", ""},
		{"ErrReadOnlyDelete", "DELETE", "/entity-webhooks/" + id, nil, e.roKey, 403, "forbidden", ""},
		{"ErrReadOnlyTest", "POST", "/entity-webhooks/" + id + "/test", nil, e.roKey, 403, "forbidden", ""},
		{"ErrReadOnlyRotate", "POST", "/entity-webhooks/" + id + "/rotate_secret", nil, e.roKey, 403, "forbidden", ""},

		{"ErrMissing", "GET", "/entity-webhooks/" + missing, nil, e.key, 404, "not_found", ""},
		{"ErrSiblingGet", "GET", "/entity-webhooks/" + idB, nil, tr.keyA, 404, "not_found", ""},
		{"ErrChildReadsParent", "GET", "/entity-webhooks/" + id, nil, tr.keyB, 404, "not_found", ""},
		{"ErrWrongEntityParam", "GET", "/entity-webhooks/" + idB + "?entity_id=" + tr.a, nil, e.key, 404, "not_found", ""},
		{"ErrSiblingCreate", "POST", "/entity-webhooks", bad(func(m map[string]any) { m["entity_id"] = tr.b }), tr.keyA, 404, "not_found", ""},
		{"ErrUpCreate", "POST", "/entity-webhooks", bad(func(m map[string]any) { m["entity_id"] = e.root }), tr.keyA, 404, "not_found", ""},
		{"ErrSiblingList", "GET", "/entity-webhooks?entity_id=" + tr.b, nil, tr.keyA, 404, "not_found", ""},
		{"ErrSiblingPatch", "PATCH", "/entity-webhooks/" + idB, map[string]any{"description": "x"}, tr.keyA, 404, "not_found", ""},
		{"ErrSiblingPatchBodyEntity", "PATCH", "/entity-webhooks/" + idB, map[string]any{"entity_id": tr.b, "description": "x"}, tr.keyA, 404, "not_found", ""},
		{"ErrSiblingDelete", "DELETE", "/entity-webhooks/" + idB, nil, tr.keyA, 404, "not_found", ""},
		{"ErrSiblingTest", "POST", "/entity-webhooks/" + idB + "/test", nil, tr.keyA, 404, "not_found", ""},
		{"ErrSiblingRotate", "POST", "/entity-webhooks/" + idB + "/rotate_secret", nil, tr.keyA, 404, "not_found", ""},
		{"ErrSiblingDeliveries", "GET", "/entity-webhooks/" + idB + "/deliveries", nil, tr.keyA, 404, "not_found", ""},
		{"ErrEntityParamsDiffer", "DELETE", "/entity-webhooks/" + idB + "?entity_id=" + tr.b, map[string]any{"entity_id": tr.a}, e.key, 422, "validation_error", "entity_id"},
	})

	// The patch took, and the secret never shows outside create.
	r := e.must(200, "GET", "/entity-webhooks/"+id, e.key, nil)
	d := r.data()
	if d["description"] != "renamed" || fmt.Sprint(d["tags"]) != "[a b]" || d["status"] != "active" {
		t.Errorf("after patch: %s", r.Raw)
	}
	if _, ok := d["secret"]; ok || strings.Contains(r.Raw, secret) {
		t.Errorf("GET shows the secret: %s", r.Raw)
	}
	for _, k := range []string{"id", "entity_id", "url", "expires_in", "enabled_events", "preferred_events",
		"description", "tags", "status", "created", "updated", "deleted", "stats"} {
		if _, ok := d[k]; !ok {
			t.Errorf("webhook lacks %q: %s", k, r.Raw)
		}
	}

	// Delete: the webhook reads deleted and inactive, leaves the list, and
	// can no longer be changed.
	r = e.must(200, "DELETE", "/entity-webhooks/"+id, e.key, nil)
	if r.data()["deleted"] == float64(0) || r.str("data", "status") != "inactive" {
		t.Errorf("delete: %s", r.Raw)
	}
	r = e.must(200, "GET", "/entity-webhooks", e.key, nil)
	for _, it := range r.Body["data"].([]any) {
		if it.(map[string]any)["id"] == id {
			t.Errorf("the list still shows the deleted webhook: %s", r.Raw)
		}
	}
	e.must(200, "GET", "/entity-webhooks/"+id, e.key, nil)
	if r := e.must(422, "PATCH", "/entity-webhooks/"+id, e.key, map[string]any{"description": "x"}); r.code() != "error_operation_invalid_for_state" {
		t.Errorf("patch of a deleted webhook: %s", r.Raw)
	}
	e.must(422, "POST", "/entity-webhooks/"+id+"/rotate_secret", e.key, nil)
}

// TestWebhookForeignLooksMissing checks that another tree's webhook answers
// every by-id route exactly as a missing one.
func TestWebhookForeignLooksMissing(t *testing.T) {
	e := newHookEnv(t, false)
	tr := newTrees(e.env)
	idB, _ := e.createHook(tr.keyB, "")
	const missing = "01HZZZZZZZZZZZZZZZZZZZZZZZ"
	for _, c := range []struct {
		method, path string
		body         any
	}{
		{"GET", "/entity-webhooks/%s", nil},
		{"PATCH", "/entity-webhooks/%s", map[string]any{"description": "x"}},
		{"DELETE", "/entity-webhooks/%s", nil},
		{"POST", "/entity-webhooks/%s/test", nil},
		{"POST", "/entity-webhooks/%s/rotate_secret", nil},
		{"GET", "/entity-webhooks/%s/deliveries", nil},
	} {
		foreign := e.do(c.method, fmt.Sprintf(c.path, idB), tr.keyA, c.body)
		gone := e.do(c.method, fmt.Sprintf(c.path, missing), tr.keyA, c.body)
		if foreign.Status != 404 || gone.Status != 404 {
			t.Fatalf("%s %s: foreign %d, missing %d", c.method, c.path, foreign.Status, gone.Status)
		}
		if a, b := strings.ReplaceAll(foreign.Raw, idB, "ID"), strings.ReplaceAll(gone.Raw, missing, "ID"); a != b {
			t.Errorf("%s %s differs:\nforeign %s\nmissing %s", c.method, c.path, a, b)
		}
	}
	// With a foreign entity_id (query or body) an existing and a missing
	// webhook answer the same "entity not found".
	for _, c := range []struct {
		method, path string
		body         any
	}{
		{"GET", "/entity-webhooks/%s?entity_id=" + tr.b, nil},
		{"GET", "/entity-webhooks/%s/deliveries?entity_id=" + tr.b + "&cursor=tampered", nil},
		{"PATCH", "/entity-webhooks/%s", map[string]any{"entity_id": tr.b, "url": "http://not-https"}},
		{"DELETE", "/entity-webhooks/%s", map[string]any{"entity_id": tr.b}},
		{"POST", "/entity-webhooks/%s/test?entity_id=" + tr.b, nil},
		{"POST", "/entity-webhooks/%s/rotate_secret", map[string]any{"entity_id": tr.b}},
	} {
		foreign := e.do(c.method, fmt.Sprintf(c.path, idB), tr.keyA, c.body)
		gone := e.do(c.method, fmt.Sprintf(c.path, missing), tr.keyA, c.body)
		if foreign.Status != 404 || foreign.Raw != gone.Raw || foreign.str("message") != "entity not found" {
			t.Errorf("%s %s with a foreign entity_id:\nexisting %d %s\nmissing %d %s", c.method, c.path, foreign.Status, foreign.Raw, gone.Status, gone.Raw)
		}
	}
	// A foreign entity_id answers 404 before a bad cursor is looked at.
	for _, p := range []string{"/entity-webhooks", "/events"} {
		r := e.do("GET", p+"?entity_id="+tr.b+"&cursor=tampered", tr.keyA, nil)
		if r.Status != 404 || r.str("message") != "entity not found" {
			t.Errorf("GET %s foreign entity_id and bad cursor: %d %s", p, r.Status, r.Raw)
		}
		e.must(422, "GET", p+"?cursor=tampered", tr.keyA, nil)
	}
	// Nothing happened to it.
	r := e.must(200, "GET", "/entity-webhooks/"+idB, tr.keyB, nil)
	if r.str("data", "description") != "main hook" || r.data()["deleted"] != float64(0) {
		t.Errorf("a foreign request changed the webhook: %s", r.Raw)
	}
	if n := len(e.recv.Hits()); n != 0 {
		t.Errorf("a foreign test request delivered %d events", n)
	}
}

// TestWebhookSecretOnce checks that the secret appears only in the answers
// of create and rotate_secret: not in reads, lists or idempotent replays.
func TestWebhookSecretOnce(t *testing.T) {
	e := newHookEnv(t, false)
	body := e.hookBody()
	cr := e.must(201, "POST", "/entity-webhooks", e.key, body, "Idempotency-Key", "create-1")
	id, secret := cr.str("data", "id"), cr.str("data", "secret")
	if !strings.HasPrefix(secret, "whsec_") || cr.Body["status"] != "success" {
		t.Fatalf("create: %s", cr.Raw)
	}
	rot := e.must(200, "POST", "/entity-webhooks/"+id+"/rotate_secret", e.key, nil, "Idempotency-Key", "rotate-1")
	rotated := rot.str("data", "secret")
	if !strings.HasPrefix(rotated, "whsec_") || rotated == secret || rot.str("data", "id") != id {
		t.Fatalf("rotate: %s", rot.Raw)
	}

	var seen []resp
	seen = append(seen,
		e.must(200, "GET", "/entity-webhooks/"+id, e.key, nil),
		e.must(200, "GET", "/entity-webhooks", e.key, nil),
		e.must(200, "PATCH", "/entity-webhooks/"+id, e.key, map[string]any{"description": "x"}),
		e.must(200, "GET", "/entity-webhooks/"+id+"/deliveries", e.key, nil),
	)
	// Replays answer as the first time, without the secret.
	rc := e.must(201, "POST", "/entity-webhooks", e.key, body, "Idempotency-Key", "create-1")
	rr := e.must(200, "POST", "/entity-webhooks/"+id+"/rotate_secret", e.key, nil, "Idempotency-Key", "rotate-1")
	for _, r := range []resp{rc, rr} {
		if r.Header.Get("Idempotent-Replayed") != "true" || r.str("data", "id") != id {
			t.Errorf("not a replay: %v %s", r.Header, r.Raw)
		}
	}
	seen = append(seen, rc, rr)
	for _, r := range seen {
		if strings.Contains(r.Raw, secret) || strings.Contains(r.Raw, rotated) || strings.Contains(r.Raw, `"secret"`) {
			t.Errorf("a response shows a secret: %s", r.Raw)
		}
	}
	// The rotation was not run twice: the rotated secret still signs.
	e.must(200, "POST", "/entity-webhooks/"+id+"/test", e.key, nil)
	hits := e.recv.Hits()
	if len(hits) != 1 {
		t.Fatalf("test deliveries: %d", len(hits))
	}
	if err := e.verify(hits[0], rotated); err != nil {
		t.Errorf("rotated secret: %v", err)
	}
	if err := e.verify(hits[0], secret); err == nil {
		t.Error("the first secret still verifies")
	}
}

func TestWebhookTestAndDeliveries(t *testing.T) {
	e := newHookEnv(t, false)
	id, secret := e.createHook(e.key, "", "outflows.completed")
	r := e.must(200, "POST", "/entity-webhooks/"+id+"/test", e.key, nil)
	d := r.data()
	if d["status"] != webhooks.DeliverySucceeded || d["event_type"] != webhooks.TestEventType || d["webhook_id"] != id || d["test"] != true {
		t.Fatalf("test delivery: %s", r.Raw)
	}
	if a, _ := d["attempts"].([]any); len(a) != 1 || a[0].(map[string]any)["status_code"] != float64(200) {
		t.Fatalf("test attempts: %s", r.Raw)
	}
	hits := e.recv.Hits()
	if len(hits) != 1 || eventTypes(hits)[0] != webhooks.TestEventType {
		t.Fatalf("receiver: %v", eventTypes(hits))
	}
	if err := e.verify(hits[0], secret); err != nil {
		t.Errorf("test delivery signature: %v", err)
	}
	if got := hits[0].Header.Get(webhooks.HeaderEventID); got != d["event_id"] {
		t.Errorf("event id header %q, delivery %v", got, d["event_id"])
	}

	// The deliveries list shows it, and the stats count it.
	l := e.must(200, "GET", "/entity-webhooks/"+id+"/deliveries", e.key, nil)
	items := l.Body["data"].([]any)
	if len(items) != 1 || items[0].(map[string]any)["id"] != d["id"] {
		t.Fatalf("deliveries: %s", l.Raw)
	}
	checkListForm(t, l, map[string]any{"webhook_id": id})
	w := e.must(200, "GET", "/entity-webhooks/"+id, e.key, nil).data()
	if st := w["stats"].(map[string]any); st["total_webhooks_sent"] != float64(1) || st["total_webhooks_successful"] != float64(1) {
		t.Errorf("stats: %v", st)
	}
}

// checkListForm asserts the list envelope and its filters_applied.
func checkListForm(t *testing.T, r resp, filters map[string]any) {
	t.Helper()
	if r.Body["status"] != "success" {
		t.Fatalf("list status: %s", r.Raw)
	}
	if _, ok := r.Body["data"].([]any); !ok {
		t.Fatalf("list data is not an array: %s", r.Raw)
	}
	meta, _ := r.Body["meta"].(map[string]any)
	pag, _ := meta["pagination"].(map[string]any)
	for _, k := range []string{"limit", "has_next", "has_previous", "next_cursor", "previous_cursor"} {
		if _, ok := pag[k]; !ok {
			t.Errorf("pagination lacks %q: %s", k, r.Raw)
		}
	}
	if diff := cmp.Diff(filters, meta["filters_applied"]); diff != "" {
		t.Errorf("filters_applied (-want +got):\n%s", diff)
	}
}

func TestWebhookPagination(t *testing.T) {
	e := newHookEnv(t, false)
	tr := newTrees(e.env)
	var want []string
	for i := 0; i < 7; i++ {
		id, _ := e.createHook(e.key, "")
		want = append(want, id)
		e.createHook(tr.keyB, "") // another entity's: not in the root's list
	}
	r := e.must(200, "GET", "/entity-webhooks?limit=3", e.key, nil)
	checkListForm(t, r, map[string]any{"entity_id": e.root})
	fwd, back := walk(t, e.env, "/entity-webhooks", 3)
	if diff := cmp.Diff(want, fwd); diff != "" {
		t.Errorf("forward walk (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(beforeLastPage(want, 3), back); diff != "" {
		t.Errorf("backward walk (-want +got):\n%s", diff)
	}
	// A cursor of one entity's list is refused for another's.
	next := r.Body["meta"].(map[string]any)["pagination"].(map[string]any)["next_cursor"].(string)
	e.must(422, "GET", "/entity-webhooks?entity_id="+tr.b+"&cursor="+url.QueryEscape(next), e.key, nil)

	// Deliveries page too.
	id := want[0]
	var ds []string
	for i := 0; i < 5; i++ {
		ds = append(ds, e.must(200, "POST", "/entity-webhooks/"+id+"/test", e.key, nil).str("data", "id"))
	}
	fwd, back = walk(t, e.env, "/entity-webhooks/"+id+"/deliveries", 2)
	if diff := cmp.Diff(ds, fwd); diff != "" {
		t.Errorf("deliveries forward (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(beforeLastPage(ds, 2), back); diff != "" {
		t.Errorf("deliveries backward (-want +got):\n%s", diff)
	}
	// A deliveries cursor of one webhook is refused for another.
	r = e.must(200, "GET", "/entity-webhooks/"+id+"/deliveries?limit=2", e.key, nil)
	next = r.Body["meta"].(map[string]any)["pagination"].(map[string]any)["next_cursor"].(string)
	e.must(422, "GET", "/entity-webhooks/"+want[1]+"/deliveries?cursor="+url.QueryEscape(next), e.key, nil)
}

// beforeLastPage is what walk's backward pass sees: every page before the
// last one the forward pass reached.
func beforeLastPage(ids []string, limit int) []string {
	last := len(ids) % limit
	if last == 0 {
		last = limit
	}
	return ids[:len(ids)-last]
}
