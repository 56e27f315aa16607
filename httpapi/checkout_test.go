package httpapi_test

import (
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// checkoutPath is the path of the checkout page of side s's session
// (kSession), read from its checkout_url.
func checkoutPath(e *env, s *authzSide) string {
	e.t.Helper()
	return checkoutPathOf(e, s.key, s.ids[kSession])
}

func checkoutPathOf(e *env, key, id string) string {
	e.t.Helper()
	u := e.must(200, "GET", "/funding-sessions/"+id, key, nil).str("data", "checkout_url")
	i := strings.Index(u, "/sandbox/checkout/")
	if i < 0 {
		e.t.Fatalf("checkout_url %q", u)
	}
	return u[i:]
}

// checkoutHTML reports whether r is an answer of the checkout page at
// target in HTML, as it answers its own errors (the payer reads them in a
// browser).
func checkoutHTML(target string, r resp) bool {
	page := strings.HasPrefix(target, "/sandbox/checkout/") || strings.HasPrefix(target, "/sandbox/challenge/")
	return page && r.Header.Get("Content-Type") == "text/html; charset=utf-8"
}

var nonceRE = regexp.MustCompile(`name="nonce" value="([^"]+)"`)

// checkoutForm GETs the page at path and returns its form's nonce.
func checkoutForm(e *env, path string) string {
	e.t.Helper()
	page := e.must(200, "GET", path, "", nil)
	m := nonceRE.FindStringSubmatch(page.Raw)
	if m == nil {
		e.t.Fatalf("no form on %s: %.500s", path, page.Raw)
	}
	return m[1]
}

func postCheckout(e *env, path string, form url.Values, hdr ...string) resp {
	e.t.Helper()
	return e.do("POST", path, "", form.Encode(), append([]string{"Content-Type", "application/x-www-form-urlencoded"}, hdr...)...)
}

func TestCheckoutPage(t *testing.T) {
	e := newEnv(t)
	acct := e.account(e.key, "", "USD")
	body := sessionBody(acct, "page-1")
	body["narration"] = `<script>alert("x")</script>`
	id := e.must(201, "POST", "/funding-sessions", e.key, body).str("data", "id")
	path := checkoutPathOf(e, e.key, id)

	page := e.must(200, "GET", path, "", nil)
	for name, want := range map[string]string{
		"Content-Type":            "text/html; charset=utf-8",
		"X-Frame-Options":         "DENY",
		"Referrer-Policy":         "no-referrer",
		"Cache-Control":           "no-store",
		"X-Content-Type-Options":  "nosniff",
		"Content-Security-Policy": "",
	} {
		if got := page.Header.Get(name); want != "" && got != want || got == "" {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
	csp := page.Header.Get("Content-Security-Policy")
	for _, part := range []string{"default-src 'none'", "form-action 'self' https://example.com", "frame-ancestors 'none'", "style-src 'sha256-"} {
		if !strings.Contains(csp, part) {
			t.Errorf("Content-Security-Policy %q lacks %q", csp, part)
		}
	}
	for _, want := range []string{"10.00 USD", "&lt;script&gt;", id, `value="approve"`, `value="reject"`, `value="cancel"`,
		`<option value="payment_blocked">`} {
		if !strings.Contains(page.Raw, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(page.Raw, "<script>") || strings.Contains(page.Raw, "src=") {
		t.Errorf("page has a script or loads something: %s", page.Raw)
	}

	t.Run("ErrUnknownToken", func(t *testing.T) {
		for _, m := range []string{"GET", "POST"} {
			got := e.do(m, "/sandbox/checkout/nope", "", "choice=approve", "Content-Type", "application/x-www-form-urlencoded")
			if got.Status != 404 || !strings.Contains(got.Raw, "There is no checkout at this address.") ||
				got.Header.Get("Content-Type") != "text/html; charset=utf-8" {
				t.Errorf("%s: %d %s", m, got.Status, got.Raw)
			}
		}
	})

	other := e.must(201, "POST", "/funding-sessions", e.key, sessionBody(acct, "page-2")).str("data", "id")
	otherNonce := checkoutForm(e, checkoutPathOf(e, e.key, other))
	nonce := checkoutForm(e, path)
	e.clock.Add(-25 * time.Hour) // a page rendered a day and more before the post
	stale := checkoutForm(e, path)
	e.clock.Add(25 * time.Hour)
	refused := []struct {
		name   string
		form   url.Values
		hdr    []string
		status int
		text   string
	}{
		{"ErrNoNonce", url.Values{"choice": {"approve"}}, nil, 403, "did not come from this checkout page"},
		{"ErrNonceOfAnotherSession", url.Values{"choice": {"approve"}, "nonce": {otherNonce}}, nil, 403, "did not come"},
		{"ErrStaleNonce", url.Values{"choice": {"approve"}, "nonce": {stale}}, nil, 403, "did not come"},
		{"ErrForgedNonce", url.Values{"choice": {"approve"}, "nonce": {nonce + "x"}}, nil, 403, "did not come"},
		{"ErrCrossSite", url.Values{"choice": {"approve"}, "nonce": {nonce}}, []string{"Sec-Fetch-Site", "cross-site"}, 403, "did not come"},
		{"ErrOtherOrigin", url.Values{"choice": {"approve"}, "nonce": {nonce}}, []string{"Origin", "https://evil.example"}, 403, "did not come"},
		{"ErrNotAForm", url.Values{"choice": {"approve"}, "nonce": {nonce}}, []string{"Content-Type", "application/json"}, 422, "body: must be the page&#39;s form"},
		{"ErrChoice", url.Values{"choice": {"pay"}, "nonce": {nonce}}, nil, 422, "choice: must be approve, reject or cancel"},
		{"ErrFailureCode", url.Values{"choice": {"reject"}, "failure_code": {"nope"}, "nonce": {nonce}}, nil, 422, "failure_code"},
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			got := postCheckout(e, path, c.form, c.hdr...)
			if got.Status != c.status || !strings.Contains(got.Raw, c.text) {
				t.Errorf("%d %.600s", got.Status, got.Raw)
			}
			if s := e.must(200, "GET", "/funding-sessions/"+id, e.key, nil).str("data", "status"); s != "awaiting_user" {
				t.Errorf("a refused form moved the session to %s", s)
			}
		})
	}

	t.Run("OK", func(t *testing.T) {
		want := "https://example.com/back?" + url.Values{"funding_session_id": {id}, "status": {"settled"}}.Encode()
		// A second click changes nothing. A browser posts the form with
		// Origin null under the page's Referrer-Policy.
		for i, origin := range []string{"http://example.com", "null"} {
			got := postCheckout(e, path, url.Values{"choice": {"approve"}, "nonce": {nonce}}, "Origin", origin, "Sec-Fetch-Site", "same-origin")
			if got.Status != 303 || got.Header.Get("Location") != want {
				t.Fatalf("click %d: %d Location %q: %s", i, got.Status, got.Header.Get("Location"), got.Raw)
			}
		}
		bal := e.balanceOf(e.key, acct)
		if diff := cmp.Diff(map[string]any{"available": 1000.0, "current": 1000.0}, map[string]any{
			"available": bal["available"], "current": bal["current"]}); diff != "" {
			t.Errorf("balance (-want +got)\n%s", diff)
		}
		page := e.must(200, "GET", path, "", nil)
		if strings.Contains(page.Raw, "<form") || !strings.Contains(page.Raw, `<dd id="status">settled</dd>`) ||
			!strings.Contains(page.Raw, `href="https://example.com/back?funding_session_id=`) {
			t.Errorf("a settled session's page: %s", page.Raw)
		}
	})
	t.Run("ErrInvalidForState", func(t *testing.T) {
		got := postCheckout(e, path, url.Values{"choice": {"cancel"}, "nonce": {nonce}})
		if got.Status != 409 || !strings.Contains(got.Raw, `<dd id="status">settled</dd>`) || !strings.Contains(got.Raw, `id="back"`) {
			t.Errorf("%d %s", got.Status, got.Raw)
		}
	})
	t.Run("Reject", func(t *testing.T) {
		p := checkoutPathOf(e, e.key, other)
		got := postCheckout(e, p, url.Values{"choice": {"reject"}, "failure_code": {"insufficient_funds"}, "nonce": {otherNonce}})
		want := "https://example.com/back?" + url.Values{"funding_session_id": {other}, "status": {"failed"},
			"failure_code": {"insufficient_funds"}}.Encode()
		if got.Status != 303 || got.Header.Get("Location") != want {
			t.Errorf("%d Location %q", got.Status, got.Header.Get("Location"))
		}
	})
}
