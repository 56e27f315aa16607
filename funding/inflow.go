package funding

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/internal/scope"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/storage"
)

// Inflow statuses.
const (
	StatusPending   = "pending"
	StatusCompleted = "completed"
)

// EventInflowCompleted is appended when an inflow's money is settled.
const EventInflowCompleted = "inflows.completed"

// SourceBank is the default rail of an inflow; SourceBook marks the credit
// leg of a book transfer between corebank accounts.
const (
	SourceBank = "bank"
	SourceBook = "book-transfer"
)

// MaxNarration is the longest narration of an inflow, in characters.
const MaxNarration = 255

const bucket storage.Bucket = "funding.inflows"

// dueInflow is the storage due-queue kind of a pending inflow's settlement,
// scheduled at its settles_at.
const dueInflow = "funding.inflow"

// Inflow is money that arrived at an account.
type Inflow struct {
	ID               string  `json:"id"`
	Type             string  `json:"type"`
	AccountID        string  `json:"account_id"`
	EntityID         string  `json:"entity_id"`
	AccountDetailsID *string `json:"account_details_id"`
	Amount           int64   `json:"amount"`
	Currency         string  `json:"currency"`
	Narration        string  `json:"narration"`
	Reference        string  `json:"reference"`
	Source           string  `json:"source"`
	Status           string  `json:"status"`
	SettlesAt        *int64  `json:"settles_at"`
	CompletedAt      *int64  `json:"completed_at"`
	Created          int64   `json:"created"`
	Updated          int64   `json:"updated"`
}

// record is an Inflow with the ledger hold that carries it while pending.
type record struct {
	Inflow
	HoldID string `json:"hold_id,omitempty"`
}

// NewInflow is money arriving at AccountID. Its JSON form is the body of
// the sandbox route POST /sandbox/inflows {account_id, amount, currency?,
// narration?, settle?}; Reference and Source are set only by code (a book
// transfer's leg), never from a request body.
type NewInflow struct {
	// ID, when set, is the inflow's ID, made by the caller (corebank.IDs at
	// the time of the receipt) so that it could read ahead what receiving
	// reads (ReceiveReads); empty, the Service makes one. Never from a
	// request body.
	ID        string `json:"-"`
	AccountID string `json:"account_id"`
	Amount    int64  `json:"amount"`
	// Currency, when set, must be the account's currency.
	Currency  string `json:"currency,omitempty"`
	Narration string `json:"narration,omitempty"`
	Reference string `json:"-"`
	// Source is the rail the money came through; "" means SourceBank. It
	// picks the clearing account the credit comes from.
	Source string `json:"-"`
	// Settle false leaves the credit pending for Options.SettleDelay; nil
	// means true.
	Settle *bool `json:"settle,omitempty"`
}

// CreateInflow credits an account with money that arrived from outside and
// returns the inflow, completed or (Settle false) pending. caller must be
// allowed to write to the account's entity: an account outside its tree
// answers exactly as a missing one.
//
// Errors: corebank.ErrForbidden for a read-only caller; a validation error
// naming account_id, amount, currency, narration or source;
// ledger.ErrAccountNotFound (missing or outside the caller's tree);
// ledger.ErrAccountDeleted; ErrNoReceivingDetails;
// ledger.ErrInflowsNotAllowed.
func (s *Service) CreateInflow(ctx context.Context, caller corebank.Caller, in NewInflow) (*Inflow, error) {
	if err := caller.CheckWrite(); err != nil {
		return nil, err
	}
	if err := in.validate(); err != nil {
		return nil, err
	}
	return storage.Update(ctx, s.db, func(tx storage.Tx) (*Inflow, error) {
		foreign := ledger.ErrAccountNotFound.With("account " + in.AccountID + " not found")
		acct, err := scope.Get(tx, s.tree, caller, "", in.AccountID, s.led.GetAccountTx, foreign)
		if err != nil {
			return nil, err
		}
		return s.receive(tx, s.clock.Now(), acct, in)
	})
}

// ReceiveTx is CreateInflow inside tx at time now for trusted in-process
// code, with no caller to check: a domain that must credit an account
// atomically with its own change (a book transfer's receiving leg). An
// unknown account is a not-found error on account_id.
func (s *Service) ReceiveTx(tx storage.Tx, now time.Time, in NewInflow) (*Inflow, error) {
	if err := in.validate(); err != nil {
		return nil, err
	}
	acct, err := s.led.GetAccountTx(tx, in.AccountID)
	if errors.Is(err, ledger.ErrAccountNotFound) {
		return nil, ledger.ErrAccountNotFound.With("account_id: account not found")
	}
	if err != nil {
		return nil, err
	}
	return s.receive(tx, now, acct, in)
}

