package corebanktest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/bank"
	"github.com/corebank/corebank/corebanktest"
	"github.com/corebank/corebank/funding"
	"github.com/corebank/corebank/payments"
	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/webhooks"
)

// transfer is the part of a transfer the tests read.
type transfer struct {
	ID            string `json:"id"`
	Status        string `json:"status"`
	Amount        int64  `json:"amount"`
	ApplicableFee int64  `json:"applicable_fee"`
}

// pay creates a vendor with an ACH payment detail and pays it amount from
// accountID over HTTP.
func pay(t *testing.T, b *corebanktest.Bank, accountID string, amount int64) transfer {
	t.Helper()
	var vendor, detail struct{ ID string }
	b.Call(http.StatusCreated, "POST", "/counterparties", map[string]any{"type": "individual", "profile": map[string]any{
		"first_name": "Ada", "last_name": "Lovelace", "relationship": "employee", "email": "ada@example.com",
		"address": map[string]any{"line1": "12 St James's Sq", "city": "London", "country": "GB"},
	}}, &vendor)
	b.Call(http.StatusCreated, "POST", "/payment-details", map[string]any{
		"counterparty_id": vendor.ID, "payment_method": payments.BankTransfer, "currency": "USD", "country": "US",
		"scheme": payments.SchemeACH, "account_holder_name": "Ada Lovelace",
		"routing_number": "091000019", "account_number": "987654321", "account_type": "savings",
	}, &detail)
	var tr transfer
	b.Call(http.StatusCreated, "POST", "/transfers", map[string]any{
		"account_id": accountID, "payment_detail_id": detail.ID, "amount": amount,
		"payment_type": payments.BankTransfer, "narration": "Salary", "unique_reference": "salary-" + strconv.FormatInt(amount, 10),
	}, &tr)
	return tr
}

// TestNew: a new bank is bootstrapped, its clock stands at Start, its keys
// work over HTTP with their rights, and the options apply.
func TestNew(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		b := corebanktest.New(t)
		if !b.Clock.Now().Equal(corebanktest.Start) {
			t.Errorf("clock at %s, want Start %s", b.Clock.Now(), corebanktest.Start)
		}
		if b.Bank.Clock != b.Clock {
			t.Error("the services run on another clock than Bank.Clock")
		}
		if !strings.HasPrefix(b.Server.URL, "http://") {
			t.Errorf("server at %s, want plain HTTP without WithTLS", b.Server.URL)
		}
		var got struct {
			Entity struct {
				ID     string `json:"id"`
				IsRoot bool   `json:"is_root"`
			} `json:"entity"`
		}
		b.Call(http.StatusOK, "GET", "/entities/"+b.Root.EntityID, nil, &got)
		if ent := got.Entity; ent.ID != b.Root.EntityID || !ent.IsRoot {
			t.Errorf("GET /entities/{root} = %+v, want the root", got)
		}
		ro := b.Client(b.Root.ReadOnlyAPIKey)
		ro.Call(http.StatusOK, "GET", "/accounts", nil, nil)
		if status, body := ro.Do("POST", "/accounts", map[string]any{"type": "checking", "currency": "USD", "display_name": "x"}); status != http.StatusForbidden {
			t.Errorf("POST /accounts with the read-only key = %d %s, want 403", status, body)
		}
		if status, _ := b.Client("").Do("GET", "/accounts", nil); status != http.StatusUnauthorized {
			t.Errorf("GET /accounts without a key = %d, want 401", status)
		}
		if b.Root.EncryptionPublicKey == "" {
			t.Error("the root's key has no encryption_public_key")
		}
	})
	t.Run("Options", func(t *testing.T) {
		start := time.Date(2030, 6, 1, 12, 0, 0, 0, time.UTC)
		fees, err := payments.ParseFeeSchedule("bank-transfer=100")
		if err != nil {
			t.Fatal(err)
		}
		b := corebanktest.New(t, corebanktest.WithClockStart(start), corebanktest.WithTLS(),
			corebanktest.WithOptions(func(o *bank.Options) { o.Payments.Fees = fees }))
		if !strings.HasPrefix(b.Server.URL, "https://") {
			t.Errorf("server at %s, want HTTPS with WithTLS", b.Server.URL)
		}
		var clk struct {
			NowMS int64 `json:"now_ms"`
		}
		b.Call(http.StatusOK, "GET", "/sandbox/clock", nil, &clk)
		if clk.NowMS != start.UnixMilli() {
			t.Errorf("GET /sandbox/clock = %d, want %d", clk.NowMS, start.UnixMilli())
		}
		tr := pay(t, b, b.FundedAccount("USD", 5_000).ID, 1_000)
		if tr.ApplicableFee != 100 {
			t.Errorf("applicable_fee %d, want 100 from the fee schedule", tr.ApplicableFee)
		}
	})
	t.Run("ErrBadOptions", func(t *testing.T) {
		rec := &recorder{TB: t}
		done := make(chan struct{})
		go func() { // Fatalf ends the goroutine that calls it
			defer close(done)
			corebanktest.New(rec, corebanktest.WithOptions(func(o *bank.Options) { o.Env = "staging" }))
		}()
		<-done
		if got := rec.messages(); len(got) != 1 || !strings.Contains(got[0], "Env") {
			t.Errorf("failures %q, want one naming Env", got)
		}
	})
}

