package capital

import (
	"context"
	"errors"
	"time"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/internal/scope"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/storage"
)

// ConfirmOrder confirms order id in two steps, each one transaction. The
// debit step checks the order (see doc.go "Orders" for what makes it
// REJECTED), debits the funding account into the product's pool with one
// journal entry keyed by the order, moves the order to CONFIRMING and
// schedules its recovery. The completion step creates the capital account
// and its PURCHASE transaction and moves the order to APPROVED. A failure
// between them leaves the order RECOVERY_REQUIRED, and the recovery job
// completes it from what the debit step persisted; an idempotent retry
// (same Idempotency-Key) replays the debit step and runs the completion. An
// APPROVED order is answered as it is.
//
// Errors: corebank.ErrForbidden; corebank.ErrEntityNotFound;
// ErrOrderNotFound; a validation error on secondary_id; ErrInvalidForState
// for an EXPIRED or REJECTED order or a RESERVED one past its expiry;
// ErrAlreadyProcessing while CONFIRMING elsewhere or RECOVERY_REQUIRED
// (and when the completion step fails); ledger.ErrInsufficientFunds and
// the ledger's other refusals (the order stays RESERVED).
func (s *Service) ConfirmOrder(ctx context.Context, caller corebank.Caller, entityID, id string, in Confirmation) (*Order, error) {
	if err := caller.CheckWrite(); err != nil {
		return nil, err
	}
	if entityID == "" {
		entityID = in.EntityID
	}
	p := corebank.Problems{}
	corebank.CheckText(p, "secondary_id", in.SecondaryID, corebank.Line(0, 255))
	if err := p.Err(); err != nil {
		return nil, err
	}
	now := s.o.Clock.Now()
	o, err := storage.Update(ctx, s.db, func(tx storage.Tx) (*Order, error) {
		return s.debit(tx, now, caller, entityID, id, in.SecondaryID)
	})
	if err != nil || o.Status != OrderConfirming {
		return o, err
	}
	if s.o.AfterDebit != nil {
		err = s.o.AfterDebit(id)
	}
	if err == nil {
		now = s.o.Clock.Now()
		o, err = storage.Update(ctx, s.db, func(tx storage.Tx) (*Order, error) {
			r, err := getOrder(tx, id)
			if err != nil {
				return nil, err
			}
			return s.complete(tx, now, r)
		})
		if err == nil {
			return o, nil
		}
	}
	// The money has moved and the account is not made: leave the order
	// to the recovery job, already scheduled by the debit step.
	now = s.o.Clock.Now()
	_, merr := storage.Update(ctx, s.db, func(tx storage.Tx) (*Order, error) {
		r, err := getOrder(tx, id)
		if err != nil || r.Status != OrderConfirming {
			return nil, err
		}
		r.Status = OrderRecoveryRequired
		r.StatusReason = ptr("the capital account could not be created after the debit; recovery will complete it")
		return s.saveOrder(tx, now, r)
	})
	return nil, errors.Join(ErrAlreadyProcessing.With("the order needs recovery after its debit"), err, merr)
}

// rejection says why order o may no longer be confirmed ("" when it may):
// the product inactive or misconfigured, its owner inactive, the entity
// no longer eligible (type or tree), or the sale window closed.
func (s *Service) rejection(tx storage.Tx, now time.Time, o *orderRecord) (string, *productRecord, error) {
	pr, err := getProduct(tx, o.ProductID)
	if err != nil {
		return "", nil, err
	}
	why, err := s.profiles(tx).unavailable(pr, o.EntityID)
	if err != nil || why != "" {
		return why, pr, err
	}
	if !pr.onSale(now) {
		return "the product's sale window is closed", pr, nil
	}
	return "", pr, nil
}

