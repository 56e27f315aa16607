package payments

import (
	"bytes"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/storage"
)

// Buckets the payments service writes. Every name starts with "payments.".
const (
	bucketCounterparties = storage.Bucket("payments.counterparties") // id -> counterparty JSON
	bucketDetails        = storage.Bucket("payments.details")        // id -> payment detail JSON
	bucketQuotes         = storage.Bucket("payments.quotes")         // id -> quote record JSON
	bucketTransfers      = storage.Bucket("payments.transfers")      // id -> transfer record JSON
	bucketIndex          = storage.Bucket("payments.index")          // list indexes: <kind>/<scope>/<filter>/<id> -> empty
	bucketUnique         = storage.Bucket("payments.unique")         // uniqueness keys -> owning id
	bucketDue            = storage.Bucket("payments.due")            // <kind>/<ms><id> -> empty: work for RunDue
)

// Options are the Service's optional dependencies. A nil *Options, and
// every zero field, use the documented default.
type Options struct {
	// Clock is the only source of time; default clock.New().
	Clock clock.Clock
	// IDs makes every ID; default corebank.NewIDs(nil).
	IDs *corebank.IDs
	// Rates prices FX quotes; default NewSandboxRates(nil).
	Rates RateProvider
	// Payouts reports the progress of transfers on their rails; default
	// NewSandboxPayouts(nil).
	Payouts PayoutProvider
	// Fees is the fee schedule per payment type; default no fees.
	Fees FeeSchedule
	// QuoteValidity is how long a new FX quote stays usable; default 180 s.
	QuoteValidity time.Duration
	// CorridorMarginBps is an extra spread, in basis points of the rate,
	// applied to quotes that name an account_id (a firm corridor quote
	// rather than an indicative one); default 0.
	CorridorMarginBps int64
	// Receiver credits the receiving account of a book transfer and reports
	// the inflow; default: the service posts clearing.book -> receiver in the
	// ledger itself and emits no inflow event.
	Receiver Receiver
}

// Service manages counterparties, payment details, FX quotes and transfers.
// It is safe for concurrent use; all state lives in the storage backend and
// the ledger. It starts no goroutines: call RunDue to expire quotes and
// advance transfers.
type Service struct {
	db       storage.Backend
	led      *ledger.Service
	clock    clock.Clock
	ids      *corebank.IDs
	rates    RateProvider
	payouts  PayoutProvider
	fees     FeeSchedule
	validity time.Duration
	margin   int64
	receiver Receiver
	accounts accountRefs // see accountTx
}

// NewService returns a payments service over db that moves money through
// led. led must use the same backend db.
func NewService(db storage.Backend, led *ledger.Service, opt *Options) *Service {
	var o Options
	if opt != nil {
		o = *opt
	}
	if o.Clock == nil {
		o.Clock = clock.New()
	}
	if o.IDs == nil {
		o.IDs = corebank.NewIDs(nil)
	}
	if o.Rates == nil {
		o.Rates = NewSandboxRates(nil)
	}
	if o.Payouts == nil {
		o.Payouts = NewSandboxPayouts(nil)
	}
	if o.QuoteValidity <= 0 {
		o.QuoteValidity = 180 * time.Second
	}
	return &Service{db: db, led: led, clock: o.Clock, ids: o.IDs, rates: o.Rates,
		payouts: o.Payouts, fees: o.Fees.clone(), validity: o.QuoteValidity,
		margin: o.CorridorMarginBps, receiver: o.Receiver}
}

// Clock returns the clock the service reads time from.
func (s *Service) Clock() clock.Clock { return s.clock }

// Rates returns the rate provider in use (for example to reach the
// sandbox's SetOutage).
func (s *Service) Rates() RateProvider { return s.rates }

// Payouts returns the payout provider in use.
func (s *Service) Payouts() PayoutProvider { return s.payouts }

// Fees returns a copy of the fee schedule in use.
func (s *Service) Fees() FeeSchedule { return s.fees.clone() }

