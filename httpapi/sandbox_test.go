package httpapi_test

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corebank/corebank/httpapi"
	"github.com/corebank/corebank/storage/bolt"
)

func TestSandboxClock(t *testing.T) {
	e := newEnv(t)
	r := e.must(200, "GET", "/sandbox/clock", e.key, nil)
	if r.str("now") != "2026-03-15T12:00:00Z" || r.Body["now_ms"] != float64(e.clock.Now().UnixMilli()) {
		t.Fatalf("clock: %s", r.Raw)
	}
	e.run(t, []call{
		{"AdvanceErrMissing", "POST", "/sandbox/clock/advance", map[string]any{}, e.key, 422, "validation_error", "seconds"},
		{"AdvanceErrZero", "POST", "/sandbox/clock/advance", map[string]any{"seconds": 0}, e.key, 422, "validation_error", "seconds"},
		{"AdvanceErrNegative", "POST", "/sandbox/clock/advance", map[string]any{"seconds": -5}, e.key, 422, "validation_error", "seconds"},
		{"AdvanceErrHuge", "POST", "/sandbox/clock/advance", `{"seconds": 1e30}`, e.key, 422, "validation_error", "seconds"},
		{"AdvanceErrFraction", "POST", "/sandbox/clock/advance", `{"seconds": 1.5}`, e.key, 422, "validation_error", "seconds"},
		{"AdvanceErrType", "POST", "/sandbox/clock/advance", `{"seconds": "60"}`, e.key, 422, "validation_error", "seconds"},
		{"AdvanceErrReadOnly", "POST", "/sandbox/clock/advance", map[string]any{"seconds": 60}, e.roKey, 403, "forbidden", ""},
		{"ClockErrNoKey", "GET", "/sandbox/clock", nil, "", 401, "unauthorized", ""},
	})
	r = e.must(200, "POST", "/sandbox/clock/advance", e.key, map[string]any{"seconds": 90})
	if r.str("now") != "2026-03-15T12:01:30Z" || e.jobs.Load() != 1 {
		t.Fatalf("advance: %s (jobs %d)", r.Raw, e.jobs.Load())
	}

	real := newEnv(t, func(o *httpapi.Options) { o.FakeClock = nil })
	r = real.must(409, "POST", "/sandbox/clock/advance", real.key, map[string]any{"seconds": 60})
	if !strings.Contains(r.str("message"), "fake-clock") {
		t.Fatalf("real clock advance: %s", r.Raw)
	}
	prod := newEnv(t, func(o *httpapi.Options) { o.Env = httpapi.EnvProduction })
	for _, p := range []string{"/sandbox/clock", "/sandbox/api-keys"} {
		prod.must(404, "GET", p, prod.key, nil)
	}
	prod.must(404, "POST", "/sandbox/inflows", prod.key, map[string]any{})
	prod.must(200, "GET", "/accounts", prod.key, nil)

	// Due work that fails after an advance (a payout provider that is down,
	// as the simulator found) stays queued: the clock has moved, and the
	// answer says so rather than a 5xx a client would retry.
	down := newEnv(t, func(o *httpapi.Options) {
		o.RunJobs = func(context.Context, time.Time) error { return errors.New("payout provider down") }
	})
	r = down.must(200, "POST", "/sandbox/clock/advance", down.key, map[string]any{"seconds": 60})
	if r.str("now") != "2026-03-15T12:01:00Z" {
		t.Fatalf("advance with failing due work: %s", r.Raw)
	}
}

