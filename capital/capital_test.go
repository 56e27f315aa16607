package capital_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/capital"
	"github.com/corebank/corebank/corebanktest"
	"github.com/corebank/corebank/ledger"
)

var ctx = context.Background()

func dec(s string) *decimal.Decimal {
	d := decimal.RequireFromString(s)
	return &d
}

func ptr[T any](v T) *T { return &v }

// fields returns the fields a validation error names.
func fields(err error) map[string]string {
	var e *corebank.Error
	if errors.As(err, &e) && e.Kind == corebank.KindInvalid {
		return e.Fields
	}
	return nil
}

// env is a bank for one test with the root entity acting.
type env struct {
	*corebanktest.Bank
	t    *testing.T
	root corebank.Caller
}

func newEnv(t *testing.T, opts ...corebanktest.Option) *env {
	b := corebanktest.New(t, opts...)
	return &env{Bank: b, t: t, root: corebank.As(b.Root.EntityID)}
}

// deposit is a 30-day USD deposit at 10% with early withdrawal from day 5
// at a 50% penalty and 10% withholding, and one document.
func deposit() capital.NewProduct {
	return capital.NewProduct{Type: capital.TypeFixedReturn, DisplayName: "30-day USD deposit",
		Description: "<p>Fixed return</p>", Currency: "USD", TenorDays: ptr(30), AnnualRate: dec("0.10"),
		MinPrincipal: ptr(int64(10_000)), MaxPrincipal: ptr(int64(10_000_000)),
		EarlyWithdrawalEnabled: ptr(true), EarlyWithdrawalPenaltyRate: dec("0.5"), EarlyWithdrawalMinDays: ptr(5),
		WithholdingRate: dec("0.1"), Documents: []capital.NewDocument{{Title: "Terms", URL: "https://example.com/terms", Version: 2}}}
}

// offering is a USD share offering of inventory shares at 100 each with
// 1% brokerage and 0.5% cross-deal fees and a 30-day lock.
func offering(inventory int64) capital.NewProduct {
	return capital.NewProduct{Type: capital.TypeShareOffering, DisplayName: "Acme shares", Currency: "USD",
		OfferPrice: ptr(int64(100)), InventoryShares: ptr(inventory), BrokerageFeeRate: dec("0.01"),
		CrossDealFeeRate: dec("0.005"), LockDays: ptr(30)}
}

func (e *env) product(in capital.NewProduct) *capital.Product {
	e.t.Helper()
	p, err := e.Capital.CreateProduct(ctx, e.root, in)
	if err != nil {
		e.t.Fatalf("create product: %v", err)
	}
	return p
}

func affirm(p *capital.Product) []capital.Affirmation {
	out := []capital.Affirmation{}
	for _, d := range p.Documents {
		out = append(out, capital.Affirmation{DocumentID: d.ID, Version: d.Version})
	}
	return out
}

func (e *env) order(in capital.NewOrder) *capital.Order {
	e.t.Helper()
	o, err := e.Capital.CreateOrder(ctx, e.root, in)
	if err != nil {
		e.t.Fatalf("create order: %v", err)
	}
	return o
}

func (e *env) depositOrder(p *capital.Product, account string, principal int64, waive bool) *capital.Order {
	e.t.Helper()
	return e.order(capital.NewOrder{ProductID: p.ID, AccountID: account, Principal: &principal,
		WaiveEarlyWithdrawal: &waive, Affirmations: affirm(p)})
}

func (e *env) confirm(id string) *capital.Order {
	e.t.Helper()
	o, err := e.Capital.ConfirmOrder(ctx, e.root, "", id, capital.Confirmation{})
	if err != nil {
		e.t.Fatalf("confirm: %v", err)
	}
	return o
}

func (e *env) balance(account string) int64 {
	e.t.Helper()
	a, err := e.Ledger.GetAccount(ctx, e.root, "", account)
	if err != nil {
		e.t.Fatal(err)
	}
	return a.Balance.Available
}

func (e *env) get(id string) *capital.Order {
	e.t.Helper()
	o, err := e.Capital.GetOrder(ctx, e.root, "", id)
	if err != nil {
		e.t.Fatal(err)
	}
	return o
}

