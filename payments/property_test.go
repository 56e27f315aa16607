package payments_test

import (
	"errors"
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/payments"
)

// TestRandomOperationsKeepLedgerBalanced runs random transfers, quotes,
// simulated outcomes and clock moves, and after every step checks that
// every currency balances and no account's available balance is negative.
func TestRandomOperationsKeepLedgerBalanced(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	fees, _ := payments.ParseFeeSchedule("bank-transfer=25+15bps,*=3")
	e := newEnv(t, openMemory(t), &payments.Options{Fees: fees})
	usd := e.account(t, "ent1", "USD")
	gbp := e.account(t, "ent1", "GBP")
	e.fund(t, usd, 200_000)
	e.fund(t, gbp, 100_000)
	cp := e.counterparty(t, "ent1")
	ach := e.detail(t, "ent1", achDetail(cp.ID))
	fps := e.detail(t, "ent1", payments.NewPaymentDetail{CounterpartyID: cp.ID, PaymentMethod: "bank-transfer", Currency: "GBP",
		Country: "GB", Scheme: "fps", AccountHolderName: "Ada", SortCode: "040099", AccountNumber: "12345678"})
	book := e.detail(t, "ent1", payments.NewPaymentDetail{CounterpartyID: cp.ID, PaymentMethod: "book-transfer", Currency: "GBP",
		AccountHolderName: "Ada", AccountNumber: gbp.ServiceBAN})
	var ids []string
	outcomes := []string{"processing", "successful", "failed", "reversed"}
	for step := 0; step < 300; step++ {
		var err error
		op := rng.Intn(5)
		switch op {
		case 0, 1: // same-currency transfer
			var tr *payments.Transfer
			tr, err = e.svc.CreateTransfer(ctx, corebank.As("ent1"), newTransfer(usd, ach, 1+rng.Int63n(20_000), fmt.Sprint("r", step)))
			if err == nil {
				ids = append(ids, tr.ID)
			}
		case 2: // cross-currency, USD -> GBP, bank or book
			var q *payments.Quote
			q, err = e.svc.CreateQuote(ctx, corebank.As("ent1"), payments.NewQuote{FromCurrency: "USD", ToCurrency: "GBP", AmountFrom: 100 + rng.Int63n(20_000)})
			if err != nil {
				t.Fatal(err)
			}
			det := fps
			if rng.Intn(3) == 0 {
				det = book
			}
			in := newTransfer(usd, det, q.AmountTo, fmt.Sprint("x", step))
			in.FXQuoteID = q.ID
			var tr *payments.Transfer
			tr, err = e.svc.CreateTransfer(ctx, corebank.As("ent1"), in)
			if err == nil {
				ids = append(ids, tr.ID)
			}
		case 3:
			if len(ids) > 0 {
				_, err = e.svc.SimulateTransfer(ctx, corebank.As("ent1"), "", ids[rng.Intn(len(ids))], outcomes[rng.Intn(len(outcomes))], "")
			}
		case 4:
			e.clk.Add(time.Duration(rng.Intn(3000)) * time.Millisecond)
			_, err = e.svc.RunDue(ctx, e.clk.Now())
		}
		if err != nil && !errors.Is(err, ledger.ErrInsufficientFunds) && !errors.Is(err, payments.ErrInvalidForState) {
			t.Fatalf("step %d op %d: %v", step, op, err)
		}
		e.checkBalanced(t)
		for _, a := range []*ledger.Account{usd, gbp} {
			if b := e.balance(t, a.ID); b.Available() < 0 {
				t.Fatalf("step %d: %s available %d", step, a.Currency, b.Available())
			}
		}
		if t.Failed() {
			t.Fatalf("step %d op %d", step, op)
		}
	}
	p, err := e.svc.ListTransfers(ctx, corebank.As("ent1"), payments.TransferFilter{EntityID: "ent1"}, corebank.ListOptions{Limit: 100})
	if err != nil || len(p.Items) == 0 {
		t.Fatalf("%v", err)
	}
}
