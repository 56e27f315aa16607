package memory

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/google/btree"

	"github.com/corebank/corebank/storage"
)

var _ storage.Backend = (*DB)(nil)

// version is one committed (or, for the running Update, pending) value of a
// key. Its val is never mutated once stored, so readers may hold it after
// releasing the lock.
type version struct {
	seq uint64
	val []byte
	del bool
}

// item is one key and its version chain, oldest first.
type item struct {
	key      string
	versions []version
	one      [1]version // backing array for the common single-version chain
	removed  bool       // unlinked from its bucket by rollback or compaction
}

// newest returns the last version in the chain.
func (it *item) newest() *version { return &it.versions[len(it.versions)-1] }

// visibleAt returns the value of the newest version at or below seq.
func (it *item) visibleAt(seq uint64) ([]byte, bool) {
	for i := len(it.versions) - 1; i >= 0; i-- {
		v := &it.versions[i]
		if v.seq <= seq {
			return v.val, !v.del
		}
	}
	return nil, false
}

// ref is a tree entry. It holds the key beside the pointer so that the
// comparisons of a tree search read the key without loading the item.
type ref struct {
	key string
	it  *item
}

func lessRef(a, b ref) bool { return a.key < b.key }

// bucket is an ordered tree for scans plus a hash index for point reads, so
// that Get and Put of an existing key cost O(1) however large the store.
type bucket struct {
	tree  *btree.BTreeG[ref]
	index map[string]*item
}

func (b *bucket) remove(it *item) {
	b.tree.Delete(ref{key: it.key})
	delete(b.index, it.key)
	it.removed = true
}

// undo records a version appended by the running Update.
type undo struct {
	b  *bucket
	it *item
}

// garbage is an item that holds more than one version or a tombstone since
// commit seq; once no View is pinned below seq it can be compacted.
type garbage struct {
	b   *bucket
	it  *item
	seq uint64
}

// DB is an in-memory storage.Backend. The zero value is not usable; call New.
// A DB is safe for concurrent use.
type DB struct {
	// mu guards buckets, trees, indexes and version chains against
	// concurrent View readers. The Update holder is the only mutator, so it
	// reads without mu and takes mu exclusively only to mutate.
	mu      sync.RWMutex
	buckets map[storage.Bucket]*bucket

	wmu     sync.Mutex    // serializes Updates and guards the fields below
	undo    []undo        // versions appended by the running Update
	garbage []garbage     // compaction queue in commit order
	gcHead  int           // first unprocessed entry of garbage
	seq     atomic.Uint64 // last published commit

	pinMu sync.Mutex
	pins  map[uint64]int // open Views by pinned seq

	closed atomic.Bool
}

// New returns an empty in-memory database.
func New() *DB {
	return &DB{
		buckets: make(map[storage.Bucket]*bucket),
		pins:    make(map[uint64]int),
	}
}

// Close marks the database closed: every later View and Update returns
// storage.ErrClosed. It waits for a running Update to finish; Views already
// running complete normally. Close is idempotent and returns nil.
func (d *DB) Close() error {
	if d.closed.Swap(true) {
		return nil
	}
	d.wmu.Lock()
	d.undo, d.garbage, d.gcHead = nil, nil, 0
	d.wmu.Unlock()
	return nil
}

