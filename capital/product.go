package capital

import (
	"context"
	"slices"
	"strconv"
	"time"

	"github.com/shopspring/decimal"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/internal/scope"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/storage"
)

// Tenors a fixed-return product may have, in days.
var Tenors = []int{7, 30, 60, 90, 180}

// maxDocuments caps a product's documents.
const maxDocuments = 20

// maxAmount bounds every amount capital accepts (smallest units), so that
// sums of a few never overflow.
const maxAmount = int64(1e15)

var one = decimal.NewFromInt(1)

// checkRate reports a rate outside [0, 1] on field (required when req).
func checkRate(p corebank.Problems, field string, r *decimal.Decimal, req bool) decimal.Decimal {
	switch {
	case r == nil && req:
		p.Add(field, "is required")
	case r == nil:
	case r.IsNegative() || r.GreaterThan(one):
		p.Add(field, "must be a decimal from 0 to 1")
	default:
		return *r
	}
	return decimal.Zero
}

func checkDays(p corebank.Problems, field string, v *int, max int) int {
	if v == nil {
		return 0
	}
	if *v < 0 || *v > max {
		p.Add(field, "must be from 0 to "+strconv.Itoa(max))
		return 0
	}
	return *v
}

// validate checks in and returns the product it describes (no ID, owner
// or timestamps yet).
func (in *NewProduct) validate() (*Product, error) {
	p := corebank.Problems{}
	pr := &Product{Type: in.Type, ExternallyManaged: in.ExternallyManaged, DisplayName: in.DisplayName,
		Description: in.Description, Currency: in.Currency, SaleStartsAt: in.SaleStartsAt, SaleEndsAt: in.SaleEndsAt,
		Visibility: in.Visibility, EligibleEntityTypes: []string{}, Status: StatusActive}
	corebank.CheckText(p, "display_name", in.DisplayName, corebank.Line(1, 100))
	corebank.CheckText(p, "description", in.Description, corebank.FreeText(0, 10000))
	if _, ok := ledger.CurrencyInfo(in.Currency); !ok {
		p.Add("currency", "is not a supported currency")
	}
	switch {
	case in.SaleStartsAt != nil && *in.SaleStartsAt < 0:
		p.Add("sale_starts_at", "must be a time in Unix milliseconds")
	case in.SaleEndsAt != nil && *in.SaleEndsAt < 0:
		p.Add("sale_ends_at", "must be a time in Unix milliseconds")
	case in.SaleStartsAt != nil && in.SaleEndsAt != nil && *in.SaleEndsAt <= *in.SaleStartsAt:
		p.Add("sale_ends_at", "must be after sale_starts_at")
	}
	switch in.Visibility {
	case "":
		pr.Visibility = VisibilityPublic
	case VisibilityPublic, VisibilityHidden:
	default:
		p.Add("visibility", "must be public or hidden")
	}
	for i, t := range in.EligibleEntityTypes {
		switch {
		case t != EntityIndividual && t != EntityBusiness:
			p.Add("eligible_entity_types."+strconv.Itoa(i), "must be individual or business")
		case slices.Contains(in.EligibleEntityTypes[:i], t):
			p.Add("eligible_entity_types."+strconv.Itoa(i), "is listed twice")
		default:
			pr.EligibleEntityTypes = append(pr.EligibleEntityTypes, t)
		}
	}
	if len(in.Documents) > maxDocuments {
		p.Add("documents", "must hold at most "+strconv.Itoa(maxDocuments)+" documents")
	}
	for i, d := range in.Documents {
		f := "documents." + strconv.Itoa(i) + "."
		corebank.CheckText(p, f+"title", d.Title, corebank.Line(1, 200))
		corebank.CheckText(p, f+"url", d.URL, corebank.Line(1, 2000))
		if d.Version < 0 {
			p.Add(f+"version", "must be a positive integer")
		}
		if d.Version == 0 {
			d.Version = 1
		}
		pr.Documents = append(pr.Documents, Document{Title: d.Title, URL: d.URL, Version: d.Version})
	}
	fixedFields := map[string]bool{"tenor_days": in.TenorDays != nil, "annual_rate": in.AnnualRate != nil,
		"min_principal": in.MinPrincipal != nil, "max_principal": in.MaxPrincipal != nil,
		"principal_bands": in.PrincipalBands != nil, "early_withdrawal_enabled": in.EarlyWithdrawalEnabled != nil,
		"early_withdrawal_penalty_rate": in.EarlyWithdrawalPenaltyRate != nil,
		"early_withdrawal_min_days":     in.EarlyWithdrawalMinDays != nil, "lock_in_days": in.LockInDays != nil,
		"withholding_rate": in.WithholdingRate != nil}
	shareFields := map[string]bool{"offer_price": in.OfferPrice != nil, "inventory_shares": in.InventoryShares != nil,
		"brokerage_fee_rate": in.BrokerageFeeRate != nil, "cross_deal_fee_rate": in.CrossDealFeeRate != nil,
		"lock_days": in.LockDays != nil}
	reject := func(fields map[string]bool, typ string) {
		for f, set := range fields {
			if set {
				p.Add(f, "is not a field of "+typ+" products")
			}
		}
	}
	switch in.Type {
	case TypeFixedReturn:
		reject(shareFields, TypeFixedReturn)
		pr.FixedTerms = in.fixedTerms(p)
	case TypeShareOffering:
		reject(fixedFields, TypeShareOffering)
		pr.ShareTerms = in.shareTerms(p)
	default:
		p.Add("type", "must be FIXED_RETURN or SHARE_OFFERING")
	}
	return pr, p.Err()
}

