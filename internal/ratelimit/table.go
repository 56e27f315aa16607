package ratelimit

import (
	"hash/maphash"
	"sync"
	"time"

	"github.com/benbjohnson/clock"
)

// DefaultMaxKeys is Options.MaxKeys when it is zero: about 10 MB of
// entries for short keys such as addresses and key IDs.
const DefaultMaxKeys = 100_000

// Options configures New and NewRecent. A nil *Options, and every zero
// field, takes the documented default.
type Options struct {
	// Clock is the time source (default the real clock).
	Clock clock.Clock
	// MaxKeys bounds the keys kept at once (default DefaultMaxKeys); see
	// "Memory" in the package doc.
	MaxKeys int
}

// shardCount is how many locks the keys are spread over: enough that the
// requests of a few dozen cores seldom meet on one.
const shardCount = 64

// table maps keys to a deadline, in nanoseconds since epoch, after which
// the entry means nothing (a full bucket, a forgotten key) and is dropped.
type table[K comparable] struct {
	clock      clock.Clock
	epoch      time.Time
	seed       maphash.Seed
	perShard   int
	sweepEvery int64
	shards     [shardCount]shard[K]
}

type shard[K comparable] struct {
	mu        sync.Mutex
	m         map[K]int64
	nextSweep int64
	_         [40]byte // one shard per cache line
}

// init readies t; sweepEvery is clamped to [1s, 1m].
func (t *table[K]) init(opt *Options, sweepEvery time.Duration) {
	var o Options
	if opt != nil {
		o = *opt
	}
	t.clock = o.Clock
	if t.clock == nil {
		t.clock = clock.New()
	}
	t.epoch = t.clock.Now()
	t.seed = maphash.MakeSeed()
	if o.MaxKeys <= 0 {
		o.MaxKeys = DefaultMaxKeys
	}
	t.perShard = max(1, (o.MaxKeys+shardCount-1)/shardCount)
	t.sweepEvery = int64(min(max(sweepEvery, time.Second), time.Minute))
	for i := range t.shards {
		t.shards[i].m = make(map[K]int64)
	}
}

// now is the time since t's epoch, in nanoseconds (monotonic on the real
// clock).
func (t *table[K]) now() int64 { return int64(t.clock.Since(t.epoch)) }

// lock returns k's shard, locked, after dropping its stale entries when
// its sweep is due. The caller unlocks it.
func (t *table[K]) lock(k K, now int64) *shard[K] {
	s := &t.shards[maphash.Comparable(t.seed, k)%shardCount]
	s.mu.Lock()
	if now >= s.nextSweep {
		for key, deadline := range s.m {
			if deadline <= now {
				delete(s.m, key)
			}
		}
		s.nextSweep = now + t.sweepEvery
	}
	return s
}

// put sets k's deadline in the locked shard s, evicting an arbitrary other
// key when s holds its share of MaxKeys.
func (t *table[K]) put(s *shard[K], k K, deadline int64) {
	if _, ok := s.m[k]; !ok && len(s.m) >= t.perShard {
		for old := range s.m {
			delete(s.m, old)
			break
		}
	}
	s.m[k] = deadline
}

// len counts the entries, stale ones included.
func (t *table[K]) len() int {
	n := 0
	for i := range t.shards {
		s := &t.shards[i]
		s.mu.Lock()
		n += len(s.m)
		s.mu.Unlock()
	}
	return n
}
