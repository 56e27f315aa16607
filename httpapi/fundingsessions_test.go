package httpapi_test

import (
	"bytes"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank/storage/bolt"
	"github.com/corebank/corebank/storage/memory"
)

// balanceOf is GET /accounts/{id}'s balance.
func (e *env) balanceOf(key, acct string) map[string]any {
	e.t.Helper()
	return e.must(200, "GET", "/accounts/"+acct, key, nil).data()["balance"].(map[string]any)
}

func TestFundingSessionCreate(t *testing.T) {
	e := newEnv(t)
	acct := e.account(e.key, "", "USD")
	r := e.must(201, "POST", "/funding-sessions", e.key, sessionBody(acct, "http-1"))
	if r.Body["status"] != "success" || r.str("data", "status") != "awaiting_user" || r.str("data", "funding_type") != "open-banking" {
		t.Fatalf("create: %s", r.Raw)
	}
	id := r.str("data", "id")
	t.Run("ErrDuplicateReference", func(t *testing.T) {
		dup := e.do("POST", "/funding-sessions", e.key, sessionBody(acct, "http-1"))
		if dup.Status != 409 || dup.code() != "duplicate_reference" {
			t.Fatalf("%d %s", dup.Status, dup.Raw)
		}
		if diff := cmp.Diff(r.data(), dup.data()); diff != "" {
			t.Errorf("409 data is not the original (-want +got)\n%s", diff)
		}
	})
	t.Run("ErrValidation", func(t *testing.T) {
		cases := []struct {
			edit  func(b map[string]any)
			field string
		}{
			{func(b map[string]any) { b["amount"] = 0 }, "amount"},
			{func(b map[string]any) { b["currency"] = "EUR" }, "currency"},
			{func(b map[string]any) { b["redirect_url"] = "http://x.example" }, "redirect_url"},
			{func(b map[string]any) { b["unique_reference"] = "" }, "unique_reference"},
			{func(b map[string]any) { b["fund_type"] = "momo" }, "fund_type"},
		}
		for _, c := range cases {
			b := sessionBody(acct, "v-"+c.field)
			c.edit(b)
			got := e.do("POST", "/funding-sessions", e.key, b)
			if got.Status != 422 || got.details()[c.field] == nil {
				t.Errorf("%s: %d %s", c.field, got.Status, got.Raw)
			}
		}
	})
	t.Run("GET", func(t *testing.T) {
		got := e.must(200, "GET", "/funding-sessions/"+id, e.key, nil)
		if diff := cmp.Diff(r.data(), got.data()); diff != "" {
			t.Errorf("(-created +got)\n%s", diff)
		}
	})
	t.Run("ErrPatchOtherRail", func(t *testing.T) {
		got := e.do("PATCH", "/funding-sessions/"+id, e.key, nil)
		if got.Status != 400 || got.code() != "error_operation_invalid_for_state" {
			t.Errorf("%d %s", got.Status, got.Raw)
		}
	})
}

func TestFundingSessionSettlementOverHTTP(t *testing.T) {
	e := newEnv(t)
	acct := e.account(e.key, "", "USD")
	id := e.must(201, "POST", "/funding-sessions", e.key, sessionBody(acct, "s-1")).str("data", "id")
	sim := func(outcome string) resp {
		return e.do("POST", "/sandbox/funding-sessions/"+id+"/simulate", e.key, map[string]any{"outcome": outcome})
	}
	if got := sim("pending_settlement"); got.Status != 200 || got.Body["status"] != "pending_settlement" {
		t.Fatalf("%d %s", got.Status, got.Raw)
	}
	if diff := cmp.Diff(map[string]any{"current": 1000.0, "available": 0.0}, e.balanceOf(e.key, acct)); diff != "" {
		t.Errorf("pending (-want +got)\n%s", diff)
	}
	e.must(200, "POST", "/sandbox/clock/advance", e.key, map[string]any{"seconds": 60})
	if diff := cmp.Diff(map[string]any{"current": 1000.0, "available": 1000.0}, e.balanceOf(e.key, acct)); diff != "" {
		t.Errorf("settled (-want +got)\n%s", diff)
	}
	if got := e.must(200, "GET", "/funding-sessions/"+id, e.key, nil); got.str("data", "status") != "settled" {
		t.Errorf("%s", got.Raw)
	}
	if got := sim("processing"); got.Status != 409 || got.code() != "error_operation_invalid_for_state" {
		t.Errorf("settled -> processing: %d %s", got.Status, got.Raw)
	}
	if got := sim("won"); got.Status != 422 || got.details()["outcome"] == nil {
		t.Errorf("bad outcome: %d %s", got.Status, got.Raw)
	}
	t.Run("failure", func(t *testing.T) {
		id := e.must(201, "POST", "/funding-sessions", e.key, sessionBody(acct, "s-2")).str("data", "id")
		got := e.must(200, "POST", "/sandbox/funding-sessions/"+id+"/simulate", e.key,
			map[string]any{"outcome": "failed", "failure_code": "payment_blocked"})
		want := map[string]any{"code": "payment_blocked", "stage": "awaiting_user", "provider_code": "sandbox"}
		if diff := cmp.Diff(want, got.Body["failure"]); diff != "" {
			t.Errorf("failure (-want +got)\n%s", diff)
		}
	})
}

