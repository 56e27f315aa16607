package workspace_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/corebank/corebank/bank/workspace"
)

// hook registers h's receiver as a webhook of every event in workspace c.
func (h *harness) hook(t *testing.T, c created) {
	t.Helper()
	if s, raw := h.call(t, c.APIKey, "POST", "/entity-webhooks", map[string]any{"url": h.hooks.URL,
		"expires_in": 86400, "enabled_events": map[string]any{"all": true}, "description": "workspace test"}); s != 201 {
		t.Fatalf("webhook: %d %s", s, raw)
	}
}

// event waits for a delivery of an event of type typ.
func (h *harness) event(t *testing.T, typ string) map[string]any {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case raw := <-h.got:
			var ev map[string]any
			json.Unmarshal(raw, &ev)
			if ev["event"] == typ {
				return ev
			}
		case <-deadline:
			t.Fatalf("no %s event delivered", typ)
		}
	}
}

// TestWebhooksWithoutAdvance: a workspace's first attempts go right after
// the commit, on a fake clock as on a real one, with no goroutine of its
// own: no clock advance asks for them.
func TestWebhooksWithoutAdvance(t *testing.T) {
	h := newHarness(t, workspace.Options{})
	for _, body := range []any{map[string]any{"fake_clock": true}, nil} {
		c := h.create(t, body)
		h.hook(t, c)
		s, raw := h.call(t, c.APIKey, "POST", "/accounts", map[string]any{"type": "checking", "currency": "USD", "display_name": "Hooked"})
		if s != 201 {
			t.Fatalf("account: %d %s", s, raw)
		}
		ev := h.event(t, "accounts.created")
		if !strings.Contains(string(mustJSON(ev)), data(t, raw)["id"].(string)) {
			t.Errorf("the event is not about the account: %v", ev)
		}
	}
}

func mustJSON(v any) []byte { raw, _ := json.Marshal(v); return raw }

// TestIdleCostsNoGoroutine: a hundred workspaces, created and used, leave
// the goroutine count where it was; so do their deletes.
func TestIdleCostsNoGoroutine(t *testing.T) {
	h := newHarness(t, workspace.Options{})
	warm := h.create(t, nil)
	h.call(t, warm.APIKey, "POST", "/accounts", map[string]any{"type": "checking", "currency": "USD", "display_name": "Warm"})
	settle := func() int {
		time.Sleep(50 * time.Millisecond) // passes in flight end
		h.srv.CloseClientConnections()
		time.Sleep(50 * time.Millisecond)
		return runtime.NumGoroutine()
	}
	before := settle()
	var all []created
	for range 100 {
		c := h.create(t, map[string]any{"fake_clock": true})
		h.call(t, c.APIKey, "POST", "/accounts", map[string]any{"type": "checking", "currency": "USD", "display_name": "Idle"})
		all = append(all, c)
	}
	if n := settle(); n > before+2 {
		t.Errorf("goroutines: %d before, %d with 100 idle workspaces", before, n)
	}
	for _, c := range all {
		h.call(t, c.APIKey, "DELETE", "/sandbox/workspaces/"+c.ID, nil)
	}
	if n := settle(); n > before+2 {
		t.Errorf("goroutines: %d before, %d after the deletes", before, n)
	}
}

var nonce = regexp.MustCompile(`name="nonce" value="([^"]+)"`)

