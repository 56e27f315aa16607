package ledger

import (
	"context"
	"errors"
	"maps"
	"time"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/storage"
)

// HoldStatus is the state of a hold.
type HoldStatus string

// Hold states. A hold starts pending and ends in exactly one other state.
const (
	HoldPending HoldStatus = "pending"
	HoldPosted  HoldStatus = "posted"
	HoldVoided  HoldStatus = "voided"
	HoldExpired HoldStatus = "expired" // timed out and voided itself
)

var holdStatusNames = [...]HoldStatus{HoldPending, HoldPosted, HoldVoided, HoldExpired}

// TimeoutAction is what a hold does when its timeout falls due.
type TimeoutAction string

// Timeout actions. The zero value voids.
const (
	TimeoutVoid TimeoutAction = "void"
	TimeoutPost TimeoutAction = "post"
)

// HoldRequest asks for a pending transfer of Amount from DebitAccountID to
// CreditAccountID (TigerBeetle's two-phase transfer): it raises the debit
// account's pending debits and the credit account's pending credits until
// posted or voided.
type HoldRequest struct {
	// Key makes Hold idempotent, as Entry.Key does for Post.
	Key             string `json:"key,omitempty"`
	DebitAccountID  string `json:"debit_account_id"`
	CreditAccountID string `json:"credit_account_id"`
	Amount          int64  `json:"amount"`
	// Timeout, when positive, resolves the hold by OnTimeout once RunDue
	// runs at or after creation+Timeout (millisecond precision).
	Timeout time.Duration `json:"timeout,omitempty"`
	// OnTimeout is TimeoutVoid (default) or TimeoutPost (used for inflows
	// that settle by themselves).
	OnTimeout TimeoutAction     `json:"on_timeout,omitempty"`
	Narration string            `json:"narration,omitempty"`
	Reference string            `json:"reference,omitempty"`
	Meta      map[string]string `json:"meta,omitempty"`
}

// Hold is a two-phase transfer.
type Hold struct {
	ID              string `json:"id"`
	Key             string `json:"key,omitempty"`
	DebitAccountID  string `json:"debit_account_id"`
	CreditAccountID string `json:"credit_account_id"`
	Currency        string `json:"currency"`
	Amount          int64  `json:"amount"`
	// PostedAmount is what was settled when posted (0 otherwise).
	PostedAmount int64      `json:"posted_amount"`
	Status       HoldStatus `json:"status"`
	// ExpiresAt is when the timeout falls due (Unix ms), 0 for none.
	ExpiresAt int64             `json:"expires_at"`
	OnTimeout TimeoutAction     `json:"on_timeout"`
	Narration string            `json:"narration,omitempty"`
	Reference string            `json:"reference,omitempty"`
	Meta      map[string]string `json:"meta,omitempty"`
	Created   int64             `json:"created"`
	Updated   int64             `json:"updated"`
}

func getHold(tx storage.Tx, id string) (*Hold, error) {
	raw, err := storage.Peek(tx, bucketHolds, []byte(id))
	return holdFrom(raw, err, id)
}

// getHold is the package function with the key built in a scratch buffer.
func (s *Service) getHold(tx storage.Tx, id string) (*Hold, error) {
	bp := s.buf()
	k := append(*bp, id...)
	raw, err := storage.Peek(tx, bucketHolds, k)
	s.release(bp, k)
	return holdFrom(raw, err, id)
}

// holdFrom decodes the result of reading hold id.
func holdFrom(raw []byte, err error, id string) (*Hold, error) {
	if errors.Is(err, storage.ErrNotFound) {
		return nil, ErrHoldNotFound.With("hold " + id + " not found")
	}
	if err != nil {
		return nil, err
	}
	return decodeHold(raw, id)
}

// GetHold returns a hold, or ErrHoldNotFound.
func (s *Service) GetHold(ctx context.Context, id string) (*Hold, error) {
	return storage.View(ctx, s.db, func(tx storage.Tx) (*Hold, error) {
		return getHold(tx, id)
	})
}

// GetHoldTx is GetHold inside tx.
func (s *Service) GetHoldTx(tx storage.Tx, id string) (*Hold, error) { return getHold(tx, id) }

// pendingKey indexes a customer account's pending holds by time, for
// statements that include pending transactions.
func appendPendingKey(k []byte, account string, ms int64, holdID string) []byte {
	k = append(k, account...)
	k = append(k, '/')
	k = storage.AppendInt64(k, ms)
	return append(k, holdID...)
}