func (in *NewProduct) fixedTerms(p corebank.Problems) *FixedTerms {
	t := &FixedTerms{DayCountBasis: DayCountBasis(in.Currency), PrincipalBands: []int64{}}
	switch {
	case in.TenorDays == nil:
		p.Add("tenor_days", "is required")
	case !slices.Contains(Tenors, *in.TenorDays):
		p.Add("tenor_days", "must be 7, 30, 60, 90 or 180")
	default:
		t.TenorDays = *in.TenorDays
	}
	switch r := in.AnnualRate; {
	case r == nil:
		p.Add("annual_rate", "is required")
	case !r.IsPositive() || r.GreaterThan(one):
		p.Add("annual_rate", "must be a decimal above 0 and at most 1")
	default:
		t.AnnualRate = *r
	}
	if len(in.PrincipalBands) > 0 {
		if in.MinPrincipal != nil || in.MaxPrincipal != nil {
			p.Add("principal_bands", "give either principal_bands or min_principal and max_principal, not both")
		}
		for i, b := range in.PrincipalBands {
			switch {
			case b <= 0 || b > maxAmount:
				p.Add("principal_bands."+strconv.Itoa(i), "must be a positive amount in smallest units")
			case slices.Contains(in.PrincipalBands[:i], b):
				p.Add("principal_bands."+strconv.Itoa(i), "is listed twice")
			default:
				t.PrincipalBands = append(t.PrincipalBands, b)
			}
		}
	} else {
		if in.MinPrincipal != nil {
			t.MinPrincipal = *in.MinPrincipal
		}
		if in.MaxPrincipal != nil {
			t.MaxPrincipal = *in.MaxPrincipal
		}
		switch {
		case t.MinPrincipal < 0 || t.MinPrincipal > maxAmount:
			p.Add("min_principal", "must be an amount from 0 in smallest units")
		case t.MaxPrincipal < 0 || t.MaxPrincipal > maxAmount:
			p.Add("max_principal", "must be an amount from 0 in smallest units (0: no maximum)")
		case t.MaxPrincipal > 0 && t.MaxPrincipal < t.MinPrincipal:
			p.Add("max_principal", "must be at least min_principal")
		}
	}
	if in.EarlyWithdrawalEnabled != nil {
		t.EarlyWithdrawalEnabled = *in.EarlyWithdrawalEnabled
	}
	t.EarlyWithdrawalPenaltyRate = checkRate(p, "early_withdrawal_penalty_rate", in.EarlyWithdrawalPenaltyRate, false)
	t.WithholdingRate = checkRate(p, "withholding_rate", in.WithholdingRate, false)
	t.EarlyWithdrawalMinDays = checkDays(p, "early_withdrawal_min_days", in.EarlyWithdrawalMinDays, 180)
	t.LockInDays = checkDays(p, "lock_in_days", in.LockInDays, 180)
	return t
}