func (e *env) transactions(id string) []capital.Transaction {
	e.t.Helper()
	var out []capital.Transaction
	opts := corebank.ListOptions{Limit: 100}
	for {
		p, err := e.Capital.ListTransactions(ctx, e.root, capital.TransactionFilter{OrderID: id}, opts)
		if err != nil {
			e.t.Fatal(err)
		}
		out = append(out, p.Items...)
		if !p.HasNext {
			return out
		}
		opts.After = p.Next
	}
}

func sum(ts []capital.Transaction, typ string) (n int, total int64) {
	for _, t := range ts {
		if t.EventType == typ {
			n++
			total += t.Amount
		}
	}
	return n, total
}

// days advances the clock a day at a time, running due work each day.
func (e *env) days(n int) {
	for range n {
		e.Advance(24 * time.Hour)
	}
}

func TestCreateProductValidation(t *testing.T) {
	e := newEnv(t)
	for name, tc := range map[string]struct {
		edit func(*capital.NewProduct)
		want []string
	}{
		"Type":         {func(p *capital.NewProduct) { p.Type = "BOND" }, []string{"type"}},
		"Tenor":        {func(p *capital.NewProduct) { p.TenorDays = ptr(31) }, []string{"tenor_days"}},
		"Rate":         {func(p *capital.NewProduct) { p.AnnualRate = dec("-0.1") }, []string{"annual_rate"}},
		"RateMissing":  {func(p *capital.NewProduct) { p.AnnualRate = nil }, []string{"annual_rate"}},
		"Currency":     {func(p *capital.NewProduct) { p.Currency = "XXX" }, []string{"currency"}},
		"Name":         {func(p *capital.NewProduct) { p.DisplayName = "" }, []string{"display_name"}},
		"Window":       {func(p *capital.NewProduct) { p.SaleStartsAt, p.SaleEndsAt = ptr(int64(10)), ptr(int64(5)) }, []string{"sale_ends_at"}},
		"Band":         {func(p *capital.NewProduct) { p.PrincipalBands = []int64{100, 100} }, []string{"principal_bands", "principal_bands.1"}},
		"MaxBelowMin":  {func(p *capital.NewProduct) { p.MaxPrincipal = ptr(int64(5)) }, []string{"max_principal"}},
		"ShareField":   {func(p *capital.NewProduct) { p.OfferPrice = ptr(int64(5)) }, []string{"offer_price"}},
		"Penalty":      {func(p *capital.NewProduct) { p.EarlyWithdrawalPenaltyRate = dec("1.5") }, []string{"early_withdrawal_penalty_rate"}},
		"Eligible":     {func(p *capital.NewProduct) { p.EligibleEntityTypes = []string{"trust"} }, []string{"eligible_entity_types.0"}},
		"Visibility":   {func(p *capital.NewProduct) { p.Visibility = "secret" }, []string{"visibility"}},
		"DocumentURL":  {func(p *capital.NewProduct) { p.Documents[0].URL = "" }, []string{"documents.0.url"}},
		"DocumentVers": {func(p *capital.NewProduct) { p.Documents[0].Version = -1 }, []string{"documents.0.version"}},
	} {
		t.Run(name, func(t *testing.T) {
			in := deposit()
			in.Documents = append([]capital.NewDocument(nil), in.Documents...)
			tc.edit(&in)
			_, err := e.Capital.CreateProduct(ctx, e.root, in)
			var got []string
			for f := range fields(err) {
				got = append(got, f)
			}
			if diff := cmp.Diff(tc.want, got, cmpSorted); diff != "" {
				t.Fatalf("fields (-want +got)\n%s\n%v", diff, err)
			}
		})
	}
	t.Run("ShareOffering", func(t *testing.T) {
		in := offering(0)
		in.TenorDays = ptr(30)
		_, err := e.Capital.CreateProduct(ctx, e.root, in)
		if diff := cmp.Diff(map[string]bool{"inventory_shares": true, "tenor_days": true}, keys(fields(err))); diff != "" {
			t.Fatalf("fields (-want +got)\n%s", diff)
		}
	})
	page, err := e.Capital.ListProducts(ctx, e.root, capital.ProductFilter{}, corebank.ListOptions{})
	if err != nil || len(page.Items) != 0 {
		t.Fatalf("a refused product was stored: %v %v", page, err)
	}
}

var cmpSorted = cmp.Transformer("sort", func(in []string) map[string]bool { return keys2(in) })

func keys2(in []string) map[string]bool {
	m := map[string]bool{}
	for _, s := range in {
		m[s] = true
	}
	return m
}

