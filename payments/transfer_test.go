package payments_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/payments"
)

// setup makes an entity's funded USD account and an ACH detail.
func setupUSD(t testing.TB, e *env, funds int64) (*ledger.Account, *payments.PaymentDetail) {
	t.Helper()
	a := e.account(t, "ent1", "USD")
	if funds > 0 {
		e.fund(t, a, funds)
	}
	cp := e.counterparty(t, "ent1")
	d := e.detail(t, "ent1", achDetail(cp.ID))
	return a, d
}

func newTransfer(a *ledger.Account, d *payments.PaymentDetail, amount int64, ref string) payments.NewTransfer {
	return payments.NewTransfer{AccountID: a.ID, PaymentDetailID: d.ID, Amount: amount,
		PaymentType: d.PaymentMethod, Narration: "invoice", UniqueReference: ref}
}

func TestTransferLifecycle(t *testing.T) {
	fees, err := payments.ParseFeeSchedule("bank-transfer=100+25bps")
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, openMemory(t), &payments.Options{Fees: fees})
	a, d := setupUSD(t, e, 100_000)
	tr, err := e.svc.CreateTransfer(ctx, corebank.As("ent1"), newTransfer(a, d, 10_000, "r1"))
	if err != nil {
		t.Fatal(err)
	}
	if tr.Status != "pending" || tr.StatusReason != "awaiting_processing" || tr.ApplicableFee != 125 || tr.Type != "outflow" || tr.CounterpartyID != d.CounterpartyID || tr.Currency != "USD" {
		t.Fatalf("created %+v", tr)
	}
	if b := e.balance(t, a.ID); b.Available() != 100_000-10_125 || b.Current() != 100_000-10_125 || b.Settled != 100_000 {
		t.Fatalf("balance after create %+v", b)
	}
	e.checkBalanced(t)

	e.clk.Add(time.Second)
	if _, err := e.svc.RunDue(ctx, e.clk.Now()); err != nil {
		t.Fatal(err)
	}
	got, _ := e.svc.GetTransfer(ctx, corebank.As("ent1"), "", tr.ID)
	if got.Status != "processing" {
		t.Fatalf("after 1s: %s", got.Status)
	}
	e.clk.Add(4 * time.Second)
	if _, err := e.svc.RunDue(ctx, e.clk.Now()); err != nil {
		t.Fatal(err)
	}
	got, _ = e.svc.GetTransfer(ctx, corebank.As("ent1"), "", tr.ID)
	if got.Status != "successful" {
		t.Fatalf("after 5s: %s", got.Status)
	}
	if b := e.balance(t, a.ID); b.Settled != 100_000-10_125 || b.PendingDebits != 0 {
		t.Fatalf("balance after success %+v", b)
	}
	if b := e.balance(t, e.led.SystemAccount("USD", ledger.PurposeFees)); b.Settled != 125 {
		t.Fatalf("fees %+v", b)
	}
	e.checkBalanced(t)

	rev, err := e.svc.SimulateTransfer(ctx, corebank.As("ent1"), "", tr.ID, "reversed", "")
	if err != nil {
		t.Fatal(err)
	}
	if rev.Status != "reversed" {
		t.Fatalf("reversed: %+v", rev)
	}
	if b := e.balance(t, a.ID); b.Settled != 100_000 {
		t.Fatalf("balance after reversal %+v", b)
	}
	e.checkBalanced(t)
	evs, err := e.led.Events(ctx, "", 100)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, ev := range evs {
		if ev.EntityID == "ent1" && ev.Type != ledger.EventAccountCreated {
			types = append(types, ev.Type)
		}
	}
	if diff := cmp.Diff([]string{"outflows.created", "outflows.completed", "outflows.refunded"}, types); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if _, err := e.svc.SimulateTransfer(ctx, corebank.As("ent1"), "", tr.ID, "failed", ""); !errors.Is(err, payments.ErrInvalidForState) {
		t.Fatalf("fail a reversed transfer: %v", err)
	}
}

