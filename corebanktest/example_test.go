package corebanktest_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/corebank/corebank/corebanktest"
)

// Example is a test of a payout, from an empty bank to the webhook that
// reports it settled. In a suite its body is the body of a
// func TestPayout(t *testing.T).
func Example() {
	t := new(testing.T) // stands in for the test's *testing.T
	b := corebanktest.New(t)
	hooks := b.CaptureWebhooks()
	acct := b.FundedAccount("USD", 50_000)
	type M = map[string]any
	var vendor, detail, payout struct{ ID, Status string }
	b.Call(201, "POST", "/counterparties", M{"type": "business", "profile": M{"legal_name": "Acme Inc",
		"relationship": "vendor", "email": "ap@acme.example",
		"registered_address": M{"line1": "1 Market St", "city": "San Francisco", "country": "US"}}}, &vendor)
	b.Call(201, "POST", "/payment-details", M{"counterparty_id": vendor.ID, "payment_method": "bank-transfer",
		"currency": "USD", "country": "US", "scheme": "ach", "account_holder_name": "Acme Inc",
		"routing_number": "091000019", "account_number": "123456789", "account_type": "checking"}, &detail)
	b.Call(201, "POST", "/transfers", M{"account_id": acct.ID, "payment_detail_id": detail.ID, "amount": 10_000,
		"payment_type": "bank-transfer", "narration": "Invoice 42", "unique_reference": "inv-42"}, &payout)
	fmt.Println("created:", payout.Status, hooks.Wait("outflows.created").EventID != "")

	b.Advance(5 * time.Second) // the sandbox rail settles a payout 5 s after it is made
	var done struct {
		ID, Status string
		Amount     int64
	}
	json.Unmarshal(hooks.Wait("outflows.completed").Data, &done)
	fmt.Println("webhook:", done.ID == payout.ID, done.Status, done.Amount)
	// Output:
	// created: pending true
	// webhook: true successful 10000
}
