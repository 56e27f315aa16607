package capital

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"time"

	"github.com/shopspring/decimal"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/internal/scope"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/storage"
)

// Due-queue kinds of orders.
const (
	dueExpire  = "capital.expire"
	dueRecover = "capital.recover"
)

// shareQuote is what n shares of t cost: their value and each fee
// (floor(value × rate), as a penalty or withholding is taken).
type shareQuote struct {
	shares, value, brokerage, crossDeal int64
}

func (q shareQuote) total() int64 { return q.value + q.brokerage + q.crossDeal }

func quoteShares(t *ShareTerms, n int64) shareQuote {
	v := n * t.OfferPrice
	return shareQuote{shares: n, value: v, brokerage: floorShare(v, t.BrokerageFeeRate), crossDeal: floorShare(v, t.CrossDealFeeRate)}
}

// sharesFor is the most whole shares of t, at most limit, whose value and
// fees together do not exceed amount.
func sharesFor(t *ShareTerms, amount, limit int64) shareQuote {
	unit := decimal.NewFromInt(t.OfferPrice).Mul(one.Add(t.BrokerageFeeRate).Add(t.CrossDealFeeRate))
	// Fees are rounded down, so n shares cost at most 2 less than n × unit.
	n := min(decimal.NewFromInt(amount).Div(unit).Floor().IntPart()+2, limit, amount/t.OfferPrice)
	for n > 0 && quoteShares(t, n).total() > amount {
		n--
	}
	return quoteShares(t, max(n, 0))
}

// validate checks what it can of in without the store.
func (in *NewOrder) validate() error {
	p := corebank.Problems{}
	if in.ProductID == "" {
		p.Add("product_id", "is required")
	}
	if in.AccountID == "" {
		p.Add("account_id", "is required")
	}
	if in.Principal != nil && (*in.Principal <= 0 || *in.Principal > maxAmount) {
		p.Add("principal", "must be a positive amount in smallest units")
	}
	if in.Amount != nil && (*in.Amount <= 0 || *in.Amount > maxAmount) {
		p.Add("amount", "must be a positive amount in smallest units")
	}
	if len(in.Affirmations) > maxDocuments {
		p.Add("affirmations", "must hold at most "+strconv.Itoa(maxDocuments)+" entries")
	}
	return p.Err()
}

// checkTerms checks in against product r's type and terms and returns the
// order's amounts.
func (in *NewOrder) checkTerms(r *productRecord, remaining int64) (principal int64, q shareQuote, err error) {
	p := corebank.Problems{}
	switch {
	case r.FixedTerms != nil:
		if in.Amount != nil {
			p.Add("amount", "is for SHARE_OFFERING products; give principal")
		}
		if in.WaiveEarlyWithdrawal == nil {
			p.Add("waive_early_withdrawal", "is required for FIXED_RETURN products")
		}
		t := r.FixedTerms
		switch {
		case in.Principal == nil:
			p.Add("principal", "is required for FIXED_RETURN products")
		case len(t.PrincipalBands) > 0 && !slices.Contains(t.PrincipalBands, *in.Principal):
			p.Add("principal", "must be one of the product's principal_bands")
		case len(t.PrincipalBands) == 0 && *in.Principal < t.MinPrincipal:
			p.Add("principal", "must be at least "+strconv.FormatInt(t.MinPrincipal, 10))
		case len(t.PrincipalBands) == 0 && t.MaxPrincipal > 0 && *in.Principal > t.MaxPrincipal:
			p.Add("principal", "must be at most "+strconv.FormatInt(t.MaxPrincipal, 10))
		default:
			principal = *in.Principal
		}
	default:
		if in.Principal != nil {
			p.Add("principal", "is for FIXED_RETURN products; give amount")
		}
		if in.WaiveEarlyWithdrawal != nil {
			p.Add("waive_early_withdrawal", "is for FIXED_RETURN products")
		}
		if in.Amount == nil {
			p.Add("amount", "is required for SHARE_OFFERING products")
			break
		}
		if remaining == 0 {
			return 0, q, ErrInvalidForState.With("the offering is sold out")
		}
		if q = sharesFor(r.ShareTerms, *in.Amount, remaining); q.shares == 0 {
			p.Add("amount", "does not cover one share with its fees")
		}
	}
	return principal, q, p.Err()
}

