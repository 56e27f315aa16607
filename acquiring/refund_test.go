package acquiring_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/acquiring"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/bolt"
	"github.com/corebank/corebank/storage/memory"
)

// cards are Luhn-valid numbers by their last four digits.
var cards = map[string]string{"4242": "4242424242424242", "5126": "4000000000005126"}

// charge completes a 3ds_disabled card payment of amount with the card
// ending last4 and returns its action.
func (e *env) chargeCard(amount int64, last4, ref string) *acquiring.Action {
	e.t.Helper()
	in, err := e.svc.CreateIntent(context.Background(), e.caller, acquiring.NewIntent{Currency: "USD", Amount: amount,
		AccountID: e.acct, Reference: ref, IntentAction: cardParams(encrypt(e.t, cards[last4]), acquiring.Auth3DSDisabled)})
	if err != nil {
		e.t.Fatal(err)
	}
	if in.IntentAction.Status != acquiring.ActionCompleted {
		e.t.Fatalf("charge: %+v", in.IntentAction)
	}
	return in.IntentAction
}

func (e *env) refund(action string, amount int64, ref string) (*acquiring.Refund, error) {
	return e.svc.CreateRefund(context.Background(), e.caller, acquiring.NewRefund{PaymentIntentActionID: action,
		Reference: ref, Amount: amount, Reason: "customer request"})
}

func (e *env) refunded(action string) int64 {
	e.t.Helper()
	a, err := e.svc.GetAction(context.Background(), e.caller, "", action)
	if err != nil {
		e.t.Fatal(err)
	}
	return a.RefundedAmount
}

