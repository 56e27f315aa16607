package funding

import (
	"context"
	"errors"
	"time"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/internal/scope"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/storage"
)

// answerAt is when a provider's own answer falls due: at, or PayerDelay
// after now when the provider left it to the service.
func (s *SessionService) answerAt(now, at time.Time) int64 {
	if at.IsZero() {
		return now.Add(s.o.PayerDelay).UnixMilli()
	}
	return at.UnixMilli()
}

// nextDue is when r next has automatic work: its provider's answer, its
// settlement, or its expiry while it waits for the payer; 0 for none.
func nextDue(r *sessionRecord) int64 {
	if Terminal(r.Status) {
		return 0
	}
	var at int64
	consider := func(t int64) {
		if t != 0 && (at == 0 || t < at) {
			at = t
		}
	}
	if r.Answer != nil {
		consider(r.AnswerAt)
	}
	if r.Status == SessionPendingSettlement {
		consider(r.SettleAt)
	}
	if r.Status == SessionAwaitingUser {
		consider(r.ExpireAt)
	}
	return at
}

// reschedule puts r's one due entry at nextDue(r).
func (s *SessionService) reschedule(tx storage.Tx, r *sessionRecord) error {
	at := nextDue(r)
	if at == r.DueAt {
		return nil
	}
	if r.DueAt != 0 {
		if err := storage.Unschedule(tx, dueSession, r.DueAt, r.ID); err != nil {
			return err
		}
	}
	r.DueAt = at
	if at == 0 {
		return nil
	}
	return storage.Schedule(tx, dueSession, at, r.ID)
}

// RunDue does the sessions' due work at or before asOf (DueJobs) and
// returns how many sessions it handled. A runner calls it on a ticker;
// tests after advancing a mock clock.
func (s *SessionService) RunDue(ctx context.Context, asOf time.Time) (int, error) {
	return storage.NewDue(s.in.db, s.in.clock, 0, s.DueJobs()...).RunDue(ctx, asOf)
}

// DueJobs returns the sessions' due work: kind "funding.session" applies
// a sandbox payer's answer, settles a pending credit, or expires a session
// nobody answered, whichever fell due first, in the transaction that takes
// it off the queue.
func (s *SessionService) DueJobs() []storage.DueJob {
	return []storage.DueJob{{Kind: dueSession, Tx: s.runDue}}
}

