package corebank

import (
	"crypto/rand"
	"io"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"
)

// IDs makes ULIDs from an injected entropy source. It is safe for
// concurrent use. Within one millisecond IDs increase monotonically, so an
// ID's order is its creation order, which cursors and outbox reads rely on.
type IDs struct {
	mu      sync.Mutex
	entropy *ulid.MonotonicEntropy
}

// NewIDs returns an ID source reading from entropy; nil means crypto/rand.
// Tests pass a seeded math/rand source to get reproducible IDs.
func NewIDs(entropy io.Reader) *IDs {
	if entropy == nil {
		entropy = rand.Reader
	}
	return &IDs{entropy: ulid.Monotonic(entropy, 0)}
}

// New returns a ULID string for the instant t.
func (g *IDs) New(t time.Time) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	id, err := ulid.New(ulid.Timestamp(t), g.entropy)
	if err != nil {
		// Overflow within one millisecond or a failing reader: fall back to
		// fresh entropy rather than fail a money movement over an ID.
		id = ulid.MustNew(ulid.Timestamp(t), rand.Reader)
	}
	return id.String()
}

// Millis is the API's timestamp form: Unix milliseconds.
func Millis(t time.Time) int64 { return t.UnixMilli() }

// IDTimePrefix is the time part of the IDs made in millisecond ms: every
// ID of that millisecond or later sorts after it, every earlier one
// before, so a list keyed by ID seeks a time range with it.
func IDTimePrefix(ms int64) string {
	var u ulid.ULID
	if ms < 0 {
		ms = 0
	}
	if uint64(ms) > ulid.MaxTime() {
		ms = int64(ulid.MaxTime())
	}
	_ = u.SetTime(uint64(ms))
	return u.String()[:10]
}