// agreements checks in's affirmations against product r's documents: one
// per document, at its current version. It returns the agreement
// snapshot.
func (in *NewOrder) agreements(r *productRecord, now time.Time) ([]Agreement, error) {
	p := corebank.Problems{}
	out := []Agreement{}
	seen := map[string]bool{}
	for i, a := range in.Affirmations {
		f := "affirmations." + strconv.Itoa(i) + "."
		j := slices.IndexFunc(r.Documents, func(d Document) bool { return d.ID == a.DocumentID })
		switch {
		case j < 0:
			p.Add(f+"document_id", "is not a document of the product")
		case seen[a.DocumentID]:
			p.Add(f+"document_id", "is affirmed twice")
		case a.Version < r.Documents[j].Version:
			p.Add(f+"version", "is stale: the document's current version is "+strconv.Itoa(r.Documents[j].Version))
		case a.Version != r.Documents[j].Version:
			p.Add(f+"version", "is not a version of the document")
		default:
			d := r.Documents[j]
			out = append(out, Agreement{DocumentID: d.ID, Title: d.Title, URL: d.URL, Version: d.Version,
				ActionType: "affirmed", ActionedAt: now.UnixMilli()})
		}
		seen[a.DocumentID] = true
	}
	for _, d := range r.Documents {
		if !seen[d.ID] {
			p.Add("affirmations", "must affirm every document of the product (missing "+d.ID+")")
			break
		}
	}
	return out, p.Err()
}

// fundingAccount loads account id for an order of entity in currency:
// ledger.ErrAccountNotFound when missing or outside the entity, a
// validation error on account_id for another currency.
func (s *Service) fundingAccount(tx storage.Tx, entity, id, currency string) (*ledger.Account, error) {
	notFound := ledger.ErrAccountNotFound.With("account " + id + " not found")
	a, err := s.led.GetAccountTx(tx, id)
	if errors.Is(err, ledger.ErrAccountNotFound) || err == nil && a.EntityID != entity {
		return nil, notFound
	}
	if err != nil {
		return nil, err
	}
	if a.Deleted != 0 {
		return nil, ledger.ErrAccountDeleted
	}
	if a.Currency != currency {
		return nil, corebank.InvalidField("account_id", "must be an account in the product's currency "+currency)
	}
	return a, nil
}

// CreateOrder reserves an order (POST /product-orders) for
// Options.ReservationTTL; no money moves. A share offering's order is
// allocated down to the remaining inventory, which it holds until it is
// confirmed, rejected or expires.
//
// Errors: corebank.ErrForbidden; corebank.ErrEntityNotFound;
// ErrProductNotFound; ledger.ErrAccountNotFound; ledger.ErrAccountDeleted;
// a validation error naming each bad field (product_id, account_id,
// principal, amount, waive_early_withdrawal, affirmations.N.document_id,
// affirmations.N.version, affirmations); ErrInvalidForState for a product
// outside its sale window or sold out.
func (s *Service) CreateOrder(ctx context.Context, caller corebank.Caller, in NewOrder) (*Order, error) {
	if err := caller.CheckWrite(); err != nil {
		return nil, err
	}
	if err := in.validate(); err != nil {
		return nil, err
	}
	now := s.o.Clock.Now()
	return storage.Update(ctx, s.db, func(tx storage.Tx) (*Order, error) {
		entity, err := scope.Entity(tx, s.o.Tree, caller, in.EntityID)
		if err != nil {
			return nil, err
		}
		pr, err := s.visibleProduct(tx, s.profiles(tx), entity, in.ProductID)
		if err != nil {
			return nil, err
		}
		acct, err := s.fundingAccount(tx, entity, in.AccountID, pr.Currency)
		if err != nil {
			return nil, err
		}
		if !pr.onSale(now) {
			return nil, ErrInvalidForState.With("the product is not on sale now")
		}
		principal, q, err := in.checkTerms(pr, pr.remaining())
		if err != nil {
			return nil, err
		}
		agreements, err := in.agreements(pr, now)
		if err != nil {
			return nil, err
		}
		id := s.o.IDs.New(now)
		o := &orderRecord{Order: Order{ID: id, EntityID: entity, Reference: "CO-" + id[16:], ProductID: pr.ID,
			AccountID: acct.ID, Type: pr.Type, Currency: pr.Currency, Status: OrderReserved,
			ReservationExpiresAt: now.Add(s.o.ReservationTTL).UnixMilli(), Agreements: agreements, Created: now.UnixMilli()}}
		if pr.FixedTerms != nil {
			o.Amount, o.TotalDebit = principal, principal
			o.Principal, o.WaiveEarlyWithdrawal = &principal, in.WaiveEarlyWithdrawal
		} else {
			o.Amount, o.TotalDebit = q.total(), q.total()
			o.RequestedAmount, o.AllocatedShares, o.OfferPrice = in.Amount, &q.shares, &pr.OfferPrice
			o.BrokerageFee, o.CrossDealFee = &q.brokerage, &q.crossDeal
			pr.Reserved += q.shares
			if err := putProduct(tx, pr); err != nil {
				return nil, err
			}
		}
		if err := storage.Schedule(tx, dueExpire, o.ReservationExpiresAt, id); err != nil {
			return nil, err
		}
		if err := tx.Put(bucket, orderListKey(entity, id), nil); err != nil {
			return nil, err
		}
		return s.saveOrder(tx, now, o)
	})
}

