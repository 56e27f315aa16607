package capital

import (
	"context"
	"time"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/storage"
)

// Due-queue kinds of share offerings.
const (
	dueRefund = "capital.refund"
	dueLock   = "capital.lock"
)

// openShares fills a's share fields from order o, starting at start.
func (s *Service) openShares(a *accountRecord, t *ShareTerms, o *orderRecord, start time.Time) {
	n := *o.AllocatedShares
	q := shareQuote{shares: n, value: n * *o.OfferPrice, brokerage: *o.BrokerageFee, crossDeal: *o.CrossDealFee}
	a.ShareAccount = &ShareAccount{SharesPurchased: n, OfferPrice: *o.OfferPrice,
		LockExpiresAt: start.Add(days(t.LockDays)).UnixMilli()}
	a.setAllocation(q)
	a.Status = AccountStatus{State: StateLocked, RefundStatus: &RefundStatus{}}
}

// setAllocation sets a's allocated figures from q; what was paid beyond
// them is the unallocated value awaiting refund.
func (a *accountRecord) setAllocation(q shareQuote) {
	sh := a.ShareAccount
	if sh.TotalDebit == 0 {
		sh.TotalDebit = q.total()
	}
	sh.AllocatedShares, sh.AllocatedValue, sh.BrokerageFee, sh.CrossDealFee = q.shares, q.value, q.brokerage, q.crossDeal
	sh.CostBasis = q.total()
	sh.AverageCost = 0
	if q.shares > 0 {
		sh.AverageCost = sh.CostBasis / q.shares
	}
	sh.UnallocatedValue = sh.TotalDebit - sh.CostBasis
}

// holdings calls fn on every holding of product id, in confirmation order.
func holdings(tx storage.Tx, id string, fn func(a *accountRecord) error) error {
	return accountsUnder(tx, storage.Prefix("ph", id), fn)
}

// AllotProduct makes the final allotment of share offering id (sandbox):
// allottedShares shares split over its LOCKED holdings in order of
// confirmation with Allot (pro rata rounded down, the remainder by
// largest remainder, ties to the earlier). A holding allotted fewer
// shares than it bought becomes ALLOTMENT_ADJUSTED: its fees are charged
// on the allotted value, and what it paid beyond the allotted value and
// fees (unallocated_value) is refunded by the refund job; the others
// become ALLOTMENT_CONFIRMED. shares_purchased never changes.
//
// Errors: as DeactivateProduct; a validation error on allotted_shares
// (negative or above the inventory); ErrInvalidForState for a
// fixed-return product or one already allotted or unlocked.
func (s *Service) AllotProduct(ctx context.Context, caller corebank.Caller, entityID, id string, allottedShares int64) (*Product, error) {
	if allottedShares < 0 || allottedShares > maxAmount {
		return nil, corebank.InvalidField("allotted_shares", "must be a whole number of shares from 0")
	}
	return s.ownProduct(ctx, caller, entityID, id, func(tx storage.Tx, now time.Time, r *productRecord) error {
		switch {
		case r.ShareTerms == nil:
			return ErrInvalidForState.With("only a share offering is allotted")
		case r.Allotted || r.Unlocked:
			return ErrInvalidForState.With("the offering is already allotted")
		case allottedShares > r.InventoryShares:
			return corebank.InvalidField("allotted_shares", "must be at most the offering's inventory_shares")
		}
		var book []*accountRecord
		err := holdings(tx, id, func(a *accountRecord) error {
			if a.Status.State == StateLocked {
				book = append(book, a)
			}
			return nil
		})
		if err != nil {
			return err
		}
		asked := make([]int64, len(book))
		for i, a := range book {
			asked[i] = a.SharesPurchased
		}
		for i, n := range Allot(allottedShares, asked) {
			a := book[i]
			a.Status.State = StateAllotmentConfirmed
			if n < a.SharesPurchased {
				a.setAllocation(quoteShares(r.ShareTerms, n))
				a.RefundValue = (a.SharesPurchased - n) * a.OfferPrice
				a.RefundFees = a.UnallocatedValue - a.RefundValue
				a.Status.State = StateAllotmentAdjusted
				a.Status.RefundStatus = &RefundStatus{RefundStatus: ptr(PayPending)}
				if err := storage.Schedule(tx, dueRefund, now.UnixMilli(), a.ID); err != nil {
					return err
				}
			}
			if err := s.saveAccount(tx, now, a); err != nil {
				return err
			}
		}
		r.Allotted = true
		return nil
	})
}

