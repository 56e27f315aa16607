package httpapi_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDisputes: over HTTP, a dispute opened by the sandbox route debits
// the merchant and reads back by id and in the list; won credits it
// back; the test card's charge is disputed a minute after it completes;
// bad input is 422 naming the field and changes nothing.
func TestDisputes(t *testing.T) {
	f := newAcq(t)
	e := f.e
	charge := f.pay(5000, walletAction()).str("data", "intent_action", "id")
	avail := func() int64 { a, _ := e.balance(e.key, f.acct); return a }

	for _, c := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"amount": 0}, "amount"},
		{map[string]any{"amount": 5001}, "amount"},
		{map[string]any{"reason": "bored"}, "reason"},
	} {
		r := e.must(422, "POST", "/sandbox/intent-actions/"+charge+"/dispute", e.key, c.body)
		if _, ok := r.details()[c.field]; !ok {
			t.Errorf("%v: details %v, want %s", c.body, r.details(), c.field)
		}
	}
	if got := avail(); got != 5000 {
		t.Fatalf("refusals moved money: %d", got)
	}
	d := e.must(201, "POST", "/sandbox/intent-actions/"+charge+"/dispute", e.key, map[string]any{"amount": 1500, "reason": "product_not_received"})
	id := d.str("id")
	if got := d.str("status") + " " + d.str("reason") + " " + d.str("payment_intent_action_id"); got != "needs_response product_not_received "+charge {
		t.Errorf("dispute: %s", got)
	}
	if got := avail(); got != 3500 {
		t.Errorf("after open: %d, want 3500", got)
	}
	if r := e.must(409, "POST", "/sandbox/intent-actions/"+charge+"/dispute", e.key, map[string]any{}); r.code() != "charge_already_disputed" {
		t.Errorf("second dispute: %s", r.code())
	}
	if got := e.must(200, "GET", "/disputes/"+id, e.key, nil).str("data", "id"); got != id {
		t.Errorf("get: %s", got)
	}
	e.must(404, "GET", "/disputes/01HZZZZZZZZZZZZZZZZZZZZZZZ", e.key, nil)

	e.must(422, "POST", "/sandbox/disputes/"+id+"/simulate", e.key, map[string]any{"outcome": "draw"})
	for range 2 {
		if got := e.must(200, "POST", "/sandbox/disputes/"+id+"/simulate", e.key, map[string]any{"outcome": "won"}).str("status"); got != "won" {
			t.Errorf("simulate: %s", got)
		}
	}
	e.must(409, "POST", "/sandbox/disputes/"+id+"/simulate", e.key, map[string]any{"outcome": "lost"})
	if got := avail(); got != 5000 {
		t.Errorf("after won: %d, want 5000", got)
	}

	card := f.pay(700, f.card("0259", "3ds_disabled", "")).str("data", "intent_action", "id")
	e.advance(60)
	list := func(q string) []string {
		r := e.must(200, "GET", "/disputes?"+q, e.key, nil)
		items, _ := r.data()["items"].([]any)
		var out []string
		for _, it := range items {
			m := it.(map[string]any)
			out = append(out, m["payment_intent_action_id"].(string)+" "+m["status"].(string)+" "+m["reason"].(string))
		}
		return out
	}
	for _, c := range []struct {
		q    string
		want []string
	}{
		{"", []string{charge + " won product_not_received", card + " needs_response fraudulent"}},
		{"status=needs_response", []string{card + " needs_response fraudulent"}},
		{"payment_intent_action_id=" + charge, []string{charge + " won product_not_received"}},
		{"account_id=" + f.acct + "&limit=1", []string{charge + " won product_not_received"}},
	} {
		if diff := cmp.Diff(c.want, list(c.q)); diff != "" {
			t.Errorf("GET /disputes?%s (-want +got)\n%s", c.q, diff)
		}
	}
	if r := e.must(422, "GET", "/disputes?status=open", e.key, nil); r.details()["status"] == nil {
		t.Errorf("bad status: %v", r.details())
	}
	e.must(422, "GET", "/disputes?date_from=yesterday", e.key, nil)
}
