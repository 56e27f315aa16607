package bolt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"sync/atomic"
	"time"

	bbolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/internal/writeq"
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
	// PageSize is the bbolt page size of a new file; an existing file keeps
	// its own. Zero means 16 KiB. bbolt writes each dirty page of a commit
	// with its own pwrite, and here only checkpoints commit to bbolt, each
	// folding thousands of commits, mostly appends: larger pages make that
	// far fewer writes (a fold of 24,000 appended keys takes ~48 ms with 16
	// KiB pages and ~80-135 ms with 4 KiB ones; 64 KiB gains no more), while
	// a fold that scatters inserts over a large index rewrites whole pages,
	// which argues against going larger.
	PageSize int
	// CheckpointSize is how many bytes of log make the next commit round
	// also fold the log into the bbolt file. Zero means 8 MiB. Larger
	// checkpoints are rarer and fold more overwrites of the same keys into
	// one bbolt write, and the unfolded commits are held in memory.
	CheckpointSize int64

	// fs opens the log files; nil means the operating system's. Only
	// tests set it (export_test.go), to model power loss.
	fs logFS
}

const (
	defaultTimeout        = time.Second
	defaultMode           = 0o600
	defaultMmapSize       = 1 << 30
	defaultCheckpointSize = 8 << 20
	defaultPageSize       = 16 << 10
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

	state atomic.Pointer[state] // the overlays of commits not yet in bbolt

	// The commit leader's own: no two goroutines use them at once.
	logs           [2]*wal
	log            *wal          // the active overlay's: logs[gen%2]
	folding        chan struct{} // closed when the running fold is done
	checkpointSize int64
	testFold       func() error // set by tests: runs first in every fold, its error fails it
	testSync       func()       // set by tests: runs before every log fsync

	closed atomic.Bool
	active sync.WaitGroup // Updates between enqueue and return

	mu     sync.Mutex         // orders closed transitions with active.Add
	writes writeq.Queue[call] // Updates waiting for the next commit, and the lead (commit.go)

	// Rounds are numbered as they are written to the log; syncing makes
	// them durable in order (see awaitDurable).
	written  atomic.Uint64 // rounds written to the log and published
	syncMu   sync.Mutex
	synced   sync.Cond     // signalled when durable or failed changes
	durable  atomic.Uint64 // rounds fsynced; written under syncMu
	syncing  bool          // a caller is fsyncing
	syncFile *wal          // the log file rounds are written to
	failed   error         // a log write or sync failed: the log's state is unknown

	syncs       atomic.Uint64 // log fsyncs, for tests and benchmarks
	checkpoints atomic.Uint64 // checkpoints folded into bbolt, for tests
}

// Open opens or creates the bbolt file at path and its log files,
// path+"-wal.0" and path+"-wal.1". It replays the commits they hold that
// the bbolt file does not and folds them in before it returns. Every commit is fsynced before Update returns. If the file is
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
	if o.PageSize <= 0 {
		o.PageSize = defaultPageSize
	}
	if o.fs == nil {
		o.fs = osFS{}
	}
	_, err := os.Stat(path)
	created := errors.Is(err, fs.ErrNotExist)
	db, err := bbolt.Open(path, o.Mode, &bbolt.Options{
		Timeout:         o.Timeout,
		InitialMmapSize: o.InitialMmapSize,
		FreelistType:    bbolt.FreelistMapType,
		// The freelist is rebuilt from the pages on open instead of being
		// written and fsynced with every commit (as etcd runs bbolt): one
		// write less per commit, durability unchanged.
		NoFreelistSync: true,
		NoStatistics:   true,
		PageSize:       o.PageSize,
	})
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, fmt.Errorf("%w: %s (waited %s)", ErrLocked, path, o.Timeout)
	}
	if err != nil {
		return nil, fmt.Errorf("storage/bolt: open %s: %w", path, err)
	}
	d := &DB{db: db, checkpointSize: o.CheckpointSize}
	d.synced.L = &d.syncMu
	if err := d.recover(path, o.Mode, o.fs, created); err != nil {
		d.closeLogs()
		_ = db.Close()
		return nil, fmt.Errorf("storage/bolt: open %s: %w", path, err)
	}
	return d, nil
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
	if d.err() == nil {
		errs = append(errs, d.checkpoint())
	} else if d.folding != nil {
		<-d.folding
	}
	errs = append(errs, d.closeLogs(), d.db.Close())
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("storage/bolt: close: %w", err)
	}
	return nil
}

func (d *DB) closeLogs() error {
	var errs []error
	for _, w := range d.logs {
		if w != nil {
			errs = append(errs, w.close())
		}
	}
	return errors.Join(errs...)
}

// Path returns the file's path.
func (d *DB) Path() string { return d.db.Path() }

// View runs fn against one consistent snapshot of the overlays and the
// bbolt file, which commits made meanwhile do not change. A read that meets
// a commit whose fsync is in flight waits for it. View returns
// storage.ErrClosed after Close, ctx.Err() if ctx is already done, the log's
// error if such a commit's fsync failed, and otherwise fn's error. A panic
// in fn propagates.
func (d *DB) View(ctx context.Context, fn func(storage.Tx) error) error {
	if d.closed.Load() {
		return storage.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	st, btx, err := d.snapshot()
	if err != nil {
		return err
	}
	defer func() { _ = btx.Rollback() }()
	return withTxs(ctx, st, false, func(overs []storage.Tx) error {
		t := &tx{d: d, overs: overs, base: btx}
		defer func() { t.done = true }()
		return fn(t)
	})
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

// foldBucket returns bucket b of btx, created if absent, ready for a fold
// of the overlay otx. When every key the fold writes sorts after the
// bucket's last key (an append-only bucket keyed by sequence or ULID, such
// as an outbox), pages are filled to the brim (FillPercent
// 1.0) instead of bbolt's default half, which splits a node at 50% because
// it expects later inserts in between; appends never come back to a page,
// so half-full leaves would stay half empty for good. A fold that inserts
// among existing keys keeps the default.
func foldBucket(btx *bbolt.Tx, otx storage.Tx, b storage.Bucket) (*bbolt.Bucket, error) {
	bk, err := btx.CreateBucketIfNotExists([]byte(b))
	if err != nil {
		return nil, err
	}
	var first []byte
	if err := otx.Scan(b, storage.ScanOptions{Limit: 1}, func(k, _ []byte) error {
		first = clone(k)
		return nil
	}); err != nil {
		return nil, err
	}
	if last, _ := bk.Cursor().Last(); first != nil && (last == nil || bytes.Compare(first, last) > 0) {
		bk.FillPercent = 1.0
	}
	return bk, nil
}
