package acquiring

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/internal/scope"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/storage"
)

// Refund statuses (SPEC.md "Refund"): pending is initial, successful and
// failed are final.
const (
	RefundPending    = "pending"
	RefundSuccessful = "successful"
	RefundFailed     = "failed"
)

// Events appended when a refund reaches a final state (SPEC.md "Refund
// event payloads").
const (
	EventRefundCompleted = "payment_refund.completed"
	EventRefundFailed    = "payment_refund.failed"
)

// Refund limits (SPEC.md "Limits").
const (
	MaxRefundReference = 100
	MaxRefundReason    = 100
)

// ReasonRefundDeclined is the status_reason of a refund the sandbox fails
// without naming one (the refund_fails test card's code).
const ReasonRefundDeclined = "refund_declined"

// Refund gives back part or all of a completed intent action's charge.
// RefundReason is the request's reason ("" when none was given);
// StatusReason is set when the refund failed.
type Refund struct {
	ID                    string  `json:"id"`
	Reference             string  `json:"reference"`
	PaymentIntentActionID string  `json:"payment_intent_action_id"`
	Amount                int64   `json:"amount"`
	Currency              string  `json:"currency"`
	RefundReason          string  `json:"refund_reason"`
	Status                string  `json:"status"`
	StatusReason          *string `json:"status_reason"`
	AccountID             string  `json:"account_id"`
	EntityID              string  `json:"entity_id"`
	Created               int64   `json:"created"`
}

// NewRefund is the body of POST /refunds. Reason appears on the refund as
// refund_reason (CONTRACT.md).
type NewRefund struct {
	PaymentIntentActionID string `json:"payment_intent_action_id"`
	Reference             string `json:"reference"`
	Reason                string `json:"reason,omitempty"`
	Amount                int64  `json:"amount"`
	EntityID              string `json:"entity_id,omitempty"`
}

// refundEvent is the data of payment_refund.completed and .failed
// (SPEC.md): the refund, status_reason only on the failed one.
type refundEvent struct {
	*Refund
	StatusReason *string `json:"status_reason,omitempty"`
}

// refundRecord is a stored refund and what only the service sees.
type refundRecord struct {
	Refund
	// HoldID is the ledger hold reserving Amount on the merchant account.
	HoldID string `json:"hold_id"`
	// DueAt is when the sandbox acquirer answers (its due entry), 0 once
	// final.
	DueAt   int64 `json:"due_at,omitempty"`
	Updated int64 `json:"updated"`
}

const refundBucket storage.Bucket = "acquiring.refunds"

// dueRefund is the due-queue kind of a pending refund's sandbox answer.
const dueRefund = "acquiring.refund"

// refundListKey is f/<entity>/<refund id> in index.
func refundListKey(entity, id string) []byte { return storage.Key("f", entity, id) }

// Owner is the entity the refunded action belongs to (scope.Get).
func (r *refundRecord) Owner() string { return r.EntityID }

func getRefund(tx storage.Tx, id string) (*refundRecord, error) {
	return storage.LoadJSON[refundRecord](tx, refundBucket, []byte(id), ErrRefundNotFound)
}

func putRefund(tx storage.Tx, r *refundRecord) error {
	return storage.PutJSON(tx, refundBucket, []byte(r.ID), r)
}

func (r *refundRecord) view() *Refund { v := r.Refund; return &v }

func (in *NewRefund) validate() corebank.Problems {
	p := corebank.Problems{}
	if in.PaymentIntentActionID == "" {
		p.Add("payment_intent_action_id", "is required")
	}
	corebank.CheckText(p, "reference", in.Reference, corebank.Line(1, MaxRefundReference))
	corebank.CheckText(p, "reason", in.Reason, corebank.Line(0, MaxRefundReason))
	switch {
	case in.Amount < 1:
		p.Add("amount", "must be greater than zero")
	case in.Amount > ledger.MaxAmount:
		p.Add("amount", "is too large")
	}
	return p
}