// View runs fn against the snapshot of the last committed Update. It never
// blocks Updates, and commits made while fn runs are invisible to it. It
// returns storage.ErrClosed after Close, ctx.Err() if ctx is already done,
// and otherwise fn's error. A panic in fn propagates.
func (d *DB) View(ctx context.Context, fn func(storage.Tx) error) error {
	if d.closed.Load() {
		return storage.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	d.pinMu.Lock()
	seq := d.seq.Load()
	d.pins[seq]++
	d.pinMu.Unlock()
	t := &tx{db: d, seq: seq}
	defer func() {
		t.done = true
		d.pinMu.Lock()
		if n := d.pins[seq]; n > 1 {
			d.pins[seq] = n - 1
		} else {
			delete(d.pins, seq)
		}
		d.pinMu.Unlock()
	}()
	return fn(t)
}

// Update runs fn in a read-write transaction and commits iff fn returns
// nil. Updates run one at a time; fn runs exactly once. If fn returns an
// error or panics, nothing it wrote is kept and the error is returned (the
// panic re-raised). It returns storage.ErrClosed after Close and ctx.Err()
// if ctx is already done.
func (d *DB) Update(ctx context.Context, fn func(storage.Tx) error) error {
	if d.closed.Load() {
		return storage.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	d.wmu.Lock()
	defer d.wmu.Unlock()
	if d.closed.Load() {
		return storage.ErrClosed
	}
	d.collect()
	t := &tx{db: d, seq: d.seq.Load() + 1, write: true}
	committed := false
	defer func() {
		t.done = true
		if !committed {
			d.rollback()
		}
	}()
	if err := fn(t); err != nil {
		return err
	}
	d.commit(t.seq)
	committed = true
	return nil
}

// commit publishes seq and queues the touched items for compaction.
func (d *DB) commit(seq uint64) {
	for i, u := range d.undo {
		if len(u.it.versions) > 1 || u.it.newest().del {
			d.garbage = append(d.garbage, garbage{b: u.b, it: u.it, seq: seq})
		}
		d.undo[i] = undo{}
	}
	d.undo = d.undo[:0]
	d.seq.Store(seq)
}

// rollback removes every version the running Update appended.
func (d *DB) rollback() {
	if len(d.undo) == 0 {
		return
	}
	d.mu.Lock()
	for i := len(d.undo) - 1; i >= 0; i-- {
		u := d.undo[i]
		n := len(u.it.versions) - 1
		u.it.versions[n] = version{}
		u.it.versions = u.it.versions[:n]
		if n == 0 {
			u.b.remove(u.it)
		}
		d.undo[i] = undo{}
	}
	d.mu.Unlock()
	d.undo = d.undo[:0]
}

// oldestPinned returns the lowest seq any View may still read.
func (d *DB) oldestPinned() uint64 {
	d.pinMu.Lock()
	oldest := d.seq.Load()
	if len(d.pins) == 0 {
		d.pinMu.Unlock()
		return oldest
	}
	for s := range d.pins {
		if s < oldest {
			oldest = s
		}
	}
	d.pinMu.Unlock()
	return oldest
}

// collect compacts queued items that no open View can distinguish from
// their newest committed version: older versions are dropped and keys whose
// only version is a tombstone are removed. Each queued entry is handled once,
// so the cost is amortized O(1) per write.
func (d *DB) collect() {
	if d.gcHead == len(d.garbage) {
		return
	}
	oldest := d.oldestPinned()
	if d.garbage[d.gcHead].seq > oldest {
		return
	}
	for d.gcHead < len(d.garbage) && d.garbage[d.gcHead].seq <= oldest {
		// Release mu now and then so a long backlog does not stall Views.
		d.mu.Lock()
		for n := 0; n < 256 && d.gcHead < len(d.garbage) && d.garbage[d.gcHead].seq <= oldest; n++ {
			g := d.garbage[d.gcHead]
			d.garbage[d.gcHead] = garbage{}
			d.gcHead++
			compact(g.b, g.it, oldest)
		}
		d.mu.Unlock()
	}
	if d.gcHead == len(d.garbage) {
		d.garbage, d.gcHead = d.garbage[:0], 0
	} else if d.gcHead > 1024 && d.gcHead > len(d.garbage)/2 {
		n := copy(d.garbage, d.garbage[d.gcHead:])
		clear(d.garbage[n:])
		d.garbage, d.gcHead = d.garbage[:n], 0
	}
}

func compact(b *bucket, it *item, oldest uint64) {
	if it.removed {
		return
	}
	i := len(it.versions) - 1
	for i > 0 && it.versions[i].seq > oldest {
		i--
	}
	switch {
	case i == len(it.versions)-1 && cap(it.versions) > 4:
		// One version left in an array grown while a View was pinned: move
		// it back inline and free the array. Small arrays are kept, as the
		// next overwrite appends into them.
		it.one[0] = it.versions[i]
		it.versions = it.one[:1:1]
	case i > 0:
		n := copy(it.versions, it.versions[i:])
		clear(it.versions[n:])
		it.versions = it.versions[:n]
	}
	if len(it.versions) == 1 && it.versions[0].del && it.versions[0].seq <= oldest {
		b.remove(it)
	}
}

// tx is both the View and the Update transaction. A View reads the newest
// version at or below seq; an Update reads the newest version of all, which
// includes its own pending writes (tagged seq).
type tx struct {
	db    *DB
	seq   uint64
	write bool
	done  bool
}

// lookup returns the value of key visible to t; it takes the read lock
// for Views (an Update is the only writer, so it reads without).
func (t *tx) lookup(b storage.Bucket, key []byte) ([]byte, bool) {
	d := t.db
	if t.write {
		bk := d.buckets[b]
		if bk == nil {
			return nil, false
		}
		it := bk.index[string(key)]
		if it == nil {
			return nil, false
		}
		v := it.newest()
		return v.val, !v.del
	}
	d.mu.RLock()
	bk := d.buckets[b]
	if bk == nil {
		d.mu.RUnlock()
		return nil, false
	}
	it := bk.index[string(key)]
	if it == nil {
		d.mu.RUnlock()
		return nil, false
	}
	val, ok := it.visibleAt(t.seq)
	d.mu.RUnlock()
	return val, ok
}

// Get returns a copy of the value under key, or storage.ErrNotFound.
func (t *tx) Get(b storage.Bucket, key []byte) ([]byte, error) {
	if t.done {
		return nil, storage.ErrTxDone
	}
	val, ok := t.lookup(b, key)
	if !ok {
		return nil, storage.ErrNotFound
	}
	return clone(val), nil
}

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

// Put stores a copy of value under a copy of key.
func (t *tx) Put(b storage.Bucket, key, value []byte) error {
	if err := t.writable(key); err != nil {
		return err
	}
	d := t.db
	val := clone(value)
	bk := d.buckets[b]
	var it *item
	if bk != nil {
		it = bk.index[string(key)]
	}
	if it != nil {
		if v := it.newest(); v.seq == t.seq {
			d.mu.Lock()
			v.val, v.del = val, false
			d.mu.Unlock()
			return nil
		}
		d.mu.Lock()
		it.versions = append(it.versions, version{seq: t.seq, val: val})
		d.mu.Unlock()
		d.undo = append(d.undo, undo{b: bk, it: it})
		return nil
	}
	it = &item{key: string(key)}
	it.one[0] = version{seq: t.seq, val: val}
	it.versions = it.one[:1:1]
	d.mu.Lock()
	if bk == nil {
		bk = &bucket{tree: btree.NewG(32, lessRef), index: make(map[string]*item)}
		d.buckets[b] = bk
	}
	bk.index[it.key] = it
	bk.tree.ReplaceOrInsert(ref{it.key, it})
	d.mu.Unlock()
	d.undo = append(d.undo, undo{b: bk, it: it})
	return nil
}

// Delete removes key; an absent key is not an error.
func (t *tx) Delete(b storage.Bucket, key []byte) error {
	if err := t.writable(key); err != nil {
		if errors.Is(err, storage.ErrEmptyKey) {
			return nil // an empty key is never present
		}
		return err
	}
	d := t.db
	bk := d.buckets[b]
	if bk == nil {
		return nil
	}
	it := bk.index[string(key)]
	if it == nil {
		return nil
	}
	v := it.newest()
	switch {
	case v.del:
		return nil
	case v.seq == t.seq:
		d.mu.Lock()
		v.val, v.del = nil, true
		d.mu.Unlock()
	default:
		d.mu.Lock()
		it.versions = append(it.versions, version{seq: t.seq, del: true})
		d.mu.Unlock()
		d.undo = append(d.undo, undo{b: bk, it: it})
	}
	return nil
}

// scanBatch is how many visible entries a Scan gathers per lock hold, and
// scanExamine caps the items examined per hold when most are invisible.
const (
	scanBatch   = 64
	scanExamine = 512
)

type entry struct {
	key string
	val []byte
}

// Scan visits the keys selected by o. Entries are gathered in small batches
// under the read lock and fn is called with no lock held, so fn may read and
// (in an Update) write through the same Tx. The key and value passed to fn
// are copies in buffers reused across calls.
func (t *tx) Scan(b storage.Bucket, o storage.ScanOptions, fn func(key, value []byte) error) error {
	if t.done {
		return storage.ErrTxDone
	}
	d := t.db
	prefix := string(o.Prefix)
	end, hasEnd := prefixEnd(prefix)
	after := string(o.After)

	// cursor is where the next batch starts; excl skips cursor itself.
	var cursor string
	excl, bounded := false, false
	if !o.Reverse {
		cursor, bounded = prefix, true
		if after != "" && after >= prefix {
			cursor, excl = after, true
		}
	} else {
		if hasEnd {
			cursor, excl, bounded = end, true, true
		}
		if after != "" && (!bounded || after < cursor) {
			cursor, excl, bounded = after, true, true
		}
	}

	batch := make([]entry, 0, scanBatch)
	var kbuf, vbuf []byte
	n := 0
	for {
		batch = batch[:0]
		exhausted := true
		examined := 0
		last := ""
		visit := func(r ref) bool {
			it := r.it
			if excl && it.key == cursor {
				return true
			}
			if !strings.HasPrefix(it.key, prefix) {
				return false
			}
			last = it.key
			examined++
			var val []byte
			var ok bool
			if t.write {
				v := it.newest()
				val, ok = v.val, !v.del
			} else {
				val, ok = it.visibleAt(t.seq)
			}
			if ok {
				batch = append(batch, entry{it.key, val})
			}
			if len(batch) == scanBatch || examined == scanExamine {
				exhausted = false
				return false
			}
			return true
		}
		if !t.write {
			d.mu.RLock()
		}
		if bk := d.buckets[b]; bk != nil {
			switch {
			case !o.Reverse:
				bk.tree.AscendGreaterOrEqual(ref{key: cursor}, visit)
			case bounded:
				bk.tree.DescendLessOrEqual(ref{key: cursor}, visit)
			default:
				bk.tree.Descend(visit)
			}
		}
		if !t.write {
			d.mu.RUnlock()
		}
		for _, e := range batch {
			kbuf = append(kbuf[:0], e.key...)
			vbuf = append(vbuf[:0], e.val...)
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
		}
		if exhausted {
			return nil
		}
		cursor, excl, bounded = last, true, true
	}
}

// prefixEnd returns the least key greater than every key that starts with
// p, or false when there is none (p is empty or all 0xff bytes).
func prefixEnd(p string) (string, bool) {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] != 0xff {
			return p[:i] + string([]byte{p[i] + 1}), true
		}
	}
	return "", false
}
