package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/service"
	"github.com/corebank/corebank/storage/memory"
)

// Example shows an inflow that settles by itself, a card hold posted in
// part, and the resulting balances.
func Example() {
	ctx := context.Background()
	db := memory.New()
	defer db.Close()
	clk := clock.NewMock()
	clk.Set(time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC))
	s := ledger.NewService(db, &ledger.Options{Deps: service.Deps{Clock: clk}})

	acct, _ := s.CreateAccount(ctx, sys, ledger.NewAccount{EntityID: "ent_1", Type: ledger.TypeChecking, Currency: "USD", DisplayName: "Main"})
	bank := s.SystemAccount("USD", ledger.PurposeClearingBank)
	card := s.SystemAccount("USD", ledger.PurposeClearingCard)

	// 100.00 arrives and settles 60 s later.
	s.Hold(ctx, ledger.HoldRequest{DebitAccountID: bank, CreditAccountID: acct.ID, Amount: 10000, Timeout: time.Minute, OnTimeout: ledger.TimeoutPost})
	a, _ := s.GetAccount(ctx, sys, "", acct.ID)
	fmt.Printf("pending inflow: available %d, current %d\n", a.Balance.Available, a.Balance.Current)

	clk.Add(time.Minute)
	n, _ := s.RunDue(ctx, clk.Now())
	a, _ = s.GetAccount(ctx, sys, "", acct.ID)
	fmt.Printf("settled %d: available %d, current %d\n", n, a.Balance.Available, a.Balance.Current)

	// A 30.00 card authorization captured at 25.00.
	h, _ := s.Hold(ctx, ledger.HoldRequest{DebitAccountID: acct.ID, CreditAccountID: card, Amount: 3000})
	a, _ = s.GetAccount(ctx, sys, "", acct.ID)
	fmt.Printf("authorized: available %d, current %d\n", a.Balance.Available, a.Balance.Current)
	s.PostHold(ctx, h.ID, 2500)
	a, _ = s.GetAccount(ctx, sys, "", acct.ID)
	fmt.Printf("captured: available %d, current %d\n", a.Balance.Available, a.Balance.Current)

	// Too much: nothing is written.
	_, err := s.Hold(ctx, ledger.HoldRequest{DebitAccountID: acct.ID, CreditAccountID: card, Amount: 1_000_000})
	fmt.Println(errors.Is(err, ledger.ErrInsufficientFunds))
	// Output:
	// pending inflow: available 0, current 10000
	// settled 1: available 10000, current 10000
	// authorized: available 7000, current 7000
	// captured: available 7500, current 7500
	// true
}