// Hold places a pending transfer and returns it.
//
// Errors: a validation error naming each bad field; ErrAccountNotFound;
// ErrCurrencyMismatch when the accounts differ in currency;
// ErrAccountDeleted; ErrInflowsNotAllowed/ErrOutflowsNotAllowed;
// ErrInsufficientFunds when a customer debit account's available balance
// is below Amount; ErrIdempotencyKeyReused; any EntityGate error. On error
// nothing is written.
func (s *Service) Hold(ctx context.Context, req HoldRequest) (*Hold, error) {
	return storage.Update(ctx, s.db, func(tx storage.Tx) (*Hold, error) {
		return s.HoldTx(tx, s.clock.Now(), req)
	})
}

// HoldTx is Hold inside tx at time now. It writes nothing when it returns
// an error, so a caller may place several holds in one transaction.
func (s *Service) HoldTx(tx storage.Tx, now time.Time, req HoldRequest) (*Hold, error) {
	if req.OnTimeout == "" {
		req.OnTimeout = TimeoutVoid
	}
	if err := req.problems(); err != nil {
		return nil, err
	}
	if req.Key != "" {
		orig, err := replayHold(tx, &req)
		if orig != nil || err != nil {
			return orig, err
		}
	}
	var drv, crv balRec
	dr, cr := &drv, &crv
	if err := s.loadBalInto(tx, req.DebitAccountID, dr); err != nil {
		return nil, withField(err, "debit_account_id")
	}
	if err := s.loadBalInto(tx, req.CreditAccountID, cr); err != nil {
		return nil, withField(err, "credit_account_id")
	}
	if dr.currency != cr.currency {
		e := ErrCurrencyMismatch.With("debit account holds " + dr.currency + ", credit account holds " + cr.currency)
		e.Fields = map[string]string{"credit_account_id": "must hold " + dr.currency}
		return nil, e
	}
	var checked map[string]bool
	if s.gate != nil {
		checked = map[string]bool{}
	}
	if err := s.checkMovable(tx, dr, req.DebitAccountID, Debit, checked); err != nil {
		return nil, withField(err, "debit_account_id")
	}
	if err := s.checkMovable(tx, cr, req.CreditAccountID, Credit, checked); err != nil {
		return nil, withField(err, "credit_account_id")
	}
	if !withinLimit(dr.PendingDebits+req.Amount) || !withinLimit(cr.PendingCredits+req.Amount) ||
		!withinLimit(cr.Settled+cr.PendingCredits+req.Amount) || !withinLimit(dr.Settled-dr.PendingDebits-req.Amount) {
		return nil, ErrBalanceLimit
	}
	if !dr.system() && dr.Available() < req.Amount {
		return nil, ErrInsufficientFunds.With("account " + req.DebitAccountID + " has insufficient available funds")
	}

	ms := corebank.Millis(now)
	h := &Hold{
		ID:              s.ids.New(now),
		Key:             req.Key,
		DebitAccountID:  req.DebitAccountID,
		CreditAccountID: req.CreditAccountID,
		Currency:        dr.currency,
		Amount:          req.Amount,
		Status:          HoldPending,
		OnTimeout:       req.OnTimeout,
		Narration:       req.Narration,
		Reference:       req.Reference,
		Meta:            maps.Clone(req.Meta),
		Created:         ms,
		Updated:         ms,
	}
	if req.Timeout > 0 {
		h.ExpiresAt = ms + req.Timeout.Milliseconds()
		if req.Timeout%time.Millisecond != 0 {
			h.ExpiresAt++
		}
		if err := storage.Schedule(tx, dueHold, h.ExpiresAt, h.ID); err != nil {
			return nil, err
		}
	}
	if err := s.putHold(tx, h); err != nil {
		return nil, err
	}
	if h.Key != "" {
		if err := tx.Put(bucketIdem, []byte(h.Key), append([]byte{idemHold}, h.ID...)); err != nil {
			return nil, err
		}
	}
	dl := HistoryLine{Kind: LineHold, TxID: h.ID, PendingDebitsDelta: h.Amount, Narration: h.Narration, Reference: h.Reference}
	if err := s.writeSide(tx, h.DebitAccountID, dr, ms, &dl, Debit, h); err != nil {
		return nil, err
	}
	cl := HistoryLine{Kind: LineHold, TxID: h.ID, PendingCreditsDelta: h.Amount, Narration: h.Narration, Reference: h.Reference}
	if err := s.writeSide(tx, h.CreditAccountID, cr, ms, &cl, Credit, h); err != nil {
		return nil, err
	}
	return h, nil
}

// writeSide writes one account's history line and balance for a hold
// change, and maintains the account's pending index.
func (s *Service) writeSide(tx storage.Tx, account string, r *balRec, ms int64, l *HistoryLine, side Side, h *Hold) error {
	if err := s.writeLine(tx, account, r, ms, l); err != nil {
		return err
	}
	if err := s.putBal(tx, account, r); err != nil {
		return err
	}
	if r.system() {
		return nil
	}
	bp := s.buf()
	b := appendPendingKey(*bp, account, h.Created, h.ID)
	k := len(b)
	var err error
	if l.Kind == LineHold {
		b = appendPendingValue(b, side, h)
		err = tx.Put(bucketPending, b[:k], b[k:])
	} else {
		err = tx.Delete(bucketPending, b[:k])
	}
	s.release(bp, b)
	return err
}

