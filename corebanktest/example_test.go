package corebanktest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/corebank/corebank/client"
	"github.com/corebank/corebank/corebanktest"
)

// Example is a test of a payout, from an empty bank to the webhook that
// reports it settled, through the typed client (Bank.API). In a suite its
// body is the body of a func TestPayout(t *testing.T).
func Example() {
	t := new(testing.T) // stands in for the test's *testing.T
	ctx := context.Background()
	b := corebanktest.New(t)
	api := b.API()
	hooks := b.CaptureWebhooks()
	acct := b.FundedAccount("USD", 50_000)
	vendor, err := api.PostCounterparties(ctx, client.PostCounterpartiesJSONRequestBody{Type: "business",
		Profile: client.NewCounterpartyProfile{LegalName: client.Ptr("Acme Inc"), Relationship: "vendor", Email: "ap@acme.example",
			RegisteredAddress: &client.NewCounterpartyProfileRegisteredAddress{
				Line1: client.Ptr("1 Market St"), City: client.Ptr("San Francisco"), Country: client.Ptr("US")}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	detail, err := api.PostPaymentDetails(ctx, client.PostPaymentDetailsJSONRequestBody{CounterpartyId: vendor.Id,
		PaymentMethod: "bank-transfer", Currency: "USD", Country: client.Ptr("US"), Scheme: client.Ptr("ach"),
		AccountHolderName: "Acme Inc", RoutingNumber: client.Ptr("091000019"), AccountNumber: client.Ptr("123456789"),
		AccountType: client.Ptr(client.PostPaymentDetailsJSONBodyAccountTypeChecking)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	payout, err := api.PostTransfers(ctx, client.PostTransfersJSONRequestBody{AccountId: acct.ID, PaymentDetailId: detail.Id,
		Amount: 10_000, PaymentType: "bank-transfer", Narration: "Invoice 42", UniqueReference: "inv-42"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println("created:", payout.Status, hooks.Wait("outflows.created").EventID != "")

	b.Advance(5 * time.Second) // the sandbox rail settles a payout 5 s after it is made
	var done struct {
		ID, Status string
		Amount     int64
	}
	json.Unmarshal(hooks.Wait("outflows.completed").Data, &done)
	fmt.Println("webhook:", done.ID == payout.Id, done.Status, done.Amount)
	// Output:
	// created: pending true
	// webhook: true successful 10000
}
