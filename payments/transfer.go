package payments

import (
	"context"
	"encoding/hex"
	"errors"
	"time"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/storage"
)

// Transfer statuses (SPEC "Transfer").
const (
	StatusPending    = "pending"
	StatusProcessing = "processing"
	StatusSuccessful = "successful"
	StatusFailed     = "failed"
	StatusReversed   = "reversed"
)

// Status reasons corebank sets itself; a provider or Simulate may give
// others (insufficient_funds, invalid_account_details, compliance_hold).
const (
	ReasonAwaitingProcessing = "awaiting_processing"
	ReasonProcessing         = "processing"
	ReasonPayoutFailed       = "payout_failed"
	ReasonReturned           = "returned"
)

// Event types the payments service appends to the ledger outbox; the
// object of each is the Transfer.
const (
	EventOutflowCreated   = "outflows.created"
	EventOutflowCompleted = "outflows.completed"
	EventOutflowFailed    = "outflows.failed"
	EventOutflowRefunded  = "outflows.refunded"
)

// Limits on transfer text (SPEC "Limits").
const (
	MaxNarration       = 100
	MaxUniqueReference = 64
)

// Transfer is an outbound payment (SPEC "Transfer"). For a cross-currency
// transfer Amount and Currency are the quote's amount_to and to, and
// SourceAmount and SourceCurrency what the account was debited before the
// fee (the quote's amount_from and from); both are omitted otherwise.
type Transfer struct {
	ID              string            `json:"id"`
	AccountID       string            `json:"account_id"`
	EntityID        string            `json:"entity_id"`
	CounterpartyID  string            `json:"counterparty_id"`
	PaymentDetailID string            `json:"payment_detail_id"`
	Type            string            `json:"type"`
	Currency        string            `json:"currency"`
	Amount          int64             `json:"amount"`
	ApplicableFee   int64             `json:"applicable_fee"`
	Status          string            `json:"status"`
	StatusReason    string            `json:"status_reason"`
	PaymentType     string            `json:"payment_type"`
	Narration       string            `json:"narration"`
	UniqueReference string            `json:"unique_reference"`
	FXQuoteID       string            `json:"fx_quote_id,omitempty"`
	SourceCurrency  string            `json:"source_currency,omitempty"`
	SourceAmount    int64             `json:"source_amount,omitempty"`
	Meta            map[string]string `json:"meta"`
	Created         int64             `json:"created"`
	Updated         int64             `json:"updated"`
}

// NewTransfer is the body of POST /transfers.
type NewTransfer struct {
	// EntityID is accepted so that request bodies decode; the service uses
	// the entityID argument, which the caller has authorised.
	EntityID        string            `json:"entity_id,omitempty"`
	AccountID       string            `json:"account_id"`
	PaymentDetailID string            `json:"payment_detail_id"`
	CounterpartyID  string            `json:"counterparty_id,omitempty"`
	Currency        string            `json:"currency,omitempty"`
	Amount          int64             `json:"amount"`
	PaymentType     string            `json:"payment_type"`
	Narration       string            `json:"narration"`
	UniqueReference string            `json:"unique_reference"`
	FXQuoteID       string            `json:"fx_quote_id,omitempty"`
	Meta            map[string]string `json:"meta,omitempty"`
}

// TransferFilter selects transfers in ListTransfers. EntityID is
// required; the others filter when set.
type TransferFilter struct {
	EntityID  string
	AccountID string
	Status    string
}

// transferRecord is what is stored: the transfer and its ledger legs.
type transferRecord struct {
	Transfer
	// Holds are the ledger holds the transfer placed, in order.
	Holds []string `json:"holds"`
	// DueAt is the next RunDue check (Unix ms), 0 when none is scheduled.
	DueAt int64 `json:"due_at,omitempty"`
}

func railPurpose(paymentType string) string {
	switch paymentType {
	case MomoTransfer:
		return ledger.PurposeClearingMomo
	case StablecoinTransfer:
		return ledger.PurposeClearingStablecoin
	case BookTransfer:
		return ledger.PurposeClearingBook
	}
	return ledger.PurposeClearingBank
}

func refKey(accountID, ref string) []byte {
	return storage.Key("tref", accountID, hex.EncodeToString([]byte(ref)))
}