// TestFundedAccount: the account is credited through the funding service,
// so its balance, its inflow and the events are real.
func TestFundedAccount(t *testing.T) {
	b := corebanktest.New(t)
	a := b.FundedAccount("GBP", 12_345)
	var got struct {
		EntityID string `json:"entity_id"`
		Currency string `json:"currency"`
		Balance  struct {
			Available int64 `json:"available"`
			Current   int64 `json:"current"`
		} `json:"balance"`
	}
	b.Call(http.StatusOK, "GET", "/accounts/"+a.ID, nil, &got)
	if got.EntityID != b.Root.EntityID || got.Currency != "GBP" || got.Balance.Available != 12_345 || got.Balance.Current != 12_345 {
		t.Errorf("GET /accounts/{id} = %+v, want the root's GBP account holding 12345", got)
	}
	if a.Balance.Available != 12_345 {
		t.Errorf("returned balance %+v, want 12345 available", a.Balance)
	}
	for _, typ := range []string{"accounts.created", funding.EventInflowCompleted} {
		if ev := b.LastEvent(typ); ev == nil || !strings.Contains(string(ev.Data), a.ID) {
			t.Errorf("last %s event = %+v, want one about %s", typ, ev, a.ID)
		}
	}
}

// TestAdvance: Advance runs the due work of the new time before it
// returns: a pending inflow settles, a payout moves on the sandbox rail,
// and the webhooks they cause are sent.
func TestAdvance(t *testing.T) {
	b := corebanktest.New(t)
	hooks := b.CaptureWebhooks()
	a := b.FundedAccount("USD", 50_000)
	settle := false
	in, err := b.Funding.CreateInflow(context.Background(), corebank.As(b.Root.EntityID),
		funding.NewInflow{AccountID: a.ID, Amount: 700, Settle: &settle})
	if err != nil {
		t.Fatal(err)
	}
	tr := pay(t, b, a.ID, 20_000)

	steps := []struct {
		by                     time.Duration
		inflow, transfer       string
		available, completions int
	}{
		{0, funding.StatusPending, payments.StatusPending, 30_000, 0},
		{time.Second, funding.StatusPending, payments.StatusProcessing, 30_000, 0},
		{time.Minute, funding.StatusCompleted, payments.StatusSuccessful, 30_700, 1},
	}
	for _, s := range steps {
		now := b.Advance(s.by)
		if !now.Equal(b.Clock.Now()) {
			t.Errorf("Advance returned %s, clock at %s", now, b.Clock.Now())
		}
		gotIn, err := b.Funding.GetInflow(context.Background(), in.ID)
		if err != nil {
			t.Fatal(err)
		}
		var gotTr transfer
		b.Call(http.StatusOK, "GET", "/transfers/"+tr.ID, nil, &gotTr)
		bal, err := b.Ledger.GetBalance(context.Background(), a.ID)
		if err != nil {
			t.Fatal(err)
		}
		got := []any{gotIn.Status, gotTr.Status, bal.Summary().Available}
		if diff := cmp.Diff([]any{s.inflow, s.transfer, int64(s.available)}, got); diff != "" {
			t.Errorf("after advancing %s (-want +got)\n%s", s.by, diff)
		}
		// Whichever of RunDue and the background dispatcher sent it, the
		// delivery is in when Advance returns.
		if n := len(hooks.Deliveries("outflows.completed")); n != s.completions {
			t.Errorf("after advancing %s: %d outflows.completed deliveries, want %d", s.by, n, s.completions)
		}
	}
	d := hooks.Wait("outflows.completed")
	var data transfer
	if err := json.Unmarshal(d.Data, &data); err != nil {
		t.Fatal(err)
	}
	// Signed at the real time of sending; the event is the bank's.
	if data.ID != tr.ID || data.Status != payments.StatusSuccessful || time.Since(d.Timestamp).Abs() > time.Minute {
		t.Errorf("delivery %+v signed at %s, want transfer %s successful, signed now", data, d.Timestamp, tr.ID)
	}
	if ev := b.LastEvent("outflows.completed"); ev == nil || ev.ID != d.EventID || ev.Created != b.Clock.Now().UnixMilli() {
		t.Errorf("LastEvent = %+v, want the delivered event %s created at %s", ev, d.EventID, b.Clock.Now())
	}
}