func keys(m map[string]string) map[string]bool {
	out := map[string]bool{}
	for k := range m {
		out[k] = true
	}
	return out
}

func TestProductVisibility(t *testing.T) {
	e := newEnv(t)
	public := e.product(deposit())
	hidden := deposit()
	hidden.Visibility = capital.VisibilityHidden
	h := e.product(hidden)
	individuals := deposit()
	individuals.EligibleEntityTypes = []string{capital.EntityIndividual}
	ind := e.product(individuals)
	off := e.product(offering(10))
	soldOut := e.product(offering(1))
	inactive := e.product(deposit())
	if _, err := e.Capital.DeactivateProduct(ctx, e.root, "", inactive.ID); err != nil {
		t.Fatal(err)
	}
	acct := e.FundedAccount("USD", 1_000_000)
	o := e.order(capital.NewOrder{ProductID: soldOut.ID, AccountID: acct.ID, Amount: ptr(int64(1000)), Affirmations: affirm(soldOut)})
	if *o.AllocatedShares != 1 {
		t.Fatalf("allocated %d shares, want 1 (the inventory)", *o.AllocatedShares)
	}

	page, err := e.Capital.ListProducts(ctx, e.root, capital.ProductFilter{}, corebank.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		ID        string
		Orderable bool
		Docs      bool
	}
	var got []row
	for _, p := range page.Items {
		got = append(got, row{p.ID, p.Orderable, p.Documents != nil})
	}
	want := []row{{public.ID, true, false}, {off.ID, true, false}, {soldOut.ID, false, false}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("listed (-want +got)\n%s", diff)
	}
	if p, err := e.Capital.GetProduct(ctx, e.root, "", h.ID); err != nil || len(p.Documents) != 1 {
		t.Fatalf("hidden product by id: %v %v", p, err)
	}
	for name, id := range map[string]string{"Ineligible": ind.ID, "Inactive": inactive.ID, "Unknown": "01JAAAAAAAAAAAAAAAAAAAAAAA"} {
		if _, err := e.Capital.GetProduct(ctx, e.root, "", id); !errors.Is(err, capital.ErrProductNotFound) {
			t.Errorf("%s: got %v, want ErrProductNotFound", name, err)
		}
	}
	// Filters and both cursors, one at a time.
	page, err = e.Capital.ListProducts(ctx, e.root, capital.ProductFilter{Type: capital.TypeShareOffering}, corebank.ListOptions{Limit: 1})
	if err != nil || len(page.Items) != 1 || page.Items[0].ID != off.ID || !page.HasNext {
		t.Fatalf("first page: %+v %v", page, err)
	}
	next, err := e.Capital.ListProducts(ctx, e.root, capital.ProductFilter{Type: capital.TypeShareOffering}, corebank.ListOptions{Limit: 1, After: page.Next})
	if err != nil || len(next.Items) != 1 || next.Items[0].ID != soldOut.ID || next.HasNext || !next.HasPrevious {
		t.Fatalf("second page: %+v %v", next, err)
	}
	prev, err := e.Capital.ListProducts(ctx, e.root, capital.ProductFilter{Type: capital.TypeShareOffering}, corebank.ListOptions{Limit: 1, Before: next.Previous})
	if err != nil || len(prev.Items) != 1 || prev.Items[0].ID != off.ID {
		t.Fatalf("previous page: %+v %v", prev, err)
	}
	for _, opts := range []corebank.ListOptions{{Limit: 101}, {Limit: -1}, {After: "x"}, {After: page.Next, Before: page.Next}} {
		if _, err := e.Capital.ListProducts(ctx, e.root, capital.ProductFilter{}, opts); fields(err) == nil {
			t.Errorf("%+v: got %v, want a validation error", opts, err)
		}
	}
}

