package acquiring

import (
	"cmp"
	"context"
	"errors"
	"time"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/internal/scope"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/storage"
)

// Dispute statuses. Won and lost are final.
const (
	DisputeNeedsResponse = "needs_response"
	DisputeUnderReview   = "under_review"
	DisputeWon           = "won"
	DisputeLost          = "lost"
)

// Dispute events; each carries the dispute.
const (
	EventDisputeCreated   = "payment_dispute.created"
	EventDisputeCompleted = "payment_dispute.completed"
)

// System account purposes of disputes: the card network's claim while a
// dispute is open, and what a merchant account could not pay of one.
const (
	PurposeClearingDisputes   = "clearing.disputes"
	PurposeDisputesReceivable = "disputes.receivable"
)

// DefaultDisputeReason is the reason of a dispute opened without one.
const DefaultDisputeReason = "general"

// disputeReasons are the reasons a dispute may give (the card networks'
// families, as Stripe names them).
var disputeReasons = map[string]bool{"bank_cannot_process": true, "credit_not_processed": true,
	"customer_initiated": true, "debit_not_authorized": true, "duplicate": true, "fraudulent": true,
	"general": true, "incorrect_account_details": true, "insufficient_funds": true,
	"product_not_received": true, "product_unacceptable": true, "subscription_canceled": true,
	"unrecognized": true}

// Dispute is a cardholder's dispute of a completed intent action: Amount
// of the charge is taken back from the merchant while it is open. Reference
// and PaymentIntentID name the disputed payment.
type Dispute struct {
	ID                    string `json:"id"`
	PaymentIntentActionID string `json:"payment_intent_action_id"`
	PaymentIntentID       string `json:"payment_intent_id"`
	Reference             string `json:"reference"`
	Amount                int64  `json:"amount"`
	Currency              string `json:"currency"`
	Reason                string `json:"reason"`
	Status                string `json:"status"`
	EvidenceDueBy         int64  `json:"evidence_due_by"`
	EntityID              string `json:"entity_id"`
	AccountID             string `json:"account_id"`
	Created               int64  `json:"created"`
	Updated               int64  `json:"updated"`
}

// NewDispute is the body of POST /sandbox/intent-actions/{id}/dispute:
// Amount defaults to what refunds left of the charge, Reason to
// DefaultDisputeReason.
type NewDispute struct {
	Amount   *int64 `json:"amount,omitempty"`
	Reason   string `json:"reason,omitempty"`
	EntityID string `json:"entity_id,omitempty"`
}

// disputeRecord is a stored dispute and how its money moved.
type disputeRecord struct {
	Dispute
	// Debited is what the merchant account paid when the dispute opened;
	// Amount - Debited came from disputes.receivable.
	Debited int64 `json:"debited"`
	// Returned is where a won dispute's Debited went: the merchant
	// account, or suspense when the account could no longer take it.
	Returned string `json:"returned,omitempty"`
}

const disputeBucket storage.Bucket = "acquiring.disputes"

// Index keys of disputes: d/<entity>/<id> (the list) and
// x/<action id> -> dispute id (one dispute per charge).
func disputeListKey(entity, id string) []byte { return storage.Key("d", entity, id) }
func disputeOfKey(actionID string) []byte     { return storage.Key("x", actionID) }

// Due kinds of disputes: a test card's charge is disputed (item: the
// action), and an unanswered dispute goes under review (item: the
// dispute).
const (
	dueDispute  = "acquiring.dispute"
	dueEvidence = "acquiring.evidence"
)

// Owner is the entity the disputed action belongs to (scope.Get).
func (d *disputeRecord) Owner() string { return d.EntityID }

func getDispute(tx storage.Tx, id string) (*disputeRecord, error) {
	return storage.LoadJSON[disputeRecord](tx, disputeBucket, []byte(id), ErrDisputeNotFound)
}

// GetDispute returns dispute id for caller narrowed to entityID.
//
// Errors: corebank.ErrEntityNotFound; ErrDisputeNotFound for a dispute
// missing or outside the caller's tree.
func (s *Service) GetDispute(ctx context.Context, caller corebank.Caller, entityID, id string) (*Dispute, error) {
	return storage.View(ctx, s.db, func(tx storage.Tx) (*Dispute, error) {
		d, err := scope.Get(tx, s.tree, caller, entityID, id, getDispute, ErrDisputeNotFound)
		if err != nil {
			return nil, err
		}
		return &d.Dispute, nil
	})
}

