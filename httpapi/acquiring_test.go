package httpapi_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank/acquiring"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/storage"
)

// acqFixture is the root's USD account and a card helper.
type acqFixture struct {
	e    *env
	acct string
	seq  int
}

func newAcq(t *testing.T) *acqFixture {
	e := newEnv(t)
	return &acqFixture{e: e, acct: e.account(e.key, "", "USD")}
}

func (f *acqFixture) ref() string {
	f.seq++
	return "order-" + itoa(f.seq)
}

// pay creates an intent of amount confirmed inline with action.
func (f *acqFixture) pay(amount int64, action map[string]any) resp {
	f.e.t.Helper()
	b := intentBody(f.acct, f.ref(), amount)
	b["intent_action"] = action
	return f.e.must(201, "POST", "/payment-intents", f.e.key, b)
}

func (f *acqFixture) card(last4, auth, ret string) map[string]any {
	return cardAction(encryptCard(f.e.t, testPub(f.e.t), cardNumber(last4), "123"), auth, ret)
}

// events returns the types and intent statuses of the events about
// intent id, oldest first.
func (f *acqFixture) events(id string) []string {
	f.e.t.Helper()
	evs, err := storage.View(context.Background(), f.e.db, func(tx storage.Tx) ([]ledger.Event, error) {
		return f.e.led.EventsTx(tx, "", 10000)
	})
	if err != nil {
		f.e.t.Fatal(err)
	}
	var out []string
	for _, ev := range evs {
		var obj map[string]any
		if err := json.Unmarshal(ev.Object, &obj); err != nil || obj["id"] != id {
			continue
		}
		a, _ := obj["intent_action"].(map[string]any)
		out = append(out, ev.Type+" "+obj["status"].(string)+" "+str(a["status"]))
	}
	return out
}

func str(v any) string { s, _ := v.(string); return s }