func (s *SessionService) runDue(tx storage.Tx, now time.Time, it storage.DueItem) error {
	r, err := getSession(tx, it.ID)
	if errors.Is(err, ErrSessionNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	r.DueAt = 0 // the queue took this entry away
	if ev := takeDue(r, now.UnixMilli()); ev != nil {
		before := r.Status
		err := s.apply(tx, now, r, *ev)
		if err != nil && !errors.Is(err, ErrSessionInvalidForState) {
			return err
		}
		if err == nil && r.Status != before {
			return nil // apply stored it
		}
		// A report that changes nothing (the session moved on meanwhile)
		// is dropped.
	}
	if err := s.reschedule(tx, r); err != nil {
		return err
	}
	return putSession(tx, r)
}

// takeDue returns r's automatic move that fell due at or before ms, the
// earliest first (the provider's answer, the settlement of a pending
// credit, the expiry of an unanswered session), taking a provider's answer
// off r; nil when none.
func takeDue(r *sessionRecord, ms int64) *ProviderEvent {
	switch {
	case Terminal(r.Status):
	case r.Answer != nil && r.AnswerAt <= ms:
		ev := r.Answer
		r.Answer, r.AnswerAt = nil, 0
		return ev
	case r.Status == SessionPendingSettlement && r.SettleAt != 0 && r.SettleAt <= ms:
		return &ProviderEvent{Status: SessionSettled}
	case r.Status == SessionAwaitingUser && r.ExpireAt != 0 && r.ExpireAt <= ms:
		return &ProviderEvent{Status: SessionExpired, FailureCode: FailureSessionExpired}
	}
	return nil
}

// catchUp applies, in tx, r's automatic moves that fell due at or before
// now and that the due runner has not applied yet, as it would have: a
// report that arrives after a deadline meets the session that deadline
// made (an open-banking checkout past its expiry is expired, a pending
// credit past its settlement settled), however late the runner ticks. It
// reports whether r moved.
func (s *SessionService) catchUp(tx storage.Tx, now time.Time, r *sessionRecord) (bool, error) {
	moved := false
	for range 4 { // answer, settlement or expiry: a few moves at most
		before, answered := r.Status, r.Answer != nil
		ev := takeDue(r, now.UnixMilli())
		if ev == nil {
			break
		}
		err := s.apply(tx, now, r, *ev)
		if err != nil && !errors.Is(err, ErrSessionInvalidForState) {
			return moved, err
		}
		if err == nil && r.Status != before {
			moved = true
			continue
		}
		if !answered || r.Answer != nil {
			break // nothing was taken: it would come back
		}
		// A provider's answer that changes nothing is dropped, and kept
		// dropped.
		if err := s.reschedule(tx, r); err != nil {
			return moved, err
		}
		if err := putSession(tx, r); err != nil {
			return moved, err
		}
	}
	return moved, nil
}

// allowed reports whether a session in from may move to to.
func allowed(from, to string) bool {
	if Terminal(from) {
		return false
	}
	switch to {
	case SessionProcessing:
		return from == SessionAwaitingUser
	case SessionPendingSettlement:
		return from == SessionAwaitingUser || from == SessionProcessing
	case SessionSettled, SessionFailed, SessionExpired, SessionCancelled:
		return true
	}
	return false
}

// apply moves r as ev says, with its money and events, and stores it. A
// report of the status r already has changes nothing (providers repeat
// callbacks); a move the state machine does not allow is
// ErrSessionInvalidForState.
func (s *SessionService) apply(tx storage.Tx, now time.Time, r *sessionRecord, ev ProviderEvent) error {
	if ev.Status == r.Status {
		return nil
	}
	if !allowed(r.Status, ev.Status) {
		return ErrSessionInvalidForState.With("a " + r.Status + " session cannot become " + ev.Status)
	}
	stage := r.Status
	switch ev.Status {
	case SessionProcessing:
		r.Status = SessionProcessing
	case SessionPendingSettlement, SessionSettled:
		credit, fail, err := s.credit(r, ev)
		if err != nil {
			return err
		}
		if fail != "" {
			return s.fail(tx, now, r, stage, SessionFailed, fail, ev.ProviderCode, true)
		}
		if r.HoldID == "" {
			if ok, err := s.hold(tx, now, r, credit); err != nil || !ok {
				return err
			}
		}
		if ev.Status == SessionSettled {
			return s.settle(tx, now, r)
		}
		r.Status = SessionPendingSettlement
		if s.o.SettleDelay > 0 {
			r.SettleAt = now.Add(s.o.SettleDelay).UnixMilli()
		}
	default: // failed, expired, cancelled
		code := ev.FailureCode
		switch {
		case code != "":
		case ev.Status == SessionExpired:
			code = FailureSessionExpired
		case ev.Status == SessionCancelled:
			code = FailurePaymentCancelled
		default:
			code = FailureProviderError
		}
		return s.fail(tx, now, r, stage, ev.Status, code, ev.ProviderCode, r.HoldID != "")
	}
	return s.changed(tx, now, r)
}

// credit is what r credits on ev: its amount, or for crypto what arrived
// (judged by cryptoOutcome, recorded on r); fail is the failure code of a
// payment the rules refuse.
func (s *SessionService) credit(r *sessionRecord, ev ProviderEvent) (credit int64, fail string, err error) {
	if r.FundingType != Crypto {
		return r.Amount, "", nil
	}
	if r.AmountReceived != nil { // judged when it arrived
		return *r.AmountReceived, "", nil
	}
	pay := CryptoPayment{Received: ev.Received, Late: ev.Late}
	if pay.Received == 0 {
		pay = sandboxCryptoPayment(r.Amount) // a simulation: the sandbox payer decides
	}
	out := cryptoOutcome(r.Amount, pay, s.o.UnderpaymentTolerance)
	got, outcome := pay.Received, out.Outcome
	r.AmountReceived, r.PaymentOutcome = &got, &outcome
	if !out.Settle {
		return 0, out.FailureCode, nil
	}
	return out.Credit, "", nil
}

// hold places r's pending credit from its rail's clearing account. An
// account that can no longer take it (deleted, closed to inflows) fails
// the session with payment_rejected rather than the caller's request; ok
// is false then.
func (s *SessionService) hold(tx storage.Tx, now time.Time, r *sessionRecord, amount int64) (ok bool, err error) {
	narration := r.Narration
	if narration == "" {
		narration = "funding session " + r.FundingType
	}
	h, err := s.in.led.HoldTx(tx, now, ledger.HoldRequest{
		DebitAccountID:  s.in.led.SystemAccount(r.Currency, clearingPurpose(r.FundingType)),
		CreditAccountID: r.AccountID,
		Amount:          amount,
		Narration:       narration,
		Reference:       r.UniqueReference,
	})
	if k := corebank.KindOf(err); k == corebank.KindRejected || k == corebank.KindNotFound {
		var ce *corebank.Error
		code := ""
		if errors.As(err, &ce) {
			code = ce.Code
		}
		return false, s.fail(tx, now, r, r.Status, SessionFailed, FailurePaymentRejected, code, false)
	}
	if err != nil {
		return false, err
	}
	r.HoldID = h.ID
	return true, nil
}

// settle posts r's hold and records the credit as an inflow of the
// account (inflows.completed), once: a settled session is terminal.
func (s *SessionService) settle(tx storage.Tx, now time.Time, r *sessionRecord) error {
	h, err := s.in.led.PostHoldTx(tx, now, r.HoldID, 0)
	if err != nil {
		return err
	}
	ms := now.UnixMilli()
	in := &record{Inflow: Inflow{
		ID: s.in.ids.New(now), Type: "inflow", AccountID: r.AccountID, EntityID: r.EntityID,
		Amount: h.Amount, Currency: r.Currency, Narration: r.Narration, Reference: r.UniqueReference,
		Source: r.FundingType, Status: StatusPending, Created: r.Created, Updated: ms,
	}, HoldID: r.HoldID}
	if err := s.in.complete(tx, now, in); err != nil {
		return err
	}
	id := in.ID
	r.InflowID = &id
	r.Status = SessionSettled
	return s.changed(tx, now, r)
}

// fail ends r in status with code; a pending credit is voided and, when
// money was on its way (voided or refused), inflows.failed reports it.
func (s *SessionService) fail(tx storage.Tx, now time.Time, r *sessionRecord, stage, status, code, providerCode string, inflowFailed bool) error {
	if r.HoldID != "" {
		if _, err := s.in.led.VoidHoldTx(tx, now, r.HoldID); err != nil {
			return err
		}
	}
	r.Status = status
	r.Failure = &Failure{Code: code, Stage: stage, ProviderCode: providerCode}
	if inflowFailed {
		amount := r.Amount
		if r.AmountReceived != nil {
			amount = *r.AmountReceived
		}
		ms := now.UnixMilli()
		ev := &Inflow{ID: r.ID, Type: "inflow", AccountID: r.AccountID, EntityID: r.EntityID, Amount: amount,
			Currency: r.Currency, Narration: r.Narration, Reference: r.UniqueReference, Source: r.FundingType,
			Status: SessionFailed, Created: r.Created, Updated: ms}
		if _, err := s.in.led.AppendEventTx(tx, now, EventInflowFailed, r.EntityID, ev); err != nil {
			return err
		}
	}
	return s.changed(tx, now, r)
}

// changed stores r after a status change, moves its due work and appends
// funding_sessions.updated.
func (s *SessionService) changed(tx storage.Tx, now time.Time, r *sessionRecord) error {
	r.Updated = now.UnixMilli()
	if err := s.reschedule(tx, r); err != nil {
		return err
	}
	if err := putSession(tx, r); err != nil {
		return err
	}
	_, err := s.in.led.AppendEventTx(tx, now, EventSessionUpdated, r.EntityID, r.view())
	return err
}

// HandleProviderEvent applies a provider's report about session id, as a
// provider callback does: trusted code, no caller. It returns the session
// as it stands after the report.
//
// Errors: ErrSessionNotFound; a validation error naming status or
// failure_code; ErrSessionInvalidForState for a move the session's status
// does not allow.
func (s *SessionService) HandleProviderEvent(ctx context.Context, id string, ev ProviderEvent) (*Session, error) {
	if err := ev.validate(); err != nil {
		return nil, err
	}
	return s.move(ctx, ev, func(tx storage.Tx) (*sessionRecord, error) { return getSession(tx, id) })
}

// moved is move's outcome: the session, or the refusal of a report the
// session's own due work (committed) made invalid.
type moved struct {
	Session *Session `json:"session,omitempty"`
	Refused string   `json:"refused,omitempty"`
}

// move applies ev, in one transaction, to the session load reads, and
// returns the session as it then stands. The session's own due work that
// fell due first is applied before ev (catchUp); when it makes ev invalid,
// it is committed and ev is refused with ErrSessionInvalidForState.
func (s *SessionService) move(ctx context.Context, ev ProviderEvent, load func(tx storage.Tx) (*sessionRecord, error)) (*Session, error) {
	now := s.in.clock.Now()
	out, err := storage.Update(ctx, s.in.db, func(tx storage.Tx) (moved, error) {
		r, err := load(tx)
		if err != nil {
			return moved{}, err
		}
		caught, err := s.catchUp(tx, now, r)
		if err != nil {
			return moved{}, err
		}
		if err := s.apply(tx, now, r, ev); err != nil {
			var ce *corebank.Error
			if caught && errors.Is(err, ErrSessionInvalidForState) && errors.As(err, &ce) {
				return moved{Refused: ce.Message}, nil
			}
			return moved{}, err
		}
		return moved{Session: r.view()}, nil
	})
	if err != nil {
		return nil, err
	}
	if out.Refused != "" {
		return nil, ErrSessionInvalidForState.With(out.Refused)
	}
	return out.Session, nil
}

func (ev *ProviderEvent) validate() error {
	p := corebank.Problems{}
	if !validStatus(ev.Status) || ev.Status == SessionAwaitingUser {
		p.Add("outcome", "must be one of processing, pending_settlement, settled, failed, expired, cancelled")
	}
	if ev.FailureCode != "" {
		if !ValidFailureCode(ev.FailureCode) {
			p.Add("failure_code", "must be one of payment_blocked, payment_rejected, payment_cancelled, insufficient_funds, institution_unavailable, institution_not_supported, provider_error, session_expired")
		} else if !Terminal(ev.Status) || ev.Status == SessionSettled {
			p.Add("failure_code", "is only for failed, expired and cancelled")
		}
	}
	if ev.Received < 0 {
		p.Add("received", "must not be negative")
	}
	corebank.CheckText(p, "provider_code", ev.ProviderCode, corebank.Line(0, 64))
	return p.Err()
}

// SimulateSession moves session id to outcome in the sandbox, running the
// code a provider's callback runs (HandleProviderEvent): "processing",
// "pending_settlement" (a pending credit: current rises, available does
// not), "settled" (credited once, inflows.completed), "failed" (with
// failureCode, default provider_error), "expired" or "cancelled". For
// crypto the sandbox payer decides what arrives (sandboxCryptoPayment).
// Simulating the status the session already has changes nothing.
//
// Errors: corebank.ErrForbidden for a read-only caller;
// corebank.ErrEntityNotFound; ErrSessionNotFound; a validation error
// naming outcome or failure_code; ErrSessionInvalidForState.
func (s *SessionService) SimulateSession(ctx context.Context, caller corebank.Caller, entityID, id, outcome, failureCode string) (*Session, error) {
	if err := caller.CheckWrite(); err != nil {
		return nil, err
	}
	ev := ProviderEvent{Status: outcome, FailureCode: failureCode, ProviderCode: "sandbox"}
	return s.move(ctx, ev, func(tx storage.Tx) (*sessionRecord, error) {
		r, err := scope.Get(tx, s.in.tree, caller, entityID, id, getSession, ErrSessionNotFound)
		if err != nil {
			return nil, err // scope first: a foreign session answers as a missing one
		}
		if outcome == "" {
			return nil, corebank.InvalidField("outcome", "is required")
		}
		return r, ev.validate()
	})
}

// CheckoutSession returns the session whose checkout token is token, for
// the sandbox checkout page; ErrSessionNotFound for any other token.
func (s *SessionService) CheckoutSession(ctx context.Context, token string) (*Session, error) {
	return storage.View(ctx, s.in.db, func(tx storage.Tx) (*Session, error) {
		r, err := sessionByToken(tx, token)
		if err != nil {
			return nil, err
		}
		return r.view(), nil
	})
}

// Checkout applies the payer's choice on the sandbox checkout page of the
// session whose token is token: the token is the capability (no caller),
// and the outcome runs exactly as SimulateSession's ("settled" to approve,
// "failed" with failureCode to reject, "cancelled", "expired"). The page
// then sends the payer to the session's redirect_url.
//
// Errors: ErrSessionNotFound for an unknown token; a validation error
// naming outcome or failure_code; ErrSessionInvalidForState.
func (s *SessionService) Checkout(ctx context.Context, token, outcome, failureCode string) (*Session, error) {
	ev := ProviderEvent{Status: outcome, FailureCode: failureCode, ProviderCode: "sandbox_checkout"}
	if err := ev.validate(); err != nil {
		return nil, err
	}
	return s.move(ctx, ev, func(tx storage.Tx) (*sessionRecord, error) { return sessionByToken(tx, token) })
}

func sessionByToken(tx storage.Tx, token string) (*sessionRecord, error) {
	if token == "" || len(token) > 64 {
		return nil, ErrSessionNotFound
	}
	id, err := tx.Get(sessionIndex, tokenKey(token))
	if errors.Is(err, storage.ErrNotFound) {
		return nil, ErrSessionNotFound
	}
	if err != nil {
		return nil, err
	}
	return getSession(tx, string(id))
}

// ValidateETransfer is PATCH /funding-sessions/{id}: the payer says the
// e-Transfer is sent, the provider validates it (outside any
// transaction), and the session moves awaiting_user -> processing with
// reference_number, payment_id, requires_authentication and
// security_question. A security answer the provider reports is dropped:
// corebank never stores or returns it, in any form.
//
// Errors: corebank.ErrForbidden; corebank.ErrEntityNotFound;
// ErrSessionNotFound; ErrNotETransfer (400) for a session of another
// rail or not awaiting_user; a provider's error.
func (s *SessionService) ValidateETransfer(ctx context.Context, caller corebank.Caller, entityID, id string) (*Session, error) {
	if err := caller.CheckWrite(); err != nil {
		return nil, err
	}
	check := func(tx storage.Tx) (*sessionRecord, error) {
		r, err := scope.Get(tx, s.in.tree, caller, entityID, id, getSession, ErrSessionNotFound)
		if err != nil {
			return nil, err
		}
		if r.FundingType != ETransfer {
			return nil, ErrNotETransfer.With("only etransfer sessions are validated; this one is " + r.FundingType)
		}
		if r.Status != SessionAwaitingUser {
			return nil, ErrNotETransfer.With("the session is " + r.Status + "; only an awaiting_user etransfer is validated")
		}
		if r.ExpireAt != 0 && r.ExpireAt <= s.in.clock.Now().UnixMilli() {
			// Past its deadline it is expired, whether or not the due
			// runner has marked it yet.
			return nil, ErrNotETransfer.With("the session expired; only an awaiting_user etransfer is validated")
		}
		return r, nil
	}
	r, err := storage.View(ctx, s.in.db, check)
	if err != nil {
		return nil, err
	}
	v, err := s.o.ETransfer.ValidateETransfer(ctx, r.view())
	if err != nil {
		return nil, err
	}
	now := s.in.clock.Now()
	return storage.Update(ctx, s.in.db, func(tx storage.Tx) (*Session, error) {
		r, err := check(tx)
		if err != nil {
			return nil, err
		}
		ref, pid, q, auth := v.ReferenceNumber, v.PaymentID, v.SecurityQuestion, v.RequiresAuthentication
		r.ReferenceNumber, r.RequiresAuthentication = &ref, &auth
		if pid != "" {
			r.PaymentID = &pid
		}
		if auth {
			r.SecurityQuestion = &q
		}
		if v.Answer != nil {
			a := *v.Answer
			r.Answer, r.AnswerAt = &a, s.answerAt(now, v.AnswerAt)
		}
		if err := s.apply(tx, now, r, ProviderEvent{Status: SessionProcessing}); err != nil {
			return nil, err
		}
		return r.view(), nil
	})
}