// TestLastEvent: nil before any event of the type, then the newest.
func TestLastEvent(t *testing.T) {
	b := corebanktest.New(t)
	if ev := b.LastEvent(funding.EventInflowCompleted); ev != nil {
		t.Fatalf("LastEvent on a new bank = %+v, want nil", ev)
	}
	b.FundedAccount("USD", 100)
	b.Advance(time.Second)
	last := b.FundedAccount("EUR", 200)
	ev := b.LastEvent(funding.EventInflowCompleted)
	var in funding.Inflow
	if ev != nil {
		if err := json.Unmarshal(ev.Data, &in); err != nil {
			t.Fatal(err)
		}
	}
	if ev == nil || in.AccountID != last.ID || in.Amount != 200 || ev.Created != b.Clock.Now().UnixMilli() {
		t.Errorf("LastEvent = %+v, want the EUR account's inflow of 200 at %d", ev, b.Clock.Now().UnixMilli())
	}
}

// TestReceiver: the receiver keeps deliveries signed with the webhook's
// secret at the real time, as the bank signs them whatever its clock, and
// refuses (failing the test) a forged signature and a timestamp outside
// the tolerance of the real time, such as the bank's clock's.
func TestReceiver(t *testing.T) {
	rec := &recorder{TB: t}
	b := corebanktest.New(rec)
	hooks := b.CaptureWebhooks()
	if hooks.Webhook.Secret == "" || hooks.Webhook.EntityID != b.Root.EntityID {
		t.Fatalf("webhook %+v, want the root's with its secret", hooks.Webhook)
	}
	body := []byte(`{"event":"accounts.updated","data":{"id":"A"}}`)
	bankNow := strconv.FormatInt(b.Clock.Now().UnixMilli(), 10)
	realNow := strconv.FormatInt(time.Now().UnixMilli(), 10)
	ms := func(s string) time.Time {
		n, _ := strconv.ParseInt(s, 10, 64)
		return time.UnixMilli(n).UTC()
	}
	tests := []struct {
		name, timestamp, signature string
		status                     int
		refusal                    error
	}{
		{"OK", realNow, webhooks.Sign(hooks.Webhook.Secret, realNow, body), http.StatusNoContent, nil},
		{"ErrInvalidSignature", realNow, webhooks.Sign("whsec_other", realNow, body), http.StatusUnauthorized, webhooks.ErrInvalidSignature},
		// The bank's clock is months from the real time: a delivery signed
		// with it would be stale to any receiver.
		{"ErrTimestampOutOfTolerance", bankNow, webhooks.Sign(hooks.Webhook.Secret, bankNow, body), http.StatusUnauthorized, webhooks.ErrTimestampOutOfTolerance},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(rec.messages())
			req, err := http.NewRequest("POST", hooks.Server.URL, strings.NewReader(string(body)))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set(webhooks.HeaderEventID, "EV1")
			req.Header.Set(webhooks.HeaderTimestamp, tt.timestamp)
			req.Header.Set(webhooks.HeaderSignature, tt.signature)
			resp, err := hooks.Server.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Errorf("status %d, want %d", resp.StatusCode, tt.status)
			}
			failures := rec.messages()[before:]
			switch {
			case tt.refusal == nil && len(failures) > 0:
				t.Errorf("test failed with %q, want none", failures)
			case tt.refusal != nil && (len(failures) != 1 || !strings.Contains(failures[0], tt.refusal.Error())):
				t.Errorf("test failed with %q, want one failure saying %q", failures, tt.refusal)
			}
		})
	}
	got := hooks.Deliveries("")
	want := []corebanktest.Delivery{{EventID: "EV1", Event: "accounts.updated", Data: json.RawMessage(`{"id":"A"}`),
		Timestamp: ms(realNow), Body: body}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("deliveries (-want +got)\n%s", diff)
	}
	if got := hooks.Deliveries("outflows.completed"); len(got) != 0 {
		t.Errorf("outflows.completed deliveries %+v, want none", got)
	}
}

