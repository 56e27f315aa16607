package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/corebank/corebank/storage"
)

// Every group takes a lock on the schema-version table (which nothing
// else writes after Open) first in its transaction, sent with its first
// statement, and holds it to its end: ROW SHARE, which groups share, so
// that groups on disjoint keys run at once on every node; EXCLUSIVE, to
// run alone once the groups before it end, for a group lost soloAfter
// times in a row to deadlocks (so that a long group losing
// to short ones on a hot key is not starved until its retries run out),
// and for every group of a DB whose groups keep conflicting (adapt has
// brought it down to one group at a time, and most of its transactions
// still fail): on a key every Update writes, the groups of several nodes
// then take turns instead of aborting each other. Not sooner: a
// group that runs alone stops every node's, and one lost once (a
// settlement against a payment on the same account) mostly commits when
// run again. Views never wait.
const soloAfter = 3

// errGoexit is the outcome recorded for a function that called
// runtime.Goexit (t.FailNow in a test): its caller never returns, and the
// others in its group go on without its writes.
var errGoexit = errors.New("storage/postgres: Update function called runtime.Goexit")

// call is one Update waiting for, or taking, its turn in a group.
type call struct {
	ctx context.Context
	fn  func(storage.Tx) error

	// Set by the caller's goroutine during its turn, read by the leader
	// after ran.
	err      error
	panicked bool
	pval     any
	goexit   bool
	t        *tx

	wake chan *tx      // a transaction for the caller's turn, or nil when its outcome is final
	ran  chan struct{} // the caller's turn is over
}

// Update runs fn in a transaction that behaves as if run alone (two-phase
// locking at READ COMMITTED, see the package documentation) and commits
// iff fn returns nil. Concurrent Updates may share transactions
// (Options.Group), and a deadlock re-runs them, so fn may run more than once, each time with a fresh Tx,
// and always on the caller's goroutine. When a statement or the commit
// fails with a deadlock (or a serialization failure), the transaction is
// rolled back and its functions run again in a new one, up to
// Options.Retries times with a jittered backoff; the error after the last
// wraps ErrRetriesExhausted and the database's error. If fn returns an
// error or panics, nothing it wrote is kept and the error is returned (the
// panic re-raised). Update returns storage.ErrClosed after Close and
// ctx.Err() if ctx is done before its function runs.
func (d *DB) Update(ctx context.Context, fn func(storage.Tx) error) error {
	if err := d.enter(ctx); err != nil {
		return err
	}
	defer d.leave()
	c := &call{ctx: ctx, fn: fn, wake: make(chan *tx, 1), ran: make(chan struct{}, 1)}
	d.qmu.Lock()
	if storage.HasPriority(ctx) {
		d.queue = slices.Insert(d.queue, d.urgent, c)
		d.urgent++
	} else {
		d.queue = append(d.queue, c)
	}
	if d.leaders < d.limit {
		d.leaders++
		go d.lead()
	}
	d.qmu.Unlock()
	for t := range c.wake {
		if t == nil {
			break
		}
		c.run(t)
	}
	if c.panicked {
		panic(c.pval)
	}
	return c.err
}

// run is one turn: fn on the caller's goroutine with t, its outcome
// recorded, and the leader told, however fn ends.
func (c *call) run(t *tx) {
	normal := false
	defer func() {
		t.done = true
		if !normal {
			if r := recover(); r != nil {
				c.panicked, c.pval = true, r
			} else {
				c.goexit, c.err = true, errGoexit
			}
		}
		c.ran <- struct{}{}
	}()
	c.err, c.panicked, c.pval, c.goexit, c.t = nil, false, nil, false, t
	c.err = c.fn(t)
	normal = true
}

// finish hands c its final outcome.
func (c *call) finish() { c.wake <- nil }

// lead runs groups of queued Updates, each in one transaction, until the
// queue is empty. At most Options.Leaders run at once, each holding one
// connection: while one waits for its commit, the next group forms and
// runs.
func (d *DB) lead() {
	for {
		d.qmu.Lock()
		n := min(len(d.queue), d.group)
		if n == 0 || d.leaders > d.limit {
			d.leaders--
			d.qmu.Unlock()
			return
		}
		batch := d.queue[:n:n]
		d.queue = d.queue[n:]
		d.urgent = max(0, d.urgent-n)
		d.qmu.Unlock()
		d.runGroup(batch)
	}
}