func (in *NewProduct) shareTerms(p corebank.Problems) *ShareTerms {
	t := &ShareTerms{}
	switch v := in.OfferPrice; {
	case v == nil:
		p.Add("offer_price", "is required")
	case *v <= 0 || *v > maxAmount:
		p.Add("offer_price", "must be a positive amount in smallest units per share")
	default:
		t.OfferPrice = *v
	}
	switch v := in.InventoryShares; {
	case v == nil:
		p.Add("inventory_shares", "is required")
	case *v <= 0 || *v > maxAmount:
		p.Add("inventory_shares", "must be a positive whole number of shares")
	default:
		t.InventoryShares = *v
	}
	t.BrokerageFeeRate = checkRate(p, "brokerage_fee_rate", in.BrokerageFeeRate, false)
	t.CrossDealFeeRate = checkRate(p, "cross_deal_fee_rate", in.CrossDealFeeRate, false)
	t.LockDays = checkDays(p, "lock_days", in.LockDays, 3650)
	return t
}

// onSale reports whether now lies in p's sale window.
func (p *Product) onSale(now time.Time) bool {
	ms := now.UnixMilli()
	return (p.SaleStartsAt == nil || ms >= *p.SaleStartsAt) && (p.SaleEndsAt == nil || ms < *p.SaleEndsAt)
}

// remaining is a share offering's unreserved, unsold shares.
func (r *productRecord) remaining() int64 {
	if r.ShareTerms == nil {
		return 0
	}
	return max(0, r.InventoryShares-r.Reserved-r.Sold)
}

// view is r as answered at now; detail keeps the documents.
func (r *productRecord) view(now time.Time, detail bool) Product {
	p := r.Product
	p.Orderable = p.Status == StatusActive && p.onSale(now)
	if p.ShareTerms != nil {
		q := r.remaining()
		p.Inventory = &Inventory{Status: InventoryAvailable, Quantity: q}
		if q == 0 {
			p.Inventory.Status, p.Orderable = InventorySoldOut, false
		}
	}
	if !detail || len(p.Documents) == 0 {
		p.Documents = nil // omitted: a JSON [] would read back as nil
	}
	return p
}

// viewer is who reads products: an entity (eligibility and tree apply),
// or "" for System naming none (every product).
func (s *Service) viewer(tx storage.Tx, caller corebank.Caller, entityID string) (string, error) {
	if caller.IsSystem() && entityID == "" {
		return "", nil
	}
	return scope.Entity(tx, s.o.Tree, caller, entityID)
}

// profiles caches entity profiles for one transaction.
type profiles struct {
	s    *Service
	tx   storage.Tx
	seen map[string][2]string
}

func (s *Service) profiles(tx storage.Tx) *profiles {
	return &profiles{s: s, tx: tx, seen: map[string][2]string{}}
}

// of returns entity id's type and status ("business", "approved" without a
// Directory).
func (c *profiles) of(id string) (typ, status string, err error) {
	if v, ok := c.seen[id]; ok {
		return v[0], v[1], nil
	}
	if c.s.o.Directory == nil {
		return EntityBusiness, "approved", nil
	}
	typ, status, err = c.s.o.Directory.EntityProfileTx(c.tx, id)
	if err != nil {
		return "", "", err
	}
	c.seen[id] = [2]string{typ, status}
	return typ, status, nil
}

