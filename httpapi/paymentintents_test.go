package httpapi_test

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestIntentValidation(t *testing.T) {
	f := newAcq(t)
	e := f.e
	eur := e.account(e.key, "", "EUR")
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	good := func() map[string]any { return f.card("4242", "3ds_required", "https://shop.example/done") }
	with := func(mut func(a map[string]any)) map[string]any { a := good(); mut(a); return a }
	td := func(a map[string]any) map[string]any { return a["payment_type_data"].(map[string]any) }
	for _, tc := range []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"no reference", map[string]any{"currency": "USD", "amount": 100, "account_id": f.acct}, "reference"},
		{"long reference", intentBody(f.acct, strings.Repeat("r", 101), 100), "reference"},
		{"long description", func() map[string]any {
			b := intentBody(f.acct, "d", 100)
			b["description"] = strings.Repeat("d", 251)
			return b
		}(), "description"},
		{"zero amount", intentBody(f.acct, "z", 0), "amount"},
		{"currency mismatch", map[string]any{"currency": "USD", "amount": 100, "account_id": eur, "reference": "cm"}, "currency"},
		{"unknown field", map[string]any{"currency": "USD", "amount": 100, "account_id": f.acct, "reference": "u", "entity": "x"}, "entity"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do("POST", "/payment-intents", e.key, tc.body)
			if r.Status != 422 || r.details()[tc.field] == nil {
				t.Errorf("got %d %s, want 422 naming %s", r.Status, r.Raw, tc.field)
			}
		})
	}
	for _, tc := range []struct {
		name   string
		action map[string]any
		field  string
	}{
		{"no data", with(func(a map[string]any) { delete(td(a), "data") }), "intent_action.payment_type_data.data"},
		{"plain base64 JSON", with(func(a map[string]any) {
			td(a)["data"] = base64.StdEncoding.EncodeToString([]byte(`{"card_number":"4242424242424242","cvv":"123"}`))
		}), "intent_action.payment_type_data.data"},
		{"another key", with(func(a map[string]any) {
			td(a)["data"] = encryptCard(t, &other.PublicKey, cardNumber("4242"), "123")
		}), "intent_action.payment_type_data.data"},
		{"raw card fields", with(func(a map[string]any) { td(a)["card_number"] = "4242424242424242" }), "intent_action.payment_type_data.card_number"},
		{"wallet with data", with(func(a map[string]any) { a["payment_type"] = "walletpay-acq" }), "intent_action.payment_type_data.data"},
		{"bad payment type", with(func(a map[string]any) { a["payment_type"] = "cash" }), "intent_action.payment_type"},
		{"bad action", with(func(a map[string]any) { a["action"] = "capture" }), "intent_action.action"},
		{"bad category", with(func(a map[string]any) { a["category"] = "payouts" }), "intent_action.category"},
		{"bad auth model", with(func(a map[string]any) { td(a)["auth_model"] = "3ds_maybe" }), "intent_action.payment_type_data.auth_model"},
		{"no billing address", with(func(a map[string]any) { delete(td(a), "billing_address") }), "intent_action.payment_type_data.billing_address"},
		{"no country", with(func(a map[string]any) { delete(td(a)["billing_address"].(map[string]any), "country") }), "intent_action.payment_type_data.billing_address.country"},
		{"card without city", with(func(a map[string]any) { delete(td(a)["billing_address"].(map[string]any), "city") }), "intent_action.payment_type_data.billing_address.city"},
		{"card without line one", with(func(a map[string]any) {
			delete(td(a)["billing_address"].(map[string]any), "address_line_one")
		}), "intent_action.payment_type_data.billing_address.address_line_one"},
		{"card without state", with(func(a map[string]any) { delete(td(a)["billing_address"].(map[string]any), "state") }), "intent_action.payment_type_data.billing_address.state"},
		{"no customer", with(func(a map[string]any) { delete(a, "customer") }), "intent_action.customer"},
		{"bad email", with(func(a map[string]any) { a["customer"].(map[string]any)["email"] = "ada" }), "intent_action.customer.email"},
		{"no last name", with(func(a map[string]any) { delete(a["customer"].(map[string]any), "last_name") }), "intent_action.customer.last_name"},
		{"no return_url", with(func(a map[string]any) { delete(a, "return_url") }), "intent_action.return_url"},
		{"bad return_url", with(func(a map[string]any) { a["return_url"] = "javascript:alert(1)" }), "intent_action.return_url"},
		{"no browser data", with(func(a map[string]any) { delete(td(a), "browser_data") }), "intent_action.payment_type_data.browser_data"},
		{"browser without agent", with(func(a map[string]any) { delete(td(a)["browser_data"].(map[string]any), "user_agent") }), "intent_action.payment_type_data.browser_data.user_agent"},
		{"javascript without screen", with(func(a map[string]any) {
			delete(td(a)["browser_data"].(map[string]any), "screen_width")
		}), "intent_action.payment_type_data.browser_data.screen_width"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, _ := e.balance(e.key, f.acct)
			b := intentBody(f.acct, "v-"+tc.name, 100)
			b["intent_action"] = tc.action
			r := e.do("POST", "/payment-intents", e.key, b)
			if r.Status != 422 || r.details()[tc.field] == nil {
				t.Errorf("got %d %s, want 422 naming %s", r.Status, r.Raw, tc.field)
			}
			// Nothing changed: the reference is still free, the balance the same.
			if got := e.must(200, "GET", "/payment-intents?reference="+url.QueryEscape("v-"+tc.name), e.key, nil); len(got.data()["items"].([]any)) != 0 {
				t.Errorf("an intent was created: %s", got.Raw)
			}
			if after, _ := e.balance(e.key, f.acct); after != before {
				t.Errorf("balance moved")
			}
		})
	}
	t.Run("3ds_disabled needs no return_url or browser data; wallet needs only country", func(t *testing.T) {
		a := f.card("4242", "3ds_disabled", "")
		f.pay(100, a)
		w := walletAction()
		f.pay(100, w)
	})
}