// ReceiveReads are the ledger keys that receiving an inflow with ID id
// reads of that ID: that no entry has it, and the inflow's event order.
func ReceiveReads(id string) ledger.Reads {
	return ledger.Reads{Entries: []string{id}, Events: []string{id}}
}

// ReceiveReadsFor are ReceiveReads of an inflow with ID id to accountID,
// with the account's details, which receiving looks through.
func ReceiveReadsFor(id, accountID string) ledger.Reads {
	r := ReceiveReads(id)
	r.DetailsOf = []string{accountID}
	return r
}

// checkMoneyIn checks what every way money comes in names: the account
// and an amount of at least 1 that an account can hold.
func checkMoneyIn(p corebank.Problems, accountID string, amount int64) {
	if accountID == "" {
		p.Add("account_id", "is required")
	}
	switch {
	case amount < 1:
		p.Add("amount", "must be at least 1")
	case amount > ledger.MaxAmount:
		p.Add("amount", "is too large")
	}
}

func (in *NewInflow) validate() error {
	p := corebank.Problems{}
	checkMoneyIn(p, in.AccountID, in.Amount)
	if in.Currency != "" {
		if _, ok := ledger.CurrencyInfo(in.Currency); !ok {
			p.Add("currency", "is not a supported currency")
		}
	}
	corebank.CheckText(p, "narration", in.Narration, corebank.FreeText(0, MaxNarration))
	if in.Source != "" && !validSource(in.Source) {
		p.Add("source", "must be lower-case letters, digits and dashes")
	}
	return p.Err()
}

func validSource(s string) bool {
	if len(s) > 32 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}

func clearingPurpose(source string) string {
	switch source {
	case SourceBank:
		return ledger.PurposeClearingBank
	case SourceBook:
		return ledger.PurposeClearingBook
	}
	return "clearing." + strings.TrimSuffix(source, "-transfer")
}

// receive credits acct, which in names, with in's money.
func (s *Service) receive(tx storage.Tx, now time.Time, acct *ledger.Account, in NewInflow) (*Inflow, error) {
	if in.Currency != "" && in.Currency != acct.Currency {
		return nil, corebank.InvalidField("currency", "must match the account's currency "+acct.Currency)
	}
	if acct.Deleted != 0 {
		return nil, ledger.ErrAccountDeleted
	}
	detailsID, err := s.receivingDetails(tx, now, acct.ID)
	if err != nil {
		return nil, err
	}
	source := in.Source
	if source == "" {
		source = SourceBank
	}
	ms := now.UnixMilli()
	r := &record{Inflow: Inflow{
		ID:               in.ID,
		Type:             "inflow",
		AccountID:        acct.ID,
		EntityID:         acct.EntityID,
		AccountDetailsID: detailsID,
		Amount:           in.Amount,
		Currency:         acct.Currency,
		Narration:        in.Narration,
		Reference:        in.Reference,
		Source:           source,
		Status:           StatusPending,
		Created:          ms,
		Updated:          ms,
	}}
	if r.ID == "" {
		r.ID = s.ids.New(now)
	}
	clearing := s.led.SystemAccount(acct.Currency, clearingPurpose(source))
	narration := in.Narration
	if narration == "" {
		narration = defaultNarration
	}
	if in.Settle == nil || *in.Settle {
		// The entry is the completed inflow's record (inflow_entry.go): it
		// takes the inflow's ID, and its meta what it does not say itself.
		// No ledger idempotency key: the inflow's ID is new, so nothing
		// could retry with it, and the key would cost a record each.
		// The ledger reads two keys of that ID (that no entry has it, and
		// the inflow's event order): at once, where reads are round trips.
		if storage.Prefetching(tx) {
			if err := ReceiveReads(r.ID).Prefetch(tx); err != nil {
				return nil, err
			}
		}
		_, err := s.led.PostTx(tx, now, ledger.Entry{
			ID: r.ID,
			Lines: []ledger.Line{
				{AccountID: clearing, Side: ledger.Debit, Amount: in.Amount},
				{AccountID: acct.ID, Side: ledger.Credit, Amount: in.Amount},
			},
			Narration: narration,
			Reference: in.Reference,
			Meta:      entryMeta(&r.Inflow),
		})
		if err != nil {
			return nil, err
		}
		if err := s.complete(tx, now, r); err != nil {
			return nil, err
		}
		return &r.Inflow, nil
	}
	hold, err := s.led.HoldTx(tx, now, ledger.HoldRequest{
		DebitAccountID:  clearing,
		CreditAccountID: acct.ID,
		Amount:          in.Amount,
		Narration:       narration,
		Reference:       in.Reference,
	})
	if err != nil {
		return nil, err
	}
	r.HoldID = hold.ID
	due := now.Add(s.settle).UnixMilli()
	r.SettlesAt = &due
	if err := put(tx, r); err != nil {
		return nil, err
	}
	if err := storage.Schedule(tx, dueInflow, due, r.ID); err != nil {
		return nil, err
	}
	return &r.Inflow, nil
}

