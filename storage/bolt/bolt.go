package bolt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	bbolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/corebank/corebank/storage"
)

var _ storage.Backend = (*DB)(nil)

// ErrLocked is wrapped by the error Open returns when another process, or
// another DB in this process, holds the file.
var ErrLocked = errors.New("storage/bolt: database file is locked by another process or DB")

// errGoexit is given to a caller whose Update function called
// runtime.Goexit (t.FailNow in a test) while run for a group commit.
var errGoexit = errors.New("storage/bolt: Update function called runtime.Goexit")

// Options tunes Open. A nil *Options means every default.
type Options struct {
	// Timeout is how long Open waits for the file lock before failing with
	// ErrLocked. Zero means 1 second; Open never waits forever.
	Timeout time.Duration
	// Mode is the permission of a newly created file; zero means 0600.
	Mode os.FileMode
	// InitialMmapSize is the initial size in bytes of the memory map. While
	// the file fits in it, an open View never delays a commit (bbolt must
	// remap to grow, which waits for read transactions). Zero means 1 GiB of
	// address space, which costs no memory until the file grows into it.
	InitialMmapSize int
}

const (
	defaultTimeout  = time.Second
	defaultMode     = 0o600
	defaultMmapSize = 1 << 30
)

// DB is a storage.Backend on a bbolt file. It is safe for concurrent use.
type DB struct {
	db *bbolt.DB

	closed atomic.Bool
	active sync.WaitGroup // Updates between enqueue and return

	mu      sync.Mutex // guards queue, leading and closed transitions
	queue   []*call    // Updates waiting for the next commit
	leading bool       // a leader is committing a batch

	batches atomic.Uint64 // bbolt commits made, for tests and benchmarks
}

// Open opens or creates the bbolt file at path. Every commit is fsynced
// before Update returns. If the file is held by another process or another
// DB, Open fails after opt.Timeout (1 second by default) with an error
// wrapping ErrLocked.
func Open(path string, opt *Options) (*DB, error) {
	var o Options
	if opt != nil {
		o = *opt
	}
	if o.Timeout <= 0 {
		o.Timeout = defaultTimeout
	}
	if o.Mode == 0 {
		o.Mode = defaultMode
	}
	if o.InitialMmapSize <= 0 {
		o.InitialMmapSize = defaultMmapSize
	}
	db, err := bbolt.Open(path, o.Mode, &bbolt.Options{
		Timeout:         o.Timeout,
		InitialMmapSize: o.InitialMmapSize,
		FreelistType:    bbolt.FreelistMapType,
		// The freelist is rebuilt from the pages on open instead of being
		// written and fsynced with every commit (as etcd runs bbolt): one
		// write less per commit, durability unchanged.
		NoFreelistSync: true,
		NoStatistics:   true,
	})
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, fmt.Errorf("%w: %s (waited %s)", ErrLocked, path, o.Timeout)
	}
	if err != nil {
		return nil, fmt.Errorf("storage/bolt: open %s: %w", path, err)
	}
	return &DB{db: db}, nil
}

// Close waits for running Updates, then closes the file (bbolt waits for
// running Views). Later calls return storage.ErrClosed; a second Close
// returns nil.
func (d *DB) Close() error {
	d.mu.Lock()
	if d.closed.Load() {
		d.mu.Unlock()
		return nil
	}
	d.closed.Store(true)
	d.mu.Unlock()
	d.active.Wait()
	if err := d.db.Close(); err != nil {
		return fmt.Errorf("storage/bolt: close: %w", err)
	}
	return nil
}

// Path returns the file's path.
func (d *DB) Path() string { return d.db.Path() }

// View runs fn in a bbolt read transaction: one consistent snapshot, which
// commits made meanwhile do not change. It returns storage.ErrClosed after
// Close, ctx.Err() if ctx is already done, and otherwise fn's error. A panic
// in fn propagates.
func (d *DB) View(ctx context.Context, fn func(storage.Tx) error) error {
	if d.closed.Load() {
		return storage.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	btx, err := d.db.Begin(false)
	if err != nil {
		return mapErr(err)
	}
	t := &tx{btx: btx}
	defer func() {
		t.done = true
		_ = btx.Rollback()
	}()
	return fn(t)
}

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
// already done; a failed commit returns the bbolt error wrapped.
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
	d.queue = append(d.queue, c)
	lead := !d.leading
	d.leading = true
	d.mu.Unlock()

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
	btx     *bbolt.Tx // open bbolt transaction, if any
	current *call     // call whose fn is running
}