func TestIntentLifecycle(t *testing.T) {
	f := newAcq(t)
	e := f.e
	t.Run("duplicate reference", func(t *testing.T) {
		first := e.must(201, "POST", "/payment-intents", e.key, intentBody(f.acct, "dup", 100))
		r := e.do("POST", "/payment-intents", e.key, intentBody(f.acct, "dup", 200))
		if r.Status != 409 || r.code() != "duplicate_reference" || r.str("data", "id") != first.str("data", "id") {
			t.Errorf("got %d %s", r.Status, r.Raw)
		}
		// Another account may use it.
		e.must(201, "POST", "/payment-intents", e.key, intentBody(e.account(e.key, "", "USD"), "dup", 100))
	})
	t.Run("confirm through /intent-actions", func(t *testing.T) {
		in := e.must(201, "POST", "/payment-intents", e.key, intentBody(f.acct, "later", 400))
		if in.data()["intent_action"] != nil || in.str("data", "status") != "requires_action" {
			t.Fatalf("new intent %s", in.Raw)
		}
		a := e.must(201, "POST", "/intent-actions", e.key, map[string]any{"payment_intent_id": in.str("data", "id"),
			"intent_action": f.card("4242", "3ds_disabled", "")})
		if a.str("data", "status") != "completed" || a.str("data", "payment_intent_id") != in.str("data", "id") {
			t.Errorf("action %s", a.Raw)
		}
		got := e.must(200, "GET", "/payment-intents/"+in.str("data", "id"), e.key, nil)
		if got.str("data", "intent_action", "id") != a.str("data", "id") || got.str("data", "status") != "completed" {
			t.Errorf("intent %s", got.Raw)
		}
		// A completed intent takes no other confirmation, nor a cancel.
		r := e.do("POST", "/intent-actions", e.key, map[string]any{"payment_intent_id": in.str("data", "id"), "intent_action": walletAction()})
		if r.Status != 409 {
			t.Errorf("second confirm: %d %s", r.Status, r.Raw)
		}
		r = e.do("PATCH", "/payment-intents/"+in.str("data", "id"), e.key, map[string]any{"action": "cancel"})
		if r.Status != 409 || r.code() != "error_operation_invalid_for_state" {
			t.Errorf("cancel completed: %d %s", r.Status, r.Raw)
		}
	})
	t.Run("cancel", func(t *testing.T) {
		in := e.must(201, "POST", "/payment-intents", e.key, intentBody(f.acct, "cancel-me", 400))
		id := in.str("data", "id")
		for _, bad := range []map[string]any{{"action": "void"}, {}, {"action": "cancel", "reason": strings.Repeat("x", 101)}} {
			if r := e.do("PATCH", "/payment-intents/"+id, e.key, bad); r.Status != 422 {
				t.Errorf("%v: %d %s", bad, r.Status, r.Raw)
			}
		}
		r := e.must(200, "PATCH", "/payment-intents/"+id, e.key, map[string]any{"action": "cancel", "reason": "customer left"})
		if r.str("data", "status") != "cancelled" || r.str("data", "status_reason") != "customer left" {
			t.Errorf("cancel: %s", r.Raw)
		}
		if diff := cmp.Diff([]string{"payment_intent.cancelled cancelled "}, f.events(id)); diff != "" {
			t.Errorf("events (-want +got)\n%s", diff)
		}
	})
	t.Run("not found", func(t *testing.T) {
		for _, p := range []string{"/payment-intents/01HZZZZZZZZZZZZZZZZZZZZZZZ", "/intent-actions/01HZZZZZZZZZZZZZZZZZZZZZZZ"} {
			if r := e.do("GET", p, e.key, nil); r.Status != 404 {
				t.Errorf("%s: %d", p, r.Status)
			}
		}
	})
}