func TestIntentOutcomes(t *testing.T) {
	f := newAcq(t)
	e := f.e
	t.Run("3ds_disabled completes at once, credits once", func(t *testing.T) {
		r := f.pay(2500, f.card("4242", "3ds_disabled", ""))
		id := r.str("data", "id")
		if got := r.str("data", "status") + " " + r.str("data", "intent_action", "status"); got != "completed completed" {
			t.Fatalf("status %q: %s", got, r.Raw)
		}
		a := r.data()["intent_action"].(map[string]any)
		td := a["payment_type_data"].(map[string]any)
		if td["last_four_digits"] != "4242" || td["card_brand"] == nil || td["auth_model"] != "3ds_disabled" {
			t.Errorf("payment_type_data %v", td)
		}
		if a["charge_amount"] != 2500.0 || a["refunded_amount"] != 0.0 || a["applicable_fee"] != 0.0 {
			t.Errorf("money fields %v", a)
		}
		if av, _ := e.balance(e.key, f.acct); av != 2500 {
			t.Errorf("available %d, want 2500", av)
		}
		// Simulating the outcome it has changes nothing; the other is refused.
		e.must(200, "POST", "/sandbox/intent-actions/"+a["id"].(string)+"/simulate", e.key, map[string]any{"outcome": "completed"})
		if r := e.do("POST", "/sandbox/intent-actions/"+a["id"].(string)+"/simulate", e.key, map[string]any{"outcome": "failed"}); r.Status != 409 {
			t.Errorf("failed after completed: %d %s", r.Status, r.Raw)
		}
		if av, _ := e.balance(e.key, f.acct); av != 2500 {
			t.Errorf("available %d after repeats, want 2500", av)
		}
		if diff := cmp.Diff([]string{"payment_intent.completed completed completed"}, f.events(id)); diff != "" {
			t.Errorf("events (-want +got)\n%s", diff)
		}
	})
	t.Run("3ds_required challenges, simulate completes", func(t *testing.T) {
		before, _ := e.balance(e.key, f.acct)
		r := f.pay(1000, f.card("4242", "3ds_required", "https://shop.example/done"))
		a := r.data()["intent_action"].(map[string]any)
		if r.str("data", "status") != "processing" || a["status"] != "pending_user_action" || a["requires_action"] != true {
			t.Fatalf("got %s", r.Raw)
		}
		na := a["next_action"].(map[string]any)
		if na["type"] != "redirect_to_url" || !strings.Contains(na["url"].(string), "/sandbox/challenge/") {
			t.Fatalf("next_action %v", na)
		}
		if a["payment_type_data"].(map[string]any)["card_brand"] != nil {
			t.Errorf("card_brand shown before completion: %v", a["payment_type_data"])
		}
		// Verification of an open challenge returns it as it stands.
		v := e.must(200, "POST", "/intent-verifications/"+a["id"].(string), e.key, nil)
		if v.str("data", "status") != "pending_user_action" {
			t.Errorf("verify: %s", v.Raw)
		}
		s := e.must(200, "POST", "/sandbox/intent-actions/"+a["id"].(string)+"/simulate", e.key, map[string]any{"outcome": "completed"})
		if s.str("status") != "completed" || s.Body["next_action"] != nil {
			t.Errorf("simulate: %s", s.Raw)
		}
		if av, _ := e.balance(e.key, f.acct); av != before+1000 {
			t.Errorf("available %d, want %d", av, before+1000)
		}
		v = e.must(200, "POST", "/intent-verifications/"+a["id"].(string), e.key, nil)
		if v.str("data", "status") != "completed" {
			t.Errorf("verify final: %s", v.Raw)
		}
		if got := e.must(200, "GET", "/payment-intents/"+r.str("data", "id"), e.key, nil).str("data", "status"); got != "completed" {
			t.Errorf("intent %s", got)
		}
	})
	t.Run("simulate failed", func(t *testing.T) {
		r := f.pay(1000, f.card("4242", "3ds_required", "https://shop.example/done"))
		id := r.str("data", "intent_action", "id")
		s := e.must(200, "POST", "/sandbox/intent-actions/"+id+"/simulate", e.key, map[string]any{"outcome": "failed", "status_reason": "authentication_failed"})
		if s.str("status") != "failed" || s.str("status_reason") != "authentication_failed" {
			t.Errorf("simulate: %s", s.Raw)
		}
		if diff := cmp.Diff([]string{"payment_intent.failed failed failed"}, f.events(r.str("data", "id"))); diff != "" {
			t.Errorf("events (-want +got)\n%s", diff)
		}
	})
	t.Run("challenge expires", func(t *testing.T) {
		r := f.pay(1000, f.card("4242", "3ds_required", "https://shop.example/done"))
		e.advance(31 * 60)
		a := e.must(200, "GET", "/intent-actions/"+r.str("data", "intent_action", "id"), e.key, nil)
		if a.str("data", "status") != "failed" || a.str("data", "status_reason") != "authentication_timeout" {
			t.Errorf("after 31 minutes: %s", a.Raw)
		}
	})
	t.Run("walletpay completes without card data", func(t *testing.T) {
		r := f.pay(300, walletAction())
		if r.str("data", "status") != "completed" || r.str("data", "intent_action", "payment_type") != "walletpay-acq" {
			t.Errorf("got %s", r.Raw)
		}
	})
}

