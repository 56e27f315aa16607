package httpapi_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/corebank/corebank/bank"
	"github.com/corebank/corebank/entities"
	"github.com/corebank/corebank/httpapi/internal/apiclient"
	"github.com/corebank/corebank/storage/memory"
)

// TestClientREADMEFlow drives the README's walk-through over HTTP through
// the client oapi-codegen generated from openapi.json: the bootstrap key,
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
	c, err := apiclient.NewClientWithResponses(srv.URL, apiclient.WithRequestEditorFn(
		func(_ context.Context, r *http.Request) error {
			r.Header.Set("Authorization", "Bearer "+root.APIKey)
			return nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	must := func(step string, status int, resp interface{ StatusCode() int }, err error, body func() []byte) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if resp.StatusCode() != status {
			t.Fatalf("%s: %d, want %d: %s", step, resp.StatusCode(), status, body())
		}
	}
	str := func(s string) *string { return &s }

	// An individual entity under the root, approved by the sandbox review.
	ent, err := c.PostIndividualEntitiesWithResponse(ctx, nil, apiclient.PostIndividualEntitiesJSONRequestBody{
		Name: "Ada Lovelace",
		Person: apiclient.NewIndividualPerson{FirstName: "Ada", LastName: "Lovelace",
			DateOfBirth: openapi_types.Date{Time: time.Date(1990, 4, 1, 0, 0, 0, 0, time.UTC)}, Email: "ada@example.com", Nationality: "US", Gender: "f", Phonenumber: "+12025550143"},
	})
	must("create entity", 201, ent, err, func() []byte { return ent.Body })
	entityID := ent.JSON201.Data.Entity.Id
	rev, err := c.PostSandboxEntitiesReviewWithResponse(ctx, entityID, nil, apiclient.PostSandboxEntitiesReviewJSONRequestBody{Decision: "approved"})
	must("review", 200, rev, err, func() []byte { return rev.Body })

	// Its account, funded by a sandbox inflow.
	acct, err := c.PostAccountsWithResponse(ctx, nil, apiclient.PostAccountsJSONRequestBody{
		EntityId: &entityID, Type: "checking", Currency: "USD", DisplayName: "Operating"})
	must("open account", 201, acct, err, func() []byte { return acct.Body })
	acctID := acct.JSON201.Data.Id
	in, err := c.PostSandboxInflowsWithResponse(ctx, nil, apiclient.PostSandboxInflowsJSONRequestBody{
		AccountId: acctID, Amount: 150000, Narration: str("seed")})
	must("inflow", 201, in, err, func() []byte { return in.Body })
	got, err := c.GetAccountsByIdWithResponse(ctx, acctID, nil)
	must("get account", 200, got, err, func() []byte { return got.Body })
	if bal := got.JSON200.Data.Balance; bal.Available != 150000 || bal.Current != 150000 {
		t.Fatalf("balance after the inflow: %+v", bal)
	}

	// A counterparty, where the money goes, and the transfer.
	cp, err := c.PostCounterpartiesWithResponse(ctx, nil, apiclient.PostCounterpartiesJSONRequestBody{
		EntityId: &entityID, Type: "individual",
		Profile: apiclient.NewCounterpartyProfile{FirstName: str("Grace"), LastName: str("Hopper"),
			Relationship: "vendor", Email: "grace@example.com",
			Address: &apiclient.NewCounterpartyProfileAddress{Line1: "1 Main St", City: "Austin", Country: "US"}},
	})
	must("counterparty", 201, cp, err, func() []byte { return cp.Body })
	pd, err := c.PostPaymentDetailsWithResponse(ctx, nil, apiclient.PostPaymentDetailsJSONRequestBody{
		EntityId: &entityID, PaymentMethod: "bank-transfer", Currency: "USD", AccountHolderName: "Grace Hopper",
		CounterpartyId: cp.JSON201.Data.Id, Country: str("US"), Scheme: str("ach"),
		RoutingNumber: str("021000021"), AccountNumber: str("123456789"), AccountType: ptr(apiclient.PostPaymentDetailsJSONBodyAccountTypeChecking)})
	must("payment detail", 201, pd, err, func() []byte { return pd.Body })
	tr, err := c.PostTransfersWithResponse(ctx, nil, apiclient.PostTransfersJSONRequestBody{
		EntityId: &entityID, AccountId: acctID, PaymentDetailId: pd.JSON201.Id, Amount: 2500,
		Currency: ptr(apiclient.PostTransfersJSONBodyCurrencyUSD), PaymentType: "bank-transfer", Narration: "invoice 42", UniqueReference: "inv-42"})
	must("transfer", 201, tr, err, func() []byte { return tr.Body })
	if s := tr.JSON201.Data.Status; s != "pending" {
		t.Fatalf("new transfer status %q", s)
	}

	// The sandbox rail settles it 5 s after creation.
	adv, err := c.PostSandboxClockAdvanceWithResponse(ctx, nil, apiclient.PostSandboxClockAdvanceJSONRequestBody{Seconds: 10})
	must("advance", 200, adv, err, func() []byte { return adv.Body })
	done, err := c.GetTransfersByIdWithResponse(ctx, tr.JSON201.Data.Id, nil)
	must("get transfer", 200, done, err, func() []byte { return done.Body })
	if s := done.JSON200.Data.Status; s != "successful" {
		t.Errorf("transfer status after 10 s: %q", s)
	}
	got, err = c.GetAccountsByIdWithResponse(ctx, acctID, nil)
	must("get account", 200, got, err, func() []byte { return got.Body })
	if bal := got.JSON200.Data.Balance; bal.Available != 147500 || bal.Current != 147500 {
		t.Errorf("balance after the transfer: %+v", bal)
	}
}

// ptr is a pointer to v, for the generated client's optional fields.
func ptr[T any](v T) *T { return &v }
