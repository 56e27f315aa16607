package ledger

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"time"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/storage"
)

// MaxAmount is the largest amount of one line or hold (2^53-1, so every
// amount survives a JSON number round trip).
const MaxAmount = 1<<53 - 1

// Text limits.
const (
	maxNarration = 255
	maxReference = 255
	maxKey       = 255
)

// Side is the side of a journal line.
type Side string

// Sides. A debit lowers an account's signed balance, a credit raises it.
const (
	Debit  Side = "debit"
	Credit Side = "credit"
)

// Line is one line of a journal entry.
type Line struct {
	AccountID string `json:"account_id"`
	Side      Side   `json:"side"`
	Amount    int64  `json:"amount"`
	// Currency is the account's currency. It may be left empty in an Entry;
	// when set it must match the account (else ErrCurrencyMismatch).
	Currency string `json:"currency,omitempty"`
}

// Entry is a request to post a journal entry: lines whose debits equal
// their credits in every currency, applied atomically.
type Entry struct {
	// ID, when set, is the posted entry's ID instead of one the ledger
	// makes: a ULID the caller made for this entry (corebank.IDs.New), so
	// that a domain object can be its entry (a completed inflow is the
	// entry that credited it). It must have corebank's ID form and be
	// unused by any entry, else a validation error on id.
	ID string `json:"id,omitempty"`
	// Key, when set, makes Post idempotent: a retry with the same key and
	// content returns the original entry; keys are global, so callers
	// namespace them ("transfer:<id>").
	Key       string            `json:"key,omitempty"`
	Lines     []Line            `json:"lines"`
	Narration string            `json:"narration,omitempty"`
	Reference string            `json:"reference,omitempty"`
	Meta      map[string]string `json:"meta,omitempty"`
}

// JournalEntry is a posted entry.
type JournalEntry struct {
	ID        string            `json:"id"`
	Key       string            `json:"key,omitempty"`
	Lines     []Line            `json:"lines"`
	Narration string            `json:"narration,omitempty"`
	Reference string            `json:"reference,omitempty"`
	Meta      map[string]string `json:"meta,omitempty"`
	Created   int64             `json:"created"`
}

// Post applies entry as one transaction and returns the posted entry.
//
// Errors: a validation error naming each bad field (id, lines.N.amount,
// ...); ErrAccountNotFound; ErrCurrencyMismatch; ErrUnbalancedEntry;
// ErrAccountDeleted; ErrInflowsNotAllowed/ErrOutflowsNotAllowed;
// ErrInsufficientFunds when a customer account's available balance would go
// below zero; ErrIdempotencyKeyReused; and any error of the EntityGate. On
// error nothing is written.
func (s *Service) Post(ctx context.Context, entry Entry) (*JournalEntry, error) {
	return storage.Update(ctx, s.db, func(tx storage.Tx) (*JournalEntry, error) {
		return s.PostTx(tx, s.clock.Now(), entry)
	})
}

