package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/corebank/corebank/corebanktest"
)

// findBrowser is the path of a Chromium on PATH, for the browser tests
// (the checkout and challenge pages, the API reference). Without one the
// test skips with one line, unless COREBANK_REQUIRE_TOOLS is set (.ci/run
// sets it and installs Debian's chromium), when it fails.
func findBrowser(t *testing.T) string {
	t.Helper()
	names := []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	if os.Getenv("COREBANK_REQUIRE_TOOLS") != "" {
		t.Fatalf("%s needs one of %s on PATH, and COREBANK_REQUIRE_TOOLS is set", t.Name(), strings.Join(names, ", "))
	}
	t.Skipf("skipping: no %s on PATH for %s", strings.Join(names, ", "), t.Name())
	return ""
}

// redirectRecorder is the merchant's site: it records the query of every
// request redirect_url receives and answers a page the browser can wait
// for.
type redirectRecorder struct {
	*httptest.Server
	got chan url.Values
}

func newRedirectRecorder(t *testing.T) *redirectRecorder {
	r := &redirectRecorder{got: make(chan url.Values, 16)}
	r.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path != "/back" {
			http.NotFound(w, req) // favicon.ico
			return
		}
		r.got <- req.URL.Query()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><title>Merchant</title><p id="landed">back at the merchant</p>`)
	}))
	t.Cleanup(r.Close)
	return r
}

// TestCheckoutPageInBrowser opens open-banking and crypto sessions'
// checkout_url in a headless Chromium, clicks Approve, Reject (with a
// code) or Cancel, follows the redirect to redirect_url, and checks the
// session's status over the API, the ledger (a settled session credits
// available exactly once, a refused one nothing) and the outcome the
// redirect carried.
func TestCheckoutPageInBrowser(t *testing.T) {
	browser := findBrowser(t)
	b := corebanktest.New(t)
	merchant := newRedirectRecorder(t)

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(browser), chromedp.NoSandbox,
		chromedp.Flag("ignore-certificate-errors", true), // the merchant's httptest certificate
		chromedp.Flag("disable-gpu", true))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(actx)
	defer cancelBrowser()
	if err := chromedp.Do(bctx); err != nil { // starts the browser, for the whole test
		t.Fatalf("starting %s: %v", browser, err)
	}

	type account struct {
		ID string `json:"id"`
	}
	accounts := map[string]string{}
	for _, cur := range []string{"USD", "USC"} {
		var a account
		b.Call(201, "POST", "/accounts", map[string]any{"type": "checking", "currency": cur, "display_name": "Checkout " + cur}, &a)
		accounts[cur] = a.ID
	}

	cases := []struct {
		name, rail, currency string
		click                string // the button's id
		code                 string // the failure code selected before clicking
		status, failure      string
		credit               int64
	}{
		{"OpenBanking/Approve", "open-banking", "USD", "approve", "", "settled", "", 1250},
		{"OpenBanking/Reject", "open-banking", "USD", "reject", "insufficient_funds", "failed", "insufficient_funds", 0},
		{"OpenBanking/Cancel", "open-banking", "USD", "cancel", "", "cancelled", "payment_cancelled", 0},
		{"Crypto/Approve", "crypto", "USC", "approve", "", "settled", "", 4200},
		{"Crypto/Reject", "crypto", "USC", "reject", "payment_blocked", "failed", "payment_blocked", 0},
		{"Crypto/Cancel", "crypto", "USC", "cancel", "", "cancelled", "payment_cancelled", 0},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			acct := accounts[c.currency]
			before := availableOf(t, b, acct)
			amount := int64(1250)
			if c.rail == "crypto" {
				amount = 4200
			}
			var created struct {
				ID          string  `json:"id"`
				CheckoutURL string  `json:"checkout_url"`
				CheckoutID  *string `json:"checkout_id"`
			}
			b.Call(201, "POST", "/funding-sessions", map[string]any{"amount": amount, "currency": c.currency,
				"account_id": acct, "unique_reference": fmt.Sprintf("browser-%d", i), "funding_type": c.rail,
				"narration": "Order <42> & co", "redirect_url": merchant.URL + "/back?order=42"}, &created)
			page := created.CheckoutURL
			if !strings.HasPrefix(page, b.Server.URL+"/sandbox/checkout/") {
				t.Fatalf("checkout_url %q is not on the bank's server %s", page, b.Server.URL)
			}

			tab, cancelTab := chromedp.NewContext(bctx)
			defer cancelTab()
			ctx, cancel := context.WithTimeout(tab, 15*time.Second)
			defer cancel()
			do := func(what string, steps ...chromedp.Action[chromedp.Void]) {
				t.Helper()
				if err := chromedp.Do(ctx, steps...); err != nil {
					t.Fatalf("in the browser, %s: %v", what, err)
				}
			}
			text := func(id string) string {
				t.Helper()
				v, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID(id)))
				if err != nil {
					t.Fatalf("in the browser, reading #%s: %v", id, err)
				}
				return v
			}
			do("opening checkout_url", chromedp.Navigate(page), chromedp.WaitVisible(chromedp.ID(c.click)))
			title, shown := text("title"), text("amount")
			if c.code != "" {
				do("choosing a failure code", chromedp.SetValue(chromedp.ID("failure-code"), c.code))
			}
			do("clicking "+c.click, chromedp.Click(chromedp.ID(c.click)), chromedp.WaitVisible(chromedp.ID("landed")))
			landed, err := chromedp.Run(ctx, chromedp.Location())
			if err != nil {
				t.Fatal(err)
			}
			wantTitle := map[string]string{"open-banking": "Sandbox Bank: approve a payment", "crypto": "Sandbox invoice"}[c.rail]
			wantShown := fmt.Sprintf("%d.%02d %s", amount/100, amount%100, c.currency)
			if title != wantTitle || shown != wantShown {
				t.Errorf("page: title %q amount %q, want %q %q", title, shown, wantTitle, wantShown)
			}

			// The redirect carried the outcome, and kept redirect_url's own query.
			want := url.Values{"order": {"42"}, "funding_session_id": {created.ID}, "status": {c.status}}
			if c.failure != "" {
				want.Set("failure_code", c.failure)
			}
			select {
			case got := <-merchant.got:
				if got.Encode() != want.Encode() {
					t.Errorf("redirect query %q, want %q", got.Encode(), want.Encode())
				}
			default:
				t.Fatalf("the merchant saw no redirect (browser at %s)", landed)
			}
			if !strings.HasPrefix(landed, merchant.URL+"/back?") {
				t.Errorf("the browser ended at %s", landed)
			}

			// The session over the API, and the ledger: a settlement due
			// later would fall due within the advance; none may credit twice.
			b.Advance(5 * time.Minute)
			var got struct {
				Status  string `json:"status"`
				Failure *struct {
					Code  string `json:"code"`
					Stage string `json:"stage"`
				} `json:"failure"`
				InflowID *string `json:"inflow_id"`
			}
			b.Call(200, "GET", "/funding-sessions/"+created.ID, nil, &got)
			if got.Status != c.status {
				t.Errorf("status %s, want %s", got.Status, c.status)
			}
			if f := got.Failure; f != nil {
				if f.Code != c.failure || f.Stage != "awaiting_user" {
					t.Errorf("failure %+v, want %s at awaiting_user", *got.Failure, c.failure)
				}
			} else if c.failure != "" {
				t.Errorf("no failure, want %s", c.failure)
			}
			if (got.InflowID != nil) != (c.credit > 0) {
				t.Errorf("inflow_id %v with a credit of %d", got.InflowID, c.credit)
			}
			if after := availableOf(t, b, acct); after-before != c.credit {
				t.Errorf("available moved by %d, want %d", after-before, c.credit)
			}

			// Back on the page: the status, a link back, no form.
			do("opening checkout_url again", chromedp.Navigate(page), chromedp.WaitVisible(chromedp.ID("status")))
			status := text("status")
			back, err := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.ID("back"), "href"))
			if err != nil {
				t.Fatal(err)
			}
			forms, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.forms.length`))
			if err != nil {
				t.Fatal(err)
			}
			if status != c.status || forms != 0 || !strings.HasPrefix(back.Value, merchant.URL+"/back?") {
				t.Errorf("the page afterwards: status %q, %d forms, back %q", status, forms, back.Value)
			}
		})
	}
}

// availableOf is the account's available balance over the API.
func availableOf(t *testing.T, b *corebanktest.Bank, acct string) int64 {
	t.Helper()
	var a struct {
		Balance struct {
			Available int64 `json:"available"`
		} `json:"balance"`
	}
	b.Call(200, "GET", "/accounts/"+acct, nil, &a)
	return a.Balance.Available
}
