package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/corebank/corebank/storage"
)

// contendedFor is how long after a serialization failure a DB's groups
// take the store's lock exclusively. Every group takes a lock on the
// schema-version table (which nothing else writes after Open) first in
// its transaction, sent with its first statement, and holds it to its
// end: ROW SHARE, which groups share, and for contendedFor after one of
// the DB's groups was lost to a serialization failure, EXCLUSIVE. Groups
// of several nodes writing the same keys (the newest event, a counter)
// otherwise run whole and abort each other at commit, over and over, a
// long group losing to shorter ones until its retries run out; a group
// holding the exclusive lock runs alone, and the groups of every node
// wait for it before their snapshot. Views never wait.
const contendedFor = 2 * time.Second

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

// Update runs fn in a SERIALIZABLE transaction and commits iff fn returns
// nil. Concurrent Updates share transactions (see the package
// documentation), so fn may run more than once, each time with a fresh Tx,
// and always on the caller's goroutine. When a statement or the commit
// fails with a serialization failure or a deadlock, the transaction is
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
	d.queue = append(d.queue, c)
	if d.leaders < d.maxLeaders {
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
		if n == 0 {
			d.leaders--
			d.qmu.Unlock()
			return
		}
		batch := d.queue[:n:n]
		d.queue = d.queue[n:]
		d.qmu.Unlock()
		d.runGroup(batch)
	}
}

// runGroup runs batch until its transaction commits, fails for good, or
// exhausts the retries, and then finishes every call in it.
func (d *DB) runGroup(batch []*call) {
	for attempt := 0; ; attempt++ {
		err, retry := d.tryGroup(batch)
		if retry {
			d.contended.Store(time.Now().UnixNano())
		}
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
// SERIALIZABLE transaction and commits it. In a group of several, each
// function runs after a savepoint (sent with its first statement, in the
// same round trip), and one that fails is rolled back to it alone: its outcome (error or panic) stands if the transaction commits,
// since it was decided on the state the commit makes real. A
// serialization failure or a deadlock anywhere loses the whole
// transaction: retry is true and every function runs again. Any other
// error returned is every call's outcome.
//
// Statements run under the caller's context when it is alone, and
// otherwise under one without its cancellation: a cancelled statement
// breaks the connection, which the others' work is on.
func (d *DB) tryGroup(batch []*call) (err error, retry bool) {
	conn, err := d.pool.Acquire(context.Background())
	if err != nil {
		return fmt.Errorf("storage/postgres: %w", err), false
	}
	defer conn.Release() // destroyed, not reused, if left in a transaction
	// BEGIN and the group's lock go to the server with the first
	// statement, in its round trip, and the lock before the snapshot (LOCK
	// TABLE takes none), so that a group that waited sees the commit it
	// waited for.
	lock := d.q.shared
	if time.Since(time.Unix(0, d.contended.Load())) < contendedFor {
		lock = d.q.exclusive
	}
	pre := []string{beginSerializable, lock}
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
		t := &tx{ctx: ctx, q: &d.q, conn: conn.Conn(), writable: true, savepoint: !solo, own: writes{}, base: group, reads: reads, scans: scans, pre: &pre, trips: &d.trips}
		c.wake <- t
		<-c.ran
		if t.conflict != nil {
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
	}
	if solo && (batch[0].err != nil || batch[0].panicked) {
		return nil, false
	}
	ctx := context.Background()
	if solo {
		ctx = batch[0].ctx
	}
	if err := d.commit(ctx, conn.Conn(), &pre, group); err != nil {
		return wrap(ctx, err), retryable(err)
	}
	committed = true
	d.commits.Add(1)
	return nil, false
}

// beginSerializable begins a group's transaction.
const beginSerializable = "BEGIN ISOLATION LEVEL SERIALIZABLE"

// commit sends a group's buffered writes and its COMMIT in one round trip:
// after pre, the transaction's BEGIN and lock, when no statement sent
// them (and emptied, as a statement does); every Put in one statement, and
// each Delete in its own (an index lookup whatever the table's size). A
// transaction that never began and writes nothing sends nothing.
func (d *DB) commit(ctx context.Context, conn *pgx.Conn, pre *[]string, w writes) error {
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
	for bk, m := range w {
		for k, wr := range m {
			if wr.deleted {
				b.Queue(d.q.del, string(bk), []byte(k))
				continue
			}
			bucket, keys, vals = append(bucket, string(bk)), append(keys, []byte(k)), append(vals, wr.value)
		}
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
			return err
		}
	}
	if err := br.Close(); err != nil {
		return err
	}
	if tag.String() != "COMMIT" { // the transaction had failed, and rolled back
		return pgx.ErrTxCommitRollback
	}
	return nil
}
