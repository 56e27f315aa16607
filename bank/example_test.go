package bank_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/bank"
	"github.com/corebank/corebank/funding"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/storage/memory"
)

// Embedding corebank: every service wired over one store, money moved in
// process, and the same bank served as the REST API. Its body is the
// README's embedding snippet (TestReadmeEmbedding keeps them equal).
func Example() {
	ctx := context.Background()
	db := memory.New() // or bolt.Open("corebank.db", nil) for a durable store
	defer db.Close()
	clk := clock.NewMock() // or clock.New(); a mock moves only when you say
	clk.Set(time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC))
	key := make([]byte, 32) // seals secrets at rest: keep a real one outside the store
	rand.Read(key)
	b, err := bank.New(db, bank.Options{SecretKey: key, Clock: clk})
	if err != nil {
		panic(err)
	}
	b.Migrate(ctx)                          // once per opened store
	root, _, _ := b.Entities.Bootstrap(ctx) // an approved root entity and its API keys
	sys := corebank.System()                // trusted in-process code; a request acts as corebank.As(entityID)
	acct, _ := b.Ledger.CreateAccount(ctx, sys, ledger.NewAccount{
		EntityID: root.EntityID, Type: "checking", Currency: "USD", DisplayName: "Operating"})
	settle := false // settle on the clock, as a provider's inflow would
	b.Funding.CreateInflow(ctx, sys, funding.NewInflow{AccountID: acct.ID, Amount: 150000, Settle: &settle})
	clk.Add(time.Minute)
	b.RunDue(ctx, clk.Now()) // due work runs when you call it (b.Run does it on a real clock)
	bal, _ := b.Ledger.GetBalance(ctx, acct.ID)
	fmt.Println("available:", bal.Available())

	srv := httptest.NewServer(b.Handler) // or http.ListenAndServe(addr, b.Handler)
	defer srv.Close()
	req, _ := http.NewRequest("GET", srv.URL+"/accounts/"+acct.ID, nil)
	req.Header.Set("Authorization", "Bearer "+root.APIKey)
	res, _ := http.DefaultClient.Do(req)
	fmt.Println("GET /accounts/{id}:", res.Status)
	// Output:
	// available: 150000
	// GET /accounts/{id}: 200 OK
}