func TestFundingSessionETransferPatch(t *testing.T) {
	e := newEnv(t)
	cad := e.account(e.key, "", "CAD")
	body := map[string]any{"amount": 500, "currency": "CAD", "account_id": cad, "unique_reference": "et",
		"funding_type": "etransfer", "redirect_url": "https://example.com/back",
		"meta": map[string]any{"name": "Ada Lovelace", "email": "ada@example.com"}}
	id := e.must(201, "POST", "/funding-sessions", e.key, body).str("data", "id")
	got := e.must(200, "PATCH", "/funding-sessions/"+id, e.key, nil)
	d := got.data()
	if d["status"] != "processing" || d["reference_number"] == nil || d["requires_authentication"] != true || d["security_question"] == nil {
		t.Fatalf("%s", got.Raw)
	}
	if again := e.do("PATCH", "/funding-sessions/"+id, e.key, nil); again.Status != 400 {
		t.Errorf("PATCH twice: %d %s", again.Status, again.Raw)
	}
	usd := e.account(e.key, "", "USD")
	body["account_id"], body["unique_reference"] = usd, "et-usd"
	if bad := e.do("POST", "/funding-sessions", e.key, body); bad.Status != 422 || bad.details()["currency"] == nil {
		t.Errorf("etransfer on USD: %d %s", bad.Status, bad.Raw)
	}
}

func TestFundingSessionList(t *testing.T) {
	e := newEnv(t)
	acct := e.account(e.key, "", "USD")
	var ids []string
	for i := range 5 {
		ids = append(ids, e.must(201, "POST", "/funding-sessions", e.key, sessionBody(acct, "l-"+strconv.Itoa(i))).str("data", "id"))
	}
	p1 := e.must(200, "GET", "/funding-sessions?limit=2&account_id="+acct, e.key, nil)
	meta := p1.Body["meta"].(map[string]any)
	pg := meta["pagination"].(map[string]any)
	fa := meta["filters_applied"].(map[string]any)
	if pg["order"] != "asc" || pg["has_next"] != true || fa["entity_id"] != e.root || fa["account_id"] != acct {
		t.Fatalf("meta: %s", p1.Raw)
	}
	if diff := cmp.Diff(map[string]any{"field": "created", "order": "asc"}, fa["sort"]); diff != "" {
		t.Errorf("sort (-want +got)\n%s", diff)
	}
	p2 := e.must(200, "GET", "/funding-sessions?limit=2&account_id="+acct+"&cursor="+pg["next_cursor"].(string), e.key, nil)
	prev := p2.Body["meta"].(map[string]any)["pagination"].(map[string]any)["previous_cursor"].(string)
	back := e.must(200, "GET", "/funding-sessions?limit=2&account_id="+acct+"&pre_cursor="+prev, e.key, nil)
	idsOf := func(r resp) []string {
		var out []string
		for _, it := range r.Body["data"].([]any) {
			out = append(out, it.(map[string]any)["id"].(string))
		}
		return out
	}
	if diff := cmp.Diff(ids[2:4], idsOf(p2)); diff != "" {
		t.Errorf("page 2 (-want +got)\n%s", diff)
	}
	if diff := cmp.Diff(ids[:2], idsOf(back)); diff != "" {
		t.Errorf("pre_cursor (-want +got)\n%s", diff)
	}
	for _, q := range []string{"status=done", "limit=0", "created_after=x", "cursor=nope"} {
		if got := e.do("GET", "/funding-sessions?"+q, e.key, nil); got.Status != 422 {
			t.Errorf("%s: %d %s", q, got.Status, got.Raw)
		}
	}
	if got := e.must(200, "GET", "/funding-sessions?status=awaiting_user&currency=USD", e.key, nil); len(got.Body["data"].([]any)) != 5 {
		t.Errorf("status and currency: %s", got.Raw)
	}
}

