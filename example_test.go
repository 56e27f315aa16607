package corebank_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/entities"
	"github.com/corebank/corebank/funding"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/service"
	"github.com/corebank/corebank/storage/memory"
)

// Embedding corebank in process: a store, a clock the test controls, the
// services over them, and money moving with no HTTP involved.
func Example() {
	ctx := context.Background()
	db := memory.New() // bolt.Open("corebank.db", nil) for a durable store
	defer db.Close()
	clk := clock.NewMock()
	clk.Set(time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC))

	key := make([]byte, 32)
	rand.Read(key)
	sealer, _ := corebank.NewSealer(key)
	led := ledger.NewService(db, &ledger.Options{Deps: service.Deps{Clock: clk}, Gate: entities.Gate{}})
	ents := entities.NewService(db, led, sealer, &entities.Options{Deps: service.Deps{Clock: clk}})
	fund := funding.NewService(db, led, &funding.Options{Deps: service.Deps{Clock: clk}})

	root, _, _ := ents.Bootstrap(ctx) // an approved root entity and its API keys
	acct, _ := led.CreateAccount(ctx, corebank.System(), ledger.NewAccount{
		EntityID: root.EntityID, Type: "checking", Currency: "USD", DisplayName: "Operating"})

	settle := false
	fund.CreateInflow(ctx, corebank.System(), funding.NewInflow{AccountID: acct.ID, Amount: 150000, Settle: &settle})
	bal, _ := led.GetBalance(ctx, acct.ID)
	fmt.Printf("pending: available %d, current %d\n", bal.Available(), bal.Current())

	clk.Add(time.Minute)        // time moves only when the test says so
	fund.RunDue(ctx, clk.Now()) // due jobs run explicitly
	bal, _ = led.GetBalance(ctx, acct.ID)
	fmt.Printf("settled: available %d, current %d\n", bal.Available(), bal.Current())
	// Output:
	// pending: available 0, current 150000
	// settled: available 150000, current 150000
}