// lead commits everything queued, then hands leadership to the first call
// that queued meanwhile, if any, and wakes every finished call.
func (d *DB) lead(self *call) {
	// Yield once before taking the queue: the callers the previous leader
	// just woke can then queue their next Update and ride this commit, where
	// otherwise they would form a second group alternating with this one.
	// This is a yield, not a timer: with nobody runnable it returns at once.
	runtime.Gosched()
	d.mu.Lock()
	batch := d.queue
	d.queue = nil
	d.mu.Unlock()

	var r round
	completed := false
	defer func() {
		if !completed {
			d.abandon(&r, batch, self)
		}
	}()
	d.runBatch(&r, batch)
	completed = true
	d.handOff(batch, self)
}

// handOff passes leadership on and wakes the finished calls of batch.
func (d *DB) handOff(batch []*call, self *call) {
	d.mu.Lock()
	var next *call
	if len(d.queue) > 0 {
		next = d.queue[0]
	} else {
		d.leading = false
	}
	d.mu.Unlock()
	for _, c := range batch {
		if c != self && c.finished {
			c.wake <- false
		}
	}
	if next != nil {
		next.wake <- true
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
	d.mu.Lock()
	d.queue = append(retry, d.queue...)
	d.mu.Unlock()
	d.handOff(batch, self)
}

// runBatch runs batch in one bbolt transaction. When a function fails, the
// transaction is rolled back, the failed call gets a solo run whose outcome
// is its own, and the rest are retried together.
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

// try runs calls in one transaction and commits it. It returns the first
// call whose function failed (after rolling back), or nil and the commit's
// error. For a single call the failure is recorded as its outcome.
func (d *DB) try(r *round, calls []*call) (*call, error) {
	btx, err := d.db.Begin(true)
	if err != nil {
		err = mapErr(err)
		if len(calls) == 1 {
			calls[0].err, calls[0].panicked = err, false
		}
		return nil, err
	}
	r.btx = btx
	for _, c := range calls {
		r.current = c
		c.panicked, c.pval, c.err = run(btx, c.fn)
		r.current = nil
		if c.err != nil || c.panicked {
			r.btx = nil
			_ = btx.Rollback()
			return c, nil
		}
	}
	r.btx = nil
	d.batches.Add(1)
	if err := btx.Commit(); err != nil {
		err = fmt.Errorf("storage/bolt: commit: %w", err)
		if len(calls) == 1 {
			calls[0].err = err
		}
		return nil, err
	}
	return nil, nil
}

// run calls fn with a fresh Tx that is invalidated when fn returns, and
// recovers a panic so that it can be re-raised on its caller's goroutine.
// (Since Go 1.21 panic(nil) arrives as *runtime.PanicNilError, so a nil
// recover means no panic; runtime.Goexit passes through to lead's guard.)
func run(btx *bbolt.Tx, fn func(storage.Tx) error) (panicked bool, pval any, err error) {
	t := &tx{btx: btx, write: true}
	defer func() {
		t.done = true
		if r := recover(); r != nil {
			panicked, pval, err = true, r, nil
		}
	}()
	return false, nil, fn(t)
}

// mapErr turns bbolt's errors into storage's sentinels.
func mapErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, berrors.ErrDatabaseNotOpen):
		return storage.ErrClosed
	case errors.Is(err, berrors.ErrTxClosed):
		return storage.ErrTxDone
	case errors.Is(err, berrors.ErrTxNotWritable), errors.Is(err, berrors.ErrDatabaseReadOnly):
		return storage.ErrReadOnly
	case errors.Is(err, berrors.ErrKeyRequired):
		return storage.ErrEmptyKey
	}
	return fmt.Errorf("storage/bolt: %w", err)
}

// tx wraps a bbolt transaction for one run of one function.
type tx struct {
	btx    *bbolt.Tx
	write  bool
	done   bool
	writes uint64 // bumped by Put and Delete so a Scan knows to re-seek
}

// Get returns a copy of the value under key, or storage.ErrNotFound.
func (t *tx) Get(b storage.Bucket, key []byte) ([]byte, error) {
	if t.done {
		return nil, storage.ErrTxDone
	}
	bk := t.btx.Bucket([]byte(b))
	if bk == nil {
		return nil, storage.ErrNotFound
	}
	v := bk.Get(key)
	if v == nil {
		return nil, storage.ErrNotFound
	}
	return clone(v), nil
}

// clone copies b into a new non-nil slice: bbolt reads a nil value as
// absent, and its memory is valid only inside the transaction.
func clone(b []byte) []byte {
	c := make([]byte, len(b))
	copy(c, b)
	return c
}

