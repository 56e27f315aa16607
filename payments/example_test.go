package payments_test

import (
	"context"
	"fmt"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/payments"
	"github.com/corebank/corebank/service"
	"github.com/corebank/corebank/storage/memory"
)

// Example pays a vendor by ACH from a funded USD account and lets the
// sandbox rail settle it.
func Example() {
	ctx := context.Background()
	db := memory.New()
	clk := clock.NewMock()
	led := ledger.NewService(db, &ledger.Options{Deps: service.Deps{Clock: clk}})
	fees, _ := payments.ParseFeeSchedule("bank-transfer=100+25bps")
	pay := payments.NewService(db, led, &payments.Options{Deps: service.Deps{Clock: clk}, Fees: fees})

	acct, _ := led.CreateAccount(ctx, corebank.System(), ledger.NewAccount{EntityID: "ent_1", Type: ledger.TypeChecking, Currency: "USD", DisplayName: "Operating"})
	led.Post(ctx, ledger.Entry{Lines: []ledger.Line{
		{AccountID: led.SystemAccount("USD", ledger.PurposeClearingBank), Side: ledger.Debit, Amount: 50_000},
		{AccountID: acct.ID, Side: ledger.Credit, Amount: 50_000},
	}})

	// The service acts for a caller: here the entity that owns the account.
	me := corebank.As("ent_1")
	vendor, _ := pay.CreateCounterparty(ctx, me, payments.NewCounterparty{Type: "business", Profile: payments.Profile{
		LegalName: "Acme Supplies Inc", Relationship: "vendor", Email: "ap@acme.example",
		RegisteredAddress: &payments.Address{Line1: "1 Market St", City: "San Francisco", Country: "US"},
	}})
	detail, err := pay.CreatePaymentDetail(ctx, me, payments.NewPaymentDetail{
		CounterpartyID: vendor.ID, PaymentMethod: payments.BankTransfer, Currency: "USD", Country: "US",
		Scheme: payments.SchemeACH, AccountHolderName: "Acme Supplies Inc",
		RoutingNumber: "091000019", AccountNumber: "123456789", AccountType: "checking",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	tr, err := pay.CreateTransfer(ctx, me, payments.NewTransfer{
		AccountID: acct.ID, PaymentDetailID: detail.ID, Amount: 10_000, PaymentType: payments.BankTransfer,
		Narration: "Invoice 42", UniqueReference: "inv-42",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(vendor.Nickname, tr.Status, tr.StatusReason, tr.ApplicableFee)

	clk.Add(5 * time.Second)
	pay.RunDue(ctx, clk.Now())
	tr, _ = pay.GetTransfer(ctx, me, "", tr.ID)
	bal, _ := led.GetBalance(ctx, acct.ID)
	fmt.Println(tr.Status, bal.Summary().Available)
	// Output:
	// Acme Supplies Inc pending awaiting_processing 125
	// successful 39875
}
