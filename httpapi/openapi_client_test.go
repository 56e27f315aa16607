package httpapi_test

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/corebank/corebank/bank"
	"github.com/corebank/corebank/client"
	"github.com/corebank/corebank/entities"
	"github.com/corebank/corebank/storage/memory"
)

// TestClientREADMEFlow drives the README's walk-through over HTTP through
// the public typed client (package client): the bootstrap key,
// an individual entity (approved in the sandbox), its account, a sandbox
// inflow, a counterparty with an ACH payment detail, a transfer, and the
// clock moved until the sandbox rail settles it. The server is bank.New
// over memory with a mock clock, and every exchange is also checked
// against the document.
func TestClientREADMEFlow(t *testing.T) {
	ctx := context.Background()
	mock := clock.NewMock()
	mock.Set(time.Date(2026, 3, 15, 12, 0, 0, 0, time.UTC))
	b, err := bank.New(memory.New(), bank.Options{SecretKey: make([]byte, 32), Clock: mock,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Entities: entities.Options{GenerateKey: testKey}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	root, _, err := b.Entities.Bootstrap(ctx)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(checked(t, b.Handler))
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL, root.APIKey, nil)
	if err != nil {
		t.Fatal(err)
	}
	must := func(step string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}
	str := client.Ptr[string]

	// An individual entity under the root, approved by the sandbox review.
	ent, err := c.PostIndividualEntities(ctx, client.PostIndividualEntitiesJSONRequestBody{
		Name: "Ada Lovelace",
		Person: client.NewIndividualPerson{FirstName: "Ada", LastName: "Lovelace",
			DateOfBirth: client.Date{Time: time.Date(1990, 4, 1, 0, 0, 0, 0, time.UTC)}, Email: "ada@example.com", Nationality: "US", Gender: "f", Phonenumber: "+12025550143"},
	}, nil)
	must("create entity", err)
	entityID := ent.Entity.Id
	_, err = c.PostSandboxEntitiesReview(ctx, entityID, client.PostSandboxEntitiesReviewJSONRequestBody{Decision: "approved"}, nil)
	must("review", err)

	// Its account, funded by a sandbox inflow.
	acct, err := c.PostAccounts(ctx, client.PostAccountsJSONRequestBody{
		EntityId: &entityID, Type: "checking", Currency: "USD", DisplayName: "Operating"}, nil)
	must("open account", err)
	_, err = c.PostSandboxInflows(ctx, client.PostSandboxInflowsJSONRequestBody{
		AccountId: acct.Id, Amount: 150000, Narration: str("seed")}, nil)
	must("inflow", err)
	got, err := c.GetAccountsById(ctx, acct.Id, nil)
	must("get account", err)
	if bal := got.Balance; bal.Available != 150000 || bal.Current != 150000 {
		t.Fatalf("balance after the inflow: %+v", bal)
	}

	// A counterparty, where the money goes, and the transfer.
	cp, err := c.PostCounterparties(ctx, client.PostCounterpartiesJSONRequestBody{
		EntityId: &entityID, Type: "individual",
		Profile: client.NewCounterpartyProfile{FirstName: str("Grace"), LastName: str("Hopper"),
			Relationship: "vendor", Email: "grace@example.com",
			Address: &client.NewCounterpartyProfileAddress{Line1: "1 Main St", City: "Austin", Country: "US"}},
	}, nil)
	must("counterparty", err)
	pd, err := c.PostPaymentDetails(ctx, client.PostPaymentDetailsJSONRequestBody{
		EntityId: &entityID, PaymentMethod: "bank-transfer", Currency: "USD", AccountHolderName: "Grace Hopper",
		CounterpartyId: cp.Id, Country: str("US"), Scheme: str("ach"),
		RoutingNumber: str("021000021"), AccountNumber: str("123456789"), AccountType: client.Ptr(client.PostPaymentDetailsJSONBodyAccountTypeChecking)}, nil)
	must("payment detail", err)
	tr, err := c.PostTransfers(ctx, client.PostTransfersJSONRequestBody{
		EntityId: &entityID, AccountId: acct.Id, PaymentDetailId: pd.Id, Amount: 2500,
		Currency: client.Ptr(client.PostTransfersJSONBodyCurrencyUSD), PaymentType: "bank-transfer", Narration: "invoice 42", UniqueReference: "inv-42"}, nil)
	must("transfer", err)
	if s := tr.Status; s != "pending" {
		t.Fatalf("new transfer status %q", s)
	}

	// The sandbox rail settles it 5 s after creation.
	_, err = c.PostSandboxClockAdvance(ctx, client.PostSandboxClockAdvanceJSONRequestBody{Seconds: 10}, nil)
	must("advance", err)
	done, err := c.GetTransfersById(ctx, tr.Id, nil)
	must("get transfer", err)
	if s := done.Status; s != "successful" {
		t.Errorf("transfer status after 10 s: %q", s)
	}
	got, err = c.GetAccountsById(ctx, acct.Id, nil)
	must("get account", err)
	if bal := got.Balance; bal.Available != 147500 || bal.Current != 147500 {
		t.Errorf("balance after the transfer: %+v", bal)
	}
}