func TestOrderValidation(t *testing.T) {
	e := newEnv(t)
	banded := deposit()
	banded.MinPrincipal, banded.MaxPrincipal, banded.PrincipalBands = nil, nil, []int64{50_000, 100_000}
	b := e.product(banded)
	p := e.product(deposit())
	share := e.product(offering(100))
	usd := e.FundedAccount("USD", 1_000_000)
	eur := e.FundedAccount("EUR", 1_000_000)
	doc := p.Documents[0]
	for name, tc := range map[string]struct {
		in   capital.NewOrder
		want []string
	}{
		"BandExact":     {capital.NewOrder{ProductID: b.ID, AccountID: usd.ID, Principal: ptr(int64(60_000)), WaiveEarlyWithdrawal: ptr(false), Affirmations: affirm(b)}, []string{"principal"}},
		"BelowMin":      {capital.NewOrder{ProductID: p.ID, AccountID: usd.ID, Principal: ptr(int64(9_999)), WaiveEarlyWithdrawal: ptr(false), Affirmations: affirm(p)}, []string{"principal"}},
		"WaiverMissing": {capital.NewOrder{ProductID: p.ID, AccountID: usd.ID, Principal: ptr(int64(20_000)), Affirmations: affirm(p)}, []string{"waive_early_withdrawal"}},
		"AmountOnFixed": {capital.NewOrder{ProductID: p.ID, AccountID: usd.ID, Principal: ptr(int64(20_000)), WaiveEarlyWithdrawal: ptr(false), Amount: ptr(int64(5)), Affirmations: affirm(p)}, []string{"amount"}},
		"PrincipalOnShares": {capital.NewOrder{ProductID: share.ID, AccountID: usd.ID, Principal: ptr(int64(20_000)), Amount: ptr(int64(500))},
			[]string{"principal"}},
		"TooLittle": {capital.NewOrder{ProductID: share.ID, AccountID: usd.ID, Amount: ptr(int64(100))}, []string{"amount"}},
		"Currency":  {capital.NewOrder{ProductID: p.ID, AccountID: eur.ID, Principal: ptr(int64(20_000)), WaiveEarlyWithdrawal: ptr(false), Affirmations: affirm(p)}, []string{"account_id"}},
		"Missing":   {capital.NewOrder{ProductID: p.ID, AccountID: usd.ID, Principal: ptr(int64(20_000)), WaiveEarlyWithdrawal: ptr(false)}, []string{"affirmations"}},
		"Unknown":   {capital.NewOrder{ProductID: p.ID, AccountID: usd.ID, Principal: ptr(int64(20_000)), WaiveEarlyWithdrawal: ptr(false), Affirmations: []capital.Affirmation{{DocumentID: "nope", Version: 2}}}, []string{"affirmations", "affirmations.0.document_id"}},
		"Stale":     {capital.NewOrder{ProductID: p.ID, AccountID: usd.ID, Principal: ptr(int64(20_000)), WaiveEarlyWithdrawal: ptr(false), Affirmations: []capital.Affirmation{{DocumentID: doc.ID, Version: 1}}}, []string{"affirmations.0.version"}},
		"Duplicate": {capital.NewOrder{ProductID: p.ID, AccountID: usd.ID, Principal: ptr(int64(20_000)), WaiveEarlyWithdrawal: ptr(false), Affirmations: []capital.Affirmation{{doc.ID, 2}, {doc.ID, 2}}}, []string{"affirmations.1.document_id"}},
		"NoProduct": {capital.NewOrder{AccountID: usd.ID}, []string{"product_id"}},
		"NoAccount": {capital.NewOrder{ProductID: p.ID}, []string{"account_id"}},
		"Negative":  {capital.NewOrder{ProductID: p.ID, AccountID: usd.ID, Principal: ptr(int64(-1))}, []string{"principal"}},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := e.Capital.CreateOrder(ctx, e.root, tc.in)
			if diff := cmp.Diff(keys2(tc.want), keys(fields(err))); diff != "" {
				t.Fatalf("fields (-want +got)\n%s\n%v", diff, err)
			}
		})
	}
	if page, _ := e.Capital.ListOrders(ctx, e.root, capital.OrderFilter{}, corebank.ListOptions{}); len(page.Items) != 0 {
		t.Fatalf("a refused order was stored: %+v", page.Items)
	}
	if _, err := e.Capital.CreateOrder(ctx, e.root, capital.NewOrder{ProductID: p.ID, AccountID: "01JAAAAAAAAAAAAAAAAAAAAAAA",
		Principal: ptr(int64(20_000)), WaiveEarlyWithdrawal: ptr(false), Affirmations: affirm(p)}); !errors.Is(err, ledger.ErrAccountNotFound) {
		t.Fatalf("unknown account: %v", err)
	}
}

