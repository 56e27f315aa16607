package capital

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/internal/scope"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/storage"
)

// ListTransactions returns one page (default 25) of the capital
// transactions of order f.OrderID's capital account, oldest first (an
// empty page before the order is approved).
//
// Errors: corebank.ErrEntityNotFound; ErrOrderNotFound; a validation
// error naming limit or cursor.
func (s *Service) ListTransactions(ctx context.Context, caller corebank.Caller, f TransactionFilter, opts corebank.ListOptions) (*TransactionPage, error) {
	limit, err := checkList(opts)
	if err != nil {
		return nil, err
	}
	return storage.View(ctx, s.db, func(tx storage.Tx) (*TransactionPage, error) {
		o, err := scope.Get(tx, s.o.Tree, caller, f.EntityID, f.OrderID, getOrder, ErrOrderNotFound)
		if err != nil {
			return nil, err
		}
		if o.CapitalAccountID == "" {
			return &TransactionPage{Page: &corebank.Page[Transaction]{Items: []Transaction{}, Total: -1}, EntityID: o.EntityID}, nil
		}
		q := storage.PageQuery{Bucket: bucket, Prefix: storage.Prefix("t", o.CapitalAccountID), Opts: opts, Limit: limit}
		page, err := storage.ReadPage(tx, q, func(_ string, v []byte) (Transaction, bool, error) {
			var t Transaction
			return t, true, json.Unmarshal(v, &t)
		})
		if err != nil {
			return nil, err
		}
		return &TransactionPage{Page: page, EntityID: o.EntityID}, nil
	})
}

// portfolioStates are the states of the holdings a portfolio shows.
var portfolioStates = []string{StateActive, StateMatured, StateEarlyLiquidating, StateClosing,
	StateLocked, StateAllotmentAdjusted, StateAllotmentConfirmed, StateTransferable}

// GetPortfolio returns entity f.EntityID's holdings (the caller's when "")
// in the states SPEC.md lists (fixed return ACTIVE, MATURED,
// EARLY_LIQUIDATING, CLOSING; share offering LOCKED, ALLOTMENT_ADJUSTED,
// ALLOTMENT_CONFIRMED, TRANSFERABLE), oldest first, and totals per
// currency, accrued at request time: principal sums the deposits' principal
// and the share holdings' allocated value, accrued_interest the deposits'
// accrued interest, market_value the share holdings that have a price.
//
// Errors: corebank.ErrEntityNotFound; a validation error naming currency.
func (s *Service) GetPortfolio(ctx context.Context, caller corebank.Caller, f PortfolioFilter) (*Portfolio, error) {
	if _, ok := ledger.CurrencyInfo(f.Currency); f.Currency != "" && !ok {
		return nil, corebank.InvalidField("currency", "is not a supported currency")
	}
	now := s.o.Clock.Now()
	return storage.View(ctx, s.db, func(tx storage.Tx) (*Portfolio, error) {
		entity, err := scope.Entity(tx, s.o.Tree, caller, f.EntityID)
		if err != nil {
			return nil, err
		}
		out := &Portfolio{Totals: []PortfolioTotal{}, Holdings: []Account{}}
		totals := map[string]*PortfolioTotal{}
		err = accountsUnder(tx, storage.Prefix("ae", entity), func(a *accountRecord) error {
			if f.Currency != "" && a.Currency != f.Currency || !slices.Contains(portfolioStates, a.Status.State) {
				return nil
			}
			v, err := s.accountView(tx, now, a)
			if err != nil {
				return err
			}
			out.Holdings = append(out.Holdings, *v)
			t := totals[a.Currency]
			if t == nil {
				t = &PortfolioTotal{Currency: a.Currency}
				totals[a.Currency] = t
			}
			if v.FixedAccount != nil {
				t.Principal += v.Principal
				t.AccruedInterest += v.AccruedInterest
			}
			if v.ShareAccount != nil {
				t.Principal += v.AllocatedValue
				if v.MarketValue != nil {
					t.MarketValue += *v.MarketValue
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		for _, t := range totals {
			out.Totals = append(out.Totals, *t)
		}
		slices.SortFunc(out.Totals, func(a, b PortfolioTotal) int { return strings.Compare(a.Currency, b.Currency) })
		return out, nil
	})
}