var disputeStatuses = map[string]bool{DisputeNeedsResponse: true, DisputeUnderReview: true,
	DisputeWon: true, DisputeLost: true}

// ListDisputes returns one page of an entity's disputes, oldest first,
// filtered by f. The entity is f.EntityID (the caller's when "");
// f.AccountID, when set, must be one of its accounts or below it.
//
// Errors: corebank.ErrEntityNotFound; ledger.ErrAccountNotFound; a
// validation error naming status, date_from, date_to, limit or cursor.
func (s *Service) ListDisputes(ctx context.Context, caller corebank.Caller, f Filter, opts corebank.ListOptions) (*Page[Dispute], error) {
	lf := Filter{EntityID: f.EntityID, AccountID: f.AccountID, DateFrom: f.DateFrom, DateTo: f.DateTo}
	p := lf.check()
	if f.Status != "" && !disputeStatuses[f.Status] {
		p.Add("status", "must be one of needs_response, under_review, won, lost")
	}
	return listOf(ctx, s, caller, lf, opts, p, "d", func(tx storage.Tx, id string) (Dispute, bool, error) {
		d, err := getDispute(tx, id)
		if err != nil {
			return Dispute{}, false, err
		}
		keep := (f.Status == "" || d.Status == f.Status) && (f.Currency == "" || d.Currency == f.Currency) &&
			(f.Reference == "" || d.Reference == f.Reference) && (f.AccountID == "" || d.AccountID == f.AccountID) &&
			(f.PaymentIntentActionID == "" || d.PaymentIntentActionID == f.PaymentIntentActionID) &&
			(f.DateFrom <= 0 || d.Created >= f.DateFrom) && (f.DateTo <= 0 || d.Created <= f.DateTo)
		return d.Dispute, keep, nil
	})
}