// BenchmarkFundingSession measures POST /funding-sessions plus its
// settlement (POST /sandbox/funding-sessions/{id}/simulate settled: the
// hold placed and posted, the inflow recorded, three events) through the
// whole HTTP stack, per backend.
func BenchmarkFundingSession(b *testing.B) {
	for _, backend := range []string{"memory", "bolt"} {
		b.Run(backend, func(b *testing.B) {
			var e *env
			if backend == "memory" {
				e = newEnvDB(b, memory.New())
			} else {
				db, err := bolt.Open(filepath.Join(b.TempDir(), "db"), nil)
				if err != nil {
					b.Fatal(err)
				}
				e = newEnvDB(b, db)
			}
			acct := e.account(e.key, "", "USD")
			settle := []byte(`{"outcome":"settled"}`)
			do := func(method, path string, body []byte, want int) []byte {
				r := httptest.NewRequest(method, path, bytes.NewReader(body))
				r.Header.Set("Authorization", "Bearer "+e.key)
				w := httptest.NewRecorder()
				e.h.ServeHTTP(w, r)
				if w.Code != want {
					b.Fatalf("%s %s: %d %s", method, path, w.Code, w.Body)
				}
				return w.Body.Bytes()
			}
			n := 0
			b.ReportAllocs()
			for b.Loop() {
				n++
				body := []byte(`{"amount":100,"currency":"USD","account_id":"` + acct + `","unique_reference":"b-` +
					strconv.Itoa(n) + `","redirect_url":"https://example.com/back"}`)
				out := do("POST", "/funding-sessions", body, 201)
				i := bytes.Index(out, []byte(`"id":"`)) + 6
				do("POST", "/sandbox/funding-sessions/"+string(out[i:i+26])+"/simulate", settle, 200)
			}
		})
	}
}

func TestFundingSessionRailsOverHTTP(t *testing.T) {
	e := newHookEnv(t, false)
	usd := e.account(e.key, "", "USD")
	momo := map[string]any{"amount": 300, "currency": "USD", "account_id": usd, "unique_reference": "momo-1",
		"funding_type": "momo", "meta": map[string]any{"channel": "TZ-VODACOM-C2B", "msisdn": "255754123456"}}
	m := e.must(201, "POST", "/funding-sessions", e.key, momo)
	if d := m.data(); d["redirect_url"] != nil || d["country"] != "TZ" || d["expires_at"] == nil {
		t.Errorf("momo: %s", m.Raw)
	}
	bad := map[string]any{"amount": 300, "currency": "USD", "account_id": usd, "unique_reference": "momo-2",
		"funding_type": "momo", "redirect_url": "https://example.com", "meta": map[string]any{"channel": "XX-NONE-C2B", "msisdn": "1"}}
	if got := e.do("POST", "/funding-sessions", e.key, bad); got.Status != 422 || got.details()["meta.channel"] == nil || got.details()["redirect_url"] == nil {
		t.Errorf("bad momo: %d %s", got.Status, got.Raw)
	}
	e.must(200, "POST", "/sandbox/clock/advance", e.key, map[string]any{"seconds": 5})
	if got := e.must(200, "GET", "/funding-sessions/"+m.str("data", "id"), e.key, nil); got.str("data", "status") != "pending_settlement" {
		t.Errorf("momo after the payer's answer: %s", got.Raw)
	}

	usc := e.account(e.key, "", "USC")
	c := e.must(201, "POST", "/funding-sessions", e.key, map[string]any{"amount": 2_000_000, "currency": "USC",
		"account_id": usc, "unique_reference": "cr-1", "funding_type": "crypto", "redirect_url": "https://example.com/back"})
	if d := c.data(); d["checkout_id"] == nil || d["checkout_url"] == nil || d["expires_at"] != nil {
		t.Errorf("crypto: %s", c.Raw)
	}
	got := e.must(200, "POST", "/sandbox/funding-sessions/"+c.str("data", "id")+"/simulate", e.key, map[string]any{"outcome": "settled"})
	if got.Body["amount_received"] != 2_000_000.0 || got.Body["payment_outcome"] != "exact" || got.Body["inflow_id"] == nil {
		t.Errorf("crypto settled: %s", got.Raw)
	}
	e.drain()
	for typ, want := range map[string]int{"funding_sessions.updated": 4, "inflows.completed": 1} {
		r := e.must(200, "GET", "/events?limit=100&type="+typ, e.key, nil)
		if n := len(r.Body["data"].([]any)); n != want {
			t.Errorf("%s: %d events, want %d", typ, n, want)
		}
	}
}
