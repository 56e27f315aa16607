package bolt

import (
	"context"
	"errors"
	"fmt"
	"runtime"

	bbolt "go.etcd.io/bbolt"

	"github.com/corebank/corebank/storage"
)

// call is one Update waiting in the commit queue.
type call struct {
	fn       func(storage.Tx) error
	err      error
	panicked bool
	pval     any
	finished bool      // its outcome is final
	wake     chan bool // receives true to lead the next round, false when finished
}

// Update runs fn in a read-write transaction and commits iff fn returns nil;
// it returns once the commit is fsynced. Concurrent Updates share commits
// (see the package documentation), so fn may run more than once, each time
// with a fresh Tx. If fn returns an error or panics, nothing it wrote is
// kept and the error is returned (the panic re-raised on this goroutine).
// Update returns storage.ErrClosed after Close and ctx.Err() if ctx is
// already done; a failed log write or sync returns its error wrapped, as
// does every Update after it.
func (d *DB) Update(ctx context.Context, fn func(storage.Tx) error) error {
	if d.closed.Load() {
		return storage.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	c := &call{fn: fn, wake: make(chan bool, 1)}
	d.mu.Lock()
	if d.closed.Load() {
		d.mu.Unlock()
		return storage.ErrClosed
	}
	d.active.Add(1)
	defer d.active.Done()
	d.mu.Unlock()

	lead := d.writes.Join(c)
	if !lead {
		lead = <-c.wake
	}
	if lead {
		d.lead(c) // c is in the batch it leads, so it finishes
	}
	if c.panicked {
		panic(c.pval)
	}
	return c.err
}

// round is the state of one leader's work, kept so that a leader whose
// goroutine exits mid-round can hand the work on.
type round struct {
	btx     *bbolt.Tx // open bbolt read transaction, if any
	current *call     // call whose fn is running
}

// lead runs everything queued and writes it to the log, hands leadership
// to the first call that queued meanwhile, waits until what it wrote is
// fsynced, and wakes its batch. The next leader's round runs while this
// one's fsync is in flight.
func (d *DB) lead(self *call) {
	// Yield once before taking the queue: the callers the previous leader
	// just woke can then queue their next Update and ride this round, where
	// otherwise they would form a second group alternating with this one.
	// This is a yield, not a timer: with nobody runnable it returns at once.
	runtime.Gosched()
	batch := d.writes.Take() // kept until settle: never recycled

	var r round
	completed := false
	defer func() {
		if !completed {
			d.abandon(&r, batch, self)
		}
	}()
	d.runBatch(&r, batch)
	completed = true
	if d.err() == nil {
		d.maybeCheckpoint()
	}
	// Whatever the batch read or wrote must be durable before any of it is
	// reported: a failed function may have decided on a commit not yet
	// synced.
	upTo := d.written.Load()
	d.passOn()
	d.settle(batch, self, upTo)
}

// finished returns the calls of batch whose outcome is final. Once
// leadership is passed on, the others belong to the next leader.
func finished(batch []*call) []*call {
	var done []*call
	for _, c := range batch {
		if c.finished {
			done = append(done, c)
		}
	}
	return done
}

// passOn hands leadership to the first queued call, if any.
func (d *DB) passOn() {
	if next := d.writes.PassOn(); next != nil {
		next.wake <- true
	}
}

// settle waits until round upTo is durable and wakes the calls of done,
// whose outcomes are final. If the log failed, every call that committed
// gets its error.
func (d *DB) settle(done []*call, self *call, upTo uint64) {
	err := d.awaitDurable(upTo)
	for _, c := range done {
		if err != nil && c.err == nil && !c.panicked {
			c.err = err
		}
		if c != self {
			c.wake <- false
		}
	}
}

// abandon runs when the leader's goroutine exits inside a function
// (runtime.Goexit): the transaction is rolled back, the culprit is told, and
// the unfinished calls go back to the head of the queue for the next leader.
func (d *DB) abandon(r *round, batch []*call, self *call) {
	if r.btx != nil {
		_ = r.btx.Rollback()
	}
	if c := r.current; c != nil && !c.finished {
		c.err, c.panicked, c.finished = errGoexit, false, true
	}
	var retry []*call
	for _, c := range batch {
		if !c.finished && c != self {
			retry = append(retry, c)
		}
	}
	done := finished(batch)
	d.writes.Requeue(retry)
	upTo := d.written.Load()
	d.passOn()
	d.settle(done, self, upTo)
}

// runBatch runs batch as one round. When a function fails, the round is
// rolled back, the failed call gets a solo run whose outcome is its own, and
// the rest are retried together.
func (d *DB) runBatch(r *round, batch []*call) {
	pending := batch
	for len(pending) > 0 {
		failed, err := d.try(r, pending)
		if failed == nil {
			for _, c := range pending {
				c.err, c.panicked, c.pval, c.finished = err, false, nil, true
			}
			return
		}
		// Alone in the batch, the failure was already a solo run.
		if len(pending) > 1 {
			d.try(r, []*call{failed})
		}
		failed.finished = true
		rest := make([]*call, 0, len(pending)-1)
		for _, c := range pending {
			if c != failed {
				rest = append(rest, c)
			}
		}
		pending = rest
	}
}

// errRound rolls back the overlay transaction of a round in which a
// function failed.
var errRound = errors.New("storage/bolt: round rolled back")

// try runs calls in one overlay transaction and writes their writes to the
// log as one record: round number d.written+1, which tags every value it
// puts in the overlay and is counted in d.written before the overlay
// transaction commits. It returns the first call whose function failed
// (after rolling back), or nil and the write's error. For a single call the
// failure is recorded as its outcome. The record is not yet fsynced: lead
// waits for that before any caller returns, and a View that meets a value
// of the round waits for it too (tx.visible), so nobody sees a commit
// before it is durable.
func (d *DB) try(r *round, calls []*call) (*call, error) {
	fail := func(err error) (*call, error) {
		if len(calls) == 1 {
			calls[0].err, calls[0].panicked = err, false
		}
		return nil, err
	}
	if err := d.err(); err != nil {
		return fail(err)
	}
	st, btx, err := d.snapshot()
	if err != nil {
		return fail(err)
	}
	r.btx = btx
	defer func() {
		r.btx = nil
		_ = btx.Rollback()
	}()
	d.log.reset()
	round := d.written.Load() + 1
	var failed *call
	err = withTxs(context.Background(), st, true, func(overs []storage.Tx) error {
		for _, c := range calls {
			r.current = c
			t := &tx{d: d, overs: overs, base: btx, active: st.active, log: d.log, round: round}
			c.panicked, c.pval, c.err = run(t, c.fn)
			r.current = nil
			if c.err != nil || c.panicked {
				failed = c
				return errRound
			}
		}
		if d.log.empty() {
			return nil
		}
		if err := d.log.write(); err != nil {
			// The record may be partly written: nothing more can be
			// appended safely until a reopen replays the log.
			return d.fail(err)
		}
		d.written.Store(round)
		return nil
	})
	if failed != nil {
		return failed, nil
	}
	if err != nil {
		return fail(err)
	}
	return nil, nil
}

// run calls fn with t, which is invalidated when fn returns, and recovers
// a panic so that it can be re-raised on its caller's goroutine. (Since Go
// 1.21 panic(nil) arrives as *runtime.PanicNilError, so a nil recover means
// no panic; runtime.Goexit passes through to lead's guard.)
func run(t *tx, fn func(storage.Tx) error) (panicked bool, pval any, err error) {
	defer func() {
		t.done = true
		if r := recover(); r != nil {
			panicked, pval, err = true, r, nil
		}
	}()
	return false, nil, fn(t)
}

// awaitDurable returns once the first n rounds are fsynced, or the error
// that stopped the log. There is no sync thread and no timer: if no fsync
// is in flight, the caller runs one itself, covering every round written
// so far; otherwise it waits for the one in flight and checks again. So
// rounds that pile up during one fsync share the next.
func (d *DB) awaitDurable(n uint64) error {
	if d.durable.Load() >= n {
		return nil
	}
	d.syncMu.Lock()
	defer d.syncMu.Unlock()
	for d.durable.Load() < n && d.failed == nil {
		if d.syncing {
			d.synced.Wait()
			continue
		}
		d.syncing = true
		upTo, f := d.written.Load(), d.syncFile
		d.syncMu.Unlock()
		if d.testSync != nil {
			d.testSync()
		}
		err := f.f.Datasync()
		d.syncMu.Lock()
		d.syncing = false
		d.syncs.Add(1)
		if err != nil {
			d.failed = fmt.Errorf("storage/bolt: log sync failed, reopen to recover: %w", err)
		} else if upTo > d.durable.Load() {
			d.durable.Store(upTo)
		}
		d.synced.Broadcast()
	}
	return d.failed
}

// fail records that the log is unusable and returns the error.
func (d *DB) fail(err error) error {
	d.syncMu.Lock()
	defer d.syncMu.Unlock()
	if d.failed == nil {
		d.failed = fmt.Errorf("storage/bolt: log write failed, reopen to recover: %w", err)
		d.synced.Broadcast()
	}
	return d.failed
}

// err returns the error that stopped the log, if any.
func (d *DB) err() error {
	d.syncMu.Lock()
	defer d.syncMu.Unlock()
	return d.failed
}