func replayHold(tx storage.Tx, req *HoldRequest) (*Hold, error) {
	kind, id, err := lookupIdem(tx, req.Key)
	if err != nil || kind == 0 {
		return nil, err
	}
	if kind != idemHold {
		return nil, keyReused(map[string]string{"key": "was used for a journal entry"})
	}
	orig, err := getHold(tx, id)
	if err != nil {
		return nil, err
	}
	diff := map[string]string{}
	const msg = "differs from the original request"
	if orig.DebitAccountID != req.DebitAccountID {
		diff["debit_account_id"] = msg
	}
	if orig.CreditAccountID != req.CreditAccountID {
		diff["credit_account_id"] = msg
	}
	if orig.Amount != req.Amount {
		diff["amount"] = msg
	}
	var timeout int64
	if orig.ExpiresAt != 0 {
		timeout = orig.ExpiresAt - orig.Created
	}
	reqTimeout := req.Timeout.Milliseconds()
	if req.Timeout%time.Millisecond != 0 {
		reqTimeout++
	}
	if timeout != reqTimeout {
		diff["timeout"] = msg
	}
	if orig.OnTimeout != req.OnTimeout {
		diff["on_timeout"] = msg
	}
	if orig.Narration != req.Narration {
		diff["narration"] = msg
	}
	if orig.Reference != req.Reference {
		diff["reference"] = msg
	}
	if !maps.Equal(orig.Meta, req.Meta) {
		diff["meta"] = msg
	}
	if len(diff) > 0 {
		return nil, keyReused(diff)
	}
	return orig, nil
}

// PostHold settles a pending hold: amount (0 means the whole hold) moves
// from the debit account's to the credit account's settled balance and the
// rest of the hold is released. Posting again with the same amount returns
// the hold unchanged (a safe retry).
//
// Errors: ErrHoldNotFound; ErrHoldNotPending when the hold is voided,
// expired or was posted with another amount; a validation error on
// "amount" when it is negative or exceeds the hold.
func (s *Service) PostHold(ctx context.Context, holdID string, amount int64) (*Hold, error) {
	return storage.Update(ctx, s.db, func(tx storage.Tx) (*Hold, error) {
		return s.PostHoldTx(tx, s.clock.Now(), holdID, amount)
	})
}

// PostHoldTx is PostHold inside tx at time now. It writes nothing when it
// returns an error.
func (s *Service) PostHoldTx(tx storage.Tx, now time.Time, holdID string, amount int64) (*Hold, error) {
	h, err := s.getHold(tx, holdID)
	if err != nil {
		return nil, err
	}
	if amount < 0 {
		return nil, corebank.InvalidField("amount", "must not be negative")
	}
	if amount > h.Amount {
		return nil, corebank.InvalidField("amount", "exceeds the held amount")
	}
	if amount == 0 {
		amount = h.Amount
	}
	if h.Status != HoldPending {
		if h.Status == HoldPosted && h.PostedAmount == amount {
			return h, nil
		}
		return nil, ErrHoldNotPending.With("hold " + h.ID + " is " + string(h.Status))
	}
	return h, s.resolve(tx, now, h, HoldPosted, amount)
}

// VoidHold releases a pending hold without moving money. Voiding a voided
// hold returns it unchanged.
//
// Errors: ErrHoldNotFound; ErrHoldNotPending when it is posted or expired.
func (s *Service) VoidHold(ctx context.Context, holdID string) (*Hold, error) {
	return storage.Update(ctx, s.db, func(tx storage.Tx) (*Hold, error) {
		return s.VoidHoldTx(tx, s.clock.Now(), holdID)
	})
}

// VoidHoldTx is VoidHold inside tx at time now. It writes nothing when it
// returns an error.
func (s *Service) VoidHoldTx(tx storage.Tx, now time.Time, holdID string) (*Hold, error) {
	h, err := s.getHold(tx, holdID)
	if err != nil {
		return nil, err
	}
	if h.Status != HoldPending {
		if h.Status == HoldVoided {
			return h, nil
		}
		return nil, ErrHoldNotPending.With("hold " + h.ID + " is " + string(h.Status))
	}
	return h, s.resolve(tx, now, h, HoldVoided, 0)
}