// adapt moves the number of groups that may run at once (limit) after a
// group's transaction ended, as TCP moves its congestion window: up by one
// at each commit, and down at each deadlock: by one while
// failures are a small share of the DB's transactions (fail, weighted
// towards the latest), which is the cost of running work at once that now
// and then shares a key (a payment and the settlement of an earlier one on
// the same account), and by half when they are many: on a key that every
// Update writes, concurrent groups only abort each other, and the DB falls
// back to one group at a time, which commits as much with few retries;
// while failures stay most of its transactions there, it is contended
// (contendedLocked) and stays at one.
func (d *DB) adapt(conflict bool) {
	d.qmu.Lock()
	defer d.qmu.Unlock()
	x := 0.0
	if conflict {
		x = 1
	}
	d.fail += (x - d.fail) / failWeight
	switch {
	case conflict && d.fail > manyFailures:
		d.limit = max(1, d.limit/2)
	case conflict:
		d.limit = max(1, d.limit-1)
	case d.limit < d.maxLeaders && !d.contendedLocked():
		d.limit++
	}
}

// failWeight sets how fast DB.fail follows the latest transactions (the
// weight of the newest is 1/failWeight); manyFailures is the share of
// failures above which the DB halves its groups at once, and
// contendedShare the share above which, at one group, it is contended.
const (
	failWeight     = 16
	manyFailures   = 0.25
	contendedShare = 0.5
)

// contendedLocked reports whether the DB's groups keep conflicting: it
// runs one group at a time and most of its transactions still fail.
// d.qmu is held.
func (d *DB) contendedLocked() bool {
	return d.limit == 1 && d.fail > contendedShare
}

// runGroup runs batch until its transaction commits, fails for good, or
// exhausts the retries, and then finishes every call in it.
func (d *DB) runGroup(batch []*call) {
	hot := map[bucketKey]bool{}
	for attempt := 0; ; attempt++ {
		err, retry := d.tryGroup(batch, attempt, hot)
		if sh, ok := err.(*errShape); ok {
			// Not a conflict: register the scan's shape, the transaction
			// ended and no lock held, and run the group again.
			ctx := context.Background()
			if len(batch) == 1 {
				ctx = batch[0].ctx
			}
			if err = d.register(ctx, sh.shape, false); err == nil {
				attempt--
				continue
			}
			err, retry = wrap(ctx, err), false
		}
		d.adapt(retry)
		if retry && attempt < d.retries {
			d.retried.Add(1)
			_ = sleep(context.Background(), backoff(attempt))
			continue
		}
		if retry {
			err = fmt.Errorf("%w after %d runs: %w", ErrRetriesExhausted, attempt+1, err)
		}
		for _, c := range batch {
			if err != nil && !c.goexit {
				c.err, c.panicked, c.pval = err, false, nil
			}
			c.finish()
		}
		return
	}
}

