package storage

import (
	"context"
	"errors"
)

// Bucket names a keyspace. Buckets exist implicitly: a bucket never written
// to reads as empty. Names are short constants declared by each domain
// package ("ledger.accounts").
type Bucket string

// Backend is an ordered key-value store with serializable transactions.
type Backend interface {
	// View runs fn against one consistent snapshot. Writes inside fn fail with
	// ErrReadOnly. Updates that commit while fn runs are not visible to it.
	View(ctx context.Context, fn func(Tx) error) error

	// Update runs fn in a read-write transaction and commits iff fn returns
	// nil. If fn returns an error or panics, nothing it wrote is kept; the
	// error is returned, and a panic is re-raised on the caller's goroutine.
	// Update returns only once the commit is durable for a durable backend.
	//
	// fn may be called more than once (a backend that groups concurrent
	// transactions into one commit re-runs the others when one of them fails),
	// so fn must not have effects outside the Tx other than setting its own
	// results, which every run overwrites.
	Update(ctx context.Context, fn func(Tx) error) error

	// Close releases the backend. Calls after Close return ErrClosed.
	Close() error
}

// Tx is one transaction. It is valid only inside the function it is passed
// to, on that function's goroutine. Slices passed in may be reused by the
// caller after the call returns; slices returned are the caller's to keep.
type Tx interface {
	// Get returns the value stored under key, or ErrNotFound.
	Get(b Bucket, key []byte) ([]byte, error)
	// Put stores value under key, replacing any previous value.
	Put(b Bucket, key, value []byte) error
	// Delete removes key; deleting an absent key is not an error.
	Delete(b Bucket, key []byte) error
	// Scan calls fn for each key in the bucket selected by o, in key order
	// (or reverse order). Returning ErrStop from fn ends the scan with a nil
	// error; any other error ends it and is returned. key and value are valid
	// only during the call to fn; copy them to keep them.
	Scan(b Bucket, o ScanOptions, fn func(key, value []byte) error) error
}

// ScanOptions selects the keys a Scan visits.
type ScanOptions struct {
	// Prefix limits the scan to keys that start with it; nil means all keys.
	Prefix []byte
	// After, when set, starts the scan strictly after this key in the scan's
	// direction: the next greater key ascending, the next smaller descending.
	// It is how cursors resume a page.
	After []byte
	// Reverse scans from the greatest key down.
	Reverse bool
	// Limit stops the scan after this many keys; 0 means no limit.
	Limit int
	// Queue marks the scan of a queue: a range that other transactions
	// insert into and whose reader takes the keys it finds out of it (due
	// work, unread events). Inside an Update such a scan need not keep
	// other transactions from inserting into the range until the Update
	// ends: on a backend that runs Updates at once (storage/postgres) an
	// Update inserting a key into the range at the same time may commit
	// before or after the scanning one, and the scan may miss the key,
	// which the next scan finds. The keys it does see hold until the Update
	// ends, as every read's. Use it only where missing a key that is being
	// inserted does no harm; in a View, and on backends that run one
	// Update at a time, it changes nothing.
	Queue bool
}

var (
	// ErrNotFound is returned by Get for an absent key.
	ErrNotFound = errors.New("storage: key not found")
	// ErrReadOnly is returned by writes inside View.
	ErrReadOnly = errors.New("storage: write in a read-only transaction")
	// ErrClosed is returned by every call on a closed backend.
	ErrClosed = errors.New("storage: backend is closed")
	// ErrStop, returned by a Scan callback, ends the scan without error.
	ErrStop = errors.New("storage: stop scan")
	// ErrTxDone is returned by a Tx used after its function returned.
	ErrTxDone = errors.New("storage: transaction has ended")
	// ErrEmptyKey is returned by Put for an empty key.
	ErrEmptyKey = errors.New("storage: empty key")
)

// CheckWrite is the check a backend's Put and Delete make first: ErrTxDone
// once the transaction has ended, ErrReadOnly inside a View, ErrEmptyKey for
// an empty key.
func CheckWrite(done, writable bool, key []byte) error {
	switch {
	case done:
		return ErrTxDone
	case !writable:
		return ErrReadOnly
	case len(key) == 0:
		return ErrEmptyKey
	}
	return nil
}