// refund pays a's pending refund exactly once: the unallocated value
// back from the offering's pool and the fees it no longer owes back from
// the fee account, to the funding account, with a REFUND transaction.
// ALLOTMENT_ADJUSTED becomes ALLOTMENT_CONFIRMED. A refund the ledger
// refuses (the funding account deleted) is marked failed.
func (s *Service) refund(tx storage.Tx, now time.Time, a *accountRecord) error {
	if a.ShareAccount == nil || a.Status.RefundStatus == nil || a.Status.RefundStatus.RefundStatus == nil ||
		*a.Status.RefundStatus.RefundStatus != PayPending {
		return nil
	}
	lines := []ledger.Line{{AccountID: a.FundingAccountID, Side: ledger.Credit, Amount: a.UnallocatedValue}}
	if a.RefundValue > 0 {
		lines = append(lines, ledger.Line{AccountID: s.led.SystemAccount(a.Currency, PurposeShareOffering), Side: ledger.Debit, Amount: a.RefundValue})
	}
	if a.RefundFees > 0 {
		lines = append(lines, ledger.Line{AccountID: s.led.SystemAccount(a.Currency, ledger.PurposeFees), Side: ledger.Debit, Amount: a.RefundFees})
	}
	status := PayCompleted
	if _, err := s.led.PostTx(tx, now, ledger.Entry{Key: "capital.refund:" + a.ID, Lines: lines, Narration: "capital refund"}); err != nil {
		if corebank.KindOf(err) == corebank.KindInternal {
			return err
		}
		status = PayFailed
	} else {
		if _, err := s.addTransaction(tx, now, a, EventRefund, a.UnallocatedValue, ""); err != nil {
			return err
		}
		a.Status.State = StateAllotmentConfirmed
	}
	a.Status.RefundStatus = &RefundStatus{RefundStatus: ptr(status)}
	return nil
}

// refundDue is the due work of a pending refund.
func (s *Service) refundDue(tx storage.Tx, now time.Time, it storage.DueItem) error {
	a, err := getAccount(tx, it.ID)
	if err != nil {
		return err
	}
	if err := s.refund(tx, now, a); err != nil {
		return err
	}
	return s.saveAccount(tx, now, a)
}

// unlock ends a's lock: a pending refund is paid first, a holding never
// allotted keeps every share it bought, and the holding becomes
// TRANSFERABLE. A TRANSFERABLE holding is left as it is.
func (s *Service) unlock(tx storage.Tx, now time.Time, a *accountRecord) error {
	if a.ShareAccount == nil || a.Status.State == StateTransferable {
		return nil
	}
	if err := s.refund(tx, now, a); err != nil {
		return err
	}
	a.Status.State = StateTransferable
	return s.saveAccount(tx, now, a)
}

// lockDue is the due work of a holding's lock expiry.
func (s *Service) lockDue(tx storage.Tx, now time.Time, it storage.DueItem) error {
	a, err := getAccount(tx, it.ID)
	if err != nil {
		return err
	}
	return s.unlock(tx, now, a)
}

// UnlockProduct ends share offering id's lock now (sandbox): every holding
// becomes TRANSFERABLE, paying any pending refund first.
//
// Errors: as DeactivateProduct; ErrInvalidForState for a fixed-return
// product.
func (s *Service) UnlockProduct(ctx context.Context, caller corebank.Caller, entityID, id string) (*Product, error) {
	return s.ownProduct(ctx, caller, entityID, id, func(tx storage.Tx, now time.Time, r *productRecord) error {
		if r.ShareTerms == nil {
			return ErrInvalidForState.With("only a share offering has a lock")
		}
		r.Unlocked = true
		return holdings(tx, id, func(a *accountRecord) error { return s.unlock(tx, now, a) })
	})
}