// receivingDetails picks the account details the money arrives through: nil
// for an account without details, the first that accepts funds otherwise.
func (s *Service) receivingDetails(tx storage.Tx, now time.Time, accountID string) (*string, error) {
	details, err := s.led.AccountDetailsOfAccountTx(tx, accountID)
	if err != nil || len(details) == 0 {
		return nil, err
	}
	var last error
	for _, d := range details {
		if err := s.led.AcceptsInflowsTx(tx, now, d.ID); err != nil {
			last = err
			continue
		}
		id := d.ID
		return &id, nil
	}
	return nil, ErrNoReceivingDetails.With(ErrNoReceivingDetails.Message + ": " + last.Error())
}

// complete marks r settled, counts it on its details and reports it. A
// record without a hold is stated by its entry and is not stored; one
// settled from a hold is stored completed.
func (s *Service) complete(tx storage.Tx, now time.Time, r *record) error {
	ms := now.UnixMilli()
	r.Status = StatusCompleted
	r.CompletedAt = &ms
	r.Updated = ms
	if r.AccountDetailsID != nil {
		if err := s.led.RecordInflowTx(tx, now, *r.AccountDetailsID, r.Amount); err != nil {
			return err
		}
	}
	if r.HoldID != "" {
		if err := put(tx, r); err != nil {
			return err
		}
	}
	_, err := s.led.AppendEventTx(tx, now, EventInflowCompleted, r.EntityID, &r.Inflow)
	return err
}

// GetInflow returns an inflow, or ErrInflowNotFound: its record while it
// is pending or settled from a hold, else the journal entry that credited
// it (inflow_entry.go).
func (s *Service) GetInflow(ctx context.Context, id string) (*Inflow, error) {
	return storage.View(ctx, s.db, func(tx storage.Tx) (*Inflow, error) {
		r, err := get(tx, id)
		if errors.Is(err, ErrInflowNotFound) {
			return s.fromEntry(tx, id)
		}
		if err != nil {
			return nil, err
		}
		return &r.Inflow, nil
	})
}

// RunDue settles every pending inflow whose settle time is at or before
// asOf: the hold is posted and inflows.completed appended. It returns how
// many it settled. A runner calls it on a ticker; tests after advancing a
// mock clock.
func (s *Service) RunDue(ctx context.Context, asOf time.Time) (int, error) {
	return storage.NewDue(s.db, s.clock, 0, s.DueJobs()...).RunDue(ctx, asOf)
}

// DueJobs returns funding's due work for a storage.Due runner: the kind
// "funding.inflow" settles a pending inflow at its settles_at, inside the
// transaction that takes it off the queue.
func (s *Service) DueJobs() []storage.DueJob {
	return []storage.DueJob{{Kind: dueInflow, Tx: func(tx storage.Tx, now time.Time, it storage.DueItem) error {
		return s.settleDue(tx, now, it.ID)
	}}}
}

func (s *Service) settleDue(tx storage.Tx, now time.Time, id string) error {
	r, err := get(tx, id)
	if errors.Is(err, ErrInflowNotFound) {
		return nil // the due key outlived its record; nothing to settle
	}
	if err != nil || r.Status != StatusPending {
		return err
	}
	if _, err := s.led.PostHoldTx(tx, now, r.HoldID, 0); err != nil {
		return fmt.Errorf("settle inflow %s: %w", id, err)
	}
	return s.complete(tx, now, r)
}