// TestParallel: banks in parallel tests are independent, each on its own
// clock: one bank's time, money and webhooks never show in another.
func TestParallel(t *testing.T) {
	for i := range 8 {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			t.Parallel()
			start := corebanktest.Start.AddDate(0, 0, i)
			b := corebanktest.New(t, corebanktest.WithClockStart(start))
			hooks := b.CaptureWebhooks()
			b.Advance(time.Duration(i) * time.Hour)
			want := start.Add(time.Duration(i) * time.Hour)
			amount := int64(1_000 * (i + 1))
			a := b.FundedAccount("USD", amount)
			d := hooks.Wait(funding.EventInflowCompleted)
			var clk struct {
				NowMS int64 `json:"now_ms"`
			}
			b.Call(http.StatusOK, "GET", "/sandbox/clock", nil, &clk)
			var accounts []struct{ ID string }
			b.Call(http.StatusOK, "GET", "/accounts", nil, &accounts)
			// The delivery is signed at the real time; the event it reports
			// keeps the bank's.
			var in struct {
				Created int64 `json:"created"`
			}
			if err := json.Unmarshal(d.Data, &in); err != nil {
				t.Fatal(err)
			}
			got := []any{clk.NowMS, a.Created, in.Created, a.Balance.Available, len(accounts), len(hooks.Deliveries(funding.EventInflowCompleted))}
			if diff := cmp.Diff([]any{want.UnixMilli(), want.UnixMilli(), want.UnixMilli(), amount, 1, 1}, got); diff != "" {
				t.Errorf("bank %d: [clock, account created, inflow created, balance, accounts, inflow webhooks] (-want +got)\n%s", i, diff)
			}
		})
	}
}

