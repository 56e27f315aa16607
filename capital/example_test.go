package capital_test

import (
	"context"
	"fmt"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/shopspring/decimal"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/bank"
	"github.com/corebank/corebank/capital"
	"github.com/corebank/corebank/funding"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/storage/memory"
)

// A 30-day USD deposit on a mock clock: ordered, confirmed, accrued for
// ten days, withdrawn early with a penalty on the interest earned, and
// settled to the funding account.
func Example() {
	ctx := context.Background()
	db := memory.New()
	defer db.Close()
	clk := clock.NewMock()
	clk.Set(time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)) // a Monday
	b, err := bank.New(db, bank.Options{SecretKey: make([]byte, 32), Clock: clk})
	if err != nil {
		panic(err)
	}
	b.Migrate(ctx)
	root, _, _ := b.Entities.Bootstrap(ctx)
	me := corebank.As(root.EntityID)
	acct, _ := b.Ledger.CreateAccount(ctx, me, ledger.NewAccount{
		EntityID: root.EntityID, Type: "checking", Currency: "USD", DisplayName: "Savings"})
	b.Funding.CreateInflow(ctx, me, funding.NewInflow{AccountID: acct.ID, Amount: 1_500_000})

	tenor, minDays := 30, 5
	yes := true
	rate, penalty, tax := decimal.RequireFromString("0.10"), decimal.RequireFromString("0.5"), decimal.RequireFromString("0.1")
	product, err := b.Capital.CreateProduct(ctx, me, capital.NewProduct{Type: capital.TypeFixedReturn,
		DisplayName: "30-day deposit", Currency: "USD", TenorDays: &tenor, AnnualRate: &rate,
		EarlyWithdrawalEnabled: &yes, EarlyWithdrawalPenaltyRate: &penalty, EarlyWithdrawalMinDays: &minDays,
		WithholdingRate: &tax, Documents: []capital.NewDocument{{Title: "Terms", URL: "https://example.com/terms"}}})
	if err != nil {
		panic(err)
	}
	principal, waive := int64(1_000_000), false
	order, err := b.Capital.CreateOrder(ctx, me, capital.NewOrder{ProductID: product.ID, AccountID: acct.ID,
		Principal: &principal, WaiveEarlyWithdrawal: &waive,
		Affirmations: []capital.Affirmation{{DocumentID: product.Documents[0].ID, Version: 1}}})
	if err != nil {
		panic(err)
	}
	order, _ = b.Capital.ConfirmOrder(ctx, me, "", order.ID, capital.Confirmation{})
	fmt.Println(order.Status, order.CapitalAccount.Status.State, "gross interest:", order.CapitalAccount.GrossInterest)

	for range 10 { // ten days, the due work running each day
		clk.Add(24 * time.Hour)
		b.RunDue(ctx, clk.Now())
	}
	preview, _ := b.Capital.PreviewWithdrawal(ctx, me, "", order.ID)
	fmt.Println("accrued:", preview.GrossInterest, "penalty:", preview.PenaltyAmount, "withheld:", preview.TotalDeductions, "net:", preview.NetPayout)
	order, _ = b.Capital.WithdrawOrder(ctx, me, "", order.ID)
	fmt.Println(order.CapitalAccount.Status.State, *order.CapitalAccount.Status.PayoutStatus.PayoutStatus)

	clk.Add(time.Second)
	b.RunDue(ctx, clk.Now()) // the settlement job pays out
	order, _ = b.Capital.GetOrder(ctx, me, "", order.ID)
	bal, _ := b.Ledger.GetBalance(ctx, acct.ID)
	fmt.Println(order.CapitalAccount.Status.State, "balance:", bal.Available())
	// Output:
	// APPROVED ACTIVE gross interest: 8333
	// accrued: 2777 penalty: 1388 withheld: 277 net: 1001112
	// EARLY_LIQUIDATING pending
	// CLOSED balance: 1501112
}