func (t *tx) writable(key []byte) error {
	switch {
	case t.done:
		return storage.ErrTxDone
	case !t.write:
		return storage.ErrReadOnly
	case len(key) == 0:
		return storage.ErrEmptyKey
	}
	return nil
}

// Put stores a copy of value under key, creating the bucket if needed.
func (t *tx) Put(b storage.Bucket, key, value []byte) error {
	if err := t.writable(key); err != nil {
		return err
	}
	bk, err := t.btx.CreateBucketIfNotExists([]byte(b))
	if err != nil {
		return mapErr(err)
	}
	t.writes++
	return mapErr(bk.Put(key, clone(value)))
}

// Delete removes key; an absent key or bucket is not an error.
func (t *tx) Delete(b storage.Bucket, key []byte) error {
	if err := t.writable(key); err != nil {
		if errors.Is(err, storage.ErrEmptyKey) {
			return nil
		}
		return err
	}
	bk := t.btx.Bucket([]byte(b))
	if bk == nil {
		return nil
	}
	t.writes++
	return mapErr(bk.Delete(key))
}

// Scan walks a bbolt cursor over the keys selected by o. fn receives copies
// in buffers reused for the next entry. If fn writes through the Tx, the
// cursor is re-positioned after the last key visited, since bbolt cursors
// are not stable across writes.
func (t *tx) Scan(b storage.Bucket, o storage.ScanOptions, fn func(key, value []byte) error) error {
	if t.done {
		return storage.ErrTxDone
	}
	bk := t.btx.Bucket([]byte(b))
	if bk == nil {
		return nil
	}
	c := cursor{bk.Cursor(), bk, t.write}
	prefix := o.Prefix
	var k, v []byte
	switch from, exclusive, bounded := o.Start(); {
	case !bounded:
		k, v = c.Last()
	case o.Reverse:
		k, v = seekBefore(c, from)
	case exclusive:
		k, v = seekAfter(c, from)
	case len(from) > 0:
		k, v = c.Seek(from)
	default:
		k, v = c.First()
	}
	var kbuf, vbuf []byte
	n := 0
	for k != nil && bytes.HasPrefix(k, prefix) {
		if v == nil { // a nested bucket; storage never makes them
			k, v = c.step(o.Reverse, k)
			continue
		}
		kbuf = append(kbuf[:0], k...)
		vbuf = append(vbuf[:0], v...)
		w := t.writes
		if err := fn(kbuf, vbuf); err != nil {
			if errors.Is(err, storage.ErrStop) {
				return nil
			}
			return err
		}
		n++
		if o.Limit > 0 && n >= o.Limit {
			return nil
		}
		if t.done {
			return storage.ErrTxDone
		}
		if t.writes != w {
			// fn may have changed kbuf; position from the key we gave it.
			last := append([]byte(nil), k...)
			if bk = t.btx.Bucket([]byte(b)); bk == nil {
				return nil
			}
			c = cursor{bk.Cursor(), bk, true}
			if o.Reverse {
				k, v = seekBefore(c, last)
			} else {
				k, v = seekAfter(c, last)
			}
			continue
		}
		k, v = c.step(o.Reverse, k)
	}
	return nil
}

// cursor wraps a bbolt cursor to step past leaves emptied earlier in a
// write transaction: bbolt rebalances only at commit, and its Prev stops at
// an empty leaf as if the bucket began there (its Last works around the
// same case by stepping again, as prev does here).
type cursor struct {
	*bbolt.Cursor
	bk    *bbolt.Bucket
	write bool
}

// step moves one key forward, or backward from cur when reverse.
func (c cursor) step(reverse bool, cur []byte) ([]byte, []byte) {
	if !reverse {
		return c.Next()
	}
	return c.prev(cur)
}

// prev moves to the greatest key less than cur, the cursor's position.
func (c cursor) prev(cur []byte) ([]byte, []byte) {
	k, v := c.Prev()
	if k != nil || !c.write {
		return k, v
	}
	first, _ := c.bk.Cursor().First()
	if first == nil || bytes.Compare(first, cur) >= 0 {
		return nil, nil
	}
	// Keys remain below cur, so each nil is an empty leaf to step over.
	for k == nil {
		k, v = c.Prev()
	}
	return k, v
}

// seekAfter positions c on the least key greater than key.
func seekAfter(c cursor, key []byte) ([]byte, []byte) {
	k, v := c.Seek(key)
	if k != nil && bytes.Equal(k, key) {
		return c.Next()
	}
	return k, v
}

// seekBefore positions c on the greatest key less than key.
func seekBefore(c cursor, key []byte) ([]byte, []byte) {
	if k, _ := c.Seek(key); k == nil {
		return c.Last()
	}
	return c.prev(key)
}