func TestTestCards(t *testing.T) {
	f := newAcq(t)
	e := f.e
	if got := acquiring.TestCardOutcome("0002"); got.Outcome != "decline" || got.FailureCode != "card_declined" {
		t.Fatalf("0002 is %+v, CONTRACT.md says declined card_declined", got)
	}
	for i := 0; i < 10000; i++ {
		l4 := strings.Repeat("0", 4-len(itoa(i))) + itoa(i)
		c := acquiring.TestCardOutcome(l4)
		if c.Outcome == "success" {
			continue
		}
		t.Run(l4+" "+c.Outcome, func(t *testing.T) {
			before, _ := e.balance(e.key, f.acct)
			for _, auth := range []string{"3ds_disabled", "3ds_required"} {
				r := f.pay(100, f.card(l4, auth, "https://shop.example/done"))
				a := r.data()["intent_action"].(map[string]any)
				got := r.str("data", "status") + " " + a["status"].(string) + " " + str(a["status_reason"])
				var want string
				switch c.Outcome {
				case "decline":
					want = "failed failed " + c.FailureCode
				case "challenge", "challenge_decline":
					want = "processing pending_user_action "
				case "frictionless", "refund_fails", "dispute":
					want = "completed completed "
				}
				if c.Outcome == "refund_fails" || c.Outcome == "dispute" {
					if auth == "3ds_required" {
						want = "processing pending_user_action "
					}
				}
				if got != want {
					t.Errorf("%s: %q, want %q", auth, got, want)
				}
				if c.Outcome == "challenge_decline" { // authenticated, then declined
					u, _ := url.Parse(a["next_action"].(map[string]any)["url"].(string))
					res := postChallenge(e, u.Path, "complete", "password")
					if res.Status != 303 {
						t.Fatalf("challenge: %d %s", res.Status, res.Raw)
					}
					g := e.must(200, "GET", "/intent-actions/"+a["id"].(string), e.key, nil)
					if g.str("data", "status") != "failed" || g.str("data", "status_reason") != c.FailureCode {
						t.Errorf("after the challenge: %s", g.Raw)
					}
				}
			}
			after, _ := e.balance(e.key, f.acct)
			credited := int64(0)
			switch c.Outcome {
			case "frictionless":
				credited = 200
			case "refund_fails", "dispute":
				credited = 100
			}
			if after-before != credited {
				t.Errorf("credited %d, want %d", after-before, credited)
			}
		})
	}
}

// postChallenge GETs the challenge page at path and posts its form with
// choice and password.
func postChallenge(e *env, path, choice, password string) resp {
	e.t.Helper()
	nonce := checkoutForm(e, path)
	form := url.Values{"nonce": {nonce}, "choice": {choice}, "password": {password}}
	return e.do("POST", path, "", form.Encode(), "Content-Type", "application/x-www-form-urlencoded")
}

func TestChallengePage(t *testing.T) {
	f := newAcq(t)
	e := f.e
	for _, tc := range []struct{ name, choice, password, status, reason string }{
		{"complete", "complete", "password", "completed", ""},
		{"wrong password", "complete", "guess", "failed", "authentication_failed"},
		{"fail", "fail", "", "failed", "authentication_failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := f.pay(1000, f.card("4242", "3ds_required", "https://shop.example/done?cart=7"))
			u, _ := url.Parse(r.str("data", "intent_action", "next_action", "url"))
			res := postChallenge(e, u.Path, tc.choice, tc.password)
			if res.Status != 303 {
				t.Fatalf("post: %d %s", res.Status, res.Raw)
			}
			loc, _ := url.Parse(res.Header.Get("Location"))
			want := url.Values{"cart": {"7"}, "payment_intent_id": {r.str("data", "id")}, "status": {tc.status}}
			if loc.Host != "shop.example" || !cmp.Equal(want, loc.Query()) {
				t.Errorf("Location %s", loc)
			}
			a := e.must(200, "GET", "/intent-actions/"+r.str("data", "intent_action", "id"), e.key, nil)
			if a.str("data", "status") != tc.status || a.str("data", "status_reason") != tc.reason {
				t.Errorf("action %s", a.Raw)
			}
			// The page is now closed: GET shows the outcome, a replayed form is 409.
			page := e.must(200, "GET", u.Path, "", nil)
			if strings.Contains(page.Raw, "<form") {
				t.Errorf("closed page still has a form")
			}
		})
	}
	t.Run("forged", func(t *testing.T) {
		r := f.pay(1000, f.card("4242", "3ds_required", "https://shop.example/done"))
		u, _ := url.Parse(r.str("data", "intent_action", "next_action", "url"))
		form := url.Values{"nonce": {"1.x"}, "choice": {"complete"}, "password": {"password"}}
		if res := e.do("POST", u.Path, "", form.Encode(), "Content-Type", "application/x-www-form-urlencoded"); res.Status != 403 {
			t.Errorf("forged: %d", res.Status)
		}
		if res := e.do("GET", "/sandbox/challenge/nope", "", nil); res.Status != 404 {
			t.Errorf("unknown token: %d", res.Status)
		}
	})
}

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