// OpenDispute is the sandbox's card network disputing completed action
// actionID: in.Amount (default what refunds left of the charge, at most
// that) for in.Reason (default general). The amount is debited from the
// merchant account in the same transaction, with payment_dispute.created
// (see doc.go "Disputes").
//
// Errors: corebank.ErrForbidden; corebank.ErrEntityNotFound;
// ErrActionNotFound; a validation error naming amount or reason;
// ErrInvalidForState for an action not completed, or nothing left to
// dispute; ErrAlreadyDisputed when the charge has a dispute.
func (s *Service) OpenDispute(ctx context.Context, caller corebank.Caller, actionID string, in NewDispute) (*Dispute, error) {
	if err := caller.CheckWrite(); err != nil {
		return nil, err
	}
	p := corebank.Problems{}
	if in.Amount != nil && *in.Amount < 1 {
		p.Add("amount", "must be at least 1")
	}
	if in.Reason != "" && !disputeReasons[in.Reason] {
		p.Add("reason", "must be a dispute reason such as fraudulent, duplicate or product_not_received")
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	now := s.o.Clock.Now()
	return storage.Update(ctx, s.db, func(tx storage.Tx) (*Dispute, error) {
		a, err := scope.Get(tx, s.tree, caller, in.EntityID, actionID, getAction, ErrActionNotFound)
		if err != nil {
			return nil, err
		}
		if err := disputable(tx, a); err != nil {
			return nil, err
		}
		// refunded_amount counts pending and completed refunds (doc.go
		// "Refunds"): money on its way back to the card is not disputable.
		left := a.ChargeAmount - a.RefundedAmount
		if left <= 0 {
			return nil, ErrInvalidForState.With("the charge was refunded in full; nothing is left to dispute")
		}
		amount := left
		if in.Amount != nil {
			if *in.Amount > left {
				return nil, corebank.InvalidField("amount", "must be at most the charge less its refunds")
			}
			amount = *in.Amount
		}
		d, err := s.openDispute(tx, now, a, amount, cmp.Or(in.Reason, DefaultDisputeReason))
		if err != nil {
			return nil, err
		}
		return &d.Dispute, nil
	})
}

// disputable refuses an action that is not completed or already has a
// dispute.
func disputable(tx storage.Tx, a *actionRecord) error {
	if a.Status != ActionCompleted {
		return ErrInvalidForState.With("a " + a.Status + " intent action cannot be disputed; only completed can")
	}
	switch _, err := tx.Get(index, disputeOfKey(a.ID)); {
	case err == nil:
		return ErrAlreadyDisputed
	case !errors.Is(err, storage.ErrNotFound):
		return err
	}
	return nil
}

// openDispute records a needs_response dispute of amount on a, debits it
// (debit) and appends payment_dispute.created; evidence_due_by is
// scheduled.
func (s *Service) openDispute(tx storage.Tx, now time.Time, a *actionRecord, amount int64, reason string) (*disputeRecord, error) {
	ms := now.UnixMilli()
	d := &disputeRecord{Dispute: Dispute{ID: s.ids.New(now), PaymentIntentActionID: a.ID,
		PaymentIntentID: a.PaymentIntentID, Reference: a.Reference, Amount: amount, Currency: a.Currency,
		Reason: reason, Status: DisputeNeedsResponse, EvidenceDueBy: now.Add(s.o.DisputeEvidenceWindow).UnixMilli(),
		EntityID: a.EntityID, AccountID: a.AccountID, Created: ms, Updated: ms}}
	if err := s.debit(tx, now, d); err != nil {
		return nil, err
	}
	if err := tx.Put(index, disputeOfKey(a.ID), []byte(d.ID)); err != nil {
		return nil, err
	}
	if err := tx.Put(index, disputeListKey(d.EntityID, d.ID), nil); err != nil {
		return nil, err
	}
	if err := storage.Schedule(tx, dueEvidence, d.EvidenceDueBy, d.ID); err != nil {
		return nil, err
	}
	if err := storage.PutJSON(tx, disputeBucket, []byte(d.ID), d); err != nil {
		return nil, err
	}
	if _, err := s.led.AppendEventTx(tx, now, EventDisputeCreated, d.EntityID, &d.Dispute); err != nil {
		return nil, err
	}
	return d, nil
}

// debit moves d.Amount to the disputes clearing account: from the
// merchant account what its available balance covers, the rest from
// disputes.receivable (the ledger never takes a customer account below
// zero). An account that can no longer be debited (deleted, outflows
// off, entity blocked) pays nothing. The entry's key makes it once.
func (s *Service) debit(tx storage.Tx, now time.Time, d *disputeRecord) error {
	bal, err := s.led.BalanceTx(tx, d.AccountID)
	if err != nil {
		return err
	}
	d.Debited = min(max(bal.Available(), 0), d.Amount)
	_, err = s.led.PostTx(tx, now, s.disputeEntry(d, "open", ledger.Debit, d.AccountID))
	if k := corebank.KindOf(err); d.Debited > 0 && (k == corebank.KindRejected || k == corebank.KindNotFound) {
		d.Debited = 0
		_, err = s.led.PostTx(tx, now, s.disputeEntry(d, "open", ledger.Debit, d.AccountID))
	}
	return err
}

// refundDispute returns a won dispute's money: Debited to the merchant account
// (or suspense when it can no longer take it), the rest to
// disputes.receivable.
func (s *Service) refundDispute(tx storage.Tx, now time.Time, d *disputeRecord) error {
	if d.Debited > 0 {
		d.Returned = d.AccountID
	}
	_, err := s.led.PostTx(tx, now, s.disputeEntry(d, "won", ledger.Credit, d.AccountID))
	if k := corebank.KindOf(err); d.Debited > 0 && (k == corebank.KindRejected || k == corebank.KindNotFound) {
		d.Returned = s.led.SystemAccount(d.Currency, ledger.PurposeSuspense)
		_, err = s.led.PostTx(tx, now, s.disputeEntry(d, "won", ledger.Credit, d.Returned))
	}
	return err
}

// disputeEntry is the journal entry of step ("open" or "won") of d: the
// merchant side (account, Debited) and disputes.receivable (the rest) on
// side, the disputes clearing account on the other.
func (s *Service) disputeEntry(d *disputeRecord, step string, side ledger.Side, account string) ledger.Entry {
	other := ledger.Credit
	if side == ledger.Credit {
		other = ledger.Debit
	}
	lines := []ledger.Line{{AccountID: s.led.SystemAccount(d.Currency, PurposeClearingDisputes), Side: other, Amount: d.Amount}}
	if d.Debited > 0 {
		lines = append(lines, ledger.Line{AccountID: account, Side: side, Amount: d.Debited})
	}
	if rest := d.Amount - d.Debited; rest > 0 {
		lines = append(lines, ledger.Line{AccountID: s.led.SystemAccount(d.Currency, PurposeDisputesReceivable), Side: side, Amount: rest})
	}
	return ledger.Entry{Key: "dispute:" + d.ID + ":" + step, Lines: lines, Narration: "card dispute " + step + " " + d.Reference,
		Reference: d.PaymentIntentID, Meta: map[string]string{"dispute_id": d.ID, "intent_action_id": d.PaymentIntentActionID}}
}

// SimulateDispute is the sandbox's card network deciding dispute id:
// "won" returns the money to the merchant, "lost" keeps it, either in
// the transaction that appends payment_dispute.completed. Deciding a
// dispute again with its outcome changes nothing.
//
// Errors: corebank.ErrForbidden; corebank.ErrEntityNotFound;
// ErrDisputeNotFound; a validation error naming outcome;
// ErrInvalidForState for a decided dispute asked for the other outcome.
func (s *Service) SimulateDispute(ctx context.Context, caller corebank.Caller, entityID, id, outcome string) (*Dispute, error) {
	if err := caller.CheckWrite(); err != nil {
		return nil, err
	}
	if outcome != DisputeWon && outcome != DisputeLost {
		return nil, corebank.InvalidField("outcome", "must be won or lost")
	}
	now := s.o.Clock.Now()
	return storage.Update(ctx, s.db, func(tx storage.Tx) (*Dispute, error) {
		d, err := scope.Get(tx, s.tree, caller, entityID, id, getDispute, ErrDisputeNotFound)
		if err != nil {
			return nil, err
		}
		switch d.Status {
		case outcome:
			return &d.Dispute, nil
		case DisputeWon, DisputeLost:
			return nil, ErrInvalidForState.With("the dispute is already " + d.Status)
		case DisputeNeedsResponse:
			if err := storage.Unschedule(tx, dueEvidence, d.EvidenceDueBy, d.ID); err != nil {
				return nil, err
			}
		}
		if outcome == DisputeWon {
			if err := s.refundDispute(tx, now, d); err != nil {
				return nil, err
			}
		}
		d.Status, d.Updated = outcome, now.UnixMilli()
		if err := storage.PutJSON(tx, disputeBucket, []byte(d.ID), d); err != nil {
			return nil, err
		}
		if _, err := s.led.AppendEventTx(tx, now, EventDisputeCompleted, d.EntityID, &d.Dispute); err != nil {
			return nil, err
		}
		return &d.Dispute, nil
	})
}

// scheduleCardDispute queues the dispute of a charge by the "dispute"
// test card, DisputeDelay after it completed.
func (s *Service) scheduleCardDispute(tx storage.Tx, now time.Time, a *actionRecord) error {
	if a.Card == nil || TestCardOutcome(a.Card.Last4).Outcome != OutcomeDispute {
		return nil
	}
	return storage.Schedule(tx, dueDispute, now.Add(s.o.DisputeDelay).UnixMilli(), a.ID)
}

// openCardDispute is due work: the test card's charge is disputed in
// full (less refunds) for the card's reason, unless it already is or
// nothing is left.
func (s *Service) openCardDispute(tx storage.Tx, now time.Time, it storage.DueItem) error {
	a, err := getAction(tx, it.ID)
	if errors.Is(err, ErrActionNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := disputable(tx, a); err != nil || a.Card == nil {
		if errors.Is(err, ErrAlreadyDisputed) || errors.Is(err, ErrInvalidForState) {
			return nil
		}
		return err
	}
	left := a.ChargeAmount - a.RefundedAmount
	if left <= 0 {
		return nil
	}
	_, err = s.openDispute(tx, now, a, left, TestCardOutcome(a.Card.Last4).FailureCode)
	return err
}

// reviewDispute is due work: a dispute still needs_response at its
// evidence_due_by goes under_review (no event: SPEC.md names only
// created and completed).
func (s *Service) reviewDispute(tx storage.Tx, now time.Time, it storage.DueItem) error {
	d, err := getDispute(tx, it.ID)
	if errors.Is(err, ErrDisputeNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if d.Status != DisputeNeedsResponse || d.EvidenceDueBy != it.At {
		return nil
	}
	d.Status, d.Updated = DisputeUnderReview, now.UnixMilli()
	return storage.PutJSON(tx, disputeBucket, []byte(d.ID), d)
}