// saveOrder stores o, appends product_orders.updated and answers o in
// detail.
func (s *Service) saveOrder(tx storage.Tx, now time.Time, o *orderRecord) (*Order, error) {
	if err := putOrder(tx, o); err != nil {
		return nil, err
	}
	v, err := s.orderView(tx, now, o, true)
	if err != nil {
		return nil, err
	}
	if _, err := s.led.AppendEventTx(tx, now, EventOrderUpdated, o.EntityID, v); err != nil {
		return nil, err
	}
	return v, nil
}

// orderView is o as answered at now, with its capital account; detail
// keeps the agreements.
func (s *Service) orderView(tx storage.Tx, now time.Time, o *orderRecord, detail bool) (*Order, error) {
	v := o.Order
	if !detail || len(v.Agreements) == 0 {
		v.Agreements = nil // omitted: a JSON [] would read back as nil
	}
	if o.CapitalAccountID != "" {
		a, err := getAccount(tx, o.CapitalAccountID)
		if err != nil {
			return nil, err
		}
		av, err := s.accountView(tx, now, a)
		if err != nil {
			return nil, err
		}
		v.CapitalAccount = av
	}
	return &v, nil
}

// GetOrder returns order id with its agreements and capital account.
//
// Errors: corebank.ErrEntityNotFound; ErrOrderNotFound.
func (s *Service) GetOrder(ctx context.Context, caller corebank.Caller, entityID, id string) (*Order, error) {
	now := s.o.Clock.Now()
	return storage.View(ctx, s.db, func(tx storage.Tx) (*Order, error) {
		o, err := scope.Get(tx, s.o.Tree, caller, entityID, id, getOrder, ErrOrderNotFound)
		if err != nil {
			return nil, err
		}
		return s.orderView(tx, now, o, true)
	})
}

var orderStatuses = []string{OrderReserved, OrderConfirming, OrderApproved, OrderExpired, OrderRejected, OrderRecoveryRequired}

// ListOrders returns one page (default 25) of entity f.EntityID's orders
// (the caller's when ""), oldest first, without agreements.
//
// Errors: corebank.ErrEntityNotFound; a validation error naming status,
// type, limit or cursor.
func (s *Service) ListOrders(ctx context.Context, caller corebank.Caller, f OrderFilter, opts corebank.ListOptions) (*OrderPage, error) {
	limit, err := checkList(opts)
	if err != nil {
		return nil, err
	}
	if f.Status != "" && !slices.Contains(orderStatuses, f.Status) {
		return nil, corebank.InvalidField("status", "must be one of RESERVED, CONFIRMING, APPROVED, EXPIRED, REJECTED, RECOVERY_REQUIRED")
	}
	if f.Type != "" && f.Type != TypeFixedReturn && f.Type != TypeShareOffering {
		return nil, corebank.InvalidField("type", "must be FIXED_RETURN or SHARE_OFFERING")
	}
	now := s.o.Clock.Now()
	return storage.View(ctx, s.db, func(tx storage.Tx) (*OrderPage, error) {
		entity, err := scope.Entity(tx, s.o.Tree, caller, f.EntityID)
		if err != nil {
			return nil, err
		}
		q := storage.PageQuery{Bucket: bucket, Prefix: storage.Prefix("ol", entity), Opts: opts, Limit: limit, MaxScan: maxScan}
		page, err := storage.ReadPage(tx, q, func(id string, _ []byte) (Order, bool, error) {
			o, err := getOrder(tx, id)
			if err != nil {
				return Order{}, false, err
			}
			if f.Status != "" && o.Status != f.Status || f.Type != "" && o.Type != f.Type {
				return Order{}, false, nil
			}
			v, err := s.orderView(tx, now, o, false)
			if err != nil {
				return Order{}, false, err
			}
			return *v, true, nil
		})
		if err != nil {
			return nil, err
		}
		return &OrderPage{Page: page, EntityID: entity}, nil
	})
}

// release gives back the inventory order o holds.
func release(tx storage.Tx, o *orderRecord) error {
	if o.AllocatedShares == nil {
		return nil
	}
	pr, err := getProduct(tx, o.ProductID)
	if err != nil {
		return err
	}
	pr.Reserved = max(0, pr.Reserved-*o.AllocatedShares)
	return putProduct(tx, pr)
}

// expire is the due work of an order's reservation: a RESERVED order
// becomes EXPIRED and releases its inventory. Anything else has moved on.
func (s *Service) expire(tx storage.Tx, now time.Time, it storage.DueItem) error {
	o, err := getOrder(tx, it.ID)
	if err != nil || o.Status != OrderReserved {
		return ignoreMissing(err)
	}
	o.Status, o.ExpiredAt = OrderExpired, ptr(now.UnixMilli())
	if err := release(tx, o); err != nil {
		return err
	}
	_, err = s.saveOrder(tx, now, o)
	return err
}

// ignoreMissing drops not-found errors: due work for a record that is gone
// has nothing to do.
func ignoreMissing(err error) error {
	if errors.Is(err, ErrOrderNotFound) || errors.Is(err, ErrProductNotFound) {
		return nil
	}
	return err
}
