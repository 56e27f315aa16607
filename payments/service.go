package payments

import (
	"slices"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/internal/scope"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/service"
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
)

// Options are the Service's optional dependencies. A nil *Options, and
// every zero field, use the documented default.
type Options struct {
	// Deps are the clock, IDs, tree and logger every service shares; the
	// clock defaults to the real one.
	service.Deps
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
	tree     scope.Tree
	accounts accountRefs // see transfer_account_refs.go
	node     string      // RunDue's node ID: its leases survive from one call to the next
}

// NewService returns a payments service over db that moves money through
// led. led must use the same backend db.
func NewService(db storage.Backend, led *ledger.Service, opt *Options) *Service {
	var o Options
	if opt != nil {
		o = *opt
	}
	o.Deps = o.Deps.WithDefaults(nil)
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
		margin: o.CorridorMarginBps, receiver: o.Receiver, tree: o.Tree, node: storage.NewNodeID()}
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

// entity is the entity a create or list acts for: requested (caller's own
// when "") as scope.Entity resolves it.
func (s *Service) entity(tx storage.Tx, caller corebank.Caller, requested string) (string, error) {
	return scope.Entity(tx, s.tree, caller, requested)
}

// maxIDLen bounds the IDs looked up: anything longer names nothing.
const maxIDLen = 128

// actsFor is the entity a request acts for: the owner of the object id it
// names, which read reads and scope.Get checks (a missing one answers
// notFound, and so does one outside the tree of entityID), or entityID
// itself (the caller's own when "") when it names none.
func actsFor[R scope.Owned](s *Service, tx storage.Tx, caller corebank.Caller, entityID, id string,
	read func(storage.Tx, string) (R, error), notFound error) (string, error) {
	if id == "" {
		return s.entity(tx, caller, entityID)
	}
	rec, err := scope.Get(tx, s.tree, caller, entityID, id, read, notFound)
	if err != nil {
		return "", err
	}
	return rec.Owner(), nil
}

// getRecord is storage.LoadJSON for an ID a caller sent: one no record can
// have is notFound without a read.
func getRecord[T any](tx storage.Tx, b storage.Bucket, id string, notFound error) (*T, error) {
	if id == "" || len(id) > maxIDLen {
		return nil, notFound
	}
	return storage.LoadJSON[T](tx, b, []byte(id), notFound)
}

// EntityPage is one page of a list of one entity's objects, with the
// entity it resolved to (a list named by an object, such as a counterparty
// or an account, lists for the object's owner).
type EntityPage[T any] struct {
	*corebank.Page[T]
	EntityID string
}

// listPage returns one page of the index under prefix (each key is prefix
// + id), loading each item with load. Cursors are item IDs.
func listPage[T any](tx storage.Tx, prefix []byte, opts corebank.ListOptions, load func(id string) (T, error)) (*corebank.Page[T], error) {
	limit, err := storage.CheckList(opts, corebank.DefaultLimit)
	if err != nil {
		return nil, err
	}
	return storage.ReadPage(tx, storage.PageQuery{Bucket: bucketIndex, Prefix: prefix, Opts: opts, Limit: limit},
		func(id string, _ []byte) (T, bool, error) {
			v, err := load(id)
			return v, err == nil, err
		})
}

// readMerged is listPage over the union of several indexes whose positions
// are distinct IDs (a transfer is in one status index at a time), the page
// ReadPage would read from one index holding them all: each index gives at
// most a page from the cursor, keys only, the merge keeps the page nearest
// the cursor, and only its items are loaded. A page costs a seek and a
// page of keys per index plus its items, wherever it starts.
func readMerged[T any](tx storage.Tx, prefixes [][]byte, opts corebank.ListOptions, load func(id string) (T, error)) (*corebank.Page[T], error) {
	if len(prefixes) == 1 {
		return listPage(tx, prefixes[0], opts, load)
	}
	limit, err := storage.CheckList(opts, corebank.DefaultLimit)
	if err != nil {
		return nil, err
	}
	back := opts.Before != ""
	var ids []string
	var more, beyond bool // more: beyond the page's far end; beyond: before its near end
	for _, p := range prefixes {
		pg, err := storage.ReadPage(tx, storage.PageQuery{Bucket: bucketIndex, Prefix: p, Opts: opts, Limit: limit},
			func(id string, _ []byte) (string, bool, error) { return id, true, nil })
		if err != nil {
			return nil, err
		}
		ids = append(ids, pg.Items...)
		if back {
			more, beyond = more || pg.HasPrevious, beyond || pg.HasNext
		} else {
			more, beyond = more || pg.HasNext, beyond || pg.HasPrevious
		}
	}
	slices.Sort(ids)
	if len(ids) > limit {
		more = true
		if back {
			ids = ids[len(ids)-limit:]
		} else {
			ids = ids[:limit]
		}
	}
	page := &corebank.Page[T]{Items: make([]T, 0, len(ids)), Total: -1}
	for _, id := range ids {
		v, err := load(id)
		if err != nil {
			return nil, err
		}
		page.Items = append(page.Items, v)
	}
	if back {
		page.HasPrevious, page.HasNext = more, beyond
	} else {
		page.HasNext, page.HasPrevious = more, beyond
	}
	if n := len(ids); n > 0 {
		if page.HasNext {
			page.Next = ids[n-1]
		}
		if page.HasPrevious {
			page.Previous = ids[0]
		}
	}
	return page, nil
}

// setIndex writes (or, when on is false, removes) the index key for id.
func setIndex(tx storage.Tx, on bool, id string, parts ...string) error {
	k := append(storage.Prefix(parts...), id...)
	if on {
		return tx.Put(bucketIndex, k, []byte{})
	}
	return tx.Delete(bucketIndex, k)
}
