package ledger

import (
	"sync"
	"sync/atomic"

	"github.com/benbjohnson/clock"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/internal/scope"
	"github.com/corebank/corebank/ledger/coordinates"
	"github.com/corebank/corebank/service"
	"github.com/corebank/corebank/storage"
)

// Buckets the ledger writes. Every bucket name starts with "ledger.".
const (
	bucketAccounts   = storage.Bucket("ledger.accounts")       // account ID -> account JSON
	bucketIndex      = storage.Bucket("ledger.account_index")  // <filter>/<values...>/<account ID> -> empty
	bucketCounts     = storage.Bucket("ledger.account_counts") // <filter>/<values...> -> uint64 count
	bucketBANs       = storage.Bucket("ledger.bans")           // service BAN -> account ID
	bucketDefaults   = storage.Bucket("ledger.defaults")       // entity ID -> default account ID
	bucketBalances   = storage.Bucket("ledger.balances")       // account ID -> binary balance record
	bucketDeltas     = storage.Bucket("ledger.balance_deltas") // system account ID/<prefix><n> -> binary balance change (sysdelta.go)
	bucketHistory    = storage.Bucket("ledger.history")        // <account>/S|P/<ms><seq> -> binary history line
	bucketPending    = storage.Bucket("ledger.pending")        // <account>/<ms><hold ID> -> pending statement row
	bucketHolds      = storage.Bucket("ledger.holds")          // hold ID -> binary hold
	bucketEntries    = storage.Bucket("ledger.entries")        // entry ID -> binary journal entry
	bucketIdem       = storage.Bucket("ledger.idempotency")    // caller key -> kind byte + object ID
	bucketOutbox     = storage.Bucket("ledger.outbox")         // event ID -> compact event (events.go)
	bucketUnread     = storage.Bucket("ledger.outbox_unread")  // event ID -> empty, until a reader marks it read
	bucketEventOrder = storage.Bucket("ledger.event_order")    // 4-byte FNV-1a of an object ID, the ID -> ID of its newest event
	bucketMeta       = storage.Bucket("ledger.meta")           // counters
)

// EntityGate lets the package that owns entities veto ledger work inside the
// same storage transaction. The ledger cannot import that package (it
// imports the ledger), so it asks through this interface. Errors returned by
// a gate are returned unchanged to the ledger's caller.
type EntityGate interface {
	// CanOpenAccount returns nil when entityID exists and may open accounts
	// (for example, it is approved).
	CanOpenAccount(tx storage.Tx, entityID string) error
	// CanMoveMoney returns nil when entityID's accounts may start new money
	// movements (for example, the entity is not suspended).
	CanMoveMoney(tx storage.Tx, entityID string) error
}

// GateReads is an optional interface an EntityGate may implement: the
// keys CanMoveMoney reads for entityID, so that a transaction that will
// ask can read them with the rest of what it prefetches (storage.Prefetch)
// instead of in a round trip of their own.
type GateReads interface {
	GateRefs(entityID string) []storage.Ref
}

// GateRefs returns the keys the gate reads to let entityID move money
// (GateReads), none when the gate does not say.
func (s *Service) GateRefs(entityID string) []storage.Ref {
	if g, ok := s.gate.(GateReads); ok && entityID != "" {
		return g.GateRefs(entityID)
	}
	return nil
}

// Options are the Service's optional dependencies. The zero value, and a
// nil *Options, use the documented defaults.
type Options struct {
	// Deps are the clock, IDs, tree and logger every service shares; the
	// clock defaults to the real one.
	service.Deps
	// Gate vetoes account opening and money movement; nil allows everything.
	Gate EntityGate
	// Coordinates issues account details (bank coordinates, wallet
	// addresses); default coordinates.NewSandbox(nil).
	Coordinates coordinates.Provider
	// DueBatch is how many due items RunDue handles per transaction;
	// default storage.DefaultDueBatch.
	DueBatch int
}

// Service is the ledger: accounts, balances, journal entries, holds,
// statements and the event outbox. It is safe for concurrent use; all state
// lives in the storage backend.
type Service struct {
	db       storage.Backend
	clock    clock.Clock
	ids      *corebank.IDs
	gate     EntityGate
	tree     scope.Tree
	coords   coordinates.Provider
	dueBatch int
	// bufs recycles the scratch buffers hot writes build keys and values
	// in (see hot_records.go).
	bufs sync.Pool
	// deltaPrefix and deltaSeq make the keys of system account changes
	// (sysdelta.go) unique.
	deltaPrefix [8]byte
	deltaSeq    atomic.Uint64
}

// NewService returns a ledger over db. It starts no goroutines; call RunDue
// to resolve holds whose timeout fell due.
func NewService(db storage.Backend, opt *Options) *Service {
	var o Options
	if opt != nil {
		o = *opt
	}
	o.Deps = o.Deps.WithDefaults(nil)
	if o.Coordinates == nil {
		o.Coordinates = coordinates.NewSandbox(nil)
	}
	return &Service{db: db, clock: o.Clock, ids: o.IDs, gate: o.Gate, tree: o.Tree, coords: o.Coordinates, dueBatch: o.DueBatch,
		deltaPrefix: newDeltaPrefix()}
}

// Clock returns the clock the service reads time from.
func (s *Service) Clock() clock.Clock { return s.clock }
