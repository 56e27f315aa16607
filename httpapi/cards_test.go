package httpapi_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCardIssuing: creation answers 201 with number and cvv, which no
// other answer shows (get, list, freeze, a replay of the creation); SPEC's
// 400 for invalid fields and CONTRACT's expiry strings.
func TestCardIssuing(t *testing.T) {
	e := newEnv(t)
	acct := e.account(e.key, "", "USD")
	body := cardBody(acct)
	body["expiration_month"], body["expiration_year"] = 7, 29 // numbers are accepted
	created := e.must(201, "POST", "/virtual-cards", e.key, body, "Idempotency-Key", "card-1")
	number, cvv := created.str("data", "number"), created.str("data", "cvv")
	if len(number) != 16 || len(cvv) != 3 {
		t.Fatalf("creation: %s", created.Raw)
	}
	if created.str("data", "expiration_month") != "07" || created.str("data", "expiration_year") != "29" {
		t.Errorf("expiry: %s", created.Raw)
	}
	id := created.str("data", "id")
	replay := e.must(201, "POST", "/virtual-cards", e.key, body, "Idempotency-Key", "card-1")
	if replay.Header.Get("Idempotent-Replayed") != "true" || replay.str("data", "id") != id {
		t.Errorf("replay: %v %s", replay.Header, replay.Raw)
	}
	d := e.must(201, "POST", "/disposable-cards", e.key, cardBody(acct))
	for _, r := range []resp{replay, d, e.must(200, "GET", "/cards/"+id, e.key, nil), e.must(200, "GET", "/cards", e.key, nil),
		e.must(200, "POST", "/cards/"+id+"/freeze", e.key, nil), e.must(200, "POST", "/cards/"+id+"/unfreeze", e.key, nil)} {
		if strings.Contains(r.Raw, number) || strings.Contains(r.Raw, `"cvv":"`+cvv) {
			t.Errorf("card data in %s", r.Raw)
		}
	}
	if got := e.must(200, "GET", "/cards/"+id, e.key, nil).str("data", "number"); got != "************"+number[12:] {
		t.Errorf("masked number %q", got)
	}
	if !strings.Contains(d.Raw, `"individual_controls":{}`) || !strings.Contains(d.Raw, `"shipping":null`) {
		t.Errorf("disposable: %s", d.Raw)
	}
	list := e.must(200, "GET", "/cards?account_id="+acct+"&limit=1", e.key, nil)
	cards, _ := list.data()["cards"].([]any)
	if len(cards) != 1 || list.data()["meta"] == nil {
		t.Errorf("list: %s", list.Raw)
	}

	for _, tc := range []struct {
		name   string
		edit   func(map[string]any)
		status int
		field  string
	}{
		{"phone not E.164", func(b map[string]any) { b["cardholder"].(map[string]any)["phone_number"] = "0207 183 8750" }, 400, "cardholder.phone_number"},
		{"currency", func(b map[string]any) { b["currency"] = "EUR" }, 400, "currency"},
		{"month", func(b map[string]any) { b["expiration_month"] = "13" }, 400, "expiration_month"},
		{"no card_name", func(b map[string]any) { delete(b, "card_name") }, 400, "card_name"},
		{"unknown field", func(b map[string]any) { b["colour"] = "red" }, 422, "colour"},
	} {
		b := cardBody(acct)
		tc.edit(b)
		r := e.do("POST", "/disposable-cards", e.key, b)
		if r.Status != tc.status || r.details()[tc.field] == nil {
			t.Errorf("%s: %d %s", tc.name, r.Status, r.Raw)
		}
	}
	if r := e.do("POST", "/virtual-cards", e.roKey, cardBody(acct)); r.Status != http.StatusForbidden {
		t.Errorf("read-only: %d", r.Status)
	}
}

// TestCardCreateLimit: the 21st creation in an hour is 429 with
// CONTRACT's fields under details.
func TestCardCreateLimit(t *testing.T) {
	e := newEnv(t)
	acct := e.account(e.key, "", "USD")
	for range 20 {
		e.must(201, "POST", "/virtual-cards", e.key, cardBody(acct))
	}
	r := e.do("POST", "/disposable-cards", e.key, cardBody(acct))
	want := map[string]any{"retry_after": 3600.0, "limit_type": "card_create", "current_count": 20.0, "limit": 20.0}
	if r.Status != http.StatusTooManyRequests {
		t.Fatalf("21st: %d %s", r.Status, r.Raw)
	}
	if diff := cmp.Diff(want, r.details()); diff != "" {
		t.Errorf("429 details (-want +got):\n%s", diff)
	}
	if r.Header.Get("Retry-After") != "3600" {
		t.Errorf("Retry-After %q", r.Header.Get("Retry-After"))
	}
	e.advance(3600)
	e.must(201, "POST", "/disposable-cards", e.key, cardBody(acct))
}