// tryGroup runs the functions of batch one after another in one
// transaction and commits it. In a group of several, each
// function runs after a savepoint (sent with its first statement, in the
// same round trip), and one that fails is rolled back to it alone: its outcome (error or panic) stands if the transaction commits,
// since it was decided on the state the commit makes real. A
// deadlock anywhere loses the whole
// transaction: retry is true and every function runs again. Any other
// error returned is every call's outcome.
//
// Statements run under the caller's context when it is alone, and
// otherwise under one without its cancellation: a cancelled statement
// breaks the connection, which the others' work is on.
func (d *DB) tryGroup(batch []*call, attempt int, hot map[bucketKey]bool) (err error, retry bool) {
	conn, err := d.pool.Acquire(context.Background())
	if err != nil {
		return wrap(context.Background(), err), false
	}
	defer conn.Release() // destroyed, not reused, if left in a transaction
	// BEGIN and the group's lock go to the server with the first
	// statement, in its round trip, and the lock before the snapshot (LOCK
	// TABLE takes none), so that a group that waited sees the commit it
	// waited for.
	d.qmu.Lock()
	contended := d.contendedLocked()
	d.qmu.Unlock()
	lock := d.q.shared
	if attempt >= soloAfter || contended {
		lock = d.q.exclusive
	}
	pre := []string{beginReadCommitted, lock}
	committed := false
	defer func() {
		if !committed && len(pre) == 0 { // the transaction began
			d.trips.Add(1)
			_, _ = conn.Exec(context.Background(), "ROLLBACK")
		}
	}()
	solo := len(batch) == 1
	group := writes{} // the writes of the functions that succeeded
	reads, scans := map[bucketKey][]byte{}, map[scanKey]*cached{}
	lk := &locking{d: d, hot: hot, prefixes: map[prefixKey]bool{}, buckets: map[storage.Bucket]lockMode{}, keys: map[storage.Bucket]int{}}
	// A run lost to a conflict locks what it wrote exclusively at its
	// first read when it runs again.
	lost := func(own writes) {
		for _, w := range []writes{group, own} {
			for b, m := range w {
				for k := range m {
					hot[bucketKey{b, k}] = true
				}
			}
		}
	}
	for _, c := range batch {
		if c.goexit {
			continue // its goroutine is gone
		}
		if err := c.ctx.Err(); err != nil {
			c.err, c.panicked = err, false
			continue
		}
		ctx := c.ctx
		if !solo {
			ctx = context.WithoutCancel(ctx)
		}
		t := &tx{ctx: ctx, q: &d.q, conn: conn.Conn(), writable: true, savepoint: !solo, own: writes{}, base: group, reads: reads, scans: scans, pre: &pre, trips: &d.trips, lk: lk}
		c.wake <- t
		<-c.ran
		if _, ok := t.conflict.(*errShape); ok {
			return t.conflict, true // runGroup registers the shape
		}
		if t.conflict != nil {
			lost(t.own)
			d.rmw.learn(reads, group)
			return t.conflict, true
		}
		if c.err == nil && !c.panicked && t.broken != nil {
			c.err = wrap(ctx, t.broken) // fn went on past a failed statement
		}
		if c.err == nil && !c.panicked {
			group.merge(t.own)
			continue
		}
		if solo {
			return nil, false // rolled back; the outcome is fn's
		}
		if t.broken == nil {
			continue // it only read, and its writes were never sent
		}
		d.trips.Add(1)
		if _, err := conn.Exec(ctx, "ROLLBACK TO SAVEPOINT g"); err != nil {
			return wrap(ctx, err), retryable(err)
		}
		t.forget()
	}
	d.rmw.learn(reads, group)
	if solo && (batch[0].err != nil || batch[0].panicked) {
		return nil, false
	}
	ctx := context.Background()
	if solo {
		ctx = batch[0].ctx
	}
	if err := d.commit(ctx, conn.Conn(), &pre, lk, group); err != nil {
		if retryable(err) {
			lost(nil)
		}
		return wrap(ctx, err), retryable(err)
	}
	committed = true
	d.commits.Add(1)
	return nil, false
}

// beginReadCommitted begins a group's transaction: each statement reads
// the last commits before it, and the locks (locks.go) make the whole
// serializable.
const beginReadCommitted = "BEGIN ISOLATION LEVEL READ COMMITTED"

