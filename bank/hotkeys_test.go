package bank_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/corebank/corebank/bank"
	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/memory"
)

// TestDisjointTransfersShareNoKeys audits the keys a book transfer's
// transactions touch: two transfers between disjoint accounts, each
// accepted over HTTP with an Idempotency-Key and then settled, must not
// write a key the other reads or writes (a Scan reads its whole range).
// On a store that runs transactions at once (PostgreSQL) such a key would
// make every two unrelated transfers conflict, and all of them wait for
// or retry against each other. The queues are left out (see queues).
func TestDisjointTransfersShareNoKeys(t *testing.T) {
	ctx := context.Background()
	mock := clock.NewMock()
	mock.Set(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	rec := &recorder{Backend: memory.New()}
	b := serveBank(t, rec, bank.Options{SecretKey: make([]byte, 32), Clock: mock, Logger: quiet})
	pairs := b.bookPairs(t, 2, 1_000_000)
	send := func(p bookPair, ref string) {
		if err := b.send(p, ref); err != nil {
			t.Fatal(err)
		}
	}
	settle := func() {
		mock.Add(2 * time.Second)
		if _, err := b.RunDue(ctx, mock.Now()); err != nil {
			t.Fatal(err)
		}
	}
	// Warm up: the first transfer of a bank writes one-time records.
	for i, p := range pairs {
		send(p, fmt.Sprint("warm-", i))
	}
	settle()

	var accept, settled [2]*access
	for i, p := range pairs {
		accept[i] = rec.record(func() { send(p, fmt.Sprint("audit-", i)) })
		settled[i] = rec.record(settle)
	}
	for _, c := range []struct {
		name string
		a, b *access
	}{{"accept", accept[0], accept[1]}, {"settle", settled[0], settled[1]}} {
		if shared := c.a.conflicts(c.b); len(shared) > 0 {
			t.Errorf("%s: two transfers between disjoint accounts share keys:\n  %s", c.name, strings.Join(shared, "\n  "))
		}
	}
}

// queues are the buckets every transfer inserts into and only a runner
// reads whole (the due runner, the webhook dispatcher): a reader of a range
// that writers only insert into depends on them in one direction, which
// never aborts anyone; its conflicts with other runners are the runner's.
var queues = map[string]bool{
	string(storage.BucketDue): true, string(storage.BucketDueLease): true, "ledger.outbox_unread": true,
}

// recorder is a Backend that records what Updates read and write while
// record runs.
type recorder struct {
	storage.Backend
	mu  sync.Mutex
	cur *access
}

func (r *recorder) record(fn func()) *access {
	a := &access{writes: map[string]bool{}}
	r.mu.Lock()
	r.cur = a
	r.mu.Unlock()
	fn()
	r.mu.Lock()
	r.cur = nil
	r.mu.Unlock()
	return a
}

func (r *recorder) Update(ctx context.Context, fn func(storage.Tx) error) error {
	return r.Backend.Update(ctx, func(tx storage.Tx) error {
		r.mu.Lock()
		a := r.cur
		r.mu.Unlock()
		if a == nil {
			return fn(tx)
		}
		t := &recTx{Tx: tx, run: &access{writes: map[string]bool{}}}
		err := fn(t)
		if err == nil {
			r.mu.Lock()
			a.merge(t.run)
			r.mu.Unlock()
		}
		return err
	})
}

// access is what transactions touched: keys written, and ranges read
// (a Get reads the range of its key alone).
type access struct {
	writes map[string]bool // bucket + "\x00" + key
	reads  []span
}

type span struct{ bucket, lo, hi string } // [lo, hi]; hi "" is the bucket's end

func (a *access) merge(b *access) {
	for k := range b.writes {
		a.writes[k] = true
	}
	a.reads = append(a.reads, b.reads...)
}

// conflicts lists the keys one side writes that the other reads or writes.
func (a *access) conflicts(b *access) []string {
	var out []string
	seen := map[string]bool{}
	check := func(w *access, r *access) {
		for k := range w.writes {
			bucket, key, _ := strings.Cut(k, "\x00")
			hit := r.writes[k]
			for _, s := range r.reads {
				if hit {
					break
				}
				hit = s.bucket == bucket && key >= s.lo && (s.hi == "" || key <= s.hi)
			}
			if hit && !seen[k] && !queues[bucket] {
				seen[k] = true
				out = append(out, fmt.Sprintf("%s %q", bucket, key))
			}
		}
	}
	check(a, b)
	check(b, a)
	sort.Strings(out)
	return out
}

type recTx struct {
	storage.Tx
	run *access
}

func (t *recTx) Get(b storage.Bucket, key []byte) ([]byte, error) {
	t.run.reads = append(t.run.reads, span{string(b), string(key), string(key)})
	return t.Tx.Get(b, key)
}

func (t *recTx) Put(b storage.Bucket, key, value []byte) error {
	t.run.writes[string(b)+"\x00"+string(key)] = true
	return t.Tx.Put(b, key, value)
}

func (t *recTx) Delete(b storage.Bucket, key []byte) error {
	t.run.writes[string(b)+"\x00"+string(key)] = true
	return t.Tx.Delete(b, key)
}

// Scan records the range it covered: from its start to the last key it
// visited, or to the end of its prefix when it ran out of keys.
func (t *recTx) Scan(b storage.Bucket, o storage.ScanOptions, fn func(key, value []byte) error) error {
	var last []byte
	stopped, n := false, 0
	err := t.Tx.Scan(b, o, func(k, v []byte) error {
		last = append(last[:0], k...)
		n++
		err := fn(k, v)
		if err != nil {
			stopped = true
		}
		return err
	})
	if o.Limit > 0 && n == o.Limit {
		stopped = true // a full page stopped at its limit; a short one ran out
	}
	lo, hi := string(o.Prefix), ""
	if end, ok := storage.PrefixEnd(o.Prefix); ok {
		hi = string(end)
	}
	if o.After != nil {
		if o.Reverse {
			hi = string(o.After)
		} else {
			lo = string(o.After)
		}
	}
	if stopped && last != nil {
		if o.Reverse {
			lo = string(last)
		} else {
			hi = string(last)
		}
	}
	t.run.reads = append(t.run.reads, span{string(b), lo, hi})
	return err
}