func TestIntentLists(t *testing.T) {
	f := newAcq(t)
	e := f.e
	var ids []string
	for i := 0; i < 5; i++ {
		r := f.pay(int64(100+i), walletAction())
		ids = append(ids, r.str("data", "id"))
		e.clock.Add(time.Second)
	}
	open := e.must(201, "POST", "/payment-intents", e.key, intentBody(f.acct, "open", 50)).str("data", "id")
	page := func(path string) ([]string, resp) {
		r := e.must(200, "GET", path, e.key, nil)
		var out []string
		for _, it := range r.data()["items"].([]any) {
			out = append(out, it.(map[string]any)["id"].(string))
		}
		return out, r
	}
	got, r := page("/payment-intents?limit=2")
	if diff := cmp.Diff(ids[:2], got); diff != "" {
		t.Fatalf("first page (-want +got)\n%s", diff)
	}
	next := r.data()["meta"].(map[string]any)["pagination"].(map[string]any)["next_cursor"].(string)
	got, r = page("/payment-intents?limit=2&next_cursor=" + url.QueryEscape(next))
	if diff := cmp.Diff(ids[2:4], got); diff != "" {
		t.Fatalf("second page (-want +got)\n%s", diff)
	}
	prev := r.data()["meta"].(map[string]any)["pagination"].(map[string]any)["previous_cursor"].(string)
	got, _ = page("/payment-intents?limit=2&prev_cursor=" + url.QueryEscape(prev))
	if diff := cmp.Diff(ids[:2], got); diff != "" {
		t.Fatalf("previous page (-want +got)\n%s", diff)
	}
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"status=requires_action", []string{open}},
		{"status=completed&reference=order-3", ids[2:3]},
		{"currency=USD&account_id=" + f.acct, append(append([]string{}, ids...), open)},
		{"currency=EUR", nil},
		{"date_from=" + itoa(int(e.clock.Now().UnixMilli()-3000)) + "&date_to=" + itoa(int(e.clock.Now().UnixMilli()-2000)), ids[2:4]},
		{"date_from=" + url.QueryEscape(e.clock.Now().UTC().Format("2006-01-02T15:04:05.000Z07:00")), []string{open}},
	} {
		got, _ := page("/payment-intents?" + tc.query)
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s (-want +got)\n%s", tc.query, diff)
		}
	}
	acts, _ := page("/intent-actions?payment_type=walletpay-acq&status=completed&payment_intent_id=" + ids[1])
	if len(acts) != 1 {
		t.Errorf("actions of %s: %v", ids[1], acts)
	}
	for _, q := range []string{"status=nope", "date_from=yesterday", "limit=0", "next_cursor=garbage", "payment_type=cash"} {
		path := "/payment-intents?" + q
		if strings.HasPrefix(q, "payment_type") {
			path = "/intent-actions?" + q
		}
		if r := e.do("GET", path, e.key, nil); r.Status != 422 {
			t.Errorf("%s: %d %s", q, r.Status, r.Raw)
		}
	}
}
