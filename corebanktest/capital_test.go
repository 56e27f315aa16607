package corebanktest_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/capital"
	"github.com/corebank/corebank/corebanktest"
)

// TestCapitalHelpers: FixedReturnProduct and ShareOffering make orderable
// products, and ApprovedOrder approves an order of either, debiting the
// account once; the deposit then accrues on the bank's clock.
func TestCapitalHelpers(t *testing.T) {
	b := corebanktest.New(t)
	ctx := context.Background()
	acct := b.FundedAccount("USD", 2_000_000)

	deposit := b.FixedReturnProduct("USD", 30, "0.10")
	if !deposit.Orderable || deposit.FixedTerms == nil || deposit.TenorDays != 30 || deposit.DayCountBasis != 360 || len(deposit.Documents) != 1 {
		t.Fatalf("deposit %+v", deposit)
	}
	o := b.ApprovedOrder(deposit.ID, acct.ID, 1_000_000)
	if o.Status != capital.OrderApproved || o.CapitalAccount == nil || o.CapitalAccount.Status.State != capital.StateActive {
		t.Fatalf("deposit order %+v", o)
	}

	offering := b.ShareOffering("USD", 100, 1000)
	if !offering.Orderable || offering.Inventory == nil || offering.Inventory.Quantity != 1000 {
		t.Fatalf("offering %+v", offering)
	}
	s := b.ApprovedOrder(offering.ID, acct.ID, 10_000)
	if s.Status != capital.OrderApproved || s.CapitalAccount == nil || s.CapitalAccount.Status.State != capital.StateLocked ||
		s.CapitalAccount.SharesPurchased != 100 {
		t.Fatalf("share order %+v", s)
	}

	bal, err := b.Ledger.GetBalance(ctx, acct.ID)
	if err != nil || bal.Settled != 2_000_000-1_000_000-10_000 {
		t.Errorf("balance %+v %v, want %d", bal, err, 2_000_000-1_000_000-10_000)
	}

	// 1 000 000 × 0.10 × 10 / 360 = 2 777.7…, rounded toward zero.
	b.Advance(10 * 24 * time.Hour)
	got, err := b.Capital.GetOrder(ctx, corebank.As(b.Root.EntityID), "", o.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(int64(2_777), got.CapitalAccount.AccruedInterest); diff != "" {
		t.Errorf("accrued after 10 days (-want +got):\n%s", diff)
	}

	// The bank's HTTP API serves the same order (bank.New mounts capital).
	var answer capital.Order
	b.Call(200, "GET", "/product-orders/"+o.ID, nil, &answer)
	if answer.ID != o.ID || answer.CapitalAccount == nil || answer.CapitalAccount.AccruedInterest != 2_777 {
		t.Errorf("GET /product-orders/%s: %+v", o.ID, answer)
	}
}
