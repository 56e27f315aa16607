package httpapi_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

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