// PostTx is Post inside tx at time now, for callers composing several
// ledger operations atomically. It writes nothing when it returns an error.
func (s *Service) PostTx(tx storage.Tx, now time.Time, entry Entry) (*JournalEntry, error) {
	if err := validateEntry(&entry); err != nil {
		return nil, err
	}
	if entry.Key != "" {
		orig, err := s.replayEntry(tx, &entry)
		if orig != nil || err != nil {
			return orig, err
		}
	}

	// Load each account once, check currencies, balance per currency.
	type acct struct {
		r     *balRec
		delta int64
	}
	accts := make(map[string]*acct, len(entry.Lines))
	sums := map[string]int64{}
	lines := make([]Line, len(entry.Lines))
	for i, l := range entry.Lines {
		a := accts[l.AccountID]
		if a == nil {
			r, err := loadBal(tx, l.AccountID)
			if err != nil {
				var ce *corebank.Error
				if errors.As(err, &ce) {
					ce = ce.With(ce.Message)
					ce.Fields = map[string]string{fmt.Sprintf("lines.%d.account_id", i): "no such account"}
					return nil, ce
				}
				return nil, err
			}
			a = &acct{r: r}
			accts[l.AccountID] = a
		}
		if l.Currency != "" && l.Currency != a.r.currency {
			e := ErrCurrencyMismatch.With(fmt.Sprintf("line %d is in %s but account %s holds %s", i, l.Currency, l.AccountID, a.r.currency))
			e.Fields = map[string]string{fmt.Sprintf("lines.%d.currency", i): "must be " + a.r.currency}
			return nil, e
		}
		l.Currency = a.r.currency
		lines[i] = l
		if l.Side == Debit {
			a.delta -= l.Amount
			sums[l.Currency] -= l.Amount
		} else {
			a.delta += l.Amount
			sums[l.Currency] += l.Amount
		}
	}
	for cur, sum := range sums {
		if sum != 0 {
			e := ErrUnbalancedEntry.With(fmt.Sprintf("credits minus debits in %s is %d, not 0", cur, sum))
			e.Fields = map[string]string{"lines": "debits and credits differ in " + cur}
			return nil, e
		}
	}
	checked := map[string]bool{}
	for i, l := range lines {
		r := accts[l.AccountID].r
		if err := s.checkMovable(tx, r, l.AccountID, l.Side, checked); err != nil {
			return nil, withField(err, fmt.Sprintf("lines.%d.account_id", i))
		}
	}
	for id, a := range accts {
		if !withinLimit(a.r.Settled + a.delta) {
			return nil, ErrBalanceLimit.With("account " + id + " would exceed the balance limit")
		}
		if !a.r.system() && a.delta < 0 && a.r.Available()+a.delta < 0 {
			return nil, ErrInsufficientFunds.With("account " + id + " has insufficient available funds")
		}
	}

	// Write.
	ms := corebank.Millis(now)
	id := entry.ID
	if id == "" {
		id = s.ids.New(now)
	} else if err := entryIDFree(tx, id); err != nil {
		return nil, err
	}
	j := &JournalEntry{
		ID:        id,
		Key:       entry.Key,
		Lines:     lines,
		Narration: entry.Narration,
		Reference: entry.Reference,
		Meta:      maps.Clone(entry.Meta),
		Created:   ms,
	}
	if err := tx.Put(bucketEntries, []byte(j.ID), j.encode()); err != nil {
		return nil, err
	}
	if j.Key != "" {
		if err := tx.Put(bucketIdem, []byte(j.Key), append([]byte{idemEntry}, j.ID...)); err != nil {
			return nil, err
		}
	}
	for _, l := range lines {
		d := l.Amount
		if l.Side == Debit {
			d = -d
		}
		hl := HistoryLine{Kind: LineEntry, TxID: j.ID, SettledDelta: d, Narration: j.Narration, Reference: j.Reference}
		if err := s.writeLine(tx, l.AccountID, accts[l.AccountID].r, ms, &hl); err != nil {
			return nil, err
		}
	}
	for id, a := range accts {
		if err := s.putBal(tx, id, a.r); err != nil {
			return nil, err
		}
	}
	return j, nil
}

// maxBalance bounds every balance component so that sums of a few of them
// never overflow int64.
const maxBalance = 1 << 62

func withinLimit(v int64) bool { return v <= maxBalance && v >= -maxBalance }

// withField copies a validation or not-found *corebank.Error adding the
// name of the request field it is about; other errors are returned
// unchanged. A refusal of state (a deleted account, a suspended owner) is
// about the account, not a field of the request, and callers one layer up
// name their own fields differently (a transfer's account_id, not
// debit_account_id), so it keeps its message and no field.
func withField(err error, field string) error {
	var ce *corebank.Error
	if !errors.As(err, &ce) || (ce.Kind != corebank.KindInvalid && ce.Kind != corebank.KindNotFound) {
		return err
	}
	c := *ce
	c.Fields = map[string]string{field: ce.Message}
	return &c
}

// checkMovable enforces the per-account rules of a new movement: not
// deleted, configuration allows the direction, and the gate (once per
// entity) allows the owner to move money. System accounts pass.
func (s *Service) checkMovable(tx storage.Tx, r *balRec, id string, side Side, gateChecked map[string]bool) error {
	if r.system() {
		return nil
	}
	if r.flags&flagDeleted != 0 {
		return ErrAccountDeleted.With("account " + id + " is deleted")
	}
	if side == Debit && r.flags&flagNoOutflows != 0 {
		return ErrOutflowsNotAllowed
	}
	if side == Credit && r.flags&flagNoInflows != 0 {
		return ErrInflowsNotAllowed
	}
	if s.gate != nil && !gateChecked[string(r.entity)] {
		entityID := string(r.entity)
		if err := s.gate.CanMoveMoney(tx, entityID); err != nil {
			return err
		}
		if gateChecked != nil {
			gateChecked[entityID] = true
		}
	}
	return nil
}

func validateEntry(e *Entry) error {
	p := corebank.Problems{}
	if len(e.Lines) < 2 {
		p.Add("lines", "an entry needs at least two lines")
	}
	for i, l := range e.Lines {
		f := "lines." + strconv.Itoa(i) + "."
		if l.AccountID == "" {
			p.Add(f+"account_id", "is required")
		}
		if l.Side != Debit && l.Side != Credit {
			p.Add(f+"side", "must be debit or credit")
		}
		if l.Amount <= 0 || l.Amount > MaxAmount {
			p.Add(f+"amount", "must be between 1 and 2^53-1")
		}
	}
	if e.ID != "" && !corebank.ValidID(e.ID) {
		p.Add("id", "must be a ULID")
	}
	checkText(p.Add, e.Narration, e.Reference, e.Key)
	return p.Err()
}

