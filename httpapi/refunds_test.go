package httpapi_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// refundBody is a POST /refunds body of amount on action.
func refundBody(action, ref string, amount int64) map[string]any {
	return map[string]any{"payment_intent_action_id": action, "reference": ref, "amount": amount}
}

// TestRefunds: a refund is 200 pending in an envelope with reason as
// refund_reason; it completes on the clock, or as the sandbox route says;
// the refund_fails card's refunds fail on the clock and free the amount.
func TestRefunds(t *testing.T) {
	f := newAcq(t)
	e := f.e
	action := f.pay(1000, f.card("4242", "3ds_disabled", "")).str("data", "intent_action", "id")
	b := refundBody(action, "rf-1", 400)
	b["reason"] = "damaged"
	r := e.must(200, "POST", "/refunds", e.key, b)
	id := r.str("data", "id")
	d := r.data()
	want := map[string]any{"id": id, "reference": "rf-1", "payment_intent_action_id": action, "amount": 400.0,
		"currency": "USD", "refund_reason": "damaged", "status": "pending", "status_reason": nil,
		"account_id": f.acct, "entity_id": d["entity_id"], "created": d["created"]}
	if diff := cmp.Diff(want, d); diff != "" {
		t.Errorf("refund (-want +got)\n%s", diff)
	}
	if got := e.must(200, "GET", "/intent-actions/"+action, e.key, nil).data()["refunded_amount"]; got != 400.0 {
		t.Errorf("refunded_amount %v, want 400 (pending counts)", got)
	}
	if av, _ := e.balance(e.key, f.acct); av != 600 {
		t.Errorf("available %d, want 600 while the refund is held", av)
	}
	e.advance(5)
	if got := e.must(200, "GET", "/refunds/"+id, e.key, nil).str("data", "status"); got != "successful" {
		t.Errorf("after 5 s: %s", got)
	}

	t.Run("simulate", func(t *testing.T) {
		id := e.must(200, "POST", "/refunds", e.key, refundBody(action, "rf-2", 100)).str("data", "id")
		s := e.must(200, "POST", "/sandbox/refunds/"+id+"/simulate", e.key, map[string]any{"outcome": "failed", "status_reason": "issuer_unavailable"})
		if s.str("status") != "failed" || s.str("status_reason") != "issuer_unavailable" {
			t.Errorf("simulate: %s", s.Raw)
		}
		if r := e.do("POST", "/sandbox/refunds/"+id+"/simulate", e.key, map[string]any{"outcome": "successful"}); r.Status != 409 {
			t.Errorf("successful after failed: %d %s", r.Status, r.Raw)
		}
		if r := e.do("POST", "/sandbox/refunds/"+id+"/simulate", e.key, map[string]any{"outcome": "done"}); r.Status != 422 || r.details()["outcome"] == nil {
			t.Errorf("bad outcome: %d %s", r.Status, r.Raw)
		}
		if got := e.must(200, "GET", "/intent-actions/"+action, e.key, nil).data()["refunded_amount"]; got != 400.0 {
			t.Errorf("refunded_amount %v after a failed refund, want 400", got)
		}
	})

	t.Run("refund_fails card", func(t *testing.T) {
		before, _ := e.balance(e.key, f.acct)
		a := f.pay(500, f.card("5126", "3ds_disabled", "")).str("data", "intent_action", "id")
		id := e.must(200, "POST", "/refunds", e.key, refundBody(a, "rf-3", 500)).str("data", "id")
		e.advance(5)
		g := e.must(200, "GET", "/refunds/"+id, e.key, nil)
		if g.str("data", "status") != "failed" || g.str("data", "status_reason") != "refund_declined" {
			t.Errorf("after 5 s: %s", g.Raw)
		}
		e.advance(60)
		if av, _ := e.balance(e.key, f.acct); av != before+500 {
			t.Errorf("available %d, want %d: the failed refund's money is back, once", av, before+500)
		}
		if got := e.must(200, "GET", "/intent-actions/"+a, e.key, nil).data()["refunded_amount"]; got != 0.0 {
			t.Errorf("refunded_amount %v", got)
		}
	})
}