// debit is ConfirmOrder's first step.
func (s *Service) debit(tx storage.Tx, now time.Time, caller corebank.Caller, entityID, id, secondaryID string) (*Order, error) {
	o, err := scope.Get(tx, s.o.Tree, caller, entityID, id, getOrder, ErrOrderNotFound)
	if err != nil {
		return nil, err
	}
	switch o.Status {
	case OrderApproved:
		return s.orderView(tx, now, o, true)
	case OrderConfirming, OrderRecoveryRequired:
		return nil, ErrAlreadyProcessing
	case OrderExpired, OrderRejected:
		return nil, ErrInvalidForState.With("the order is " + o.Status)
	}
	if now.UnixMilli() >= o.ReservationExpiresAt {
		return nil, ErrInvalidForState.With("the order's reservation has expired")
	}
	why, pr, err := s.rejection(tx, now, o)
	if err != nil {
		return nil, err
	}
	if why != "" {
		o.Status, o.StatusReason, o.RejectedAt = OrderRejected, &why, ptr(now.UnixMilli())
		if err := release(tx, o); err != nil {
			return nil, err
		}
		if err := storage.Unschedule(tx, dueExpire, o.ReservationExpiresAt, o.ID); err != nil {
			return nil, err
		}
		return s.saveOrder(tx, now, o)
	}
	lines := []ledger.Line{{AccountID: o.AccountID, Side: ledger.Debit, Amount: o.TotalDebit}}
	if pr.FixedTerms != nil {
		lines = append(lines, ledger.Line{AccountID: s.led.SystemAccount(o.Currency, PurposeFixedReturn), Side: ledger.Credit, Amount: o.TotalDebit})
	} else {
		q := shareQuote{value: *o.AllocatedShares * *o.OfferPrice, brokerage: *o.BrokerageFee, crossDeal: *o.CrossDealFee}
		lines = append(lines, ledger.Line{AccountID: s.led.SystemAccount(o.Currency, PurposeShareOffering), Side: ledger.Credit, Amount: q.value})
		if f := q.brokerage + q.crossDeal; f > 0 {
			lines = append(lines, ledger.Line{AccountID: s.led.SystemAccount(o.Currency, ledger.PurposeFees), Side: ledger.Credit, Amount: f})
		}
	}
	if _, err := s.led.PostTx(tx, now, ledger.Entry{Key: "capital.order:" + o.ID, Lines: lines,
		Narration: "capital order " + o.Reference, Reference: o.Reference}); err != nil {
		return nil, err
	}
	o.Status, o.SecondaryID, o.DebitedAt = OrderConfirming, secondaryID, now.UnixMilli()
	if err := storage.Unschedule(tx, dueExpire, o.ReservationExpiresAt, o.ID); err != nil {
		return nil, err
	}
	if err := storage.Schedule(tx, dueRecover, now.Add(s.o.RecoveryDelay).UnixMilli(), o.ID); err != nil {
		return nil, err
	}
	return s.saveOrder(tx, now, o)
}

// complete is ConfirmOrder's second step, and the recovery job's work: for
// an order CONFIRMING or RECOVERY_REQUIRED it creates the capital account
// (starting when the funding account was debited) and its PURCHASE
// transaction, moves the product's reserved shares to sold and the order to
// APPROVED. Any other order is answered as it is.
func (s *Service) complete(tx storage.Tx, now time.Time, o *orderRecord) (*Order, error) {
	if o.Status != OrderConfirming && o.Status != OrderRecoveryRequired {
		return s.orderView(tx, now, o, true)
	}
	pr, err := getProduct(tx, o.ProductID)
	if err != nil {
		return nil, err
	}
	start := time.UnixMilli(o.DebitedAt).UTC()
	a := &accountRecord{Account: Account{ID: s.o.IDs.New(now), EntityID: o.EntityID, OrderID: o.ID, ProductID: o.ProductID,
		Type: o.Type, Currency: o.Currency, Created: now.UnixMilli(), Updated: now.UnixMilli()},
		FundingAccountID: o.AccountID}
	if o.SecondaryID != "" {
		a.SecondaryID = ptr(o.SecondaryID)
	}
	if pr.FixedTerms != nil {
		s.openFixed(a, pr.FixedTerms, *o.Principal, *o.WaiveEarlyWithdrawal, start)
		if err := s.scheduleFixed(tx, a); err != nil {
			return nil, err
		}
	} else {
		s.openShares(a, pr.ShareTerms, o, start)
		pr.Reserved = max(0, pr.Reserved-*o.AllocatedShares)
		pr.Sold += *o.AllocatedShares
		if err := putProduct(tx, pr); err != nil {
			return nil, err
		}
		if err := tx.Put(bucket, holdingKey(pr.ID, a.ID), nil); err != nil {
			return nil, err
		}
		if err := storage.Schedule(tx, dueLock, a.LockExpiresAt, a.ID); err != nil {
			return nil, err
		}
	}
	if err := tx.Put(bucket, entityHoldingKey(a.EntityID, a.ID), nil); err != nil {
		return nil, err
	}
	if _, err := s.addTransaction(tx, now, a, EventPurchase, o.TotalDebit, ""); err != nil {
		return nil, err
	}
	if err := s.saveAccount(tx, now, a); err != nil {
		return nil, err
	}
	if err := storage.Unschedule(tx, dueRecover, o.DebitedAt+s.o.RecoveryDelay.Milliseconds(), o.ID); err != nil {
		return nil, err
	}
	o.Status, o.StatusReason, o.ConfirmedAt, o.CapitalAccountID = OrderApproved, nil, ptr(now.UnixMilli()), a.ID
	return s.saveOrder(tx, now, o)
}

// recover is the due work of a confirmation left between its steps.
func (s *Service) recover(tx storage.Tx, now time.Time, it storage.DueItem) error {
	o, err := getOrder(tx, it.ID)
	if err != nil {
		return ignoreMissing(err)
	}
	_, err = s.complete(tx, now, o)
	return err
}
