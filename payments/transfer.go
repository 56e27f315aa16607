package payments

import (
	"context"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/funding"
	"github.com/corebank/corebank/internal/scope"
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

// Status reasons corebank sets itself; a provider or SimulateTransfer may give
// others (insufficient_funds, invalid_account_details, compliance_hold).
const (
	ReasonAwaitingProcessing = "awaiting_processing"
	ReasonProcessing         = "processing"
	ReasonPayoutFailed       = "payout_failed"
	ReasonReturned           = "returned"
	// ReasonInvalidAccountDetails fails a book transfer whose receiving
	// account was deleted before it settled.
	ReasonInvalidAccountDetails = "invalid_account_details"
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
	// EntityID, when set, must lie in the caller's tree and the account in
	// its tree; "" is the caller's own entity.
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

// TransferFilter selects transfers in ListTransfers: the entity_id and
// account_id a request names ("" for none) and a status.
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
	// ReceiverID is the account a book transfer credits when it settles
	// (resolved from the payment detail at creation, so a later change of
	// the detail does not redirect it); "" for other payment types.
	ReceiverID string `json:"receiver_id,omitempty"`
	// inflowID, never stored, is the ID a settlement made for the
	// receiving side's inflow before the credit, to read ahead what
	// receiving it reads (prefetchPayouts); "" lets the receiver make one.
	inflowID string
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

// transferStatuses are the statuses a transfer can have, each with its own
// list index.
var transferStatuses = [...]string{StatusPending, StatusProcessing, StatusSuccessful, StatusFailed, StatusReversed}

// A transfer has two list indexes, both under its status, so that a status
// change moves both and every list is one of them or the union of one per
// status (readMerged): tr/<entity>/s:<status>/<id> (index 0) and
// tr/<entity>/as:<account>:<status>/<id> (index 1). The lists without a
// status read the union, so they need no index of their own.
const transferIndexes = 2

// appendTransferIndexPrefix appends to k the prefix of list index i of the
// transfers of entity in status (of account when i is 1), the parts
// storage.Prefix would join.
func appendTransferIndexPrefix(k []byte, entity, account, status string, i int) []byte {
	k = append(k, "tr/"...)
	k = append(k, entity...)
	if i == 0 {
		k = append(k, "/s:"...)
	} else {
		k = append(k, "/as:"...)
		k = append(k, account...)
		k = append(k, ':')
	}
	k = append(k, status...)
	return append(k, '/')
}

// writeTransferIndexes sets (on) or clears t's list indexes. One key buffer
// serves both: a Tx does not keep the slices it is given.
func writeTransferIndexes(tx storage.Tx, t *Transfer, on bool) error {
	k := make([]byte, 0, 16+len(t.EntityID)+len(t.AccountID)+len(t.Status)+len(t.ID))
	for i := range transferIndexes {
		k = append(appendTransferIndexPrefix(k[:0], t.EntityID, t.AccountID, t.Status, i), t.ID...)
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

// Owner returns the entity whose account the transfer debits (scope.Owned).
func (t *Transfer) Owner() string { return t.EntityID }

func (r *transferRecord) view() *Transfer {
	t := r.Transfer
	t.Meta = cloneMeta(r.Meta)
	return &t
}

// dueTransfer is the due-work kind of a transfer's next payout check.
const dueTransfer = "payments.transfer"

// schedule moves the transfer's payout check to at (Unix ms, at least 1,
// since 0 means none), in the group of the account it debits: its
// settlement locks that account's balance, and with it every later
// transfer of the account waits, so the due runner keeps an account's
// checks out of shares settled at once (storage.DueItem.Group).
func schedule(tx storage.Tx, r *transferRecord, at int64) error {
	if err := unschedule(tx, r); err != nil {
		return err
	}
	r.DueAt = max(at, 1)
	return storage.ScheduleGroup(tx, dueTransfer, r.DueAt, r.ID, r.AccountID)
}

// unschedule removes the transfer's payout check.
func unschedule(tx storage.Tx, r *transferRecord) error {
	if r.DueAt != 0 {
		if err := storage.Unschedule(tx, dueTransfer, r.DueAt, r.ID); err != nil {
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
	corebank.CheckText(p, "narration", in.Narration, corebank.FreeText(1, MaxNarration))
	corebank.CheckText(p, "unique_reference", in.UniqueReference, corebank.Line(1, MaxUniqueReference))
	if in.Currency != "" {
		if _, ok := CurrencyInfo(in.Currency); !ok {
			p.Add("currency", "is not a supported currency")
		}
	}
	corebank.CheckMeta(p, "meta", in.Meta, objectMeta)
	return p.Err()
}

// CreateTransfer creates an outbound transfer from account in.AccountID
// and reserves its funds (amount, or the quote's amount_from, plus the
// fee) with ledger holds, all in one storage transaction with the
// outflows.created event. The transfer acts for the account's owner, which
// must be in.EntityID (the caller's own entity when "") or lie below it;
// the payment detail, its counterparty and the quote must be that owner's.
// Every transfer comes back pending; RunDue settles it later, a book
// transfer included (see doc.go, "Lifecycle").
//
// Errors: corebank.ErrForbidden for a read-only caller;
// corebank.ErrEntityNotFound for an entity_id outside the caller's tree
// (checked first); a validation error naming every bad field (see doc.go,
// "Transfers"); ErrAccountNotFound for an account missing, deleted or
// outside the entity's tree alike; ErrPaymentDetailNotFound,
// ErrCounterpartyNotFound and ErrQuoteNotFound for references that are
// not the owner's; ErrDuplicateReference, with the original transfer as
// Data, when the account already has unique_reference;
// ledger.ErrInsufficientFunds when the available balance is short (nothing
// is written); ledger errors such as ledger.ErrOutflowsNotAllowed, and
// ledger.ErrInflowsNotAllowed for a book transfer to an account that
// accepts no inflows.
func (s *Service) CreateTransfer(ctx context.Context, caller corebank.Caller, in NewTransfer) (*Transfer, error) {
	if err := caller.CheckWrite(); err != nil {
		return nil, err
	}
	now := s.clock.Now()
	id := s.ids.New(now)
	return storage.Update(ctx, s.db, func(tx storage.Tx) (*Transfer, error) {
		return s.createTransferTx(tx, now, id, caller, in)
	})
}

// createTransferTx is CreateTransfer inside tx, step by step. Each step
// checks before anything is written; only placeHolds and recordTransfer
// write, so an error anywhere leaves tx to be rolled back whole.
func (s *Service) createTransferTx(tx storage.Tx, now time.Time, id string, caller corebank.Caller, in NewTransfer) (*Transfer, error) {
	if err := prefetchTransfer(tx, id, in); err != nil {
		return nil, err
	}
	acct, err := s.transferAccount(tx, caller, in)
	if err != nil {
		return nil, err
	}
	// Duplicate reference first: a retry gets its original back whatever
	// has changed since.
	if err := duplicateReference(tx, acct.ID, in.UniqueReference); err != nil {
		return nil, err
	}
	// The payee's reads go with the debited entity's gate, which the
	// holds ask next (ledger CanMoveMoney): one round trip for both.
	var gate []storage.Ref
	if storage.Prefetching(tx) {
		gate = s.led.GateRefs(acct.EntityID)
	}
	d, currency, err := checkPayee(tx, acct, in, gate...)
	if err != nil {
		return nil, err
	}
	quote, err := s.transferQuote(tx, now, acct, currency, in)
	if err != nil {
		return nil, err
	}
	debit := in.Amount // in the account's currency
	if quote != nil {
		debit = quote.AmountFrom
	}
	fee := s.fees.For(in.PaymentType).Of(debit)
	if fee < 0 || debit+fee > maxAmount {
		return nil, errFeeTooLarge
	}
	receiver, err := s.bookReceiver(tx, acct, d, currency, in.PaymentType)
	if err != nil {
		return nil, err
	}

	ms := corebank.Millis(now)
	r := &transferRecord{Transfer: Transfer{
		ID: id, AccountID: acct.ID, EntityID: acct.EntityID, CounterpartyID: d.CounterpartyID,
		PaymentDetailID: d.ID, Type: "outflow", Currency: currency, Amount: in.Amount, ApplicableFee: fee,
		Status: StatusPending, StatusReason: ReasonAwaitingProcessing, PaymentType: in.PaymentType,
		Narration: in.Narration, UniqueReference: in.UniqueReference, Meta: cloneMeta(in.Meta),
		Created: ms, Updated: ms,
	}}
	if quote != nil {
		r.FXQuoteID, r.SourceCurrency, r.SourceAmount = quote.ID, acct.Currency, quote.AmountFrom
	}
	if receiver != nil {
		r.ReceiverID = receiver.ID
	}
	if err := s.placeHolds(tx, now, r, acct, quote); err != nil {
		return nil, err
	}
	if quote != nil {
		if err := useQuote(tx, now, quote, r.ID); err != nil {
			return nil, err
		}
	}
	return s.recordTransfer(tx, now, r)
}

// transferAccount resolves the entity_id the request names, validates the
// body, and returns the account to debit, which must lie in that entity's
// tree: the transfer acts for the account's owner.
func (s *Service) transferAccount(tx storage.Tx, caller corebank.Caller, in NewTransfer) (account, error) {
	a, err := scope.Get(tx, s.tree, caller, in.EntityID, in.AccountID, func(tx storage.Tx, id string) (account, error) {
		// The body is checked once entity_id is known to be the caller's
		// to name, as a request checks its body after its scope.
		if err := in.validate(); err != nil {
			return account{}, err
		}
		return s.accountTx(tx, id)
	}, ErrAccountNotFound)
	if err == ErrAccountNotFound { // the sentinel itself: a foreign account
		// Named as a missing one is (accountTx), built only when needed.
		return account{}, accountNotFound(in.AccountID)
	}
	return a, err
}

// duplicateReference returns ErrDuplicateReference, with the original
// transfer as Data, when account already has a transfer with ref.
func duplicateReference(tx storage.Tx, accountID, ref string) error {
	orig, err := tx.Get(bucketUnique, refKey(accountID, ref))
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	r, err := getTransfer(tx, string(orig))
	if err != nil {
		return err
	}
	return ErrDuplicateReference.WithData(r.view())
}

// checkPayee checks the payment detail (the owner's, paid by payment_type)
// and its counterparty (named consistently, active), and returns the
// detail's fields and the transfer's currency (the detail's).
func checkPayee(tx storage.Tx, acct account, in NewTransfer, more ...storage.Ref) (*detailFields, string, error) {
	d, err := getDetailFields(tx, acct.EntityID, in.PaymentDetailID)
	if err != nil {
		if errors.Is(err, ErrPaymentDetailNotFound) {
			return nil, "", ErrPaymentDetailNotFound.With("payment detail " + in.PaymentDetailID + " not found")
		}
		return nil, "", err
	}
	if err := prefetchPayee(tx, d, in.PaymentType, more...); err != nil {
		return nil, "", err
	}
	p := corebank.Problems{}
	if d.PaymentMethod != in.PaymentType {
		p.Add("payment_type", "must match the payment detail's payment_method "+d.PaymentMethod)
	}
	if in.CounterpartyID != "" && in.CounterpartyID != d.CounterpartyID {
		p.Add("counterparty_id", "does not own the payment detail")
	} else if active, err := counterpartyActive(tx, acct.EntityID, d.CounterpartyID); err != nil {
		if !errors.Is(err, ErrCounterpartyNotFound) {
			return nil, "", err
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
	return d, currency, p.Err()
}

// transferQuote returns the quote a cross-currency transfer names, checked
// against the account, the currency and the amount as of now; nil for a
// transfer in the account's own currency, which must name none.
func (s *Service) transferQuote(tx storage.Tx, now time.Time, acct account, currency string, in NewTransfer) (*Quote, error) {
	if acct.Currency == currency {
		if in.FXQuoteID != "" {
			return nil, corebank.InvalidField("fx_quote_id", "is only for a transfer in a currency other than the account's ("+acct.Currency+")")
		}
		return nil, nil
	}
	if in.FXQuoteID == "" {
		return nil, corebank.InvalidField("fx_quote_id", "is required: the account holds "+acct.Currency+" and the transfer is in "+currency)
	}
	// A nil tree: the account's owner itself must own the quote.
	quote, err := scope.Get(tx, nil, corebank.As(acct.EntityID), "", in.FXQuoteID, getQuote, ErrQuoteNotFound)
	if err != nil {
		if errors.Is(err, ErrQuoteNotFound) {
			return nil, ErrQuoteNotFound.With("fx quote " + in.FXQuoteID + " not found")
		}
		return nil, err
	}
	quote.view(now)
	p := corebank.Problems{}
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
	return quote, p.Err()
}

// bookReceiver returns the account a book transfer credits (the detail's
// account_number is its service_ban), nil for other payment types. What
// can be known now is checked now; settlement checks the account again.
func (s *Service) bookReceiver(tx storage.Tx, acct account, d *detailFields, currency, paymentType string) (*ledger.Account, error) {
	if paymentType != BookTransfer {
		return nil, nil
	}
	// The record alone: the receiving account's balance is the
	// settlement's to change, and an acceptance that read it would wait
	// for (and hold up) the settlements crediting it.
	var receiver *ledger.Account
	var err error
	if d.Receiver != "" {
		receiver, err = s.led.AccountRecordTx(tx, d.Receiver)
	} else {
		receiver, err = s.led.AccountRecordByServiceBANTx(tx, d.AccountNumber)
	}
	switch {
	case err != nil && corebank.KindOf(err) == corebank.KindNotFound, err == nil && receiver.Deleted != 0:
		return nil, corebank.InvalidField("payment_detail_id", "the receiving account no longer exists")
	case err != nil:
		return nil, err
	case receiver.Currency != currency:
		return nil, corebank.InvalidField("payment_detail_id", "the receiving account holds "+receiver.Currency)
	case receiver.ID == acct.ID:
		return nil, corebank.InvalidField("payment_detail_id", "a book transfer cannot pay the account it debits")
	case !receiver.Configuration.AllowInflows:
		return nil, ledger.ErrInflowsNotAllowed.With("the receiving account does not accept inflows")
	}
	return receiver, nil
}

// placeHolds reserves r's money with ledger holds, recording their IDs in
// r. Every hold is within one currency, so each currency balances on its
// own (see doc.go, "Transfers").
func (s *Service) placeHolds(tx storage.Tx, now time.Time, r *transferRecord, acct account, quote *Quote) error {
	rail := railPurpose(r.PaymentType)
	type leg struct {
		from, to string
		amount   int64
	}
	var legs []leg
	switch {
	case quote == nil:
		legs = append(legs, leg{acct.ID, s.led.SystemAccount(r.Currency, rail), r.Amount})
	case heldInLedger(r.Currency):
		legs = append(legs,
			leg{acct.ID, s.led.SystemAccount(acct.Currency, ledger.PurposeFX), quote.AmountFrom},
			leg{s.led.SystemAccount(r.Currency, ledger.PurposeFX), s.led.SystemAccount(r.Currency, rail), quote.AmountTo})
	default:
		// A payout-only currency: the rail converts, so the source currency
		// goes to the rail's clearing account.
		legs = append(legs, leg{acct.ID, s.led.SystemAccount(acct.Currency, rail), quote.AmountFrom})
	}
	fee := r.ApplicableFee
	if fee > 0 {
		legs = append(legs, leg{acct.ID, s.led.SystemAccount(acct.Currency, ledger.PurposeFees), fee})
	}
	for i, l := range legs {
		narration := r.Narration
		if fee > 0 && i == len(legs)-1 {
			narration = "Fee: " + narration
		}
		h, err := s.led.HoldTx(tx, now, ledger.HoldRequest{
			DebitAccountID: l.from, CreditAccountID: l.to, Amount: l.amount,
			Narration: narration, Reference: r.ID,
		})
		if err != nil {
			if errors.Is(err, ledger.ErrInsufficientFunds) {
				return ledger.ErrInsufficientFunds.With("the account's available balance is below the amount plus fees")
			}
			return err
		}
		r.Holds = append(r.Holds, h.ID)
	}
	return nil
}

// useQuote marks quote used by transfer id and drops its expiry.
func useQuote(tx storage.Tx, now time.Time, quote *Quote, id string) error {
	used := corebank.Millis(now)
	quote.Quote.Status, quote.Quote.UsedAt, quote.Quote.UsedInPaymentID = QuoteUsed, &used, &id
	quote.Quote.ValidFor, quote.Updated = 0, used
	if err := storage.Unschedule(tx, dueQuote, quote.Quote.ExpiresAt, quote.ID); err != nil {
		return err
	}
	return storage.PutJSON(tx, bucketQuotes, []byte(quote.ID), quote)
}

// recordTransfer stores r with its unique reference and indexes and emits
// outflows.created. Every transfer, a book transfer too, then waits for
// RunDue's first check, due now.
func (s *Service) recordTransfer(tx storage.Tx, now time.Time, r *transferRecord) (*Transfer, error) {
	if err := tx.Put(bucketUnique, refKey(r.AccountID, r.UniqueReference), []byte(r.ID)); err != nil {
		return nil, err
	}
	// The event's object is a *Transfer, not pre-encoded JSON: the ledger
	// encodes it with json.Marshal, which encodes a struct faster than it
	// re-validates a json.RawMessage.
	out := r.view()
	if _, err := s.led.AppendEventTx(tx, now, EventOutflowCreated, r.EntityID, out); err != nil {
		return nil, err
	}
	if err := schedule(tx, r, r.Created); err != nil {
		return nil, err
	}
	if err := writeTransferIndexes(tx, &r.Transfer, true); err != nil {
		return nil, err
	}
	if err := s.putTransfer(tx, r); err != nil {
		return nil, err
	}
	return out, nil
}

// receiveTx credits a book transfer's receiving account, through the
// Receiver when there is one. The receiving side refusing (the account
// deleted, not accepting inflows, its owner not approved: a corebank error
// of kind Invalid, NotFound or Rejected) is returned as a *receiveRefused,
// which RunDue answers by failing the transfer.
func (s *Service) receiveTx(tx storage.Tx, now time.Time, r *transferRecord) error {
	err := s.credit(tx, now, r)
	switch corebank.KindOf(err) {
	case corebank.KindInvalid, corebank.KindNotFound, corebank.KindRejected:
		return &receiveRefused{err}
	}
	return err
}

// credit is receiveTx's work. A book transfer without a receiving account
// (none is written so) finds none and fails rather than leave its money in
// clearing.book.
func (s *Service) credit(tx storage.Tx, now time.Time, r *transferRecord) error {
	to, err := s.led.GetAccountTx(tx, r.ReceiverID)
	if err != nil {
		return err
	}
	if to.Deleted != 0 {
		return ledger.ErrAccountDeleted.With("the receiving account " + to.ID + " is deleted")
	}
	if s.receiver != nil {
		_, err := s.receiver.ReceiveTx(tx, now, funding.NewInflow{ID: r.inflowID, AccountID: to.ID, Amount: r.Amount,
			Currency: r.Currency, Narration: r.Narration, Reference: r.ID, Source: BookTransfer})
		return err
	}
	_, err = s.led.PostTx(tx, now, ledger.Entry{
		Key: "payments:book:" + r.ID,
		Lines: []ledger.Line{
			{AccountID: s.led.SystemAccount(r.Currency, ledger.PurposeClearingBook), Side: ledger.Debit, Amount: r.Amount},
			{AccountID: to.ID, Side: ledger.Credit, Amount: r.Amount},
		},
		Narration: r.Narration, Reference: r.ID,
	})
	return err
}

// receiveRefused is the receiving side's refusal of a book transfer's
// credit. It unwraps to the refusal, so SimulateTransfer answers with it
// as it is.
type receiveRefused struct{ err error }

func (e *receiveRefused) Error() string {
	return "book transfer refused by the receiver: " + e.err.Error()
}
func (e *receiveRefused) Unwrap() error { return e.err }

// reason is the failed transfer's status_reason: invalid_account_details
// when the receiving account is gone, else the refusal's code
// (inflows_not_allowed, entity_not_approved, ...).
func (e *receiveRefused) reason() string {
	var ce *corebank.Error
	switch {
	case errors.Is(e.err, ledger.ErrAccountDeleted), corebank.KindOf(e.err) == corebank.KindNotFound:
		return ReasonInvalidAccountDetails
	case errors.As(e.err, &ce) && ce.Code != "":
		return ce.Code
	}
	return ReasonPayoutFailed
}

// settleTx posts the transfer's holds and marks it successful; a book
// transfer then credits its receiving account (receiveTx).
func (s *Service) settleTx(tx storage.Tx, now time.Time, r *transferRecord, reason string) error {
	// The sending account first, then the receiving one: the order in
	// which the transfer's acceptance took them, and claims of several
	// transfers, sorted by sending account, take them in one order too,
	// so that on a store that locks them (storage/postgres) they wait for
	// each other rather than deadlock.
	for _, h := range r.Holds {
		if _, err := s.led.PostHoldTx(tx, now, h, 0); err != nil {
			return err
		}
	}
	if r.PaymentType == BookTransfer {
		if err := s.receiveTx(tx, now, r); err != nil {
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
	if err := writeTransferIndexes(tx, &r.Transfer, false); err != nil {
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
	if err := writeTransferIndexes(tx, &r.Transfer, true); err != nil {
		return err
	}
	return s.putTransfer(tx, r)
}

// GetTransfer returns transfer id when it lies in the tree of entityID
// (the caller's own entity when ""). It returns corebank.ErrEntityNotFound
// for an entityID outside the caller's tree and ErrTransferNotFound for a
// missing transfer or one outside the entity's tree alike.
func (s *Service) GetTransfer(ctx context.Context, caller corebank.Caller, entityID, id string) (*Transfer, error) {
	return storage.View(ctx, s.db, func(tx storage.Tx) (*Transfer, error) {
		r, err := scope.Get(tx, s.tree, caller, entityID, id, getTransfer, ErrTransferNotFound)
		if err != nil {
			return nil, err
		}
		return r.view(), nil
	})
}

// ListTransfers returns one page of one entity's transfers in creation
// order, filtered by status, with the entity listed: the owner of
// f.AccountID when it is set (the account must lie in the tree of
// f.EntityID, the caller's own entity when ""), else f.EntityID. It
// returns corebank.ErrEntityNotFound for an entity_id outside the caller's
// tree, ErrAccountNotFound for an account missing or outside that tree
// alike, or a validation error naming status, limit or cursor when one is
// malformed.
func (s *Service) ListTransfers(ctx context.Context, caller corebank.Caller, f TransferFilter, opts corebank.ListOptions) (EntityPage[Transfer], error) {
	switch f.Status {
	case "", StatusPending, StatusProcessing, StatusSuccessful, StatusFailed, StatusReversed:
	default:
		return EntityPage[Transfer]{}, corebank.InvalidField("status", "must be one of pending, processing, successful, failed, reversed")
	}
	index := 0
	if f.AccountID != "" {
		index = 1
	}
	statuses := transferStatuses[:]
	if f.Status != "" {
		statuses = []string{f.Status}
	}
	return storage.View(ctx, s.db, func(tx storage.Tx) (EntityPage[Transfer], error) {
		entity, err := actsFor(s, tx, caller, f.EntityID, f.AccountID, s.ledgerAccount, accountNotFound(f.AccountID))
		if err != nil {
			return EntityPage[Transfer]{}, err
		}
		prefixes := make([][]byte, len(statuses))
		for i, st := range statuses {
			prefixes[i] = appendTransferIndexPrefix(nil, entity, f.AccountID, st, index)
		}
		page, err := readMerged(tx, prefixes, opts, func(id string) (Transfer, error) {
			r, err := getTransfer(tx, id)
			if err != nil {
				return Transfer{}, err
			}
			return *r.view(), nil
		})
		return EntityPage[Transfer]{Page: page, EntityID: entity}, err
	})
}

// Simulation outcomes accepted by SimulateTransfer.
const (
	OutcomeProcessing = StatusProcessing
	OutcomeSuccessful = StatusSuccessful
	OutcomeFailed     = StatusFailed
	OutcomeReversed   = StatusReversed
)

// SimulateTransfer moves transfer id as a rail callback would (POST
// /sandbox/transfers/{id}/simulate): outcome processing (from pending),
// successful (posts the holds; outflows.completed), failed (voids the
// holds, funds back; outflows.failed) or reversed (from successful: a new
// journal entry returns amount and fee; outflows.refunded). statusReason,
// when given, becomes status_reason. entityID scopes the lookup as in
// GetTransfer. It returns corebank.ErrForbidden for a read-only caller,
// corebank.ErrEntityNotFound, ErrTransferNotFound, a validation error
// naming outcome or status_reason, or ErrInvalidForState for a move the
// current status does not allow (book transfers cannot be reversed). A
// successful outcome for a book transfer credits the receiving account,
// and the receiving side's refusal (ledger.ErrAccountDeleted,
// ledger.ErrInflowsNotAllowed, ...) is returned with nothing changed.
func (s *Service) SimulateTransfer(ctx context.Context, caller corebank.Caller, entityID, id, outcome, statusReason string) (*Transfer, error) {
	if err := caller.CheckWrite(); err != nil {
		return nil, err
	}
	now := s.clock.Now()
	return storage.Update(ctx, s.db, func(tx storage.Tx) (*Transfer, error) {
		r, err := scope.Get(tx, s.tree, caller, entityID, id, getTransfer, ErrTransferNotFound)
		if err != nil {
			return nil, err
		}
		switch outcome {
		case OutcomeProcessing, OutcomeSuccessful, OutcomeFailed, OutcomeReversed:
		case "":
			return nil, corebank.InvalidField("outcome", "is required")
		default:
			return nil, corebank.InvalidField("outcome", "must be processing, successful, failed or reversed")
		}
		p := corebank.Problems{}
		if corebank.CheckText(p, "status_reason", statusReason, corebank.Line(0, 100)); len(p) > 0 {
			return nil, p.Err()
		}
		if err := s.moveTx(tx, now, r, outcome, statusReason); err != nil {
			return nil, err
		}
		return r.view(), nil
	})
}

// RunDue does the work that fell due at or before asOf, in this order:
// it expires active quotes past expires_at ("payments.quote"), then asks
// the payout provider about unfinished transfers whose check is due
// ("payments.transfer"), applying what it reports (with the same ledger
// effects and events as SimulateTransfer). A book transfer is corebank's own
// rail: its first check settles it, crediting the receiving account, or
// fails it when the receiving side refuses. It returns how many quotes and
// transfers it handled. A provider error is returned, as
// ErrPayoutProviderUnavailable wrapping it, after the other due transfers
// are handled; that transfer is retried 30 s later.
func (s *Service) RunDue(ctx context.Context, asOf time.Time) (int, error) {
	return storage.NewDue(s.db, s.clock, 0, s.DueJobs()...).Lease(s.node, 0).RunDue(ctx, asOf)
}

// DueJobs returns the service's due work, in the order it runs: quote
// expiry (a Tx job), then payout checks (a Batch job: the provider is
// asked outside any transaction).
func (s *Service) DueJobs() []storage.DueJob {
	return []storage.DueJob{
		{Kind: dueQuote, Tx: expireQuoteTx},
		// A claim of 16 checks settles well within a lease even when the
		// provider is slow to answer. Each check is scheduled in the group
		// of the account it debits (schedule).
		{Kind: dueTransfer, Batch: s.checkPayouts, Claim: 16},
	}
}

// checkPayouts settles due book transfers and asks the payout provider
// about each due payout, outside any transaction, then applies every
// answer. The first transaction reads the claim's transfers and settles
// the book transfers among them, which need no provider, so that a claim
// of book transfers costs one transaction; the payouts' answers go in a
// second. When the receiving side refuses a book transfer, the transaction
// is rolled back and run again with that transfer failed instead, so the
// refusal costs the others nothing. A transfer whose item another node
// took over is left to that node. Any other error falls back to one
// transaction per transfer, so that those before the failing one are
// still applied and the rest given back. It returns how many transfers
// changed status, and the first provider error after handling the rest.
func (s *Service) checkPayouts(ctx context.Context, now time.Time, items []storage.DueItem) (int, error) {
	var firstErr error
	if changed, err := s.settle(ctx, now, items, &firstErr); err == nil {
		return changed, firstErr
	}
	changed := 0
	firstErr = nil
	for i := range items {
		moved, err := s.settle(ctx, now, items[i:i+1], &firstErr)
		if err != nil {
			// Give the rest back, so the next run takes them at once.
			_ = storage.Release(context.WithoutCancel(ctx), s.db, dueTransfer, items[i:])
			return changed, err
		}
		changed += moved
	}
	return changed, firstErr
}

// settle is checkPayouts for items in at most two transactions: it
// returns how many transfers changed status, and the error of a
// transaction. The first provider error, as ErrPayoutProviderUnavailable,
// goes in *firstErr unless one is there.
func (s *Service) settle(ctx context.Context, now time.Time, items []storage.DueItem, firstErr *error) (int, error) {
	changed, asks, err := s.applyPayouts(ctx, now, items, make([]payoutAnswer, len(items)))
	if err != nil || len(asks) == 0 {
		return changed, err
	}
	asked := make([]storage.DueItem, len(asks))
	answers := make([]payoutAnswer, len(asks))
	for i, a := range asks {
		asked[i] = items[a.i]
		answers[i].asked = true
		answers[i].res, answers[i].err = s.payouts.Check(ctx, a.t, now)
		if answers[i].err != nil && *firstErr == nil {
			e := *ErrPayoutProviderUnavailable
			e.Err = answers[i].err
			*firstErr = &e
		}
	}
	moved, _, err := s.applyPayouts(ctx, now, asked, answers)
	return changed + moved, err
}

// byAccount returns the indexes of items in the order of their
// transfers' accounts, then IDs (a transfer gone first). prefetchPayouts
// locks what it reads in key order; the reads it does not cover are then
// made, and locked, in one order by every claim applied at once on a
// store that locks what they touch (storage/postgres), which then wait
// for each other instead of deadlocking.
func byAccount(tx storage.Tx, items []storage.DueItem) ([]int, error) {
	accounts := make([]string, len(items))
	for i, it := range items {
		r, err := getTransfer(tx, it.ID)
		switch {
		case errors.Is(err, ErrTransferNotFound):
		case err != nil:
			return nil, err
		default:
			accounts[i] = r.AccountID
		}
	}
	idx := make([]int, len(items))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		if c := strings.Compare(accounts[a], accounts[b]); c != 0 {
			return c
		}
		return strings.Compare(items[a].ID, items[b].ID)
	})
	return idx, nil
}

// payoutAnswer is what the provider said about one due transfer (res, or
// the error err) once asked is set. Unasked, applyPayouts answers a book
// transfer itself (successful) and leaves a payout to the provider.
type payoutAnswer struct {
	res   PayoutResult
	err   error
	asked bool
}

// payoutAsk is a due payout, the i-th item, for the provider to answer.
type payoutAsk struct {
	i int
	t *Transfer
}

// applyPayouts applies answers[i] to the transfer of items[i], all in one
// transaction, and returns how many transfers changed status, and the
// items whose answer is the provider's to give: payouts not yet asked,
// left as they are. Items whose lease this node lost are skipped. A book
// transfer the receiving side refuses stops the transaction, whose writes
// for it cannot be kept apart from the others', and the transaction runs
// again with that answer (in answers, which it changes) failing the
// transfer: a failure credits nobody, so each item is refused once at
// most.
func (s *Service) applyPayouts(ctx context.Context, now time.Time, items []storage.DueItem, answers []payoutAnswer) (int, []payoutAsk, error) {
	type applied struct {
		changed int
		asks    []payoutAsk
	}
	for {
		a, err := storage.Update(ctx, s.db, func(tx storage.Tx) (applied, error) {
			var a applied
			inflows, err := s.prefetchPayouts(tx, now, items)
			if err != nil {
				return a, err
			}
			order, err := byAccount(tx, items)
			if err != nil {
				return a, err
			}
			for _, i := range order {
				it := items[i]
				// The lease first, before anything is written for the item.
				if err := storage.CheckLease(tx, dueTransfer, it); errors.Is(err, storage.ErrLeaseLost) {
					continue // another node took the check over: its answer counts
				} else if err != nil {
					return a, err
				}
				ans := answers[i]
				if !ans.asked {
					cur, err := getTransfer(tx, it.ID)
					if err != nil && !errors.Is(err, ErrTransferNotFound) {
						return a, err
					}
					if err == nil && cur.PaymentType != BookTransfer && cur.DueAt == it.At {
						a.asks = append(a.asks, payoutAsk{i: i, t: cur.view()})
						continue
					}
					// A book transfer succeeds; a stale item is dropped.
					ans.res = PayoutResult{Status: StatusSuccessful}
				}
				moved, err := s.applyPayoutTx(tx, now, it, ans.res, ans.err, inflows[it.ID])
				if refused := (*receiveRefused)(nil); errors.As(err, &refused) {
					return a, &refusedItem{i: i, reason: refused.reason(), err: err}
				}
				if err != nil {
					return a, err
				}
				if moved {
					a.changed++
				}
			}
			return a, nil
		})
		var ri *refusedItem
		if !errors.As(err, &ri) || answers[ri.i].res.Status == StatusFailed {
			return a.changed, a.asks, err
		}
		answers[ri.i] = payoutAnswer{res: PayoutResult{Status: StatusFailed, StatusReason: ri.reason}, asked: true}
	}
}

// refusedItem is a refusal (err, a *receiveRefused) of the book transfer
// of the i-th item in applyPayouts' transaction.
type refusedItem struct {
	i      int
	reason string
	err    error
}

func (e *refusedItem) Error() string { return e.err.Error() }
func (e *refusedItem) Unwrap() error { return e.err }

// applyPayoutTx applies what the provider said (res, or the error perr)
// about the transfer of a due item, and reschedules it while unfinished.
// It reports whether the transfer changed status. The caller checks the
// item's lease first (storage.CheckLease).
func (s *Service) applyPayoutTx(tx storage.Tx, now time.Time, it storage.DueItem, res PayoutResult, perr error, inflowID string) (bool, error) {
	cur, err := getTransfer(tx, it.ID)
	if cur != nil {
		cur.inflowID = inflowID
	}
	if errors.Is(err, ErrTransferNotFound) || err == nil && cur.DueAt != it.At {
		// Gone, or moved by someone else meanwhile: this item is stale.
		return false, storage.Unschedule(tx, dueTransfer, it.At, it.ID)
	}
	if err != nil {
		return false, err
	}
	if perr != nil {
		if err := schedule(tx, cur, corebank.Millis(now.Add(30*time.Second))); err != nil {
			return false, err
		}
		return false, s.putTransfer(tx, cur)
	}
	next := res.Next
	if next.IsZero() || !next.After(now) {
		next = now.Add(time.Second)
	}
	changed := false
	switch {
	case res.Status == cur.Status || res.Status == StatusPending:
	case res.Status == StatusProcessing && cur.Status == StatusPending,
		res.Status == StatusSuccessful, res.Status == StatusFailed:
		if err := s.moveTx(tx, now, cur, res.Status, res.StatusReason); err != nil {
			return false, err
		}
		changed = true
	}
	if cur.Status == StatusPending || cur.Status == StatusProcessing {
		if err := schedule(tx, cur, corebank.Millis(next)); err != nil {
			return false, err
		}
		return changed, s.putTransfer(tx, cur)
	}
	if cur.DueAt != 0 { // finished earlier, yet still scheduled
		if err := unschedule(tx, cur); err != nil {
			return false, err
		}
		return changed, s.putTransfer(tx, cur)
	}
	return changed, nil
}
