package httpapi_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/corebank/corebank/acquiring"
	"github.com/corebank/corebank/corebanktest"
)

// TestChallengePageInBrowser opens a 3ds_required card payment's
// next_action.url in a headless Chromium, types the password (or a wrong
// one, or clicks Fail), follows the redirect to return_url, and checks
// the intent over the API and the ledger (a completed payment credits
// once, a failed one nothing).
func TestChallengePageInBrowser(t *testing.T) {
	browser := findBrowser(t)
	b := corebanktest.New(t)
	merchant := newRedirectRecorder(t)

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(browser), chromedp.NoSandbox,
		chromedp.Flag("ignore-certificate-errors", true), chromedp.Flag("disable-gpu", true))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(actx)
	defer cancelBrowser()
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("starting %s: %v", browser, err)
	}
	var acct struct {
		ID string `json:"id"`
	}
	b.Call(201, "POST", "/accounts", map[string]any{"type": "checking", "currency": "USD", "display_name": "Shop"}, &acct)

	cases := []struct {
		name, last4, password, click, status, reason string
		credit                                       int64
	}{
		{"Complete", "4242", "password", "complete", "completed", "", 1999},
		{"WrongPassword", "4242", "letmein", "complete", "failed", "authentication_failed", 0},
		{"Fail", "4242", "", "fail", "failed", "authentication_failed", 0},
	}
	if l4 := challengeDeclineCard(); l4 != "" {
		cases = append(cases, struct {
			name, last4, password, click, status, reason string
			credit                                       int64
		}{"ChallengeThenDecline", l4, "password", "complete", "failed", acquiring.TestCardOutcome(l4).FailureCode, 0})
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := availableOf(t, b, acct.ID)
			data := corebanktest.EncryptCard(t, b.Root.EncryptionPublicKey, corebanktest.CardNumber(c.last4), 12, 2030, "123")
			var in acquiring.Intent
			b.Call(201, "POST", "/payment-intents", map[string]any{"currency": "USD", "amount": 1999, "account_id": acct.ID,
				"reference": "browser-" + itoa(i), "intent_action": corebanktest.CardAction(data, acquiring.Auth3DSRequired, merchant.URL+"/back?order=42")}, &in)
			if in.IntentAction == nil || in.IntentAction.NextAction == nil {
				t.Fatalf("no next_action: %+v", in)
			}
			page := in.IntentAction.NextAction.URL
			if !strings.HasPrefix(page, "http") {
				page = b.Server.URL + page
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
			do("opening next_action.url", chromedp.Navigate(page), chromedp.WaitVisible(chromedp.ID(c.click)))
			shown, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("amount")))
			if err != nil || shown != "19.99 USD" {
				t.Errorf("amount shown %q %v", shown, err)
			}
			if c.password != "" {
				do("typing the password", chromedp.SendKeys(chromedp.ID("password"), c.password))
			}
			do("clicking "+c.click, chromedp.Click(chromedp.ID(c.click)), chromedp.WaitVisible(chromedp.ID("landed")))
			landed, err := chromedp.Run(ctx, chromedp.Location())
			if err != nil {
				t.Fatal(err)
			}
			want := url.Values{"order": {"42"}, "payment_intent_id": {in.ID}, "status": {c.status}}
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
			var got acquiring.Intent
			b.Call(200, "GET", "/payment-intents/"+in.ID, nil, &got)
			reason := ""
			if r := got.IntentAction.StatusReason; r != nil {
				reason = *r
			}
			if got.Status != c.status || got.IntentAction.Status != c.status || reason != c.reason {
				t.Errorf("intent %s, action %s %q; want %s %q", got.Status, got.IntentAction.Status, reason, c.status, c.reason)
			}
			if after := availableOf(t, b, acct.ID); after-before != c.credit {
				t.Errorf("available moved by %d, want %d", after-before, c.credit)
			}
		})
	}
}

// challengeDeclineCard is the table's challenge-then-decline card, or "".
func challengeDeclineCard() string {
	for i := 0; i < 10000; i++ {
		l4 := strings.Repeat("0", 4-len(itoa(i))) + itoa(i)
		if acquiring.TestCardOutcome(l4).Outcome == "challenge_decline" {
			return l4
		}
	}
	return ""
}