// CreateRefund refunds in.Amount of completed intent action
// in.PaymentIntentActionID and answers the refund pending. In one
// transaction it checks the amount against what is still refundable
// (charge_amount minus refunded_amount, which counts pending and
// successful refunds), adds it to the action's refunded_amount and holds
// it on the merchant account toward the card clearing account, so that
// concurrent refunds never exceed the charge. The sandbox acquirer answers
// after Options.RefundDelay (due work): a refund of the refund_fails test
// card fails, any other succeeds; SimulateRefund answers sooner.
//
// Errors: corebank.ErrForbidden; corebank.ErrEntityNotFound;
// ErrActionNotFound; a corebank.KindBadRequest error naming each bad field
// (payment_intent_action_id, reference, reason, amount), an action not
// completed (payment_intent_action_id) or an amount over the refundable
// (amount); ledger.ErrInsufficientFunds when the merchant account's
// available balance is below the amount, and the ledger's refusals of a
// deleted or blocked account.
func (s *Service) CreateRefund(ctx context.Context, caller corebank.Caller, in NewRefund) (*Refund, error) {
	if err := caller.CheckWrite(); err != nil {
		return nil, err
	}
	if p := in.validate(); len(p) > 0 {
		return nil, p.BadRequest()
	}
	now := s.o.Clock.Now()
	return storage.Update(ctx, s.db, func(tx storage.Tx) (*Refund, error) {
		a, err := scope.Get(tx, s.tree, caller, in.EntityID, in.PaymentIntentActionID, getAction, ErrActionNotFound)
		if err != nil {
			return nil, err
		}
		disputed, err := storage.Exists(tx, index, disputeOfKey(a.ID))
		if err != nil {
			return nil, err
		}
		p := corebank.Problems{}
		switch left := a.ChargeAmount - a.RefundedAmount; {
		case a.Status != ActionCompleted:
			p.Add("payment_intent_action_id", "must be a completed intent action; this one is "+a.Status)
		case disputed:
			// As card networks have it: a disputed charge is settled by the
			// dispute, never refunded beside it.
			p.Add("payment_intent_action_id", "the charge is disputed; it cannot be refunded")
		case in.Amount > left:
			p.Add("amount", "exceeds the refundable amount "+strconv.FormatInt(left, 10))
		}
		if len(p) > 0 {
			return nil, p.BadRequest()
		}
		ms := now.UnixMilli()
		r := &refundRecord{Refund: Refund{ID: s.ids.New(now), Reference: in.Reference, PaymentIntentActionID: a.ID,
			Amount: in.Amount, Currency: a.Currency, RefundReason: in.Reason, Status: RefundPending,
			AccountID: a.AccountID, EntityID: a.EntityID, Created: ms}, Updated: ms}
		h, err := s.led.HoldTx(tx, now, ledger.HoldRequest{Key: "acquiring.refund:" + r.ID, DebitAccountID: a.AccountID,
			CreditAccountID: s.led.SystemAccount(a.Currency, ledger.PurposeClearingCard), Amount: r.Amount,
			Narration: "card refund " + r.Reference, Reference: a.PaymentIntentID,
			Meta: map[string]string{"refund_id": r.ID, "intent_action_id": a.ID}})
		if err != nil {
			return nil, err
		}
		r.HoldID = h.ID
		a.RefundedAmount += r.Amount
		if err := s.putAction(tx, a); err != nil {
			return nil, err
		}
		r.DueAt = now.Add(s.o.RefundDelay).UnixMilli()
		if err := storage.Schedule(tx, dueRefund, r.DueAt, r.ID); err != nil {
			return nil, err
		}
		if err := tx.Put(index, refundListKey(r.EntityID, r.ID), nil); err != nil {
			return nil, err
		}
		if err := putRefund(tx, r); err != nil {
			return nil, err
		}
		return r.view(), nil
	})
}

// settleRefund ends pending refund r as status (successful or failed,
// with reason), once: a successful refund posts its hold (the money goes
// back to the card through the clearing account); a failed one voids it
// and gives its amount back to the action's refundable amount. Either
// appends the refund's event.
func (s *Service) settleRefund(tx storage.Tx, now time.Time, r *refundRecord, status, reason string) error {
	if r.DueAt != 0 {
		if err := storage.Unschedule(tx, dueRefund, r.DueAt, r.ID); err != nil {
			return err
		}
		r.DueAt = 0
	}
	ev := EventRefundCompleted
	if status == RefundSuccessful {
		if _, err := s.led.PostHoldTx(tx, now, r.HoldID, 0); err != nil {
			return err
		}
	} else {
		ev = EventRefundFailed
		if _, err := s.led.VoidHoldTx(tx, now, r.HoldID); err != nil {
			return err
		}
		a, err := getAction(tx, r.PaymentIntentActionID)
		if err != nil {
			return err
		}
		a.RefundedAmount -= r.Amount
		if err := s.putAction(tx, a); err != nil {
			return err
		}
		r.StatusReason = &reason
	}
	r.Status, r.Updated = status, now.UnixMilli()
	if err := putRefund(tx, r); err != nil {
		return err
	}
	_, err := s.led.AppendEventTx(tx, now, ev, r.EntityID, &refundEvent{Refund: r.view(), StatusReason: r.StatusReason})
	return err
}