func TestSandboxKeysAndInflows(t *testing.T) {
	e := newEnv(t)
	acct := e.account(e.key, "", "USD")
	r := e.must(201, "POST", "/sandbox/api-keys", e.key, map[string]any{"read_only": true})
	for _, f := range []string{"id", "api_key", "read_only", "entity_id", "encryption_public_key"} {
		if _, ok := r.Body[f]; !ok {
			t.Fatalf("api key lacks %s: %s", f, r.Raw)
		}
	}
	if r.Body["read_only"] != true || r.str("entity_id") != e.root || !strings.HasPrefix(r.str("api_key"), "sk_sandbox_") ||
		!strings.Contains(r.str("encryption_public_key"), "PUBLIC KEY") {
		t.Fatalf("api key: %s", r.Raw)
	}
	ro := r.str("api_key")
	e.must(200, "GET", "/accounts/"+acct, ro, nil)
	e.must(403, "POST", "/sandbox/inflows", ro, map[string]any{"account_id": acct, "amount": 1})

	e.run(t, []call{
		{"KeyErrEntity", "POST", "/sandbox/api-keys", map[string]any{"entity_id": "nobody"}, e.key, 404, "not_found", ""},
		{"KeyErrType", "POST", "/sandbox/api-keys", map[string]any{"read_only": "yes"}, e.key, 422, "validation_error", "read_only"},
		{"KeyErrUnknownField", "POST", "/sandbox/api-keys", map[string]any{"readonly": true}, e.key, 422, "validation_error", "readonly"},
		{"KeyDeleteErrUnknown", "DELETE", "/sandbox/api-keys/nope", nil, e.key, 404, "not_found", ""},
		{"InflowOK", "POST", "/sandbox/inflows", map[string]any{"account_id": acct, "amount": 250, "currency": "USD", "narration": "hi", "settle": true}, e.key, 201, "", ""},
		{"InflowErrMissing", "POST", "/sandbox/inflows", map[string]any{}, e.key, 422, "validation_error", "account_id"},
		{"InflowErrAmountMissing", "POST", "/sandbox/inflows", map[string]any{"account_id": acct}, e.key, 422, "validation_error", "amount"},
		{"InflowErrAmountZero", "POST", "/sandbox/inflows", map[string]any{"account_id": acct, "amount": 0}, e.key, 422, "validation_error", "amount"},
		{"InflowErrAmountNegative", "POST", "/sandbox/inflows", map[string]any{"account_id": acct, "amount": -1}, e.key, 422, "validation_error", "amount"},
		{"InflowErrAmountHuge", "POST", "/sandbox/inflows", `{"account_id":"` + acct + `","amount":99999999999999999999}`, e.key, 422, "validation_error", "amount"},
		{"InflowErrAmountTooBig", "POST", "/sandbox/inflows", map[string]any{"account_id": acct, "amount": int64(1) << 60}, e.key, 422, "validation_error", "amount"},
		{"InflowErrAmountFloat", "POST", "/sandbox/inflows", `{"account_id":"` + acct + `","amount":1.25}`, e.key, 422, "validation_error", "amount"},
		{"InflowErrCurrency", "POST", "/sandbox/inflows", map[string]any{"account_id": acct, "amount": 1, "currency": "EUR"}, e.key, 422, "validation_error", "currency"},
		{"InflowErrCurrencyUnknown", "POST", "/sandbox/inflows", map[string]any{"account_id": acct, "amount": 1, "currency": "ABC"}, e.key, 422, "validation_error", "currency"},
		{"InflowErrSettleType", "POST", "/sandbox/inflows", map[string]any{"account_id": acct, "amount": 1, "settle": "no"}, e.key, 422, "validation_error", "settle"},
		{"InflowErrNarration", "POST", "/sandbox/inflows", map[string]any{"account_id": acct, "amount": 1, "narration": strings.Repeat("n", 256)}, e.key, 422, "validation_error", "narration"},
		{"InflowErrAccount", "POST", "/sandbox/inflows", map[string]any{"account_id": "nope", "amount": 1}, e.key, 404, "not_found", ""},
		{"InflowErrNoKey", "POST", "/sandbox/inflows", map[string]any{"account_id": acct, "amount": 1}, "", 401, "unauthorized", ""},
	})
	r = e.must(200, "GET", "/accounts/"+acct, e.key, nil)
	if b := r.data()["balance"].(map[string]any); b["available"] != 250.0 || b["current"] != 250.0 {
		t.Fatalf("balance after inflow: %v", b)
	}
	none := newEnv(t)
	none.h = httpapi.New(httpapi.Services{DB: none.db, Ledger: none.led, Entities: none.ent}, nil)
	a := none.account(none.key, "", "USD")
	if r := none.do("POST", "/sandbox/inflows", none.key, map[string]any{"account_id": a, "amount": 1}); r.Status != http.StatusServiceUnavailable {
		t.Fatalf("inflows without funding: %d %s", r.Status, r.Raw)
	}
}

