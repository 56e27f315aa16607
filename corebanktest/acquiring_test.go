package corebanktest_test

import (
	"context"
	"testing"

	"github.com/corebank/corebank/acquiring"
	"github.com/corebank/corebank/corebanktest"
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