// answerRefund is the sandbox acquirer's due answer to a pending refund:
// the refund_fails test card's refunds fail (its code as status_reason),
// every other refund succeeds.
func (s *Service) answerRefund(tx storage.Tx, now time.Time, it storage.DueItem) error {
	r, err := getRefund(tx, it.ID)
	if errors.Is(err, ErrRefundNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if r.Status != RefundPending || r.DueAt != it.At {
		return nil
	}
	r.DueAt = 0 // the queue took the entry away
	a, err := getAction(tx, r.PaymentIntentActionID)
	if err != nil {
		return err
	}
	if a.Card != nil {
		if c := TestCardOutcome(a.Card.Last4); c.Outcome == OutcomeRefundFails {
			return s.settleRefund(tx, now, r, RefundFailed, c.FailureCode)
		}
	}
	return s.settleRefund(tx, now, r, RefundSuccessful, "")
}

// GetRefund returns refund id for caller narrowed to entityID.
//
// Errors: corebank.ErrEntityNotFound; ErrRefundNotFound.
func (s *Service) GetRefund(ctx context.Context, caller corebank.Caller, entityID, id string) (*Refund, error) {
	return storage.View(ctx, s.db, func(tx storage.Tx) (*Refund, error) {
		r, err := scope.Get(tx, s.tree, caller, entityID, id, getRefund, ErrRefundNotFound)
		if err != nil {
			return nil, err
		}
		return r.view(), nil
	})
}

var refundStatuses = map[string]bool{RefundPending: true, RefundSuccessful: true, RefundFailed: true}

// ListRefunds returns one page of an entity's refunds, oldest first,
// filtered by f: status, reference, currency, account_id and the
// inclusive created bounds (PaymentType and PaymentIntentID are not
// used).
//
// Errors: as ListIntents, with status one of pending, successful, failed.
func (s *Service) ListRefunds(ctx context.Context, caller corebank.Caller, f Filter, opts corebank.ListOptions) (*Page[Refund], error) {
	p := f.check()
	if f.Status != "" && !refundStatuses[f.Status] {
		p.Add("status", "must be one of pending, successful, failed")
	}
	return listOf(ctx, s, caller, f, opts, p, "f", func(tx storage.Tx, id string) (Refund, bool, error) {
		r, err := getRefund(tx, id)
		if err != nil {
			return Refund{}, false, err
		}
		keep := f.keep(r.Status, r.Reference, r.Currency, r.AccountID, "", "", r.Created)
		return r.Refund, keep, nil
	})
}

// SimulateRefund is the sandbox acquirer answering refund id now:
// "successful" (the hold posts, payment_refund.completed) or "failed"
// (with statusReason, default refund_declined; the hold is voided and the
// amount is refundable again; payment_refund.failed). Simulating the
// outcome a final refund already has changes nothing.
//
// Errors: corebank.ErrForbidden; corebank.ErrEntityNotFound;
// ErrRefundNotFound; a validation error naming outcome or status_reason;
// ErrInvalidForState for a final refund asked for the other outcome.
func (s *Service) SimulateRefund(ctx context.Context, caller corebank.Caller, entityID, id, outcome, statusReason string) (*Refund, error) {
	if err := caller.CheckWrite(); err != nil {
		return nil, err
	}
	if err := checkOutcome(RefundSuccessful, outcome, statusReason); err != nil {
		return nil, err
	}
	if outcome == RefundFailed && statusReason == "" {
		statusReason = ReasonRefundDeclined
	}
	now := s.o.Clock.Now()
	return storage.Update(ctx, s.db, func(tx storage.Tx) (*Refund, error) {
		r, err := scope.Get(tx, s.tree, caller, entityID, id, getRefund, ErrRefundNotFound)
		if err != nil {
			return nil, err
		}
		if r.Status != RefundPending {
			if r.Status == outcome {
				return r.view(), nil
			}
			return nil, ErrInvalidForState.With("the refund is already " + r.Status)
		}
		if err := s.settleRefund(tx, now, r, outcome, statusReason); err != nil {
			return nil, err
		}
		return r.view(), nil
	})
}