// unavailable says why entity may not see product r ("" when it may):
// inactive product, inactive owner, misconfigured offering, entity outside
// the owner's tree, or an entity type the product is not for.
func (c *profiles) unavailable(r *productRecord, entity string) (string, error) {
	if r.Status != StatusActive {
		return "the product is inactive", nil
	}
	if r.ShareTerms != nil && r.InventoryShares <= 0 {
		return "the product has no inventory", nil
	}
	_, ownerStatus, err := c.of(r.OwnerEntityID)
	if err != nil {
		return "", err
	}
	if ownerStatus != "approved" {
		return "the product's owner is inactive", nil
	}
	if entity == "" {
		return "", nil
	}
	ok, err := scope.Allowed(c.tx, c.s.o.Tree, corebank.As(r.OwnerEntityID), entity)
	if err != nil {
		return "", err
	}
	if !ok {
		return "the product is not offered to the entity", nil
	}
	if len(r.EligibleEntityTypes) > 0 {
		typ, _, err := c.of(entity)
		if err != nil {
			return "", err
		}
		if !slices.Contains(r.EligibleEntityTypes, typ) {
			return "the entity's type is not eligible for the product", nil
		}
	}
	return "", nil
}

// visibleProduct loads product id for entity, answering ErrProductNotFound
// for one it may not see.
func (s *Service) visibleProduct(tx storage.Tx, c *profiles, entity, id string) (*productRecord, error) {
	r, err := getProduct(tx, id)
	if err != nil {
		return nil, err
	}
	why, err := c.unavailable(r, entity)
	if err != nil {
		return nil, err
	}
	if why != "" {
		return nil, ErrProductNotFound
	}
	return r, nil
}

// CreateProduct creates a product owned by in.EntityID (the caller's
// when "") from in (POST /sandbox/products), active, and answers it with
// its documents (each given an ID).
//
// Errors: corebank.ErrForbidden; corebank.ErrEntityNotFound; a validation
// error naming each bad field.
func (s *Service) CreateProduct(ctx context.Context, caller corebank.Caller, in NewProduct) (*Product, error) {
	if err := caller.CheckWrite(); err != nil {
		return nil, err
	}
	pr, err := in.validate()
	if err != nil {
		return nil, err
	}
	now := s.o.Clock.Now()
	return storage.Update(ctx, s.db, func(tx storage.Tx) (*Product, error) {
		owner, err := scope.Entity(tx, s.o.Tree, caller, in.EntityID)
		if err != nil {
			return nil, err
		}
		r := &productRecord{Product: *pr}
		r.Documents = slices.Clone(pr.Documents)
		r.ID, r.OwnerEntityID, r.Created = s.o.IDs.New(now), owner, now.UnixMilli()
		for i := range r.Documents {
			r.Documents[i].ID = s.o.IDs.New(now)
		}
		if err := putProduct(tx, r); err != nil {
			return nil, err
		}
		if err := tx.Put(bucket, productListKey(r.ID), nil); err != nil {
			return nil, err
		}
		v := r.view(now, true)
		return &v, nil
	})
}

// GetProduct returns product id with its documents as entity entityID
// (the caller's when ""; System may name none and sees every product)
// sees it. A hidden product is answered here; only lists leave it out.
//
// Errors: corebank.ErrEntityNotFound; ErrProductNotFound (also for an
// inactive, ineligible, inactive-owner or misconfigured product).
func (s *Service) GetProduct(ctx context.Context, caller corebank.Caller, entityID, id string) (*Product, error) {
	now := s.o.Clock.Now()
	return storage.View(ctx, s.db, func(tx storage.Tx) (*Product, error) {
		entity, err := s.viewer(tx, caller, entityID)
		if err != nil {
			return nil, err
		}
		r, err := s.visibleProduct(tx, s.profiles(tx), entity, id)
		if err != nil {
			return nil, err
		}
		v := r.view(now, true)
		return &v, nil
	})
}