func TestIdempotencyRoutes(t *testing.T) {
	t.Run("memory", func(t *testing.T) { testIdempotencyRoutes(t, func(t *testing.T) *env { return newEnv(t) }) })
	t.Run("bolt", func(t *testing.T) {
		testIdempotencyRoutes(t, func(t *testing.T) *env {
			db, err := bolt.Open(filepath.Join(t.TempDir(), "db"), nil)
			if err != nil {
				t.Fatal(err)
			}
			return newEnvDB(t, db)
		})
	})
}

func testIdempotencyRoutes(t *testing.T, newEnv func(t *testing.T) *env) {
	body := map[string]any{"type": "checking", "currency": "USD", "display_name": "Main"}
	t.Run("OKReplay", func(t *testing.T) {
		e := newEnv(t)
		a := e.must(201, "POST", "/accounts", e.key, body, "Idempotency-Key", "acct-1")
		b := e.must(201, "POST", "/accounts", e.key, body, "Idempotency-Key", "acct-1")
		if a.Raw != b.Raw || b.Header.Get("Idempotent-Replayed") != "true" || a.Header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("replay differs:\n%s\n%s", a.Raw, b.Raw)
		}
		r := e.must(200, "GET", "/accounts", e.key, nil)
		if n := len(r.Body["data"].([]any)); n != 1 {
			t.Fatalf("%d accounts after a replayed create", n)
		}
	})
	t.Run("ErrMismatch", func(t *testing.T) {
		e := newEnv(t)
		e.must(201, "POST", "/accounts", e.key, body, "Idempotency-Key", "acct-1")
		r := e.must(422, "POST", "/accounts", e.key, map[string]any{"type": "checking", "currency": "EUR", "display_name": "Main"}, "Idempotency-Key", "acct-1")
		if r.code() != "idempotency_key_mismatch" {
			t.Fatalf("%s", r.Raw)
		}
		// The same body on another path is a different request too.
		r = e.must(422, "POST", "/account-details", e.key, body, "Idempotency-Key", "acct-1")
		if r.code() != "idempotency_key_mismatch" {
			t.Fatalf("%s", r.Raw)
		}
	})
	t.Run("OKValidationNotStored", func(t *testing.T) {
		e := newEnv(t)
		bad := map[string]any{"type": "checking", "currency": "USD"}
		e.must(422, "POST", "/accounts", e.key, bad, "Idempotency-Key", "acct-1")
		r := e.must(201, "POST", "/accounts", e.key, body, "Idempotency-Key", "acct-1")
		if r.Header.Get("Idempotent-Replayed") != "" {
			t.Fatal("a corrected retry was answered from the failed one")
		}
	})
	t.Run("OKExpiry", func(t *testing.T) {
		e := newEnv(t)
		e.must(201, "POST", "/accounts", e.key, body, "Idempotency-Key", "acct-1")
		e.clock.Add(24*time.Hour - time.Second)
		if r := e.must(201, "POST", "/accounts", e.key, body, "Idempotency-Key", "acct-1"); r.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatal("not replayed inside 24 h")
		}
		e.clock.Add(2 * time.Second)
		if r := e.must(201, "POST", "/accounts", e.key, body, "Idempotency-Key", "acct-1"); r.Header.Get("Idempotent-Replayed") != "" {
			t.Fatal("replayed after 24 h")
		}
	})
	t.Run("OKConcurrentRunsOnce", func(t *testing.T) {
		e := newEnv(t)
		acct := e.account(e.key, "", "USD")
		e.funding.block = make(chan struct{})
		e.funding.entered = make(chan struct{}, 1)
		in := map[string]any{"account_id": acct, "amount": 100}
		done := make(chan resp)
		go func() { done <- e.do("POST", "/sandbox/inflows", e.key, in, "Idempotency-Key", "inflow-1") }()
		<-e.funding.entered
		for i := 0; i < 3; i++ {
			r := e.do("POST", "/sandbox/inflows", e.key, in, "Idempotency-Key", "inflow-1")
			if r.Status != 409 || r.code() != "conflict" {
				t.Fatalf("duplicate in flight: %d %s", r.Status, r.Raw)
			}
		}
		close(e.funding.block)
		first := <-done
		if first.Status != 201 {
			t.Fatalf("first: %d %s", first.Status, first.Raw)
		}
		again := e.must(201, "POST", "/sandbox/inflows", e.key, in, "Idempotency-Key", "inflow-1")
		if again.Raw != first.Raw || e.funding.calls.Load() != 1 {
			t.Fatalf("ran %d times", e.funding.calls.Load())
		}
		r := e.must(200, "GET", "/accounts/"+acct, e.key, nil)
		if r.data()["balance"].(map[string]any)["available"] != 100.0 {
			t.Fatalf("balance: %s", r.Raw)
		}
	})
	t.Run("OKScopedPerEntity", func(t *testing.T) {
		e := newEnv(t)
		child := e.child(e.root, "C", true)
		_, ck := e.newKey(e.key, child, false)
		e.must(201, "POST", "/accounts", e.key, body, "Idempotency-Key", "same")
		if r := e.must(201, "POST", "/accounts", ck, body, "Idempotency-Key", "same"); r.Header.Get("Idempotent-Replayed") != "" || r.str("data", "entity_id") != child {
			t.Fatalf("another entity's key replayed: %s", r.Raw)
		}
	})
}

