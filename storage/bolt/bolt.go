package bolt

import (
	"context"
	"encoding/binary"
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
	"github.com/corebank/corebank/storage/memory"
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
	// the file fits in it, an open View never delays a checkpoint (bbolt
	// must remap to grow, which waits for read transactions). Zero means 1
	// GiB of address space, which costs no memory until the file grows into
	// it.
	InitialMmapSize int
	// CheckpointSize is how many bytes of log make the next commit round
	// also fold the log into the bbolt file. Zero means 8 MiB. Larger
	// checkpoints are rarer and fold more overwrites of the same keys into
	// one bbolt write, and the unfolded commits are held in memory.
	CheckpointSize int64
}

const (
	defaultTimeout        = time.Second
	defaultMode           = 0o600
	defaultMmapSize       = 1 << 30
	defaultCheckpointSize = 8 << 20
)

// metaBucket is the bbolt bucket of the backend's own records. Its name
// starts with a NUL byte, which no storage.Bucket in corebank has.
var (
	metaBucket = []byte("\x00storage/bolt")
	genKey     = []byte("generation")
)

// DB is a storage.Backend on a bbolt file and its log. It is safe for
// concurrent use.
type DB struct {
	db *bbolt.DB

	state atomic.Pointer[layer] // the overlay of commits since the last checkpoint

	// The commit leader's own: no two goroutines use them at once.
	log            *wal
	failed         error // a log write failed: the log's state is unknown
	checkpointSize int64

	closed atomic.Bool
	active sync.WaitGroup // Updates between enqueue and return

	mu      sync.Mutex // guards queue, leading and closed transitions
	queue   []*call    // Updates waiting for the next commit
	leading bool       // a leader is committing a batch

	batches     atomic.Uint64 // logged commits (fsyncs), for tests and benchmarks
	checkpoints atomic.Uint64 // checkpoints folded into bbolt, for tests
}

// layer is the overlay of the commits made since a checkpoint: a
// storage/memory DB holding tagged values, over the bbolt state it was
// started on, which no write changes until the overlay is folded in and
// replaced.
type layer struct {
	over *memory.DB
	txid int    // ID of the bbolt commit the overlay lies on
	gen  uint64 // generation of that checkpoint, and of the log records

	// Buckets the overlay holds: the commit leader's only.
	touched map[storage.Bucket]struct{}
	last    storage.Bucket
}

func newLayer(txid int, gen uint64) *layer {
	return &layer{over: memory.New(), txid: txid, gen: gen, touched: map[storage.Bucket]struct{}{}}
}

func (l *layer) touch(b storage.Bucket) {
	if b != l.last {
		l.touched[b] = struct{}{}
		l.last = b
	}
}

// Open opens or creates the bbolt file at path and its log, path+"-wal".
// It replays the log's commits and folds them into the bbolt file before it
// returns. Every commit is fsynced before Update returns. If the file is
// held by another process or another DB, Open fails after opt.Timeout (1
// second by default) with an error wrapping ErrLocked.
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
	if o.CheckpointSize <= 0 {
		o.CheckpointSize = defaultCheckpointSize
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
	d := &DB{db: db, checkpointSize: o.CheckpointSize}
	if err := d.recover(path+"-wal", o.Mode); err != nil {
		if d.log != nil {
			_ = d.log.close()
		}
		_ = db.Close()
		return nil, fmt.Errorf("storage/bolt: open %s: %w", path, err)
	}
	return d, nil
}