func (e *env) bal(id string) ledger.Balance {
	e.t.Helper()
	b, err := e.led.GetBalance(context.Background(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	return b
}

// events returns the events of type typ, their objects decoded.
func (e *env) events(typ string) []map[string]any {
	e.t.Helper()
	evs, err := e.led.Events(context.Background(), "", 1000)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []map[string]any
	for _, ev := range evs {
		if ev.Type != typ {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(ev.Object, &m); err != nil {
			e.t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// TestRefundPartialUpToCharge: partial refunds are pending at once, count
// toward the refundable amount while pending, hold their amount on the
// merchant account, and none may take more than is left.
func TestRefundPartialUpToCharge(t *testing.T) {
	e := newEnv(t, nil)
	a := e.chargeCard(10000, "4242", "r-1")
	clearing := e.led.SystemAccount("USD", ledger.PurposeClearingCard)
	r1, err := e.refund(a.ID, 4000, "ref-1")
	if err != nil {
		t.Fatal(err)
	}
	want := &acquiring.Refund{ID: r1.ID, Reference: "ref-1", PaymentIntentActionID: a.ID, Amount: 4000, Currency: "USD",
		RefundReason: "customer request", Status: acquiring.RefundPending, AccountID: e.acct, EntityID: "E1", Created: e.clock.Now().UnixMilli()}
	if diff := cmp.Diff(want, r1); diff != "" {
		t.Errorf("refund (-want +got)\n%s", diff)
	}
	if got := e.refunded(a.ID); got != 4000 {
		t.Errorf("refunded_amount %d, want 4000 (pending counts)", got)
	}
	if b := e.bal(e.acct); b.Settled != 10000 || b.Available() != 6000 {
		t.Errorf("merchant %+v: the refund is held, not yet posted", b)
	}
	_, err = e.refund(a.ID, 6001, "ref-2")
	var ce *corebank.Error
	if !errors.As(err, &ce) || ce.Kind != corebank.KindBadRequest || ce.Fields["amount"] != "exceeds the refundable amount 6000" {
		t.Fatalf("over-refund: %v", err)
	}
	r2, err := e.refund(a.ID, 6000, "ref-2")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.refund(a.ID, 1, "ref-3"); corebank.KindOf(err) != corebank.KindBadRequest {
		t.Fatalf("refund of a fully refunded charge: %v", err)
	}
	for _, r := range []*acquiring.Refund{r1, r2} {
		if _, err := e.svc.SimulateRefund(context.Background(), e.caller, "", r.ID, acquiring.RefundSuccessful, ""); err != nil {
			t.Fatal(err)
		}
	}
	got := []int64{e.bal(e.acct).Settled, e.bal(e.acct).PendingDebits, e.bal(clearing).Settled, e.refunded(a.ID)}
	if diff := cmp.Diff([]int64{0, 0, 0, 10000}, got); diff != "" {
		t.Errorf("merchant settled, pending, clearing, refunded_amount (-want +got)\n%s", diff)
	}
}

// TestRefundBadRequest: each invalid request is a 400-kind error naming the
// field and changes nothing.
func TestRefundBadRequest(t *testing.T) {
	e := newEnv(t, nil)
	a := e.chargeCard(1000, "4242", "b-1")
	open, err := e.svc.CreateIntent(context.Background(), e.caller, acquiring.NewIntent{Currency: "USD", Amount: 100,
		AccountID: e.acct, Reference: "b-2", IntentAction: cardParams(encrypt(t, cards["4242"]), acquiring.Auth3DSRequired)})
	if err != nil {
		t.Fatal(err)
	}
	tooLong := strings.Repeat("x", 101)
	for _, tc := range []struct {
		name  string
		in    acquiring.NewRefund
		field string
	}{
		{"no action", acquiring.NewRefund{Reference: "x", Amount: 1}, "payment_intent_action_id"},
		{"no reference", acquiring.NewRefund{PaymentIntentActionID: a.ID, Amount: 1}, "reference"},
		{"long reference", acquiring.NewRefund{PaymentIntentActionID: a.ID, Reference: tooLong, Amount: 1}, "reference"},
		{"long reason", acquiring.NewRefund{PaymentIntentActionID: a.ID, Reference: "x", Reason: tooLong, Amount: 1}, "reason"},
		{"zero amount", acquiring.NewRefund{PaymentIntentActionID: a.ID, Reference: "x"}, "amount"},
		{"negative amount", acquiring.NewRefund{PaymentIntentActionID: a.ID, Reference: "x", Amount: -5}, "amount"},
		{"over the charge", acquiring.NewRefund{PaymentIntentActionID: a.ID, Reference: "x", Amount: 1001}, "amount"},
		{"action not completed", acquiring.NewRefund{PaymentIntentActionID: open.IntentAction.ID, Reference: "x", Amount: 1}, "payment_intent_action_id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.svc.CreateRefund(context.Background(), e.caller, tc.in)
			var ce *corebank.Error
			if !errors.As(err, &ce) || ce.Kind != corebank.KindBadRequest || ce.Fields[tc.field] == "" {
				t.Fatalf("err %v, want a bad request naming %s", err, tc.field)
			}
		})
	}
	if got := e.refunded(a.ID); got != 0 {
		t.Errorf("refunded_amount %d after refused refunds", got)
	}
	if b := e.bal(e.acct); b.PendingDebits != 0 {
		t.Errorf("merchant %+v after refused refunds", b)
	}
	// Scope and permission: a foreign action is missing; read-only writes nothing.
	if _, err := e.svc.CreateRefund(context.Background(), corebank.Caller{EntityID: "E2"}, acquiring.NewRefund{
		PaymentIntentActionID: a.ID, Reference: "x", Amount: 1}); !errors.Is(err, acquiring.ErrActionNotFound) {
		t.Errorf("foreign action: %v", err)
	}
	if _, err := e.svc.CreateRefund(context.Background(), corebank.Caller{EntityID: "E1", ReadOnly: true}, acquiring.NewRefund{
		PaymentIntentActionID: a.ID, Reference: "x", Amount: 1}); !errors.Is(err, corebank.ErrForbidden) {
		t.Errorf("read-only: %v", err)
	}
}

// TestRefundInsufficientFunds: the hold never overdraws the merchant
// account; the refused refund reserves nothing.
func TestRefundInsufficientFunds(t *testing.T) {
	e := newEnv(t, nil)
	a := e.chargeCard(1000, "4242", "i-1")
	other, err := e.led.CreateAccount(context.Background(), corebank.System(), ledger.NewAccount{EntityID: "E1", Type: "checking", Currency: "USD", DisplayName: "Other"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.led.Post(context.Background(), ledger.Entry{Lines: []ledger.Line{{AccountID: e.acct, Side: ledger.Debit, Amount: 900},
		{AccountID: other.ID, Side: ledger.Credit, Amount: 900}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.refund(a.ID, 101, "i-r"); !errors.Is(err, ledger.ErrInsufficientFunds) {
		t.Fatalf("refund over the balance: %v", err)
	}
	if got := e.refunded(a.ID); got != 0 {
		t.Errorf("refunded_amount %d", got)
	}
	if _, err := e.refund(a.ID, 100, "i-r"); err != nil {
		t.Errorf("refund within the balance: %v", err)
	}
}

// TestRefundCompletesOnClock: a refund succeeds RefundDelay after it was
// made, through the due queue, posting its hold and appending
// payment_refund.completed with SPEC.md's payload.
func TestRefundCompletesOnClock(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	a := e.chargeCard(1000, "4242", "c-1")
	r, err := e.refund(a.ID, 300, "c-r")
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Add(4 * time.Second)
	if n, err := e.svc.RunDue(ctx, e.clock.Now()); n != 0 || err != nil {
		t.Fatalf("early: %d %v", n, err)
	}
	e.clock.Add(time.Second)
	if n, err := e.svc.RunDue(ctx, e.clock.Now()); n != 1 || err != nil {
		t.Fatalf("due: %d %v", n, err)
	}
	got, err := e.svc.GetRefund(ctx, e.caller, "", r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != acquiring.RefundSuccessful || got.StatusReason != nil {
		t.Errorf("refund %+v", got)
	}
	if b := e.bal(e.acct); b.Settled != 700 || b.PendingDebits != 0 {
		t.Errorf("merchant %+v", b)
	}
	want := []map[string]any{{"id": r.ID, "reference": "c-r", "payment_intent_action_id": a.ID, "amount": 300.0,
		"currency": "USD", "refund_reason": "customer request", "status": "successful", "account_id": e.acct,
		"entity_id": "E1", "created": float64(r.Created)}}
	if diff := cmp.Diff(want, e.events(acquiring.EventRefundCompleted)); diff != "" {
		t.Errorf("payment_refund.completed (-want +got)\n%s", diff)
	}
	// A second answer changes nothing; the other one is refused.
	if _, err := e.svc.SimulateRefund(ctx, e.caller, "", r.ID, acquiring.RefundSuccessful, ""); err != nil {
		t.Errorf("repeat: %v", err)
	}
	if _, err := e.svc.SimulateRefund(ctx, e.caller, "", r.ID, acquiring.RefundFailed, ""); !errors.Is(err, acquiring.ErrInvalidForState) {
		t.Errorf("fail a successful refund: %v", err)
	}
	if n := len(e.events(acquiring.EventRefundCompleted)); n != 1 {
		t.Errorf("%d completed events", n)
	}
}

// TestRefundFailsCardReturnsMoneyOnce: the refund_fails test card's
// refunds fail on the clock; the hold is voided and the amount is
// refundable again, exactly once whatever answers later.
func TestRefundFailsCardReturnsMoneyOnce(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	a := e.chargeCard(1000, "5126", "f-1")
	r, err := e.refund(a.ID, 1000, "f-r")
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Add(5 * time.Second)
	if n, err := e.svc.RunDue(ctx, e.clock.Now()); n != 1 || err != nil {
		t.Fatalf("due: %d %v", n, err)
	}
	for range 2 {
		if _, err := e.svc.SimulateRefund(ctx, e.caller, "", r.ID, acquiring.RefundFailed, ""); err != nil {
			t.Fatal(err)
		}
		e.clock.Add(time.Minute)
		if n, err := e.svc.RunDue(ctx, e.clock.Now()); n != 0 || err != nil {
			t.Fatalf("again: %d %v", n, err)
		}
	}
	if _, err := e.svc.SimulateRefund(ctx, e.caller, "", r.ID, acquiring.RefundSuccessful, ""); !errors.Is(err, acquiring.ErrInvalidForState) {
		t.Errorf("succeed a failed refund: %v", err)
	}
	got := []int64{e.bal(e.acct).Settled, e.bal(e.acct).PendingDebits, e.bal(e.acct).Available(), e.refunded(a.ID)}
	if diff := cmp.Diff([]int64{1000, 0, 1000, 0}, got); diff != "" {
		t.Errorf("merchant settled, pending, available, refunded_amount (-want +got)\n%s", diff)
	}
	want := []map[string]any{{"id": r.ID, "reference": "f-r", "payment_intent_action_id": a.ID, "amount": 1000.0,
		"currency": "USD", "refund_reason": "customer request", "status": "failed", "status_reason": "refund_declined",
		"account_id": e.acct, "entity_id": "E1", "created": float64(r.Created)}}
	if diff := cmp.Diff(want, e.events(acquiring.EventRefundFailed)); diff != "" {
		t.Errorf("payment_refund.failed (-want +got)\n%s", diff)
	}
	// The freed amount may be refunded again.
	if _, err := e.refund(a.ID, 1000, "f-r2"); err != nil {
		t.Errorf("refund after a failed one: %v", err)
	}
}

// TestConcurrentRefunds: 20 simultaneous partial refunds of one charge
// never refund more than the charge, on either store.
func TestConcurrentRefunds(t *testing.T) {
	for name, open := range map[string]func(t *testing.T) storage.Backend{
		"memory": func(*testing.T) storage.Backend { return memory.New() },
		"bolt": func(t *testing.T) storage.Backend {
			db, err := bolt.Open(filepath.Join(t.TempDir(), "db"), nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			return db
		},
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnvOn(t, open(t), nil)
			a := e.chargeCard(10000, "4242", "cc-1")
			var wg sync.WaitGroup
			var mu sync.Mutex
			var ok int64
			for i := range 20 {
				wg.Go(func() {
					_, err := e.refund(a.ID, 700, "cc-r")
					switch {
					case err == nil:
						mu.Lock()
						ok += 700
						mu.Unlock()
					case corebank.KindOf(err) != corebank.KindBadRequest:
						t.Errorf("refund %d: %v", i, err)
					}
				})
			}
			wg.Wait()
			got := []int64{ok, e.refunded(a.ID), e.bal(e.acct).PendingDebits}
			if diff := cmp.Diff([]int64{9800, 9800, 9800}, got); diff != "" {
				t.Errorf("refunded, refunded_amount, held (-want +got)\n%s", diff)
			}
		})
	}
}

// TestListRefunds: the list filters by status, reference, account and
// creation time, and other entities see none.
func TestListRefunds(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	a := e.chargeCard(1000, "4242", "l-1")
	r1, err := e.refund(a.ID, 100, "l-a")
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Add(time.Hour) // r1 succeeds on the clock
	if _, err := e.svc.RunDue(ctx, e.clock.Now()); err != nil {
		t.Fatal(err)
	}
	r2, err := e.refund(a.ID, 200, "l-b")
	if err != nil {
		t.Fatal(err)
	}
	ids := func(f acquiring.Filter) []string {
		t.Helper()
		p, err := e.svc.ListRefunds(ctx, e.caller, f, corebank.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range p.Items {
			out = append(out, r.ID)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		f    acquiring.Filter
		want []string
	}{
		{"all", acquiring.Filter{}, []string{r1.ID, r2.ID}},
		{"status", acquiring.Filter{Status: acquiring.RefundPending}, []string{r2.ID}},
		{"reference", acquiring.Filter{Reference: "l-a"}, []string{r1.ID}},
		{"currency", acquiring.Filter{Currency: "EUR"}, nil},
		{"account", acquiring.Filter{AccountID: e.acct}, []string{r1.ID, r2.ID}},
		{"date_from", acquiring.Filter{DateFrom: r2.Created}, []string{r2.ID}},
		{"date_to", acquiring.Filter{DateTo: r2.Created - 1}, []string{r1.ID}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, ids(tc.f)); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
	if _, err := e.svc.ListRefunds(ctx, e.caller, acquiring.Filter{Status: "done"}, corebank.ListOptions{}); corebank.KindOf(err) != corebank.KindInvalid {
		t.Errorf("bad status: %v", err)
	}
	p, err := e.svc.ListRefunds(ctx, corebank.Caller{EntityID: "E2"}, acquiring.Filter{}, corebank.ListOptions{})
	if err != nil || len(p.Items) != 0 {
		t.Errorf("foreign list: %v %v", p, err)
	}
	if _, err := e.svc.GetRefund(ctx, corebank.Caller{EntityID: "E2"}, "", r1.ID); !errors.Is(err, acquiring.ErrRefundNotFound) {
		t.Errorf("foreign get: %v", err)
	}
}

// TestRefundDisputedCharge: a disputed charge is settled by its dispute and
// refused a refund (400 naming payment_intent_action_id), with nothing
// reserved.
func TestRefundDisputedCharge(t *testing.T) {
	e := newEnv(t, nil)
	a := e.chargeCard(1000, "4242", "d-1")
	if _, err := e.svc.OpenDispute(context.Background(), e.caller, a.ID, acquiring.NewDispute{}); err != nil {
		t.Fatal(err)
	}
	_, err := e.refund(a.ID, 100, "after-dispute")
	var ce *corebank.Error
	if !errors.As(err, &ce) || ce.Kind != corebank.KindBadRequest || ce.Fields["payment_intent_action_id"] == "" {
		t.Fatalf("refund of a disputed charge: %v", err)
	}
	if got := e.refunded(a.ID); got != 0 {
		t.Errorf("refunded_amount %d after a refused refund", got)
	}
}