// transferIndexes is how many list indexes a transfer has; index i of
// them is appendTransferIndex(.., i, ..). Even ones do not depend on the
// status.
const transferIndexes = 4

// appendTransferIndex appends the key of t's list index i to k:
// tr/<entity>/<scope>/<id> with scope all, s:<status>, a:<account> or
// as:<account>:<status> (the keys setIndex writes for those parts).
func appendTransferIndex(k []byte, t *Transfer, i int) []byte {
	k = append(k, "tr/"...)
	k = append(k, t.EntityID...)
	k = append(k, '/')
	switch i {
	case 0:
		k = append(k, "all"...)
	case 1:
		k = append(k, "s:"...)
		k = append(k, t.Status...)
	case 2:
		k = append(k, "a:"...)
		k = append(k, t.AccountID...)
	case 3:
		k = append(k, "as:"...)
		k = append(k, t.AccountID...)
		k = append(k, ':')
		k = append(k, t.Status...)
	}
	k = append(k, '/')
	return append(k, t.ID...)
}

// writeTransferIndexes sets (on) or clears t's list indexes, only those
// that depend on the status when statusOnly. One key buffer serves every
// index: a Tx does not keep the slices it is given.
func writeTransferIndexes(tx storage.Tx, t *Transfer, on bool, statusOnly bool) error {
	k := make([]byte, 0, 16+len(t.EntityID)+2*len(t.AccountID)+len(t.Status)+len(t.ID))
	for i := range transferIndexes {
		if statusOnly && i%2 == 0 {
			continue
		}
		k = appendTransferIndex(k[:0], t, i)
		var err error
		if on {
			err = tx.Put(bucketIndex, k, []byte{})
		} else {
			err = tx.Delete(bucketIndex, k)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func getTransfer(tx storage.Tx, entityID, id string) (*transferRecord, error) {
	var r transferRecord
	err := storage.GetJSON(tx, bucketTransfers, []byte(id), &r)
	if errors.Is(err, storage.ErrNotFound) || err == nil && !inScope(entityID, r.EntityID) {
		return nil, ErrTransferNotFound
	}
	if err != nil {
		return nil, err
	}
	return &r, nil
}

func (r *transferRecord) view() *Transfer {
	t := r.Transfer
	t.Meta = cloneMeta(r.Meta)
	return &t
}

// putTransfer stores r as JSON.
func (s *Service) putTransfer(tx storage.Tx, r *transferRecord) error {
	return storage.PutJSON(tx, bucketTransfers, []byte(r.ID), r)
}

// schedule moves the transfer's RunDue check to at (Unix ms, at least 1,
// since 0 means none).
func schedule(tx storage.Tx, r *transferRecord, at int64) error {
	if err := unschedule(tx, r); err != nil {
		return err
	}
	r.DueAt = max(at, 1)
	return tx.Put(bucketDue, dueKey("t", r.DueAt, r.ID), []byte{})
}

// unschedule removes the transfer's RunDue check.
func unschedule(tx storage.Tx, r *transferRecord) error {
	if r.DueAt != 0 {
		if err := tx.Delete(bucketDue, dueKey("t", r.DueAt, r.ID)); err != nil {
			return err
		}
	}
	r.DueAt = 0
	return nil
}

func (in *NewTransfer) validate() error {
	p := corebank.Problems{}
	if in.AccountID == "" {
		p.Add("account_id", "is required")
	}
	if in.PaymentDetailID == "" {
		p.Add("payment_detail_id", "is required")
	}
	switch {
	case in.Amount <= 0:
		p.Add("amount", "must be a positive number of smallest units")
	case in.Amount > maxAmount:
		p.Add("amount", "is too large")
	}
	switch {
	case in.PaymentType == "":
		p.Add("payment_type", "is required")
	case !validPaymentType(in.PaymentType):
		p.Add("payment_type", "must be one of bank-transfer, momo-transfer, stablecoin-transfer, book-transfer")
	}
	checkLen(p, "narration", in.Narration, 1, MaxNarration)
	checkLen(p, "unique_reference", in.UniqueReference, 1, MaxUniqueReference)
	if in.Currency != "" {
		if _, ok := CurrencyInfo(in.Currency); !ok {
			p.Add("currency", "is not a supported currency")
		}
	}
	checkMeta(p, "meta", in.Meta)
	return p.Err()
}

// CreateTransfer creates an outbound transfer from an account of entityID
// and reserves its funds (amount, or the quote's amount_from, plus the
// fee) with ledger holds, all in one storage transaction with the
// outflows.created event. A book transfer settles at once: it comes back
// successful, the receiving account credited.
//
// Errors: a validation error naming every bad field (see doc.go,
// "Transfers"); ErrAccountNotFound, ErrPaymentDetailNotFound,
// ErrCounterpartyNotFound, ErrQuoteNotFound for references outside
// entityID; ErrDuplicateReference, with the original transfer as Data,
// when the account already has unique_reference;
// ledger.ErrInsufficientFunds when the available balance is short (nothing
// is written); ledger errors such as ledger.ErrOutflowsNotAllowed.
func (s *Service) CreateTransfer(ctx context.Context, entityID string, in NewTransfer) (*Transfer, error) {
	if err := in.validate(); err != nil {
		return nil, err
	}
	now := s.clock.Now()
	id := s.ids.New(now)
	var out *Transfer
	err := s.db.Update(ctx, func(tx storage.Tx) error {
		out = nil
		t, err := s.createTransferTx(tx, now, id, entityID, in)
		if err != nil {
			return err
		}
		out = t
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (s *Service) createTransferTx(tx storage.Tx, now time.Time, id, entityID string, in NewTransfer) (*Transfer, error) {
	ms := corebank.Millis(now)
	acct, err := s.accountTx(tx, in.AccountID, entityID)
	if err != nil {
		return nil, err
	}
	// Duplicate reference first: a retry gets its original back whatever
	// has changed since.
	rk := refKey(acct.ID, in.UniqueReference)
	if orig, err := tx.Get(bucketUnique, rk); err == nil {
		r, err := getTransfer(tx, "", string(orig))
		if err != nil {
			return nil, err
		}
		return nil, ErrDuplicateReference.WithData(r.view())
	} else if !errors.Is(err, storage.ErrNotFound) {
		return nil, err
	}
	d, err := getDetailFields(tx, entityID, in.PaymentDetailID)
	if err != nil {
		if errors.Is(err, ErrPaymentDetailNotFound) {
			return nil, ErrPaymentDetailNotFound.With("payment detail " + in.PaymentDetailID + " not found")
		}
		return nil, err
	}
	p := corebank.Problems{}
	if d.PaymentMethod != in.PaymentType {
		p.Add("payment_type", "must match the payment detail's payment_method "+d.PaymentMethod)
	}
	if in.CounterpartyID != "" && in.CounterpartyID != d.CounterpartyID {
		p.Add("counterparty_id", "does not own the payment detail")
	} else if active, err := counterpartyActive(tx, entityID, d.CounterpartyID); err != nil {
		if !errors.Is(err, ErrCounterpartyNotFound) {
			return nil, err
		}
		p.Add("payment_detail_id", "its counterparty no longer exists")
	} else if !active {
		p.Add("counterparty_id", "the counterparty is inactive and cannot receive transfers")
	}
	currency := in.Currency
	if currency == "" {
		currency = d.Currency
	} else if currency != d.Currency {
		p.Add("currency", "must be "+d.Currency+", the payment detail's currency")
	}
	if in.PaymentType == StablecoinTransfer {
		if c, _ := ledger.CurrencyInfo(acct.Currency); c.Kind != ledger.KindStablecoin {
			p.Add("account_id", "a stablecoin-transfer must debit a stablecoin account")
		}
	}
	if err := p.Err(); err != nil {
		return nil, err
	}

	debit := in.Amount // in the account's currency
	var quote *Quote
	if acct.Currency == currency {
		if in.FXQuoteID != "" {
			return nil, corebank.InvalidField("fx_quote_id", "is only for a transfer in a currency other than the account's ("+acct.Currency+")")
		}
	} else {
		if in.FXQuoteID == "" {
			return nil, corebank.InvalidField("fx_quote_id", "is required: the account holds "+acct.Currency+" and the transfer is in "+currency)
		}
		quote, err = getQuote(tx, entityID, in.FXQuoteID)
		if err != nil {
			if errors.Is(err, ErrQuoteNotFound) {
				return nil, ErrQuoteNotFound.With("fx quote " + in.FXQuoteID + " not found")
			}
			return nil, err
		}
		quote.view(now)
		switch {
		case quote.Quote.Status != QuoteActive:
			p.Add("fx_quote_id", "the quote is "+quote.Quote.Status)
		case quote.From != acct.Currency || quote.To != currency:
			p.Add("fx_quote_id", "the quote converts "+quote.From+" to "+quote.To+", not "+acct.Currency+" to "+currency)
		case quote.AmountTo != in.Amount:
			p.Add("amount", "must equal the quote's amount_to")
		case quote.AccountID != "" && quote.AccountID != acct.ID:
			p.Add("fx_quote_id", "the quote was made for another account")
		}
		if err := p.Err(); err != nil {
			return nil, err
		}
		debit = quote.AmountFrom
	}
	fee := s.fees.For(in.PaymentType).Of(debit)
	if fee < 0 || debit+fee > maxAmount {
		return nil, errFeeTooLarge
	}

	var receiver *ledger.Account
	if in.PaymentType == BookTransfer {
		receiver, err = s.led.AccountByServiceBANTx(tx, d.AccountNumber)
		switch {
		case err != nil && corebank.KindOf(err) == corebank.KindNotFound, err == nil && receiver.Deleted != 0:
			return nil, corebank.InvalidField("payment_detail_id", "the receiving account no longer exists")
		case err != nil:
			return nil, err
		case receiver.Currency != currency:
			return nil, corebank.InvalidField("payment_detail_id", "the receiving account holds "+receiver.Currency)
		case receiver.ID == acct.ID:
			return nil, corebank.InvalidField("payment_detail_id", "a book transfer cannot pay the account it debits")
		}
	}

	r := &transferRecord{Transfer: Transfer{
		ID: id, AccountID: acct.ID, EntityID: entityID, CounterpartyID: d.CounterpartyID,
		PaymentDetailID: d.ID, Type: "outflow", Currency: currency, Amount: in.Amount, ApplicableFee: fee,
		Status: StatusPending, StatusReason: ReasonAwaitingProcessing, PaymentType: in.PaymentType,
		Narration: in.Narration, UniqueReference: in.UniqueReference, Meta: cloneMeta(in.Meta),
		Created: ms, Updated: ms,
	}}
	if quote != nil {
		r.FXQuoteID, r.SourceCurrency, r.SourceAmount = quote.ID, acct.Currency, quote.AmountFrom
	}

	// Ledger legs: every hold is within one currency, so each currency
	// balances on its own.
	rail := railPurpose(in.PaymentType)
	type leg struct {
		from, to string
		amount   int64
	}
	var legs []leg
	switch {
	case quote == nil:
		legs = append(legs, leg{acct.ID, s.led.SystemAccount(currency, rail), in.Amount})
	case heldInLedger(currency):
		legs = append(legs,
			leg{acct.ID, s.led.SystemAccount(acct.Currency, ledger.PurposeFX), quote.AmountFrom},
			leg{s.led.SystemAccount(currency, ledger.PurposeFX), s.led.SystemAccount(currency, rail), quote.AmountTo})
	default:
		// A payout-only currency: the rail converts, so the source currency
		// goes to the rail's clearing account.
		legs = append(legs, leg{acct.ID, s.led.SystemAccount(acct.Currency, rail), quote.AmountFrom})
	}
	if fee > 0 {
		legs = append(legs, leg{acct.ID, s.led.SystemAccount(acct.Currency, ledger.PurposeFees), fee})
	}
	for i, l := range legs {
		narration := in.Narration
		if fee > 0 && i == len(legs)-1 {
			narration = "Fee: " + narration
		}
		h, err := s.led.HoldTx(tx, now, ledger.HoldRequest{
			DebitAccountID: l.from, CreditAccountID: l.to, Amount: l.amount,
			Narration: narration, Reference: id,
		})
		if err != nil {
			if errors.Is(err, ledger.ErrInsufficientFunds) {
				return nil, ledger.ErrInsufficientFunds.With("the account's available balance is below the amount plus fees")
			}
			return nil, err
		}
		r.Holds = append(r.Holds, h.ID)
	}

	if quote != nil {
		used := ms
		quote.Quote.Status, quote.Quote.UsedAt, quote.Quote.UsedInPaymentID = QuoteUsed, &used, &r.ID
		quote.Quote.ValidFor, quote.Updated = 0, ms
		if err := tx.Delete(bucketDue, dueKey("q", quote.Quote.ExpiresAt, quote.ID)); err != nil {
			return nil, err
		}
		if err := storage.PutJSON(tx, bucketQuotes, []byte(quote.ID), quote); err != nil {
			return nil, err
		}
	}
	if err := tx.Put(bucketUnique, rk, []byte(id)); err != nil {
		return nil, err
	}
	if in.PaymentType == BookTransfer {
		if _, err := s.led.AppendEventTx(tx, now, EventOutflowCreated, entityID, r.view()); err != nil {
			return nil, err
		}
		if err := s.receiveTx(tx, now, r, receiver); err != nil {
			return nil, err
		}
		if err := s.settleTx(tx, now, r, ""); err != nil {
			return nil, err
		}
		if err := writeTransferIndexes(tx, &r.Transfer, true, false); err != nil {
			return nil, err
		}
		if err := s.putTransfer(tx, r); err != nil {
			return nil, err
		}
		return r.view(), nil
	}
	// The event's object is a *Transfer, not pre-encoded JSON: the ledger
	// encodes it with json.Marshal, which encodes a struct faster than it
	// re-validates a json.RawMessage.
	out := r.view()
	if _, err := s.led.AppendEventTx(tx, now, EventOutflowCreated, entityID, out); err != nil {
		return nil, err
	}
	if err := schedule(tx, r, ms); err != nil {
		return nil, err
	}
	if err := writeTransferIndexes(tx, &r.Transfer, true, false); err != nil {
		return nil, err
	}
	if err := s.putTransfer(tx, r); err != nil {
		return nil, err
	}
	return out, nil
}

// receiveTx credits a book transfer's receiving account.
func (s *Service) receiveTx(tx storage.Tx, now time.Time, r *transferRecord, to *ledger.Account) error {
	in := Inflow{AccountID: to.ID, Amount: r.Amount, Currency: r.Currency, Narration: r.Narration,
		Reference: r.ID, Source: BookTransfer}
	if s.receiver != nil {
		return s.receiver.ReceiveTx(tx, now, in)
	}
	_, err := s.led.PostTx(tx, now, ledger.Entry{
		Key: "payments:book:" + r.ID,
		Lines: []ledger.Line{
			{AccountID: s.led.SystemAccount(r.Currency, ledger.PurposeClearingBook), Side: ledger.Debit, Amount: r.Amount},
			{AccountID: to.ID, Side: ledger.Credit, Amount: r.Amount},
		},
		Narration: r.Narration, Reference: r.ID,
	})
	return err
}

// settleTx posts the transfer's holds and marks it successful.
func (s *Service) settleTx(tx storage.Tx, now time.Time, r *transferRecord, reason string) error {
	for _, h := range r.Holds {
		if _, err := s.led.PostHoldTx(tx, now, h, 0); err != nil {
			return err
		}
	}
	r.Status, r.StatusReason, r.Updated = StatusSuccessful, reason, corebank.Millis(now)
	if err := unschedule(tx, r); err != nil {
		return err
	}
	_, err := s.led.AppendEventTx(tx, now, EventOutflowCompleted, r.EntityID, r.view())
	return err
}

// moveTx moves r to status to, with its ledger effects and event, and
// stores it. It returns ErrInvalidForState for a move the lifecycle does
// not allow.
func (s *Service) moveTx(tx storage.Tx, now time.Time, r *transferRecord, to, reason string) error {
	from := r.Status
	invalid := func() error {
		return ErrInvalidForState.With("a " + from + " " + r.PaymentType + " transfer cannot become " + to)
	}
	ms := corebank.Millis(now)
	if err := writeTransferIndexes(tx, &r.Transfer, false, true); err != nil {
		return err
	}
	switch to {
	case StatusProcessing:
		if from != StatusPending {
			return invalid()
		}
		if reason == "" {
			reason = ReasonProcessing
		}
		r.Status, r.StatusReason, r.Updated = StatusProcessing, reason, ms
	case StatusSuccessful:
		if from != StatusPending && from != StatusProcessing {
			return invalid()
		}
		if err := s.settleTx(tx, now, r, reason); err != nil {
			return err
		}
	case StatusFailed:
		if from != StatusPending && from != StatusProcessing {
			return invalid()
		}
		for _, h := range r.Holds {
			if _, err := s.led.VoidHoldTx(tx, now, h); err != nil {
				return err
			}
		}
		if reason == "" {
			reason = ReasonPayoutFailed
		}
		r.Status, r.StatusReason, r.Updated = StatusFailed, reason, ms
		if err := unschedule(tx, r); err != nil {
			return err
		}
		if _, err := s.led.AppendEventTx(tx, now, EventOutflowFailed, r.EntityID, r.view()); err != nil {
			return err
		}
	case StatusReversed:
		if from != StatusSuccessful || r.PaymentType == BookTransfer {
			return invalid()
		}
		// A new entry returns every posted leg, the fee included.
		var lines []ledger.Line
		for _, id := range r.Holds {
			h, err := s.led.GetHoldTx(tx, id)
			if err != nil {
				return err
			}
			lines = append(lines,
				ledger.Line{AccountID: h.CreditAccountID, Side: ledger.Debit, Amount: h.PostedAmount},
				ledger.Line{AccountID: h.DebitAccountID, Side: ledger.Credit, Amount: h.PostedAmount})
		}
		if _, err := s.led.PostTx(tx, now, ledger.Entry{
			Key: "payments:reversal:" + r.ID, Lines: lines,
			Narration: "Reversal: " + r.Narration, Reference: r.ID,
		}); err != nil {
			return err
		}
		if reason == "" {
			reason = ReasonReturned
		}
		r.Status, r.StatusReason, r.Updated = StatusReversed, reason, ms
		if _, err := s.led.AppendEventTx(tx, now, EventOutflowRefunded, r.EntityID, r.view()); err != nil {
			return err
		}
	default:
		return corebank.InvalidField("outcome", "must be processing, successful, failed or reversed")
	}
	if err := writeTransferIndexes(tx, &r.Transfer, true, true); err != nil {
		return err
	}
	return s.putTransfer(tx, r)
}

// GetTransfer returns the transfer id of entityID ("" for any entity), or
// ErrTransferNotFound.
func (s *Service) GetTransfer(ctx context.Context, entityID, id string) (*Transfer, error) {
	var out *Transfer
	err := s.db.View(ctx, func(tx storage.Tx) error {
		r, err := getTransfer(tx, entityID, id)
		if err != nil {
			return err
		}
		out = r.view()
		return nil
	})
	return out, err
}

// ListTransfers returns one page of f.EntityID's transfers in creation
// order, filtered by account and status. It returns a validation error
// naming status, limit or cursor when one is malformed.
func (s *Service) ListTransfers(ctx context.Context, f TransferFilter, opts corebank.ListOptions) (*corebank.Page[Transfer], error) {
	switch f.Status {
	case "", StatusPending, StatusProcessing, StatusSuccessful, StatusFailed, StatusReversed:
	default:
		return nil, corebank.InvalidField("status", "must be one of pending, processing, successful, failed, reversed")
	}
	scope := "all"
	switch {
	case f.AccountID != "" && f.Status != "":
		scope = "as:" + f.AccountID + ":" + f.Status
	case f.AccountID != "":
		scope = "a:" + f.AccountID
	case f.Status != "":
		scope = "s:" + f.Status
	}
	var page *corebank.Page[Transfer]
	err := s.db.View(ctx, func(tx storage.Tx) error {
		var err error
		page, err = listIndex(tx, storage.Prefix("tr", f.EntityID, scope), opts, func(id string) (Transfer, error) {
			r, err := getTransfer(tx, "", id)
			if err != nil {
				return Transfer{}, err
			}
			return *r.view(), nil
		})
		return err
	})
	return page, err
}

// Simulation outcomes accepted by Simulate.
const (
	OutcomeProcessing = StatusProcessing
	OutcomeSuccessful = StatusSuccessful
	OutcomeFailed     = StatusFailed
	OutcomeReversed   = StatusReversed
)

// Simulate moves a transfer of entityID ("" for any) as a rail callback
// would (POST /sandbox/transfers/{id}/simulate): outcome processing (from
// pending), successful (posts the holds; outflows.completed), failed
// (voids the holds, funds back; outflows.failed) or reversed (from
// successful: a new journal entry returns amount and fee;
// outflows.refunded). statusReason, when given, becomes status_reason.
// It returns ErrTransferNotFound, a validation error naming outcome, or
// ErrInvalidForState for a move the current status does not allow
// (book transfers, settled at once, cannot be reversed).
func (s *Service) Simulate(ctx context.Context, entityID, id, outcome, statusReason string) (*Transfer, error) {
	switch outcome {
	case OutcomeProcessing, OutcomeSuccessful, OutcomeFailed, OutcomeReversed:
	case "":
		return nil, corebank.InvalidField("outcome", "is required")
	default:
		return nil, corebank.InvalidField("outcome", "must be processing, successful, failed or reversed")
	}
	if len(statusReason) > 100 {
		return nil, corebank.InvalidField("status_reason", "must be at most 100 characters")
	}
	now := s.clock.Now()
	var out *Transfer
	err := s.db.Update(ctx, func(tx storage.Tx) error {
		r, err := getTransfer(tx, entityID, id)
		if err != nil {
			return err
		}
		if err := s.moveTx(tx, now, r, outcome, statusReason); err != nil {
			return err
		}
		out = r.view()
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// RunDue does the work that fell due at or before asOf: it expires active
// quotes past expires_at and asks the payout provider about unfinished
// transfers whose check is due, applying what it reports (with the same
// ledger effects and events as Simulate). It returns how many quotes and
// transfers changed. A provider error is returned after the other due
// transfers are handled; that transfer is retried 30 s later.
func (s *Service) RunDue(ctx context.Context, asOf time.Time) (int, error) {
	n, err := s.expireQuotes(ctx, asOf)
	if err != nil {
		return n, err
	}
	var firstErr error
	prefix := storage.Prefix("t")
	limit := string(storage.AppendInt64(bytesClone(prefix), corebank.Millis(asOf)+1))
	var after []byte
	for {
		var batch []*transferRecord
		err := s.db.View(ctx, func(tx storage.Tx) error {
			batch = batch[:0]
			return tx.Scan(bucketDue, storage.ScanOptions{Prefix: prefix, After: after, Limit: dueBatch}, func(k, _ []byte) error {
				if string(k) >= limit {
					return storage.ErrStop
				}
				after = append(after[:0], k...)
				r, err := getTransfer(tx, "", string(k[len(prefix)+8:]))
				if errors.Is(err, ErrTransferNotFound) {
					return nil
				}
				if err != nil {
					return err
				}
				batch = append(batch, r)
				return nil
			})
		})
		if err != nil {
			return n, err
		}
		if len(batch) == 0 {
			return n, firstErr
		}
		for _, r := range batch {
			res, err := s.payouts.Check(ctx, r.view(), asOf)
			if err != nil && firstErr == nil {
				firstErr = err
			}
			changed := false
			uerr := s.db.Update(ctx, func(tx storage.Tx) error {
				changed = false
				cur, err2 := getTransfer(tx, "", r.ID)
				if err2 != nil {
					return err2
				}
				if cur.DueAt != r.DueAt || cur.DueAt == 0 {
					return nil // moved by someone else meanwhile
				}
				next := res.Next
				if next.IsZero() || !next.After(asOf) {
					next = asOf.Add(time.Second)
				}
				if err != nil {
					return schedule(tx, cur, corebank.Millis(asOf.Add(30*time.Second)))
				}
				switch {
				case res.Status == cur.Status || res.Status == StatusPending:
				case res.Status == StatusProcessing && cur.Status == StatusPending,
					res.Status == StatusSuccessful, res.Status == StatusFailed:
					if err := s.moveTx(tx, asOf, cur, res.Status, res.StatusReason); err != nil {
						return err
					}
					changed = true
				}
				if cur.Status == StatusPending || cur.Status == StatusProcessing {
					if err := schedule(tx, cur, corebank.Millis(next)); err != nil {
						return err
					}
					return s.putTransfer(tx, cur)
				}
				return nil
			})
			if uerr != nil {
				return n, uerr
			}
			if changed {
				n++
			}
		}
	}
}

func bytesClone(b []byte) []byte { return append([]byte(nil), b...) }
