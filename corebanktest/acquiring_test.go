package corebanktest_test

import (
	"context"
	"testing"

	"encoding/json"
	"github.com/corebank/corebank/acquiring"
	"github.com/corebank/corebank/corebanktest"
	"github.com/google/go-cmp/cmp"
	"time"
)

func TestCardPayment(t *testing.T) {
	b := corebanktest.New(t)
	acct := b.FundedAccount("USD", 100)
	in := b.CardPayment(acct.ID, 2500, "4242")
	if in.Status != acquiring.IntentCompleted || in.IntentAction.PaymentTypeData.LastFourDigits != "4242" {
		t.Fatalf("intent %+v", in)
	}
	bal, err := b.Ledger.GetBalance(context.Background(), acct.ID)
	if err != nil || bal.Settled != 2600 {
		t.Errorf("balance %+v %v, want 2600", bal, err)
	}
	if ev := b.LastEvent(acquiring.EventIntentCompleted); ev == nil {
		t.Error("no payment_intent.completed")
	}
	if in := b.CardPayment(acct.ID, 100, "0002"); in.Status != acquiring.IntentFailed || *in.IntentAction.StatusReason != "card_declined" {
		t.Errorf("0002: %+v", in.IntentAction)
	}
	if n := corebanktest.CardNumber("0002"); len(n) != 16 || n[12:] != "0002" {
		t.Errorf("CardNumber(0002) = %s", n)
	}
}

func TestDispute(t *testing.T) {
	b := corebanktest.New(t)
	acct := b.FundedAccount("USD", 100)
	in := b.CardPayment(acct.ID, 2500, "4242")
	d := b.Dispute(in.IntentAction.ID, 0, "")
	if d.Amount != 2500 || d.Status != acquiring.DisputeNeedsResponse || d.Reason != acquiring.DefaultDisputeReason {
		t.Fatalf("dispute %+v", d)
	}
	if ev := b.LastEvent(acquiring.EventDisputeCreated); ev == nil {
		t.Error("no payment_dispute.created")
	}
	var won acquiring.Dispute
	b.Call(200, "POST", "/sandbox/disputes/"+d.ID+"/simulate", map[string]any{"outcome": "won"}, &won)
	bal, err := b.Ledger.GetBalance(context.Background(), acct.ID)
	if err != nil || won.Status != acquiring.DisputeWon || bal.Settled != 2600 {
		t.Errorf("won %+v, balance %+v %v", won, bal, err)
	}
}

func TestRefundCardPayment(t *testing.T) {
	b := corebanktest.New(t)
	acct := b.FundedAccount("USD", 100)
	a := b.CardPayment(acct.ID, 1000, "4242").IntentAction
	if r := b.RefundCardPayment(a.ID, 400, true); r.Status != acquiring.RefundSuccessful || r.Amount != 400 {
		t.Fatalf("refund %+v", r)
	}
	if ev := b.LastEvent(acquiring.EventRefundCompleted); ev == nil {
		t.Error("no payment_refund.completed")
	}
	fails := b.CardPayment(acct.ID, 500, "5126").IntentAction
	r := b.RefundCardPayment(fails.ID, 500, false)
	if r.Status != acquiring.RefundPending {
		t.Fatalf("refund %+v", r)
	}
	b.Advance(5 * time.Second)
	ev := b.LastEvent(acquiring.EventRefundFailed)
	if ev == nil {
		t.Fatal("no payment_refund.failed")
	}
	var data map[string]any
	if err := json.Unmarshal(ev.Data, &data); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"id": r.ID, "reference": r.Reference, "payment_intent_action_id": fails.ID, "amount": 500.0,
		"currency": "USD", "refund_reason": "", "status": "failed", "status_reason": "refund_declined",
		"account_id": acct.ID, "entity_id": b.Root.EntityID, "created": float64(r.Created)}
	if diff := cmp.Diff(want, data); diff != "" {
		t.Errorf("payment_refund.failed data (-want +got)\n%s", diff)
	}
	bal, err := b.Ledger.GetBalance(context.Background(), acct.ID)
	if err != nil || bal.Settled != 1200 || bal.PendingDebits != 0 {
		t.Errorf("balance %+v %v, want 1200 settled and nothing held", bal, err)
	}
}