// ListProducts returns one page (default 25) of the products entity
// f.EntityID (the caller's when "") may see, oldest first, without
// documents: hidden, inactive, ineligible, inactive-owner and
// zero-inventory products are left out; sold-out offerings are listed
// with orderable false.
//
// Errors: corebank.ErrEntityNotFound; a validation error naming type,
// currency, limit or cursor.
func (s *Service) ListProducts(ctx context.Context, caller corebank.Caller, f ProductFilter, opts corebank.ListOptions) (*ProductPage, error) {
	limit, err := checkList(opts)
	if err != nil {
		return nil, err
	}
	if f.Type != "" && f.Type != TypeFixedReturn && f.Type != TypeShareOffering {
		return nil, corebank.InvalidField("type", "must be FIXED_RETURN or SHARE_OFFERING")
	}
	if _, ok := ledger.CurrencyInfo(f.Currency); f.Currency != "" && !ok {
		return nil, corebank.InvalidField("currency", "is not a supported currency")
	}
	now := s.o.Clock.Now()
	return storage.View(ctx, s.db, func(tx storage.Tx) (*ProductPage, error) {
		entity, err := s.viewer(tx, caller, f.EntityID)
		if err != nil {
			return nil, err
		}
		c := s.profiles(tx)
		q := storage.PageQuery{Bucket: bucket, Prefix: storage.Prefix("pl"), Opts: opts, Limit: limit, MaxScan: maxScan}
		page, err := storage.ReadPage(tx, q, func(id string, _ []byte) (Product, bool, error) {
			r, err := getProduct(tx, id)
			if err != nil {
				return Product{}, false, err
			}
			if r.Visibility == VisibilityHidden || f.Type != "" && r.Type != f.Type || f.Currency != "" && r.Currency != f.Currency {
				return Product{}, false, nil
			}
			why, err := c.unavailable(r, entity)
			if err != nil || why != "" {
				return Product{}, false, err
			}
			return r.view(now, false), true, nil
		})
		if err != nil {
			return nil, err
		}
		return &ProductPage{Page: page, EntityID: entity}, nil
	})
}

// ownProduct runs fn on product id for its owner's tree (sandbox moves)
// in one transaction, stores the product and answers it.
func (s *Service) ownProduct(ctx context.Context, caller corebank.Caller, entityID, id string,
	fn func(tx storage.Tx, now time.Time, r *productRecord) error) (*Product, error) {
	if err := caller.CheckWrite(); err != nil {
		return nil, err
	}
	now := s.o.Clock.Now()
	return storage.Update(ctx, s.db, func(tx storage.Tx) (*Product, error) {
		r, err := scope.Get(tx, s.o.Tree, caller, entityID, id, getProduct, ErrProductNotFound)
		if err != nil {
			return nil, err
		}
		if err := fn(tx, now, r); err != nil {
			return nil, err
		}
		if err := putProduct(tx, r); err != nil {
			return nil, err
		}
		v := r.view(now, true)
		return &v, nil
	})
}

// DeactivateProduct makes product id inactive (sandbox): it leaves lists,
// answers 404 and refuses new orders and confirmations (which are
// REJECTED); holdings go on. Deactivating an inactive product changes
// nothing.
//
// Errors: corebank.ErrForbidden; corebank.ErrEntityNotFound;
// ErrProductNotFound (the caller must reach the product's owner).
func (s *Service) DeactivateProduct(ctx context.Context, caller corebank.Caller, entityID, id string) (*Product, error) {
	return s.ownProduct(ctx, caller, entityID, id, func(_ storage.Tx, _ time.Time, r *productRecord) error {
		r.Status = StatusInactive
		return nil
	})
}

// SetProductPrice sets share offering id's market price per share (sandbox):
// every holding's market_value becomes allocated_shares × price.
//
// Errors: as DeactivateProduct; a validation error on price;
// ErrInvalidForState for a fixed-return product.
func (s *Service) SetProductPrice(ctx context.Context, caller corebank.Caller, entityID, id string, price int64) (*Product, error) {
	if price <= 0 || price > maxAmount {
		return nil, corebank.InvalidField("price", "must be a positive amount in smallest units per share")
	}
	return s.ownProduct(ctx, caller, entityID, id, func(_ storage.Tx, _ time.Time, r *productRecord) error {
		if r.ShareTerms == nil {
			return ErrInvalidForState.With("only a share offering has a market price")
		}
		r.MarketPrice = &price
		return nil
	})
}