// commit sends a group's buffered writes and its COMMIT in one round trip:
// after pre, the transaction's BEGIN and lock, when no statement sent
// them (and emptied, as a statement does); every Put in one statement, and
// every Delete in another (a join that looks each key up in the index). A
// transaction that never began and writes nothing sends nothing.
func (d *DB) commit(ctx context.Context, conn *pgx.Conn, pre *[]string, lk *locking, w writes) error {
	if len(*pre) > 0 && len(w) == 0 {
		return nil
	}
	var (
		b      pgx.Batch
		bucket []string
		keys   [][]byte
		vals   [][]byte
	)
	for _, p := range *pre {
		b.Queue(p)
	}
	*pre = nil
	// In key order: transactions that write some of the same keys then
	// lock their rows in the same order, and wait for each other rather
	// than deadlock.
	var all []kw
	for bk, m := range w {
		for k, wr := range m {
			all = append(all, kw{string(bk), k, wr})
		}
	}
	slices.SortFunc(all, func(x, y kw) int {
		if c := strings.Compare(x.b, y.b); c != 0 {
			return c
		}
		return strings.Compare(x.k, y.k)
	})
	d.lockWrites(&b, lk, all)
	var delBuckets []string
	var delKeys [][]byte
	for _, e := range all {
		if e.wr.deleted {
			delBuckets, delKeys = append(delBuckets, e.b), append(delKeys, []byte(e.k))
			continue
		}
		bucket, keys, vals = append(bucket, e.b), append(keys, []byte(e.k)), append(vals, e.wr.value)
	}
	switch len(delKeys) {
	case 0:
	case 1:
		b.Queue(d.q.del, delBuckets[0], delKeys[0])
	default:
		b.Queue(d.q.delMany, delBuckets, delKeys)
	}
	if len(keys) > 0 {
		b.Queue(d.q.put, bucket, keys, vals)
	}
	b.Queue("COMMIT")
	d.trips.Add(1)
	br := conn.SendBatch(ctx, &b)
	var tag pgconn.CommandTag
	for range b.Len() {
		var err error
		if tag, err = br.Exec(); err != nil {
			_ = br.Close()
			return outcome(err)
		}
	}
	if err := br.Close(); err != nil {
		return outcome(err)
	}
	if tag.String() != "COMMIT" { // the transaction had failed, and rolled back
		return pgx.ErrTxCommitRollback
	}
	return nil
}

// outcome returns the error of a commit's batch, marked with
// storage.ErrOutcomeUnknown when the connection broke after the batch,
// COMMIT included, may have reached the server: the database may then
// have committed, whatever statement the error came back for. An error
// the server answered with (the transaction rolled back), or one from
// before anything was sent, leaves it as it is.
func outcome(err error) error {
	if unavailable(err) && !pgconn.SafeToRetry(err) {
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Severity == "FATAL" || pe.Severity == "PANIC" {
			return fmt.Errorf("%w: %w", storage.ErrOutcomeUnknown, err)
		}
	}
	return err
}

// kw is a buffered write with its bucket and key.
type kw struct {
	b, k string
	wr   write
}

// lockWrites queues the commit's locks before its writes (locks.go). In a
// bucket where it writes more than escalateAt keys, or whose lock it
// holds exclusively, the bucket's lock exclusively; in the others the
// bucket's lock shared, first, and each written key's lock exclusively.
// The exclusive ones go in lock order, so that commits writing some of the
// same keys wait rather than deadlock. Then the shapes lock shared, so that the shapes the last
// statement reads stay the ones every scan of them registered until the
// commit, and the shared lock of each key's prefix of each registered
// length of its bucket.
func (d *DB) lockWrites(b *pgx.Batch, lk *locking, all []kw) {
	per := map[string]int{}
	for _, e := range all {
		per[e.b]++
	}
	var (
		locks, ids []int64
		modes      []bool
		buckets    []string
		keys       [][]byte
	)
	for bucket, n := range per {
		id := lockID(d.table, kindPrefix, storage.Bucket(bucket), nil)
		if n > escalateAt || lk.buckets[storage.Bucket(bucket)] == exclusive {
			ids = append(ids, id)
			per[bucket] = -1
			continue
		}
		if lk.buckets[storage.Bucket(bucket)] == unlocked {
			locks, modes = append(locks, id), append(modes, false)
		}
	}
	for _, e := range all {
		if per[e.b] < 0 {
			continue
		}
		ids = append(ids, lockID(d.table, kindKey, storage.Bucket(e.b), []byte(e.k)))
		buckets, keys = append(buckets, e.b), append(keys, []byte(e.k))
	}
	slices.Sort(ids)
	for _, id := range ids {
		locks, modes = append(locks, id), append(modes, true)
	}
	if len(keys) > 0 {
		locks, modes = append(locks, d.shapesLock), append(modes, false)
	}
	// One statement for them all (queries.merge says why), in that order.
	if len(locks) > 0 {
		b.Queue(d.q.locks.many, locks, modes)
	}
	if len(keys) > 0 {
		b.Queue(d.q.locks.prefixes, append([]byte(d.table), 0), buckets, keys)
	}
}

// escalateAt is how many keys of a bucket a transaction locks one by one
// (reads, and then writes): past it, it locks the bucket exclusively, so
// that a transaction with many keys does not fill PostgreSQL's lock table
// (max_locks_per_transaction times the connections, 6,400 by default).
const escalateAt = 256