// TestReservation: an order reserves for 15 minutes with no money moving,
// a share order is allocated down to the inventory left, and expiry
// releases it.
func TestReservation(t *testing.T) {
	e := newEnv(t)
	p := e.product(offering(10))
	acct := e.FundedAccount("USD", 1_000_000)
	first := e.order(capital.NewOrder{ProductID: p.ID, AccountID: acct.ID, Amount: ptr(int64(812)), Affirmations: affirm(p)})
	// 8 shares cost 800 + 8 + 4 = 812.
	want := capital.Order{ID: first.ID, EntityID: e.Root.EntityID, Reference: first.Reference, ProductID: p.ID, AccountID: acct.ID,
		Type: capital.TypeShareOffering, Currency: "USD", Amount: 812, RequestedAmount: ptr(int64(812)), AllocatedShares: ptr(int64(8)),
		OfferPrice: ptr(int64(100)), BrokerageFee: ptr(int64(8)), CrossDealFee: ptr(int64(4)), TotalDebit: 812,
		Status: capital.OrderReserved, ReservationExpiresAt: corebanktest.Start.Add(15 * time.Minute).UnixMilli(),
		Created: corebanktest.Start.UnixMilli()}
	if diff := cmp.Diff(&want, first); diff != "" {
		t.Fatalf("order (-want +got)\n%s", diff)
	}
	second := e.order(capital.NewOrder{ProductID: p.ID, AccountID: acct.ID, Amount: ptr(int64(10_000)), Affirmations: affirm(p)})
	if *second.AllocatedShares != 2 || second.TotalDebit != 203 {
		t.Fatalf("second order: %d shares for %d, want 2 for 203", *second.AllocatedShares, second.TotalDebit)
	}
	if e.balance(acct.ID) != 1_000_000 {
		t.Fatal("a reservation moved money")
	}
	if _, err := e.Capital.CreateOrder(ctx, e.root, capital.NewOrder{ProductID: p.ID, AccountID: acct.ID, Amount: ptr(int64(500))}); !errors.Is(err, capital.ErrInvalidForState) {
		t.Fatalf("sold out: %v", err)
	}
	e.Advance(15 * time.Minute)
	got := e.get(first.ID)
	if got.Status != capital.OrderExpired || got.ExpiredAt == nil {
		t.Fatalf("after 15 minutes: %s", got.Status)
	}
	if _, err := e.Capital.ConfirmOrder(ctx, e.root, "", first.ID, capital.Confirmation{}); !errors.Is(err, capital.ErrInvalidForState) {
		t.Fatalf("confirm expired: %v", err)
	}
	pr, err := e.Capital.GetProduct(ctx, e.root, "", p.ID)
	if err != nil || pr.Inventory.Quantity != 10 || !pr.Orderable {
		t.Fatalf("inventory after expiry: %+v %v", pr.Inventory, err)
	}
}

// TestRejected: a confirm that finds the product no longer on offer
// rejects the order and releases its inventory.
func TestRejected(t *testing.T) {
	e := newEnv(t)
	p := e.product(offering(10))
	acct := e.FundedAccount("USD", 1_000_000)
	o := e.order(capital.NewOrder{ProductID: p.ID, AccountID: acct.ID, Amount: ptr(int64(1_000)), Affirmations: affirm(p)})
	if _, err := e.Capital.DeactivateProduct(ctx, e.root, "", p.ID); err != nil {
		t.Fatal(err)
	}
	got := e.confirm(o.ID)
	if got.Status != capital.OrderRejected || got.StatusReason == nil || got.RejectedAt == nil || got.CapitalAccount != nil {
		t.Fatalf("confirm of a deactivated product: %+v", got)
	}
	if e.balance(acct.ID) != 1_000_000 {
		t.Fatal("a rejected order moved money")
	}
	if _, err := e.Capital.ConfirmOrder(ctx, e.root, "", o.ID, capital.Confirmation{}); !errors.Is(err, capital.ErrInvalidForState) {
		t.Fatalf("confirm rejected: %v", err)
	}
}

func TestConfirmInsufficientFunds(t *testing.T) {
	e := newEnv(t)
	p := e.product(deposit())
	acct := e.FundedAccount("USD", 10_000)
	o := e.depositOrder(p, acct.ID, 20_000, false)
	if _, err := e.Capital.ConfirmOrder(ctx, e.root, "", o.ID, capital.Confirmation{}); !errors.Is(err, ledger.ErrInsufficientFunds) {
		t.Fatalf("got %v, want ErrInsufficientFunds", err)
	}
	if got := e.get(o.ID); got.Status != capital.OrderReserved {
		t.Fatalf("status %s, want RESERVED", got.Status)
	}
}
