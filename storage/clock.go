package storage

import (
	"context"
	"encoding/binary"
	"errors"
	"sync"
	"time"

	"github.com/benbjohnson/clock"
)

// BucketClock holds a sandbox's fake time ("now": Unix nanoseconds,
// big-endian), so that every node over the store sees the same one.
const BucketClock = Bucket("storage.clock")

var keyClockNow = []byte("now")

// SharedClock keeps a fake clock's time in the store: several nodes (each
// with its own *clock.Mock) over one store move together. Advance moves the
// stored time and this node's mock; Sync brings this node's mock up to the
// stored time. Now stays the mock's, a memory read: a node sees another's
// advance from its next Sync, and its mock never moves back. Methods are
// safe for concurrent use.
type SharedClock struct {
	db   Backend
	mock *clock.Mock
	mu   sync.Mutex // orders Set calls on mock, which never go back
}

// NewSharedClock returns the shared clock of db that moves mock.
func NewSharedClock(db Backend, mock *clock.Mock) *SharedClock {
	return &SharedClock{db: db, mock: mock}
}

// Mock returns the node's clock that c moves.
func (c *SharedClock) Mock() *clock.Mock { return c.mock }

// Sync moves the node's clock forward to the stored time, when that is
// later, and returns the node's time.
func (c *SharedClock) Sync(ctx context.Context) (time.Time, error) {
	at, err := View(ctx, c.db, readClock)
	if err != nil {
		return c.mock.Now(), err
	}
	return c.forward(at), nil
}

// Advance moves the stored time d past the later of it and the node's
// clock, and the node's clock with it, in one transaction: advances made
// on several nodes at once all count. It returns the new time.
func (c *SharedClock) Advance(ctx context.Context, d time.Duration) (time.Time, error) {
	at, err := Update(ctx, c.db, func(tx Tx) (int64, error) {
		stored, err := readClock(tx)
		if err != nil {
			return 0, err
		}
		now := max(stored, c.mock.Now().UnixNano()) + int64(d)
		return now, tx.Put(BucketClock, keyClockNow, AppendInt64(nil, now))
	})
	if err != nil {
		return c.mock.Now(), err
	}
	return c.forward(at), nil
}

// forward sets the mock to at (Unix nanoseconds) unless it is already
// there or later, and returns the mock's time.
func (c *SharedClock) forward(at int64) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if at > c.mock.Now().UnixNano() {
		c.mock.Set(time.Unix(0, at))
	}
	return c.mock.Now()
}

// readClock returns the stored time in Unix nanoseconds; 0 when none is.
func readClock(tx Tx) (int64, error) {
	v, err := tx.Get(BucketClock, keyClockNow)
	if errors.Is(err, ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if len(v) != 8 {
		return 0, ErrCorrupt
	}
	return int64(binary.BigEndian.Uint64(v)), nil
}