// TestHostedPages: a workspace's checkout page lives under its own prefix,
// needs no key, and moves its session; the server's own bank and another
// workspace do not know the token.
func TestHostedPages(t *testing.T) {
	h := newHarness(t, workspace.Options{})
	a := h.create(t, map[string]any{"fake_clock": true})
	b := h.create(t, map[string]any{"fake_clock": true})
	_, raw := h.call(t, a.APIKey, "POST", "/accounts", map[string]any{"type": "checking", "currency": "USD", "display_name": "Pages"})
	s, raw := h.call(t, a.APIKey, "POST", "/funding-sessions", map[string]any{"amount": 500, "currency": "USD",
		"account_id": data(t, raw)["id"], "unique_reference": "ws-checkout", "redirect_url": "https://shop.example/back"})
	if s != 201 {
		t.Fatalf("session: %d %s", s, raw)
	}
	session := data(t, raw)
	u, _ := session["checkout_url"].(string)
	prefix := h.srv.URL + "/sandbox/workspaces/" + a.ID + "/sandbox/checkout/"
	token, ok := strings.CutPrefix(u, prefix)
	if !ok || token == "" {
		t.Fatalf("checkout_url %q, want %s<token>", u, prefix)
	}
	for _, path := range []string{"/sandbox/checkout/" + token, "/sandbox/workspaces/" + b.ID + "/sandbox/checkout/" + token,
		"/sandbox/workspaces/" + a.ID + "/accounts", "/sandbox/workspaces/nosuchworkspace0/sandbox/checkout/" + token} {
		if s, raw := h.call(t, "", "GET", path, nil); s != 404 {
			t.Errorf("GET %s: %d %.200s, want 404", path, s, raw)
		}
	}
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	page := make([]byte, 1<<16)
	n, _ := resp.Body.Read(page)
	resp.Body.Close()
	m := nonce.FindSubmatch(page[:n])
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" || m == nil {
		t.Fatalf("GET checkout_url: %d %s %.300s", resp.StatusCode, resp.Header.Get("Content-Type"), page[:n])
	}
	stay := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err = stay.PostForm(u, url.Values{"nonce": {string(m[1])}, "choice": {"approve"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	_, raw = h.call(t, a.APIKey, "GET", "/funding-sessions/"+session["id"].(string), nil)
	if got := data(t, raw)["status"]; resp.StatusCode >= 400 || got == session["status"] {
		t.Errorf("after approving on the page (%d): status %v, was %v", resp.StatusCode, got, session["status"])
	}
}

// TestRealClockDueWork: on a real clock a workspace's payout moves on by
// itself, its due work run when its timer says, with no request and no
// goroutine of its own.
func TestRealClockDueWork(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the sandbox rail's 5 s")
	}
	h := newHarness(t, workspace.Options{})
	c := h.create(t, nil)
	h.hook(t, c)
	must := func(want int, method, path string, body any) map[string]any {
		t.Helper()
		s, raw := h.call(t, c.APIKey, method, path, body)
		if s != want {
			t.Fatalf("%s %s: %d %s", method, path, s, raw)
		}
		var out map[string]any
		json.Unmarshal(raw, &out)
		if d, ok := out["data"].(map[string]any); ok {
			return d
		}
		return out
	}
	acct := must(201, "POST", "/accounts", map[string]any{"type": "checking", "currency": "USD", "display_name": "Payer"})["id"]
	must(201, "POST", "/sandbox/inflows", map[string]any{"account_id": acct, "amount": 150000, "narration": "seed"})
	cp := must(201, "POST", "/counterparties", map[string]any{"type": "individual", "profile": map[string]any{
		"first_name": "Ada", "last_name": "Lovelace", "relationship": "vendor", "email": "ada@example.com",
		"address": map[string]any{"line1": "1 Main St", "city": "Austin", "country": "US"}}})["id"]
	pd := must(201, "POST", "/payment-details", map[string]any{"payment_method": "bank-transfer", "currency": "USD",
		"account_holder_name": "Ada Lovelace", "counterparty_id": cp, "country": "US", "scheme": "ach",
		"routing_number": "021000021", "account_number": "123456789", "account_type": "checking"})["id"]
	tr := must(201, "POST", "/transfers", map[string]any{"account_id": acct, "payment_detail_id": pd, "currency": "USD",
		"amount": 2500, "payment_type": "bank-transfer", "narration": "invoice 42", "unique_reference": "inv-42"})["id"]
	ev := h.event(t, "outflows.completed")
	if !strings.Contains(string(mustJSON(ev)), tr.(string)) {
		t.Errorf("outflows.completed is not about %s: %v", tr, ev)
	}
	if got := must(200, "GET", "/transfers/"+tr.(string), nil)["status"]; got != "successful" {
		t.Errorf("transfer %v after its event", got)
	}
}

// TestDeleteUnderLoad: requests racing a workspace's delete each get a
// whole answer (their own, or 401 once it is gone), never a 500: the
// delete waits for the requests in flight before it closes the store.
func TestDeleteUnderLoad(t *testing.T) {
	h := newHarness(t, workspace.Options{})
	for round := range 5 {
		c := h.create(t, map[string]any{"fake_clock": true})
		h.hook(t, c)
		stop := make(chan struct{})
		bad := make(chan string, 64)
		var wg sync.WaitGroup
		for w := range 6 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					s, raw := h.call(t, c.APIKey, "POST", "/accounts", map[string]any{"type": "checking", "currency": "USD",
						"display_name": fmt.Sprintf("L%d-%d-%d", round, w, i)})
					if s != 201 && s != 401 {
						select {
						case bad <- fmt.Sprintf("%d %s", s, raw):
						default:
						}
					}
					if s == 401 {
						return
					}
				}
			}()
		}
		time.Sleep(30 * time.Millisecond)
		if s, _ := h.call(t, c.APIKey, "DELETE", "/sandbox/workspaces/"+c.ID, nil); s != 204 {
			t.Errorf("delete: %d", s)
		}
		close(stop)
		wg.Wait()
		close(bad)
		for b := range bad {
			t.Errorf("round %d: a request racing the delete got %s", round, b)
		}
	}
}