// recover opens the log, replays the records of the current generation
// into a fresh overlay and folds them into the bbolt file.
func (d *DB) recover(path string, mode os.FileMode) error {
	var txid int
	var gen uint64
	err := d.db.View(func(btx *bbolt.Tx) error {
		txid = btx.ID()
		if bk := btx.Bucket(metaBucket); bk != nil {
			if v := bk.Get(genKey); len(v) == 8 {
				gen = binary.BigEndian.Uint64(v)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if d.log, err = openWAL(path, mode, gen); err != nil {
		return err
	}
	l := newLayer(txid, gen)
	d.state.Store(l)
	err = d.log.replay(func(payload []byte) error {
		return l.over.Update(context.Background(), func(otx storage.Tx) error {
			var val []byte
			return decodeOps(payload, func(op byte, b storage.Bucket, key, value []byte) error {
				l.touch(b)
				if op == opDelete {
					return otx.Put(b, key, deleted)
				}
				val = append(append(val[:0], tagLive), value...)
				return otx.Put(b, key, val)
			})
		})
	})
	if err != nil {
		return fmt.Errorf("replay %s: %w", path, err)
	}
	return d.checkpoint()
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
	var errs []error
	if d.failed == nil {
		errs = append(errs, d.checkpoint())
	}
	errs = append(errs, d.log.close(), d.db.Close())
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("storage/bolt: close: %w", err)
	}
	return nil
}

// checkpoint folds the overlay into the bbolt file in one bbolt commit,
// which also bumps the generation, and starts an empty overlay and a new
// generation of the log. Views already running keep the overlay and the
// bbolt snapshot they began with. Only the commit leader, or Open and
// Close with no leader, call it. On failure nothing changes: the overlay
// and the log still hold every commit.
func (d *DB) checkpoint() error {
	l := d.state.Load()
	if d.log.off == 0 && len(l.touched) == 0 {
		return nil
	}
	btx, err := d.db.Begin(true)
	if err != nil {
		return err
	}
	defer func() { _ = btx.Rollback() }()
	gen := l.gen + 1
	err = l.over.View(context.Background(), func(otx storage.Tx) error {
		for b := range l.touched {
			bk, err := btx.CreateBucketIfNotExists([]byte(b))
			if err != nil {
				return err
			}
			err = otx.Scan(b, storage.ScanOptions{}, func(k, v []byte) error {
				if v[0] == tagDeleted {
					return bk.Delete(k)
				}
				// bbolt keeps the slices until its commit.
				return bk.Put(clone(k), clone(v[1:]))
			})
			if err != nil {
				return err
			}
		}
		mb, err := btx.CreateBucketIfNotExists(metaBucket)
		if err != nil {
			return err
		}
		return mb.Put(genKey, binary.BigEndian.AppendUint64(nil, gen))
	})
	if err != nil {
		return err
	}
	txid := btx.ID()
	if err := btx.Commit(); err != nil {
		return err
	}
	d.checkpoints.Add(1)
	d.log.restart(gen)
	d.state.Store(newLayer(txid, gen))
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
	l, btx, err := d.snapshot()
	if err != nil {
		return err
	}
	defer func() { _ = btx.Rollback() }()
	return l.over.View(ctx, func(otx storage.Tx) error {
		t := newTx(otx, btx, l, nil)
		defer func() { t.done = true }()
		return fn(t)
	})
}

// snapshot returns the current overlay and a bbolt read transaction of the
// checkpoint it lies on. A checkpoint commits to bbolt just before it
// replaces the overlay, so in that instant the two can disagree; then it
// tries again.
func (d *DB) snapshot() (*layer, *bbolt.Tx, error) {
	for {
		l := d.state.Load()
		btx, err := d.db.Begin(false)
		if err != nil {
			return nil, nil, mapErr(err)
		}
		if btx.ID() == l.txid {
			return l, btx, nil
		}
		_ = btx.Rollback()
		runtime.Gosched()
	}
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
	btx     *bbolt.Tx // open bbolt read transaction, if any
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
	d.handOff(batch, self, true)
}

// handOff wakes the finished calls of batch, checkpoints if the log has
// grown past the checkpoint size and fold is set, and passes leadership on.
// Waking first lets those callers queue their next Update for the next
// round while the checkpoint runs.
func (d *DB) handOff(batch []*call, self *call, fold bool) {
	for _, c := range batch {
		if c != self && c.finished {
			c.wake <- false
		}
	}
	if fold && d.failed == nil && d.log.off >= d.checkpointSize {
		// On failure every commit is still in the overlay and the log, and
		// the next round tries again.
		_ = d.checkpoint()
	}
	d.mu.Lock()
	var next *call
	if len(d.queue) > 0 {
		next = d.queue[0]
	} else {
		d.leading = false
	}
	d.mu.Unlock()
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
	d.handOff(batch, self, false)
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

// errRound rolls back the overlay transaction of a round in which a
// function failed.
var errRound = errors.New("storage/bolt: round rolled back")

// try runs calls in one overlay transaction over the current checkpoint,
// appends their writes to the log as one record and syncs it, and only then
// lets the overlay transaction commit, so no View sees a commit before it
// is durable. It returns the first call whose function failed (after
// rolling back), or nil and the commit's error. For a single call the
// failure is recorded as its outcome.
func (d *DB) try(r *round, calls []*call) (*call, error) {
	fail := func(err error) (*call, error) {
		if len(calls) == 1 {
			calls[0].err, calls[0].panicked = err, false
		}
		return nil, err
	}
	if d.failed != nil {
		return fail(d.failed)
	}
	l := d.state.Load()
	btx, err := d.db.Begin(false)
	if err != nil {
		return fail(mapErr(err))
	}
	r.btx = btx
	defer func() {
		r.btx = nil
		_ = btx.Rollback()
	}()
	d.log.reset()
	var failed *call
	err = l.over.Update(context.Background(), func(otx storage.Tx) error {
		for _, c := range calls {
			r.current = c
			c.panicked, c.pval, c.err = run(newTx(otx, btx, l, d.log), c.fn)
			r.current = nil
			if c.err != nil || c.panicked {
				failed = c
				return errRound
			}
		}
		if d.log.empty() {
			return nil
		}
		if err := d.log.commit(); err != nil {
			// The record may be partly written: nothing more can be
			// appended safely until a reopen replays the log.
			d.failed = fmt.Errorf("storage/bolt: log write failed, reopen to recover: %w", err)
			return d.failed
		}
		d.batches.Add(1)
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
