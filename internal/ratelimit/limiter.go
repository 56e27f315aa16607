package ratelimit

import "time"

// Limiter keeps a token bucket of one Rate per key. It is safe for
// concurrent use. A nil *Limiter allows everything.
type Limiter[K comparable] struct {
	rate Rate
	// step is the nanoseconds between two tokens (Per/Count) and tau the
	// most a key's theoretical arrival time may run ahead of now
	// (Burst*step): a bucket drained to empty is full again after tau.
	step, tau int64
	tab       table[K]
}

// Result is a Limiter's answer for one request.
type Result struct {
	// OK is whether the request may go ahead.
	OK bool
	// RetryAfter is, when OK is false, how long until a token is back
	// (and a retry would be allowed if nothing else came first); 0 when
	// OK.
	RetryAfter time.Duration
	// Count is how many tokens of the bucket are in use: the requests it
	// still counts, this one included when it was allowed. It is Limit
	// when a request is refused.
	Count int
	// Limit is the bucket's size, the Rate's Burst.
	Limit int
}

// New returns a Limiter of r per key, or nil (which allows everything)
// when r is Off. opt may be nil.
func New[K comparable](r Rate, opt *Options) *Limiter[K] {
	if r.Off() {
		return nil
	}
	l := &Limiter[K]{rate: r, step: max(1, int64(r.Per)/int64(r.Count))}
	l.rate.Burst = r.burst()
	l.tau = l.step * int64(l.rate.Burst)
	l.tab.init(opt, time.Duration(l.tau))
	return l
}

// Rate is the Limiter's rate, with its Burst filled in (the zero Rate for
// a nil Limiter).
func (l *Limiter[K]) Rate() Rate {
	if l == nil {
		return Rate{}
	}
	return l.rate
}

// Allow takes a token from k's bucket and reports OK, or, when the bucket
// is empty, takes nothing and reports how long until a token is back.
func (l *Limiter[K]) Allow(k K) Result {
	if l == nil {
		return Result{OK: true}
	}
	now := l.tab.now()
	s := l.tab.lock(k, now)
	tat := max(s.m[k], now) // an absent key has a full bucket
	next := tat + l.step
	if next-now > l.tau {
		s.mu.Unlock()
		return Result{RetryAfter: time.Duration(next - now - l.tau), Count: l.inUse(tat - now), Limit: l.rate.Burst}
	}
	l.tab.put(s, k, next)
	s.mu.Unlock()
	return Result{OK: true, Count: l.inUse(next - now), Limit: l.rate.Burst}
}

// Check reports what Allow would answer for k, taking nothing.
func (l *Limiter[K]) Check(k K) Result {
	if l == nil {
		return Result{OK: true}
	}
	now := l.tab.now()
	s := l.tab.lock(k, now)
	tat := max(s.m[k], now)
	s.mu.Unlock()
	if next := tat + l.step; next-now > l.tau {
		return Result{RetryAfter: time.Duration(next - now - l.tau), Count: l.inUse(tat - now), Limit: l.rate.Burst}
	}
	return Result{OK: true, Count: l.inUse(tat - now), Limit: l.rate.Burst}
}

// Return gives back a token Allow took from k (for a request that turned
// out not to count). A bucket never holds more than Burst tokens.
func (l *Limiter[K]) Return(k K) {
	if l == nil {
		return
	}
	now := l.tab.now()
	s := l.tab.lock(k, now)
	if tat, ok := s.m[k]; ok {
		if tat -= l.step; tat <= now {
			delete(s.m, k)
		} else {
			s.m[k] = tat
		}
	}
	s.mu.Unlock()
}

// Len is how many keys the Limiter holds (at most about Options.MaxKeys),
// stale ones not yet swept included.
func (l *Limiter[K]) Len() int {
	if l == nil {
		return 0
	}
	return l.tab.len()
}

// inUse is the tokens in use when a key's arrival time is ahead of now.
func (l *Limiter[K]) inUse(ahead int64) int {
	if ahead <= 0 {
		return 0
	}
	return int((ahead + l.step - 1) / l.step)
}

// Recent remembers keys for a time after each was last added. It is safe
// for concurrent use.
type Recent[K comparable] struct {
	ttl int64
	tab table[K]
}

// NewRecent returns a Recent that forgets a key ttl after it was last
// added. opt may be nil.
func NewRecent[K comparable](ttl time.Duration, opt *Options) *Recent[K] {
	r := &Recent[K]{ttl: int64(max(ttl, 1))}
	r.tab.init(opt, ttl)
	return r
}

// Add remembers k for the Recent's ttl from now.
func (r *Recent[K]) Add(k K) {
	now := r.tab.now()
	s := r.tab.lock(k, now)
	r.tab.put(s, k, now+r.ttl)
	s.mu.Unlock()
}

// Has reports whether k was added less than the Recent's ttl ago (and
// not evicted since; see "Memory" in the package doc).
func (r *Recent[K]) Has(k K) bool {
	now := r.tab.now()
	s := r.tab.lock(k, now)
	deadline, ok := s.m[k]
	s.mu.Unlock()
	return ok && deadline > now
}

// Refresh reports whether k was added less than the Recent's ttl ago,
// and when it was, remembers it for the ttl from now: Has and Add in one
// step, for keys that stay remembered while they are in use.
func (r *Recent[K]) Refresh(k K) bool {
	now := r.tab.now()
	s := r.tab.lock(k, now)
	deadline, ok := s.m[k]
	if ok = ok && deadline > now; ok {
		s.m[k] = now + r.ttl
	}
	s.mu.Unlock()
	return ok
}

// Len is how many keys the Recent holds, stale ones not yet swept
// included.
func (r *Recent[K]) Len() int { return r.tab.len() }
