package httpapi_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank/acquiring"
)

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