func TestTransferFailureRefunds(t *testing.T) {
	e := newMemEnv(t)
	a, d := setupUSD(t, e, 5_000)
	tr, err := e.svc.CreateTransfer(ctx, corebank.As("ent1"), newTransfer(a, d, 5_000, "r1"))
	if err != nil {
		t.Fatal(err)
	}
	if b := e.balance(t, a.ID); b.Available() != 0 {
		t.Fatalf("held %+v", b)
	}
	got, err := e.svc.SimulateTransfer(ctx, corebank.As("ent1"), "", tr.ID, "failed", "invalid_account_details")
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != "failed" || got.StatusReason != "invalid_account_details" {
		t.Fatalf("%+v", got)
	}
	if b := e.balance(t, a.ID); b.Available() != 5_000 || b.Current() != 5_000 || b.Settled != 5_000 {
		t.Fatalf("after failure %+v", b)
	}
	e.checkBalanced(t)
	// RunDue no longer touches it.
	e.clk.Add(time.Minute)
	if _, err := e.svc.RunDue(ctx, e.clk.Now()); err != nil {
		t.Fatal(err)
	}
	if got, _ := e.svc.GetTransfer(ctx, corebank.As("ent1"), "", tr.ID); got.Status != "failed" {
		t.Fatalf("%+v", got)
	}
	for _, outcome := range []string{"processing", "successful", "reversed"} {
		if _, err := e.svc.SimulateTransfer(ctx, corebank.As("ent1"), "", tr.ID, outcome, ""); errCode(err) != "error_operation_invalid_for_state" {
			t.Errorf("%s from failed: %v", outcome, err)
		}
	}
}

func TestTransferInsufficientFunds(t *testing.T) {
	e := newEnv(t, openMemory(t), &payments.Options{Fees: payments.FeeSchedule{"bank-transfer": {Fixed: 50}}})
	a, d := setupUSD(t, e, 1_000)
	_, err := e.svc.CreateTransfer(ctx, corebank.As("ent1"), newTransfer(a, d, 1_000, "r1"))
	if !errors.Is(err, ledger.ErrInsufficientFunds) || corebank.KindOf(err) != corebank.KindRejected {
		t.Fatalf("want insufficient_funds, got %v", err)
	}
	if b := e.balance(t, a.ID); b.Available() != 1_000 || b.PendingDebits != 0 {
		t.Fatalf("something was written: %+v", b)
	}
	page, _ := e.svc.ListTransfers(ctx, corebank.As("ent1"), payments.TransferFilter{EntityID: "ent1"}, corebank.ListOptions{})
	if len(page.Items) != 0 {
		t.Fatalf("transfer stored: %+v", page.Items)
	}
	// The reference was not consumed.
	if _, err := e.svc.CreateTransfer(ctx, corebank.As("ent1"), newTransfer(a, d, 950, "r1")); err != nil {
		t.Fatal(err)
	}
}

func TestTransferDuplicateReferenceReturnsOriginal(t *testing.T) {
	e := newMemEnv(t)
	a, d := setupUSD(t, e, 10_000)
	orig, err := e.svc.CreateTransfer(ctx, corebank.As("ent1"), newTransfer(a, d, 1_000, "same"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.svc.CreateTransfer(ctx, corebank.As("ent1"), newTransfer(a, d, 2_000, "same"))
	var ce *corebank.Error
	if !errors.As(err, &ce) || ce.Code != "duplicate_reference" || ce.Kind != corebank.KindConflict {
		t.Fatalf("want duplicate_reference, got %v", err)
	}
	if diff := cmp.Diff(orig, ce.Data); diff != "" {
		t.Errorf("data (-want +got):\n%s", diff)
	}
	// Another account may reuse the reference.
	b := e.account(t, "ent1", "USD")
	e.fund(t, b, 1_000)
	if _, err := e.svc.CreateTransfer(ctx, corebank.As("ent1"), newTransfer(b, d, 1_000, "same")); err != nil {
		t.Fatal(err)
	}
}