// entryIDFree refuses a caller-chosen entry ID that an entry already has.
func entryIDFree(tx storage.Tx, id string) error {
	_, err := tx.Get(bucketEntries, []byte(id))
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return nil
	case err != nil:
		return err
	}
	return corebank.InvalidField("id", "is the ID of another entry")
}

// The text of entries and holds: a narration may hold line breaks; a
// reference and a key are single lines.
var (
	narrationRule = corebank.FreeText(0, maxNarration)
	referenceRule = corebank.Line(0, maxReference)
	keyRule       = corebank.Line(0, maxKey)
)

// checkText reports to add each of narration, reference and key that
// breaks its rule. It takes a function rather than Problems so that a hold
// makes its map only on a problem.
func checkText(add func(field, problem string), narration, reference, key string) {
	if problem := narrationRule.Problem(narration); problem != "" {
		add("narration", problem)
	}
	if problem := referenceRule.Problem(reference); problem != "" {
		add("reference", problem)
	}
	if problem := keyRule.Problem(key); problem != "" {
		add("key", problem)
	}
}

// Idempotency record kinds.
const (
	idemEntry byte = 'e'
	idemHold  byte = 'h'
)

// lookupIdem returns the kind and object ID stored for key, or 0.
func lookupIdem(tx storage.Tx, key string) (byte, string, error) {
	raw, err := tx.Get(bucketIdem, []byte(key))
	if errors.Is(err, storage.ErrNotFound) {
		return 0, "", nil
	}
	if err != nil {
		return 0, "", err
	}
	if len(raw) < 1 {
		return 0, "", storage.ErrCorrupt
	}
	return raw[0], string(raw[1:]), nil
}

func keyReused(fields map[string]string) error {
	e := ErrIdempotencyKeyReused.With(ErrIdempotencyKeyReused.Message)
	e.Fields = fields
	return e
}

// replayEntry returns the original entry for a retried key, a conflict
// error when the key was used for something else, or nil, nil.
func (s *Service) replayEntry(tx storage.Tx, entry *Entry) (*JournalEntry, error) {
	kind, id, err := lookupIdem(tx, entry.Key)
	if err != nil || kind == 0 {
		return nil, err
	}
	if kind != idemEntry {
		return nil, keyReused(map[string]string{"key": "was used for a hold"})
	}
	orig, err := getEntry(tx, id)
	if err != nil {
		return nil, err
	}
	diff := map[string]string{}
	if entry.ID != "" && entry.ID != orig.ID {
		diff["id"] = "differs from the original request"
	}
	if !sameLines(orig.Lines, entry.Lines) {
		diff["lines"] = "differs from the original request"
	}
	if orig.Narration != entry.Narration {
		diff["narration"] = "differs from the original request"
	}
	if orig.Reference != entry.Reference {
		diff["reference"] = "differs from the original request"
	}
	if !maps.Equal(orig.Meta, entry.Meta) {
		diff["meta"] = "differs from the original request"
	}
	if len(diff) > 0 {
		return nil, keyReused(diff)
	}
	return orig, nil
}

func sameLines(orig, req []Line) bool {
	if len(orig) != len(req) {
		return false
	}
	for i := range orig {
		a, b := orig[i], req[i]
		if a.AccountID != b.AccountID || a.Side != b.Side || a.Amount != b.Amount || (b.Currency != "" && a.Currency != b.Currency) {
			return false
		}
	}
	return true
}

func getEntry(tx storage.Tx, id string) (*JournalEntry, error) {
	raw, err := tx.Get(bucketEntries, []byte(id))
	if errors.Is(err, storage.ErrNotFound) {
		return nil, ErrEntryNotFound
	}
	if err != nil {
		return nil, err
	}
	return decodeEntry(raw, id)
}

// GetEntry returns a posted journal entry, or ErrEntryNotFound.
func (s *Service) GetEntry(ctx context.Context, id string) (*JournalEntry, error) {
	return storage.View(ctx, s.db, func(tx storage.Tx) (*JournalEntry, error) {
		return getEntry(tx, id)
	})
}

// GetEntryTx is GetEntry inside tx, for a domain whose object is stated
// by its entry (a completed inflow).
func (s *Service) GetEntryTx(tx storage.Tx, id string) (*JournalEntry, error) {
	return getEntry(tx, id)
}