// resolve moves a pending hold to status, settling amount when posting. It
// updates h in place. Completing a hold is never vetoed by the gate or by
// deletion: the money was already reserved.
func (s *Service) resolve(tx storage.Tx, now time.Time, h *Hold, status HoldStatus, amount int64) error {
	var drv, crv balRec
	dr, cr := &drv, &crv
	if err := s.loadBalInto(tx, h.DebitAccountID, dr); err != nil {
		return err
	}
	if err := s.loadBalInto(tx, h.CreditAccountID, cr); err != nil {
		return err
	}
	ms := corebank.Millis(now)
	kind := LinePost
	switch status {
	case HoldVoided:
		kind = LineVoid
	case HoldExpired:
		kind = LineExpire
	}
	dl := HistoryLine{Kind: kind, TxID: h.ID, SettledDelta: -amount, PendingDebitsDelta: -h.Amount, Narration: h.Narration, Reference: h.Reference}
	if err := s.writeSide(tx, h.DebitAccountID, dr, ms, &dl, Debit, h); err != nil {
		return err
	}
	cl := HistoryLine{Kind: kind, TxID: h.ID, SettledDelta: amount, PendingCreditsDelta: -h.Amount, Narration: h.Narration, Reference: h.Reference}
	if err := s.writeSide(tx, h.CreditAccountID, cr, ms, &cl, Credit, h); err != nil {
		return err
	}
	if h.ExpiresAt != 0 {
		if err := storage.Unschedule(tx, dueHold, h.ExpiresAt, h.ID); err != nil {
			return err
		}
	}
	h.Status = status
	h.PostedAmount = amount
	h.Updated = ms
	return s.putHold(tx, h)
}

func (s *Service) putHold(tx storage.Tx, h *Hold) error {
	bp := s.buf()
	b := append(*bp, h.ID...)
	k := len(b)
	b = h.appendTo(b)
	err := tx.Put(bucketHolds, b[:k], b[k:])
	s.release(bp, b)
	return err
}

// Kinds of due work the ledger schedules (see DueJobs).
const (
	dueHold    = "ledger.hold"    // a hold's timeout, at ExpiresAt
	dueDetails = "ledger.details" // account details' terminate_after, at ExpiresAt
)

// DueJobs returns the ledger's due work, in the order it runs at one
// instant: "ledger.hold" resolves a pending hold whose timeout fell due
// (voiding it, status expired, or posting it in full when its OnTimeout is
// TimeoutPost), then "ledger.details" deactivates account details whose
// terminate_after ended (status inactive, reason expired,
// account_details.updated appended), then "ledger.fold" folds system
// accounts' recorded changes into their balances (sysdelta.go). Each runs
// inside the transaction that takes the item off the queue, stamped with
// the clock's time.
func (s *Service) DueJobs() []storage.DueJob {
	return []storage.DueJob{
		{Kind: dueHold, Tx: s.expireHoldTx},
		{Kind: dueDetails, Tx: s.expireDetailsTx},
		{Kind: dueFold, Tx: s.foldTx},
	}
}

// RunDue does every item of DueJobs due at or before asOf, in batches of
// Options.DueBatch per transaction, and returns how many it handled.
// Callers run it on a ticker, or after advancing a mock clock.
func (s *Service) RunDue(ctx context.Context, asOf time.Time) (int, error) {
	return storage.NewDue(s.db, s.clock, s.dueBatch, s.DueJobs()...).RunDue(ctx, asOf)
}

// expireHoldTx resolves the hold of a due timeout. A hold already resolved
// (which unschedules its timeout) is left alone.
func (s *Service) expireHoldTx(tx storage.Tx, now time.Time, it storage.DueItem) error {
	h, err := s.getHold(tx, it.ID)
	if err != nil || h.Status != HoldPending {
		return err
	}
	if h.OnTimeout == TimeoutPost {
		return s.resolve(tx, now, h, HoldPosted, h.Amount)
	}
	return s.resolve(tx, now, h, HoldExpired, 0)
}

// problems returns a validation error naming every bad field of req
// (OnTimeout already defaulted), or nil. A valid request, the usual one on
// the hot path, allocates nothing: the Problems map is made at the first
// problem.
func (req *HoldRequest) problems() error {
	var p corebank.Problems
	add := func(field, problem string) {
		if p == nil {
			p = corebank.Problems{}
		}
		p.Add(field, problem)
	}
	if req.DebitAccountID == "" {
		add("debit_account_id", "is required")
	}
	if req.CreditAccountID == "" {
		add("credit_account_id", "is required")
	} else if req.CreditAccountID == req.DebitAccountID {
		add("credit_account_id", "must differ from debit_account_id")
	}
	if req.Amount <= 0 || req.Amount > MaxAmount {
		add("amount", "must be between 1 and 2^53-1")
	}
	if req.Timeout < 0 {
		add("timeout", "must not be negative")
	}
	switch req.OnTimeout {
	case TimeoutVoid, TimeoutPost:
	default:
		add("on_timeout", "must be void or post")
	}
	checkText(add, req.Narration, req.Reference, req.Key)
	return p.Err()
}