// TestCardMoves: freeze (blocked, then fraud), unfreeze refused on fraud,
// reassign, delete (gone from the list).
func TestCardMoves(t *testing.T) {
	e := newEnv(t)
	acct, other, eur := e.account(e.key, "", "USD"), e.account(e.key, "", "USD"), e.account(e.key, "", "EUR")
	id := e.must(201, "POST", "/virtual-cards", e.key, cardBody(acct)).str("data", "id")
	steps := []struct {
		method, path string
		body         any
		status       int
		want         string // data.status, or the error code
	}{
		{"POST", "/freeze", nil, 200, "blocked"},
		{"POST", "/unfreeze", nil, 200, "active"},
		{"POST", "/freeze", map[string]any{"status": "lost"}, 422, "validation_error"},
		{"POST", "/freeze", map[string]any{"status": "fraud"}, 200, "fraud"},
		{"POST", "/unfreeze", nil, 409, "error_operation_invalid_for_state"},
		{"POST", "/reassign", map[string]any{"account_id": eur}, 422, "validation_error"},
		{"POST", "/reassign", map[string]any{"account_id": other}, 200, "fraud"},
		{"GET", "/transactions", nil, 200, ""},
		{"DELETE", "", nil, 200, "fraud"},
		{"POST", "/freeze", nil, 409, "error_operation_invalid_for_state"},
	}
	for _, st := range steps {
		r := e.do(st.method, "/cards/"+id+st.path, e.key, st.body)
		got := r.code()
		if r.Status < 300 {
			got = r.str("data", "status")
		}
		if r.Status != st.status || got != st.want {
			t.Errorf("%s %s: %d %s", st.method, st.path, r.Status, r.Raw)
		}
	}
	if e.must(200, "GET", "/cards/"+id, e.key, nil).str("data", "account_id") != other {
		t.Error("reassign did not move the card")
	}
	if l := e.must(200, "GET", "/cards", e.key, nil); strings.Contains(l.Raw, id) {
		t.Errorf("deleted card listed: %s", l.Raw)
	}
}

func TestCardAuthorization(t *testing.T) {
	e := newEnv(t)
	acct := e.account(e.key, "", "USD")
	e.fund(e.key, acct, 1000)
	id := e.must(201, "POST", "/virtual-cards", e.key, cardBody(acct)).str("data", "id")
	path := "/sandbox/cards/" + id + "/authorizations"
	ok := e.must(201, "POST", path, e.key, map[string]any{"amount": 600, "mcc": 5812, "merchant_name": "Cafe"}, "Idempotency-Key", "auth-1")
	if ok.str("status") != "pending" || ok.str("card_id") != id {
		t.Errorf("approved: %s", ok.Body)
	}
	replay := e.must(201, "POST", path, e.key, map[string]any{"amount": 600, "mcc": 5812, "merchant_name": "Cafe"}, "Idempotency-Key", "auth-1")
	if replay.str("id") != ok.str("id") {
		t.Errorf("replay answered another transaction: %s", replay.Body)
	}
	no := e.must(201, "POST", path, e.key, map[string]any{"amount": 600, "currency": "USD", "mcc": 5812, "merchant_name": "Cafe"})
	if no.str("status") != "declined" || no.str("decline_reason") != "insufficient_funds" {
		t.Errorf("declined: %s", no.Body)
	}
	bad := e.do("POST", path, e.key, map[string]any{"amount": 0, "mcc": 5812, "merchant_name": "Cafe"})
	if bad.Status != 422 || bad.details()["amount"] == nil {
		t.Errorf("invalid: %d %s", bad.Status, bad.Body)
	}
	inc := e.do("POST", "/sandbox/card-transactions/"+ok.str("id")+"/increment", e.key, map[string]any{"amount": 500})
	if inc.Status != 409 || !strings.Contains(inc.Raw, "insufficient_funds") {
		t.Errorf("increment past the balance: %d %s", inc.Status, inc.Body)
	}
	list := e.must(200, "GET", "/cards/"+id+"/transactions", e.key, nil)
	txs := list.data()["transactions"].([]any)
	if n := len(txs); n != 2 {
		t.Fatalf("%d transactions, want 2: %s", n, list.Body)
	}
	evs := txs[0].(map[string]any)["events"].([]any)
	if last := evs[len(evs)-1].(map[string]any); last["type"] != "increment_declined" || last["decline_reason"] != "insufficient_funds" {
		t.Errorf("declined increment not recorded: %v", evs)
	}
}

// TestCardsPages: GET /cards follows its cursors, under either name the
// document gives (cursor, next_cursor) and back with prev_cursor, and
// refuses a cursor it did not issue with 422.
func TestCardsPages(t *testing.T) {
	e := newEnv(t)
	acct := e.account(e.key, "", "USD")
	var want []string
	for range 5 {
		want = append(want, e.must(201, "POST", "/virtual-cards", e.key, cardBody(acct)).str("data", "id"))
	}
	page := func(q string) (ids []string, next, prev string) {
		t.Helper()
		r := e.must(200, "GET", "/cards?limit=2"+q, e.key, nil)
		for _, c := range r.data()["cards"].([]any) {
			ids = append(ids, c.(map[string]any)["id"].(string))
		}
		p := r.data()["meta"].(map[string]any)["pagination"].(map[string]any)
		next, _ = p["next_cursor"].(string)
		prev, _ = p["previous_cursor"].(string)
		return ids, next, prev
	}
	for _, name := range []string{"cursor", "next_cursor"} {
		var got []string
		ids, next, _ := page("")
		got = append(got, ids...)
		for next != "" {
			ids, next, _ = page("&" + name + "=" + url.QueryEscape(next))
			got = append(got, ids...)
			if len(got) > len(want) {
				break
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("following %s (-want +got):\n%s", name, diff)
		}
	}
	_, next, _ := page("")
	ids, _, prev := page("&next_cursor=" + url.QueryEscape(next))
	if back, _, _ := page("&prev_cursor=" + url.QueryEscape(prev)); len(ids) != 2 || !cmp.Equal(back, want[:2]) {
		t.Errorf("prev_cursor from page 2 gave %v, want %v", back, want[:2])
	}
	for _, q := range []string{"next_cursor=garbage", "cursor=garbage", "cursor=" + url.QueryEscape(next) + "&next_cursor=" + url.QueryEscape(next)} {
		r := e.do("GET", "/cards?"+q, e.key, nil)
		if r.Status != http.StatusUnprocessableEntity {
			t.Errorf("GET /cards?%s = %d %s, want 422", q, r.Status, r.Raw)
		}
	}
}