func TestInflowSettlesOnClockAdvance(t *testing.T) {
	e := newEnv(t)
	acct := e.account(e.key, "", "USD")
	settle := false
	r := e.must(201, "POST", "/sandbox/inflows", e.key, map[string]any{"account_id": acct, "amount": 700, "settle": settle})
	if r.str("status") != "pending" {
		t.Fatalf("unsettled inflow: %s", r.Raw)
	}
	bal := func() map[string]any {
		return e.must(200, "GET", "/accounts/"+acct, e.key, nil).data()["balance"].(map[string]any)
	}
	if b := bal(); b["available"] != 0.0 || b["current"] != 700.0 {
		t.Fatalf("pending balance: %v", b)
	}
	e.must(200, "POST", "/sandbox/clock/advance", e.key, map[string]any{"seconds": 61})
	if b := bal(); b["available"] != 700.0 || b["current"] != 700.0 {
		t.Fatalf("settled balance: %v", b)
	}
	r = e.must(200, "GET", "/accounts/"+acct+"/statements?year=2026&month=3&include_pending=true", e.key, nil)
	if txs := r.data()["transactions"].([]any); len(txs) != 1 {
		t.Fatalf("statement: %s", r.Raw)
	}
}

// TestSandboxKeysAndReviewForeignLooksMissing checks that another tree's
// API key and entity answer exactly as missing ones on the sandbox routes,
// whatever the body says.
func TestSandboxKeysAndReviewForeignLooksMissing(t *testing.T) {
	e := newEnv(t)
	tr := newTrees(e)
	keyID, _ := e.newKey(tr.keyA, "", false)
	const missing = "01HZZZZZZZZZZZZZZZZZZZZZZZ"
	for _, c := range []struct {
		method, path, id string
		body             any
	}{
		{"DELETE", "/sandbox/api-keys/%s", keyID, nil},
		{"POST", "/sandbox/entities/%s/review", tr.a, map[string]any{"decision": "approved"}},
		{"POST", "/sandbox/entities/%s/review", tr.a, map[string]any{"decision": "maybe"}},
		{"POST", "/sandbox/entities/%s/review", tr.a, map[string]any{}},
	} {
		foreign := e.do(c.method, strings.Replace(c.path, "%s", c.id, 1), tr.keyB, c.body)
		gone := e.do(c.method, strings.Replace(c.path, "%s", missing, 1), tr.keyB, c.body)
		if a, b := strings.ReplaceAll(foreign.Raw, c.id, "ID"), strings.ReplaceAll(gone.Raw, missing, "ID"); foreign.Status != 404 || a != b {
			t.Errorf("%s %s %v: foreign %d %s, missing %s", c.method, c.path, c.body, foreign.Status, a, b)
		}
	}
	// A foreign entity_id for a new key answers as an unknown one.
	foreign := e.do("POST", "/sandbox/api-keys", tr.keyB, map[string]any{"entity_id": tr.a})
	gone := e.do("POST", "/sandbox/api-keys", tr.keyB, map[string]any{"entity_id": missing})
	if foreign.Status != 404 || foreign.Raw != gone.Raw {
		t.Errorf("key for a foreign entity: %d %s, unknown %s", foreign.Status, foreign.Raw, gone.Raw)
	}
	// The key survived the foreign delete.
	e.must(200, "DELETE", "/sandbox/api-keys/"+keyID, tr.keyA, nil)
}
