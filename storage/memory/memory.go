package memory

import (
	"context"
	"errors"
	"hash/maphash"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/google/btree"

	"github.com/corebank/corebank/storage"
)

var _ storage.Backend = (*DB)(nil)

// version is one committed (or, for the running Update, pending) value of a
// key; a nil val is a tombstone (an empty value is stored as a non-nil empty
// slice). Its val is never mutated once stored, so readers may hold it after
// releasing the lock.
type version struct {
	seq uint64
	val []byte
}

func (v *version) del() bool { return v.val == nil }

// emptyVal is the stored form of an empty value: non-nil, so it is not a
// tombstone.
var emptyVal = []byte{}

// item is one key and its version chain, oldest first. An item with no
// versions has been unlinked from its bucket by rollback or compaction.
type item struct {
	key      string
	next     *item // next item in the same hash chain
	versions []version
	one      [1]version // backing array for the common single-version chain
}

func (it *item) removed() bool { return len(it.versions) == 0 }

// newest returns the last version in the chain.
func (it *item) newest() *version { return &it.versions[len(it.versions)-1] }

// visibleAt returns the value of the newest version at or below seq.
func (it *item) visibleAt(seq uint64) ([]byte, bool) {
	for i := len(it.versions) - 1; i >= 0; i-- {
		v := &it.versions[i]
		if v.seq <= seq {
			return v.val, v.val != nil
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
// The index maps a seeded 64-bit hash of the key to a chain of items (a
// collision is resolved by comparing keys), so it holds no strings: growing
// it rehashes integers without touching the keys.
//
// The index is built on the first point read, overwrite or delete an Update
// makes in the bucket (see DB.hash). Until then the bucket has only been
// appended to, and may never be read but by scans (a ledger's history), so
// it is a tree alone and a Put costs one tree insert.
type bucket struct {
	tree  *btree.BTreeG[ref]
	index map[uint64]*item // nil until the bucket is hashed
	seed  maphash.Seed
	// rewrites is set by the first overwrite of a committed key and
	// deletes by the first Delete of a present key. Values of new keys in
	// a bucket with rewrites, and items too in one with deletes, are
	// allocated one by one, to be freed when superseded, rather than carved
	// from blocks and slabs that long-lived keys would pin. Only the Update
	// holder reads or writes them.
	rewrites, deletes bool
	// wanted is set by a View's point read while the bucket has no index;
	// the next Update builds it.
	wanted atomic.Bool
}

func newBucket() *bucket {
	return &bucket{tree: btree.NewG(32, lessRef), seed: maphash.MakeSeed()}
}

// find returns the item for key and the key's hash. The bucket must be
// hashed.
func (b *bucket) find(key []byte) (*item, uint64) {
	h := maphash.Bytes(b.seed, key)
	for it := b.index[h]; it != nil; it = it.next {
		if it.key == string(key) {
			return it, h
		}
	}
	return nil, h
}

// link adds it, whose key hashes to h and is absent, to the index and the
// tree. The bucket must be hashed.
func (b *bucket) link(it *item, h uint64) {
	it.next = b.index[h]
	b.index[h] = it
	b.tree.ReplaceOrInsert(ref{it.key, it})
}

// hash builds bk's index if it has none. Only the Update holder calls it.
func (d *DB) hash(bk *bucket) {
	if bk.index != nil {
		return
	}
	index := make(map[uint64]*item, bk.tree.Len())
	bk.tree.Ascend(func(r ref) bool {
		h := maphash.String(bk.seed, r.key)
		r.it.next = index[h]
		index[h] = r.it
		return true
	})
	d.mu.Lock()
	bk.index = index
	d.mu.Unlock()
}

// remove unlinks it from the index and the tree and clears its versions.
func (b *bucket) remove(it *item) {
	b.tree.Delete(ref{key: it.key})
	if b.index == nil {
		*it = item{}
		return
	}
	h := maphash.String(b.seed, it.key)
	switch head := b.index[h]; {
	case head == it && it.next == nil:
		delete(b.index, h)
	case head == it:
		b.index[h] = it.next
	default:
		for p := head; p != nil; p = p.next {
			if p.next == it {
				p.next = it.next
				break
			}
		}
	}
	*it = item{} // drop the key and values; a slab may outlive the item
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
	arena   []byte        // free tail of the current value block (see store)
	items   []item        // current item slab (see newItem)
	undo    []undo        // versions appended by the running Update
	garbage []garbage     // compaction queue in commit order
	gcHead  int           // first unprocessed entry of garbage
	seq     atomic.Uint64 // last published commit
	wanted  atomic.Bool   // some bucket's wanted flag is set

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
	d.arena, d.items = nil, nil
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
	if d.wanted.Load() {
		d.wanted.Store(false)
		for _, bk := range d.buckets {
			if bk.wanted.Load() {
				d.hash(bk)
			}
		}
	}
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
		if len(u.it.versions) > 1 || u.it.newest().del() {
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
	if it.removed() {
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
	if len(it.versions) == 1 && it.versions[0].del() && it.versions[0].seq <= oldest {
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
	// name and bk cache the last bucket used; buckets are never dropped.
	name storage.Bucket
	bk   *bucket
}

// bucket returns the named bucket or nil. Views call it under d.mu.
func (t *tx) bucket(b storage.Bucket) *bucket {
	if t.bk != nil && t.name == b {
		return t.bk
	}
	bk := t.db.buckets[b]
	if bk != nil {
		t.name, t.bk = b, bk
	}
	return bk
}

// lookup returns the value of key visible to t; it takes the read lock
// for Views (an Update is the only writer, so it reads without).
func (t *tx) lookup(b storage.Bucket, key []byte) ([]byte, bool) {
	d := t.db
	if t.write {
		bk := t.bucket(b)
		if bk == nil {
			return nil, false
		}
		d.hash(bk)
		it, _ := bk.find(key)
		if it == nil {
			return nil, false
		}
		v := it.newest()
		return v.val, v.val != nil
	}
	d.mu.RLock()
	bk := t.bucket(b)
	if bk == nil {
		d.mu.RUnlock()
		return nil, false
	}
	var it *item
	if bk.index != nil {
		it, _ = bk.find(key)
	} else {
		if !bk.wanted.Load() && bk.wanted.CompareAndSwap(false, true) {
			d.wanted.Store(true)
		}
		if r, ok := bk.tree.Get(ref{key: string(key)}); ok {
			it = r.it
		}
	}
	if it == nil {
		d.mu.RUnlock()
		return nil, false
	}
	val, ok := it.visibleAt(t.seq)
	d.mu.RUnlock()
	return val, ok
}

// Peek is Get without the copy: it returns the stored value itself, which
// the caller must neither modify nor append to (its capacity is its
// length). Stored values are never mutated, so the slice stays valid after
// the transaction. Decoders that copy what they keep use it to save an
// allocation per read.
func (t *tx) Peek(b storage.Bucket, key []byte) ([]byte, error) {
	if t.done {
		return nil, storage.ErrTxDone
	}
	val, ok := t.lookup(b, key)
	if !ok {
		return nil, storage.ErrNotFound
	}
	return val, nil
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
	if len(b) == 0 {
		return emptyVal
	}
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
	bk := t.bucket(b)
	if bk == nil {
		bk = newBucket()
		d.mu.Lock()
		d.buckets[b] = bk
		d.mu.Unlock()
	}
	if bk.index == nil {
		if t.insert(bk, key, value) {
			return nil
		}
		d.hash(bk) // key exists: its first overwrite
	}
	it, h := bk.find(key)
	if it != nil {
		// An overwritten key is likely to be overwritten again (a
		// balance, a counter), so its value gets its own allocation, which
		// the runtime frees as soon as it is superseded, rather than a
		// slice of a shared block that would stay pinned.
		val := clone(value)
		if v := it.newest(); v.seq == t.seq {
			d.mu.Lock()
			v.val = val
			d.mu.Unlock()
			return nil
		}
		bk.rewrites = true
		d.mu.Lock()
		it.versions = append(it.versions, version{seq: t.seq, val: val})
		d.mu.Unlock()
		d.undo = append(d.undo, undo{b: bk, it: it})
		return nil
	}
	if bk.deletes {
		it = &item{}
	} else {
		it = d.newItem()
	}
	if bk.rewrites || bk.deletes {
		it.one[0] = version{seq: t.seq, val: clone(value)}
	} else {
		it.one[0] = version{seq: t.seq, val: d.store(value)}
	}
	it.key = string(key)
	it.versions = it.one[:1:1]
	d.mu.Lock()
	bk.link(it, h)
	d.mu.Unlock()
	d.undo = append(d.undo, undo{b: bk, it: it})
	return nil
}

// insert adds key to bk, which has no index, unless it is present; it
// reports whether it did.
func (t *tx) insert(bk *bucket, key, value []byte) bool {
	d := t.db
	it := d.newItem()
	it.key = string(key)
	d.mu.Lock()
	if old, found := bk.tree.ReplaceOrInsert(ref{it.key, it}); found {
		bk.tree.ReplaceOrInsert(old) // put it back before a View can see
		d.mu.Unlock()
		*it = item{}
		return false
	}
	it.one[0] = version{seq: t.seq, val: d.store(value)}
	it.versions = it.one[:1:1]
	d.mu.Unlock()
	d.undo = append(d.undo, undo{b: bk, it: it})
	return true
}

// Values up to arenaMax bytes are carved from shared blocks of arenaBlock
// bytes instead of being allocated one by one: a block is one allocation
// (with no pointers for the garbage collector to scan) and is freed once no
// stored version references any value in it, so the memory a block can
// keep alive is bounded by arenaBlock per live small value and is in
// practice close to the live data.
const (
	arenaBlock = 16 << 10
	arenaMax   = 1 << 10
)

// itemSlab is how many items newItem carves from one allocation. A slab
// lives while any of its items is linked, so it can keep at most this many
// dead items alive per live one.
const itemSlab = 32

// newItem returns a zero item. Only the Update holder calls it.
func (d *DB) newItem() *item {
	if len(d.items) == cap(d.items) {
		d.items = make([]item, 0, itemSlab)
	}
	d.items = d.items[:len(d.items)+1]
	return &d.items[len(d.items)-1]
}

// store returns a copy of the value of a new key: an empty value is
// emptyVal, never nil. Only the Update holder calls it.
func (d *DB) store(value []byte) []byte {
	n := len(value)
	if n == 0 {
		return emptyVal
	}
	if n > arenaMax {
		return clone(value)
	}
	if len(d.arena)+n > cap(d.arena) {
		d.arena = make([]byte, 0, arenaBlock)
	}
	off := len(d.arena)
	d.arena = append(d.arena, value...)
	return d.arena[off : off+n : off+n]
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
	bk := t.bucket(b)
	if bk == nil {
		return nil
	}
	d.hash(bk)
	it, _ := bk.find(key)
	if it == nil {
		return nil
	}
	v := it.newest()
	if v.del() {
		return nil
	}
	bk.deletes = true
	switch {
	case v.seq == t.seq:
		d.mu.Lock()
		v.val = nil
		d.mu.Unlock()
	default:
		d.mu.Lock()
		it.versions = append(it.versions, version{seq: t.seq})
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

	// cursor is where the next batch starts; excl skips cursor itself.
	from, excl, bounded := o.Start()
	cursor := string(from)

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
				val, ok = v.val, v.val != nil
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
		if bk := t.bucket(b); bk != nil {
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
