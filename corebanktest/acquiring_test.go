package corebanktest_test

import (
	"context"
	"testing"
	"time"

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
	if ev := b.LastEvent(acquiring.EventRefundFailed); ev == nil {
		t.Error("no payment_refund.failed")
	}
	bal, err := b.Ledger.GetBalance(context.Background(), acct.ID)
	if err != nil || bal.Settled != 1200 || bal.PendingDebits != 0 {
		t.Errorf("balance %+v %v, want 1200 settled and nothing held", bal, err)
	}
}
