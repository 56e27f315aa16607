package payouts

import (
	"context"
	"fmt"
	"testing"

	"github.com/corebank/corebank/client"
	"github.com/corebank/corebank/corebanktest"
)

// TestPayoutClient pays a vendor 250 times and lists the payouts back
// across pages, with the typed client.
func TestPayoutClient(t *testing.T) {
	ctx := context.Background()
	b := corebanktest.New(t)
	api := b.API()
	acct := b.FundedAccount("USD", 1_000_000)

	vendor, err := api.PostCounterparties(ctx, client.PostCounterpartiesJSONRequestBody{
		Type: "business",
		Profile: client.NewCounterpartyProfile{
			LegalName: client.Ptr("Acme Inc"), Relationship: "vendor", Email: "ap@acme.example",
			RegisteredAddress: &client.NewCounterpartyProfileRegisteredAddress{
				Line1: client.Ptr("1 Market St"), City: client.Ptr("San Francisco"), Country: client.Ptr("US")},
		},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	detail, err := api.PostPaymentDetails(ctx, client.PostPaymentDetailsJSONRequestBody{
		CounterpartyId: vendor.Id, PaymentMethod: "bank-transfer", Currency: "USD",
		Country: client.Ptr("US"), Scheme: client.Ptr("ach"), AccountHolderName: "Acme Inc",
		RoutingNumber: client.Ptr("091000019"), AccountNumber: client.Ptr("123456789"),
		AccountType: client.Ptr(client.PostPaymentDetailsJSONBodyAccountTypeChecking),
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	paid := map[string]bool{}
	for i := range 250 {
		tr, err := api.PostTransfers(ctx, client.PostTransfersJSONRequestBody{
			AccountId: acct.ID, PaymentDetailId: detail.Id, PaymentType: "bank-transfer",
			Amount: 100, Narration: "invoice", UniqueReference: fmt.Sprint("inv-", i),
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		paid[tr.Id] = true
	}

	listed := 0
	for tr, err := range api.GetTransfers(ctx, &client.GetTransfersParams{AccountId: &acct.ID}) {
		if err != nil {
			t.Fatal(err)
		}
		if !paid[tr.Id] || tr.Amount != 100 {
			t.Fatalf("listed %+v", tr)
		}
		listed++
	}
	if listed != 250 {
		t.Fatalf("listed %d payouts, want 250", listed)
	}
}