// inScope reports whether an object owned by owner is visible to entityID;
// "" means unscoped (internal callers).
func inScope(entityID, owner string) bool { return entityID == "" || entityID == owner }

// validCursor reports whether c looks like an ID this package issues
// (a 26-character ULID in Crockford base32).
func validCursor(c string) bool {
	if len(c) != 26 {
		return false
	}
	for i := 0; i < len(c); i++ {
		ch := c[i]
		switch {
		case ch >= '0' && ch <= '9', ch >= 'A' && ch <= 'Z' && ch != 'I' && ch != 'L' && ch != 'O' && ch != 'U':
		default:
			return false
		}
	}
	return true
}

// listIndex returns one page of the IDs under prefix (each key is prefix +
// id), loading each with load. Cursors are item IDs.
func listIndex[T any](tx storage.Tx, prefix []byte, opts corebank.ListOptions, load func(id string) (T, error)) (*corebank.Page[T], error) {
	limit, err := opts.CheckLimit(corebank.DefaultLimit)
	if err != nil {
		return nil, err
	}
	for _, c := range []string{opts.After, opts.Before} {
		if c != "" && !validCursor(c) {
			return nil, corebank.InvalidField("cursor", "is not a valid cursor")
		}
	}
	var ids []string
	collect := func(k, _ []byte) error {
		ids = append(ids, string(k[len(prefix):]))
		return nil
	}
	reverse := opts.Before != ""
	so := storage.ScanOptions{Prefix: prefix, Limit: limit + 1, Reverse: reverse}
	if opts.After != "" {
		so.After = append(bytes.Clone(prefix), opts.After...)
	} else if opts.Before != "" {
		so.After = append(bytes.Clone(prefix), opts.Before...)
	}
	if err := tx.Scan(bucketIndex, so, collect); err != nil {
		return nil, err
	}
	page := &corebank.Page[T]{Total: -1}
	more := len(ids) > limit
	if more {
		ids = ids[:limit]
	}
	if reverse {
		for i, j := 0, len(ids)-1; i < j; i, j = i+1, j-1 {
			ids[i], ids[j] = ids[j], ids[i]
		}
		page.HasPrevious = more
		page.HasNext = true
	} else {
		page.HasNext = more
		page.HasPrevious = opts.After != ""
	}
	// Verify the far side really has items (the cursor item may be gone).
	if len(ids) > 0 {
		if reverse {
			page.HasNext, err = anyBeyond(tx, prefix, ids[len(ids)-1], false)
		} else if opts.After != "" {
			page.HasPrevious, err = anyBeyond(tx, prefix, ids[0], true)
		}
		if err != nil {
			return nil, err
		}
	}
	page.Items = make([]T, 0, len(ids))
	for _, id := range ids {
		v, err := load(id)
		if err != nil {
			return nil, err
		}
		page.Items = append(page.Items, v)
	}
	if len(ids) > 0 {
		if page.HasNext {
			page.Next = ids[len(ids)-1]
		}
		if page.HasPrevious {
			page.Previous = ids[0]
		}
	}
	return page, nil
}

// anyBeyond reports whether the index has a key after (or, with before,
// before) prefix+id.
func anyBeyond(tx storage.Tx, prefix []byte, id string, before bool) (bool, error) {
	found := false
	err := tx.Scan(bucketIndex, storage.ScanOptions{Prefix: prefix, After: append(bytes.Clone(prefix), id...), Reverse: before, Limit: 1},
		func(_, _ []byte) error { found = true; return storage.ErrStop })
	return found, err
}

// setIndex writes (or, when on is false, removes) the index key for id.
func setIndex(tx storage.Tx, on bool, id string, parts ...string) error {
	k := append(storage.Prefix(parts...), id...)
	if on {
		return tx.Put(bucketIndex, k, []byte{})
	}
	return tx.Delete(bucketIndex, k)
}

// dueKey is the key of work due at t for id, under kind.
func dueKey(kind string, t int64, id string) []byte {
	k := storage.AppendInt64(storage.Prefix(kind), t)
	return append(k, id...)
}
