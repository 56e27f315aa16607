package corebanktest

import (
	"context"

	"github.com/shopspring/decimal"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/capital"
)

// FixedReturnProduct creates a public FIXED_RETURN product of the root
// entity in currency, as POST /sandbox/products does: tenorDays (7, 30,
// 60, 90 or 180) at annualRate (a decimal string, "0.10"), principal from
// 100 to 1 000 000 000 smallest units, early withdrawal allowed from day 0
// with a penalty of a quarter of the interest earned, nothing withheld,
// and one document ("Terms", version 1) that orders affirm (ApprovedOrder
// does). It fails the test on any error.
func (b *Bank) FixedReturnProduct(currency string, tenorDays int, annualRate string) *capital.Product {
	b.t.Helper()
	rate, err := decimal.NewFromString(annualRate)
	if err != nil {
		b.t.Fatalf("corebanktest: annual rate %q: %v", annualRate, err)
	}
	minP, maxP, zero := int64(100), int64(1_000_000_000), 0
	enabled, penalty := true, decimal.RequireFromString("0.25")
	return b.createProduct(capital.NewProduct{
		Type: capital.TypeFixedReturn, DisplayName: "Test deposit", Description: "<p>A test deposit.</p>", Currency: currency,
		Documents: []capital.NewDocument{{Title: "Terms", URL: "https://example.com/terms.pdf", Version: 1}},
		TenorDays: &tenorDays, AnnualRate: &rate, MinPrincipal: &minP, MaxPrincipal: &maxP,
		EarlyWithdrawalEnabled: &enabled, EarlyWithdrawalPenaltyRate: &penalty,
		EarlyWithdrawalMinDays: &zero, LockInDays: &zero,
	})
}

// ShareOffering creates a public SHARE_OFFERING product of the root entity
// in currency, as POST /sandbox/products does: shares whole shares at
// offerPrice smallest units each, no fees, a 30-day lock, and one
// document ("Offering memorandum", version 1). It fails the test on any
// error.
func (b *Bank) ShareOffering(currency string, offerPrice, shares int64) *capital.Product {
	b.t.Helper()
	lock, noFee := 30, decimal.Zero
	return b.createProduct(capital.NewProduct{
		Type: capital.TypeShareOffering, DisplayName: "Test offering", Description: "<p>A test offering.</p>", Currency: currency,
		Documents:  []capital.NewDocument{{Title: "Offering memorandum", URL: "https://example.com/memo.pdf", Version: 1}},
		OfferPrice: &offerPrice, InventoryShares: &shares,
		BrokerageFeeRate: &noFee, CrossDealFeeRate: &noFee, LockDays: &lock,
	})
}

func (b *Bank) createProduct(in capital.NewProduct) *capital.Product {
	b.t.Helper()
	p, err := b.Capital.CreateProduct(context.Background(), corebank.As(b.Root.EntityID), in)
	if err != nil {
		b.t.Fatalf("corebanktest: create %s product: %v", in.Type, err)
	}
	return p
}

// ApprovedOrder orders product productID on the root's account accountID
// and confirms it, as POST /product-orders and POST
// /product-orders/{id}/confirm do, affirming every document of the product
// at its version: amount is the principal of a FIXED_RETURN product (early
// withdrawal not waived) or the amount to spend on a SHARE_OFFERING. The
// account is debited; the answer is the APPROVED order with its capital
// account. It fails the test on any error.
func (b *Bank) ApprovedOrder(productID, accountID string, amount int64) *capital.Order {
	b.t.Helper()
	ctx := context.Background()
	root := corebank.As(b.Root.EntityID)
	p, err := b.Capital.GetProduct(ctx, root, "", productID)
	if err != nil {
		b.t.Fatalf("corebanktest: read product %s: %v", productID, err)
	}
	in := capital.NewOrder{ProductID: productID, AccountID: accountID, Affirmations: []capital.Affirmation{}}
	for _, d := range p.Documents {
		in.Affirmations = append(in.Affirmations, capital.Affirmation{DocumentID: d.ID, Version: d.Version})
	}
	if p.Type == capital.TypeFixedReturn {
		waive := false
		in.Principal, in.WaiveEarlyWithdrawal = &amount, &waive
	} else {
		in.Amount = &amount
	}
	o, err := b.Capital.CreateOrder(ctx, root, in)
	if err != nil {
		b.t.Fatalf("corebanktest: order %d of product %s: %v", amount, productID, err)
	}
	id := o.ID
	o, err = b.Capital.ConfirmOrder(ctx, root, "", id, capital.Confirmation{})
	if err != nil {
		b.t.Fatalf("corebanktest: confirm order %s: %v", id, err)
	}
	return o
}