// TestCleanup: when the test ends, the servers are closed, the background
// goroutines are gone and the store is closed.
func TestCleanup(t *testing.T) {
	before := runtime.NumGoroutine()
	var (
		b     *corebanktest.Bank
		hooks *corebanktest.Receiver
	)
	t.Run("bank", func(t *testing.T) {
		b = corebanktest.New(t, corebanktest.WithTLS())
		hooks = b.CaptureWebhooks()
		b.FundedAccount("USD", 10)
		hooks.Wait(funding.EventInflowCompleted)
	})
	for name, url := range map[string]string{"API": b.Server.URL, "receiver": hooks.Server.URL} {
		if resp, err := hooks.Server.Client().Get(url); err == nil {
			resp.Body.Close()
			t.Errorf("%s server still answers after cleanup", name)
		}
	}
	if err := b.DB.View(context.Background(), func(storage.Tx) error { return nil }); !errors.Is(err, storage.ErrClosed) {
		t.Errorf("View after cleanup = %v, want storage.ErrClosed", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<16)
		t.Errorf("%d goroutines after cleanup, %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
	}
}

// TestKeyPool: the root's two keys have different card-data key pairs
// from the pool, and a pair decrypts what is encrypted to its public key.
func TestKeyPool(t *testing.T) {
	b := corebanktest.New(t)
	var k struct {
		EncryptionPublicKey string `json:"encryption_public_key"`
	}
	b.Call(http.StatusCreated, "POST", "/sandbox/api-keys", map[string]any{}, &k)
	keys := []string{b.Root.EncryptionPublicKey, k.EncryptionPublicKey}
	if keys[0] == keys[1] || keys[1] == "" {
		t.Errorf("the root's key and the next share a card key pair: %q", keys)
	}
	other := corebanktest.New(t)
	if other.Root.EncryptionPublicKey != b.Root.EncryptionPublicKey {
		t.Error("two banks' first keys differ: each bank should start the pool from its first pair")
	}
}

// recorder is a testing.TB that keeps the failures reported with Errorf
// and Fatalf (which ends the calling goroutine, as testing does) instead of
// failing the test.
type recorder struct {
	testing.TB
	mu   sync.Mutex
	msgs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, fmt.Sprintf(format, args...))
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	runtime.Goexit()
}

func (r *recorder) messages() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.msgs...)
}

func TestSettledSession(t *testing.T) {
	b := corebanktest.New(t)
	acct := b.FundedAccount("USD", 100)
	s := b.SettledSession("", acct.ID, 2500)
	if s.Status != "settled" || s.InflowID == nil {
		t.Fatalf("session: %+v", s)
	}
	a, err := b.Ledger.GetAccount(context.Background(), corebank.As(b.Root.EntityID), "", acct.ID)
	if err != nil {
		t.Fatal(err)
	}
	if a.Balance.Available != 2600 {
		t.Errorf("available %d, want 2600", a.Balance.Available)
	}
	if ev := b.LastEvent("funding_sessions.updated"); ev == nil {
		t.Error("no funding_sessions.updated")
	}
}

// TestOwnReceiver: a team's own webhook endpoint, verifying as production
// code does (against time.Now() with a 5-minute tolerance), accepts every
// delivery of a bank whose clock is months away, and Advance returns only
// once the attempts due at the new time have reached it: no polling.
func TestOwnReceiver(t *testing.T) {
	b := corebanktest.New(t)
	var (
		mu      sync.Mutex
		events  []string
		refused []error
	)
	var secret atomic.Value
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Slow, as a real endpoint may be: an attempt the bank's
		// background dispatcher started is still in flight when the
		// advance's own due work runs.
		time.Sleep(50 * time.Millisecond)
		body, _ := io.ReadAll(r.Body)
		s, _ := secret.Load().(string)
		err := webhooks.Verify(s, r.Header.Get(webhooks.HeaderTimestamp), r.Header.Get(webhooks.HeaderSignature), body, 5*time.Minute, time.Now())
		var msg struct {
			Event string `json:"event"`
		}
		_ = json.Unmarshal(body, &msg)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			refused = append(refused, err)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		events = append(events, msg.Event)
	}))
	defer srv.Close()
	var hook struct {
		Secret string `json:"secret"`
	}
	b.Call(http.StatusCreated, "POST", "/entity-webhooks", map[string]any{
		"url": srv.URL + "/hooks", "expires_in": 86400,
		"enabled_events": map[string]any{"outflows": map[string]bool{"completed": true}},
	}, &hook)
	secret.Store(hook.Secret)
	a := b.FundedAccount("USD", 50_000)
	tr := pay(t, b, a.ID, 20_000)
	b.Advance(time.Second)
	b.Advance(time.Minute) // the sandbox rail completes the payout: outflows.completed
	mu.Lock()
	defer mu.Unlock()
	if len(refused) > 0 || len(events) != 1 || events[0] != "outflows.completed" {
		t.Errorf("receiver accepted %q and refused %v when Advance returned, want one outflows.completed for %s", events, refused, tr.ID)
	}
}