// TestRefundBadRequest: an invalid refund request is 400 with
// {status: error, message, details} naming the field, and changes nothing.
func TestRefundBadRequest(t *testing.T) {
	f := newAcq(t)
	e := f.e
	action := f.pay(1000, f.card("4242", "3ds_disabled", "")).str("data", "intent_action", "id")
	open := f.pay(1000, f.card("4242", "3ds_required", "https://shop.example/done")).str("data", "intent_action", "id")
	with := func(k string, v any) map[string]any { b := refundBody(action, "bad", 10); b[k] = v; return b }
	without := func(k string) map[string]any { b := refundBody(action, "bad", 10); delete(b, k); return b }
	for _, tc := range []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"no action", without("payment_intent_action_id"), "payment_intent_action_id"},
		{"no reference", without("reference"), "reference"},
		{"long reference", with("reference", strings.Repeat("r", 101)), "reference"},
		{"long reason", with("reason", strings.Repeat("r", 101)), "reason"},
		{"no amount", without("amount"), "amount"},
		{"zero amount", with("amount", 0), "amount"},
		{"negative amount", with("amount", -1), "amount"},
		{"over the charge", with("amount", 1001), "amount"},
		{"action not completed", refundBody(open, "bad", 10), "payment_intent_action_id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do("POST", "/refunds", e.key, tc.body)
			if r.Status != 400 || r.str("status") != "error" || r.str("message") == "" || r.details()[tc.field] == nil {
				t.Errorf("got %d %s, want 400 naming %s", r.Status, r.Raw, tc.field)
			}
		})
	}
	// A body that cannot be read is 422, as on every route.
	for field, body := range map[string]map[string]any{"amount": with("amount", "10"), "refund_reason": with("refund_reason", "x")} {
		if r := e.do("POST", "/refunds", e.key, body); r.Status != 422 || r.details()[field] == nil {
			t.Errorf("unreadable %s: %d %s", field, r.Status, r.Raw)
		}
	}
	if r := e.do("POST", "/refunds", e.key, refundBody("01HZZZZZZZZZZZZZZZZZZZZZZZ", "bad", 10)); r.Status != 404 {
		t.Errorf("unknown action: %d %s", r.Status, r.Raw)
	}
	if got := e.must(200, "GET", "/intent-actions/"+action, e.key, nil).data()["refunded_amount"]; got != 0.0 {
		t.Errorf("refunded_amount %v after refused refunds", got)
	}
	if n := len(e.must(200, "GET", "/refunds", e.key, nil).data()["items"].([]any)); n != 0 {
		t.Errorf("%d refunds after refused requests", n)
	}
}

// TestRefundList: data.items with the filters of SPEC.md, dates as ISO
// 8601 or Unix ms.
func TestRefundList(t *testing.T) {
	f := newAcq(t)
	e := f.e
	action := f.pay(1000, f.card("4242", "3ds_disabled", "")).str("data", "intent_action", "id")
	first := e.must(200, "POST", "/refunds", e.key, refundBody(action, "l-1", 100))
	e.advance(3600) // the first succeeds
	second := e.must(200, "POST", "/refunds", e.key, refundBody(action, "l-2", 100))
	id1, id2 := first.str("data", "id"), second.str("data", "id")
	created2 := int64(second.data()["created"].(float64))
	ids := func(query string) []string {
		t.Helper()
		r := e.must(200, "GET", "/refunds"+query, e.key, nil)
		var out []string
		for _, it := range r.data()["items"].([]any) {
			out = append(out, it.(map[string]any)["id"].(string))
		}
		return out
	}
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"", []string{id1, id2}},
		{"?status=pending", []string{id2}},
		{"?status=successful", []string{id1}},
		{"?reference=l-1", []string{id1}},
		{"?currency=EUR", nil},
		{"?account_id=" + f.acct, []string{id1, id2}},
		{"?date_from=" + itoa(int(created2)), []string{id2}},
		{"?date_to=" + itoa(int(created2-1)), []string{id1}},
		{"?date_to=2000-01-01T00:00:00Z", nil},
		{"?date_from=2000-01-01", []string{id1, id2}},
		{"?limit=1", []string{id1}},
	} {
		t.Run(tc.query, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, ids(tc.query)); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
	page := e.must(200, "GET", "/refunds?limit=1", e.key, nil)
	next := page.str("data", "meta", "pagination", "next_cursor")
	if diff := cmp.Diff([]string{id2}, ids("?limit=1&next_cursor="+next)); diff != "" {
		t.Errorf("next page (-want +got)\n%s", diff)
	}
	for _, q := range []string{"?status=done", "?date_from=yesterday", "?limit=0"} {
		if r := e.do("GET", "/refunds"+q, e.key, nil); r.Status != 422 {
			t.Errorf("%s: %d %s", q, r.Status, r.Raw)
		}
	}
}
