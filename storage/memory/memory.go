package memory

import (
	"context"
	"encoding/binary"
	"errors"
	"hash/maphash"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/internal/writeq"
)

var _ storage.Backend = (*DB)(nil)

// A record is a stored key or value: its length as a uvarint, then its
// bytes, addressed by a pointer to the length. Keys and values of new keys
// are carved together from pointer-free blocks, so a key costs the
// allocator and the garbage collector nothing of its own, and what points
// at them (log entries, items, tree nodes) needs no length word: that is
// what keeps a tree slot at one word and an item at four. Records are never
// mutated once stored, so readers may hold their bytes after releasing the
// lock, and Peek may return them.
type record = unsafe.Pointer

// emptyRec is the record of an empty value.
var emptyRec = new(byte)

// emptyVal is the stored form of an empty value: non-nil, so it is not a
// tombstone.
var emptyVal = []byte{}

// recData returns the size of r's length prefix and its length. It never
// forms a pointer past r's bytes, which may end its allocation.
func recData(r record) (hdr, n int) {
	if c := *(*byte)(r); c < 0x80 {
		return 1, int(c)
	}
	var u uint
	for s := uint(0); ; s += 7 {
		c := *(*byte)(unsafe.Add(r, hdr))
		hdr++
		u |= uint(c&0x7f) << s
		if c < 0x80 {
			return hdr, int(u)
		}
	}
}

// recString returns a key record's bytes as a string sharing them.
func recString(r record) string {
	hdr, n := recData(r)
	if n == 0 {
		return ""
	}
	return unsafe.String((*byte)(unsafe.Add(r, hdr)), n)
}

// recBytes returns a value record's bytes, sharing them, with capacity equal
// to length; nil (a tombstone) for a nil record and emptyVal when empty.
func recBytes(r record) []byte {
	if r == nil {
		return nil
	}
	hdr, n := recData(r)
	if n == 0 {
		return emptyVal
	}
	return unsafe.Slice((*byte)(unsafe.Add(r, hdr)), n)
}

// recSize is the stored size of a record of n bytes.
func recSize(n int) int { return uvarintLen(uint64(n)) + n }

// appendRec appends b as a record.
func appendRec(dst, b []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...)
}

// version is an older version of a key: the commit sequence number that
// wrote it and its value record (nil for a tombstone).
type version struct {
	seq uint64
	val record
}

// older holds an item's versions before its newest, oldest first. Most
// items never have one: an overwrite or delete in a later Update takes one
// from a free list (DB.spare) and compaction gives it back, so the item
// pays one word for the rare case.
type older struct {
	vs  []version
	one [1]version // backing array for the common single older version
}

// item is one key and its versions. Its newest version is inline (seq,
// val; val nil for a tombstone) and any older ones are in old. It holds
// no length words and no hash chain (see bucket.coll) so that it stays at
// four words: a store is mostly keys written once. An item whose key is nil
// has been unlinked from its bucket by rollback or compaction.
type item struct {
	key record
	val record
	seq uint64
	old *older
}

func (it *item) removed() bool { return it.key == nil }

// olderLen returns how many versions precede the newest.
func (it *item) olderLen() int {
	if it.old == nil {
		return 0
	}
	return len(it.old.vs)
}

// visibleAt returns the value of the newest version at or below seq.
func (it *item) visibleAt(seq uint64) ([]byte, bool) {
	if it.seq <= seq {
		return recBytes(it.val), it.val != nil
	}
	if it.old != nil {
		for i := len(it.old.vs) - 1; i >= 0; i-- {
			if v := &it.old.vs[i]; v.seq <= seq {
				return recBytes(v.val), v.val != nil
			}
		}
	}
	return nil, false
}

// An entry is how a bucket that has only been appended to (see bucket)
// stores a key, with no item: the key's and the value's records, then the
// seq of the Update that wrote it as a uvarint, carved together from a
// block and addressed by the key record, so that a tree search reads it
// as it reads an item's key. It is one word in the bucket's log and nothing
// for the garbage collector to scan. An entry is never modified: an
// overwrite or delete first turns the bucket's entries into items.
type entry = unsafe.Pointer

func entVal(e entry) record {
	hdr, n := recData(e)
	return unsafe.Add(e, hdr+n)
}

func entSeq(e entry) uint64 {
	v := entVal(e)
	hdr, n := recData(v)
	p := unsafe.Add(v, hdr+n)
	var seq uint64
	for s := uint(0); ; s += 7 {
		c := *(*byte)(p)
		seq |= uint64(c&0x7f) << s
		if c < 0x80 {
			return seq
		}
		p = unsafe.Add(p, 1)
	}
}

// bucket is an ordered tree for scans plus a hash index for point reads, so
// that Get and Put of an existing key cost O(1) however large the store.
// The index maps a seeded 64-bit hash of the key to its item, so it holds
// no strings: growing it rehashes integers without touching the keys. The
// rare second item with the same hash goes to coll.
//
// The index is built on the first point read, overwrite or delete an Update
// makes in the bucket (see DB.hash). Until then the bucket has only been
// appended to, and may never be read but by scans (a ledger's history), so
// it has no items either: its keys are entries in log, a Put costs one tree
// insert and a key costs its bytes and a word. Hashing turns the log into
// items in tree, in one pass of appends.
type bucket struct {
	name  storage.Bucket
	log   *logTree           // nil once the bucket is hashed
	tree  *logTree           // of items; nil until the bucket is hashed
	index map[uint64]*item   // nil until the bucket is hashed
	coll  map[uint64][]*item // further items whose hash is in index
	seed  maphash.Seed
	// rewrites is set by the first overwrite of a committed key and
	// deletes by the first Delete of a present key. Values of new keys in
	// a bucket with rewrites, and items and keys too in one with deletes,
	// are allocated one by one, to be freed when superseded, rather than
	// carved from blocks and slabs that long-lived keys would pin. Only the
	// Update holder reads or writes them.
	rewrites, deletes bool
	// wanted is set by a View's point read while the bucket has no index;
	// the next Update builds it.
	wanted atomic.Bool
}

func newBucket(name storage.Bucket) *bucket {
	return &bucket{name: name, log: newLogTree(false), seed: maphash.MakeSeed()}
}

// find returns the item for key and the key's hash. The bucket must be
// hashed.
func (b *bucket) find(key []byte) (*item, uint64) {
	h := maphash.Bytes(b.seed, key)
	it := b.index[h]
	if it == nil {
		return nil, h
	}
	if recString(it.key) == string(key) {
		return it, h
	}
	for _, it := range b.coll[h] {
		if recString(it.key) == string(key) {
			return it, h
		}
	}
	return nil, h
}

// indexAdd adds it, whose key hashes to h and is absent, to the index.
func (b *bucket) indexAdd(it *item, h uint64) {
	if b.index[h] == nil {
		b.index[h] = it
		return
	}
	if b.coll == nil {
		b.coll = make(map[uint64][]*item)
	}
	b.coll[h] = append(b.coll[h], it)
}

// link adds it, whose key hashes to h and is absent, to the index and the
// tree. The bucket must be hashed.
func (b *bucket) link(it *item, h uint64) {
	b.indexAdd(it, h)
	b.tree.Insert(entry(it))
}

// hash builds bk's index if it has none, turning its log's entries into
// items. Only the Update holder calls it.
func (d *DB) hash(bk *bucket) {
	if bk.index != nil {
		return
	}
	tree := newLogTree(true)
	index := make(map[uint64]*item, bk.log.Len())
	collided := false
	bk.log.Ascend(func(e entry) bool {
		it := d.newItem()
		it.key, it.val, it.seq = e, entVal(e), entSeq(e)
		tree.Insert(entry(it)) // an append: O(1) (see logTree.hints)
		// One map operation per key: a bucket may be hashed with millions.
		n := len(index)
		index[maphash.String(bk.seed, recString(it.key))] = it
		collided = collided || len(index) == n
		return true
	})
	var coll map[uint64][]*item
	if collided { // two keys share a 64-bit hash: index them one by one
		clear(index)
		tree.Ascend(func(e entry) bool {
			it := (*item)(e)
			h := maphash.String(bk.seed, recString(it.key))
			if index[h] == nil {
				index[h] = it
				return true
			}
			if coll == nil {
				coll = make(map[uint64][]*item)
			}
			coll[h] = append(coll[h], it)
			return true
		})
	}
	d.mu.Lock()
	bk.tree, bk.index, bk.coll, bk.log = tree, index, coll, nil
	d.mu.Unlock()
	// Appends of the running Update now roll back as items.
	for i := range d.undo {
		if u := &d.undo[i]; u.b == bk && u.e != nil {
			u.it, _ = bk.find(recBytes(u.e))
			u.e = nil
		}
	}
}

// remove unlinks it from the index and the tree and clears it. Items
// exist only in hashed buckets.
func (b *bucket) remove(it *item) {
	b.tree.Delete(entry(it))
	h := maphash.String(b.seed, recString(it.key))
	list := b.coll[h]
	if b.index[h] == it {
		if len(list) == 0 {
			delete(b.index, h)
		} else {
			b.index[h] = list[len(list)-1]
			list[len(list)-1] = nil
			list = list[:len(list)-1]
		}
	} else {
		for i, c := range list {
			if c == it {
				n := copy(list[i:], list[i+1:])
				list[i+n] = nil
				list = list[:i+n]
				break
			}
		}
	}
	switch {
	case len(list) > 0:
		b.coll[h] = list
	case b.coll != nil:
		delete(b.coll, h)
	}
	*it = item{} // drop the records; a slab may outlive the item
}

// undo records a version appended by the running Update: of an item, or
// an entry appended to a log.
type undo struct {
	b  *bucket
	it *item
	e  entry
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

	// The writer (writer.go): writes is the queue of Updates and its
	// lead; wmu is held by the leader while it runs Updates (only Close
	// waits for it) and guards the fields below.
	writes  writeq.Queue[call]
	wmu     sync.Mutex
	arena   []byte     // free tail of the current record block (see block)
	items   []item     // current item slab (see newItem)
	spare   []*older   // older lists compaction freed, for reuse
	hot     [8]*bucket // buckets Updates used last (see tx.bucket)
	hotNext uint8
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
	d.arena, d.items, d.spare = nil, nil, nil
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
// nil. Updates run one at a time, in the order they arrive (see writer.go:
// possibly on another Update's goroutine); fn runs exactly once. If fn
// returns an error or panics, nothing it wrote is kept and the error is
// returned (the panic re-raised on this goroutine). It returns
// storage.ErrClosed after Close and ctx.Err() if ctx is already done.
func (d *DB) Update(ctx context.Context, fn func(storage.Tx) error) error {
	if d.closed.Load() {
		return storage.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return d.write(fn)
}

// apply runs fn as one Update; the caller holds wmu.
func (d *DB) apply(fn func(storage.Tx) error) (err error) {
	if d.closed.Load() {
		return storage.ErrClosed
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

// prepare is the upkeep before a batch of Updates: compaction, and hash
// indexes for the buckets Views asked for. The caller holds wmu.
func (d *DB) prepare() {
	if d.closed.Load() {
		return
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
}

// commit publishes seq and queues the touched items for compaction.
func (d *DB) commit(seq uint64) {
	for i, u := range d.undo {
		if u.it != nil && (u.it.olderLen() > 0 || u.it.val == nil) {
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
		it := u.it
		if it == nil {
			u.b.log.Delete(u.e)
		} else if n := it.olderLen(); n > 0 {
			v := it.old.vs[n-1]
			it.seq, it.val = v.seq, v.val
			it.old.vs[n-1] = version{}
			it.old.vs = it.old.vs[:n-1]
			if n == 1 {
				d.free(it)
			}
		} else {
			u.b.remove(it)
		}
		d.undo[i] = undo{}
	}
	d.mu.Unlock()
	d.undo = d.undo[:0]
}

// push makes it's newest version an older one, to be superseded by a
// version of the running Update. Only the Update holder calls it, under mu.
func (d *DB) push(it *item) {
	if it.old == nil {
		if n := len(d.spare); n > 0 {
			it.old = d.spare[n-1]
			d.spare[n-1] = nil
			d.spare = d.spare[:n-1]
		} else {
			o := &older{}
			o.vs = o.one[:0]
			it.old = o
		}
	}
	it.old.vs = append(it.old.vs, version{seq: it.seq, val: it.val})
}

// spareMax bounds the older lists kept for reuse.
const spareMax = 1024

// free detaches it's older list, now empty, keeping it for reuse unless
// it has grown while a View was pinned.
func (d *DB) free(it *item) {
	o := it.old
	it.old = nil
	if cap(o.vs) == 1 && len(d.spare) < spareMax {
		d.spare = append(d.spare, o)
	}
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
			d.compact(g.b, g.it, oldest)
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

// compact drops the versions of it that no View pinned at or above oldest
// can read, and removes it if only a tombstone remains. Caller holds mu.
func (d *DB) compact(b *bucket, it *item, oldest uint64) {
	if it.removed() {
		return
	}
	if n := it.olderLen(); n > 0 {
		if it.seq <= oldest {
			clear(it.old.vs)
			it.old.vs = it.old.vs[:0]
			d.free(it)
		} else {
			// Keep the newest older version a View may read, and those after.
			i := n - 1
			for i > 0 && it.old.vs[i].seq > oldest {
				i--
			}
			if i > 0 {
				m := copy(it.old.vs, it.old.vs[i:])
				clear(it.old.vs[m:])
				it.old.vs = it.old.vs[:m]
			}
		}
	}
	if it.old == nil && it.val == nil && it.seq <= oldest {
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
	// recent caches the buckets a View used: a ledger operation
	// alternates between a handful, and buckets are never dropped. next is
	// the slot the next miss fills. Updates use DB.hot instead.
	recent [4]*bucket
	next   uint8
	search *scratch // see probe
}

// bucket returns the named bucket or nil. Views call it under d.mu.
func (t *tx) bucket(b storage.Bucket) *bucket {
	recent, next := t.recent[:], &t.next
	if t.write {
		// Updates share one cache: a fresh one would miss on its first
		// use of each bucket, a map lookup each.
		recent, next = t.db.hot[:], &t.db.hotNext
	}
	for _, bk := range recent {
		if bk != nil && bk.name == b {
			return bk
		}
	}
	bk := t.db.buckets[b]
	if bk != nil {
		recent[*next%uint8(len(recent))] = bk
		*next++
	}
	return bk
}

// scratch is the key of a transaction's tree searches, allocated
// on its first: most Updates search no tree.
type scratch struct {
	key  []byte // key's record
	find item   // an item with key, to search a tree of items
}

// probe sets t's search key to key and returns its record, which is also
// the key of t.search.find.
func probe[K string | []byte](t *tx, key K) entry {
	if t.search == nil {
		t.search = &scratch{}
	}
	s := t.search
	s.key = binary.AppendUvarint(s.key[:0], uint64(len(key)))
	s.key = append(s.key, key...)
	s.find.key = record(&s.key[0])
	return s.find.key
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
		return recBytes(it.val), it.val != nil
	}
	d.mu.RLock()
	bk := t.bucket(b)
	if bk == nil {
		d.mu.RUnlock()
		return nil, false
	}
	if bk.index == nil {
		if !bk.wanted.Load() && bk.wanted.CompareAndSwap(false, true) {
			d.wanted.Store(true)
		}
		e, ok := bk.log.Get(probe(t, key))
		ok = ok && entSeq(e) <= t.seq
		var val []byte
		if ok {
			val = recBytes(entVal(e))
		}
		d.mu.RUnlock()
		return val, ok
	}
	it, _ := bk.find(key)
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

// BucketNames returns the name of every bucket the DB has made, which
// includes every bucket holding a key in t's view (storage.BucketLister).
// Buckets are never dropped, so some may be empty.
func (t *tx) BucketNames() ([]storage.Bucket, error) {
	if t.done {
		return nil, storage.ErrTxDone
	}
	d := t.db
	if !t.write {
		d.mu.RLock()
		defer d.mu.RUnlock()
	}
	names := make([]storage.Bucket, 0, len(d.buckets))
	for b := range d.buckets {
		names = append(names, b)
	}
	return names, nil
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
	return storage.CheckWrite(t.done, t.write, key)
}

// Put stores a copy of value under a copy of key.
func (t *tx) Put(b storage.Bucket, key, value []byte) error {
	if err := t.writable(key); err != nil {
		return err
	}
	d := t.db
	bk := t.bucket(b)
	if bk == nil {
		bk = newBucket(b)
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
		val := ownVal(value)
		d.mu.Lock()
		if it.seq != t.seq {
			bk.rewrites = true
			d.push(it)
			d.undo = append(d.undo, undo{b: bk, it: it})
		}
		it.seq, it.val = t.seq, val
		d.mu.Unlock()
		return nil
	}
	if bk.deletes {
		// Keys here come and go (queues, indexes of pending work): the
		// item and its records are one allocation each, freed with it.
		it = &item{}
		buf := appendRec(make([]byte, 0, recSize(len(key))+recSize(len(value))), key)
		it.key = record(&buf[0])
		it.val = valRec(appendRec(buf, value), len(buf))
	} else {
		it = d.newItem()
		if bk.rewrites {
			it.key = d.carveKey(key)
			it.val = ownVal(value)
		} else {
			it.key, it.val = d.carve(key, value)
		}
	}
	it.seq = t.seq
	d.mu.Lock()
	bk.link(it, h)
	d.mu.Unlock()
	d.undo = append(d.undo, undo{b: bk, it: it})
	return nil
}

// valRec returns the value record at off in buf, or the shared emptyRec
// when it is empty.
func valRec(buf []byte, off int) record {
	if buf[off] == 0 {
		return record(emptyRec)
	}
	return record(&buf[off])
}

// ownVal returns value as a record in an allocation of its own.
func ownVal(value []byte) record {
	if len(value) == 0 {
		return record(emptyRec)
	}
	buf := appendRec(make([]byte, 0, recSize(len(value))), value)
	return record(&buf[0])
}

// insert appends key to bk's log unless it is present; it reports whether
// it did. A present key wastes the entry carved for it, which happens once
// per bucket: its first overwrite hashes the bucket.
func (t *tx) insert(bk *bucket, key, value []byte) bool {
	d := t.db
	e := d.carveEntry(t.seq, key, value)
	d.mu.Lock()
	if _, found := bk.log.Insert(e); found {
		d.mu.Unlock()
		return false
	}
	d.mu.Unlock()
	d.undo = append(d.undo, undo{b: bk, e: e})
	return true
}

// Records of up to arenaMax bytes are carved from shared blocks of
// arenaBlock bytes instead of being allocated one by one: a block is one
// allocation (with no pointers for the garbage collector to scan) and is
// freed once nothing references a record in it (an item, a log, a slice a
// caller kept), so the memory a block can keep alive is bounded by
// arenaBlock per live small record and is in practice close to the live
// data.
const (
	arenaBlock = 16 << 10
	arenaFirst = arenaMax // a fresh block must hold any carved record
	arenaMax   = 1 << 10
)

// itemSlab is how many items newItem carves from one allocation. A slab
// lives while any of its items is linked, so it can keep at most this many
// dead items alive per live one.
const itemSlab = 64

// newItem returns a zero item. Only the Update holder calls it.
func (d *DB) newItem() *item {
	if len(d.items) == cap(d.items) {
		d.items = make([]item, 0, itemSlab)
	}
	d.items = d.items[:len(d.items)+1]
	return &d.items[len(d.items)-1]
}

// block returns n free bytes at the end of the current block, starting a
// new one when they do not fit. Only the Update holder calls it.
func (d *DB) block(n int) []byte {
	if n > arenaMax {
		return make([]byte, 0, n)
	}
	if len(d.arena)+n > cap(d.arena) {
		// The first blocks are small and each doubles the last, up to
		// arenaBlock: a store that holds little (one of bank/workspace's
		// idle workspaces) does not keep a whole block for it.
		d.arena = make([]byte, 0, min(arenaBlock, max(2*cap(d.arena), arenaFirst)))
	}
	off := len(d.arena)
	d.arena = d.arena[:off+n]
	return d.arena[off : off : off+n]
}

// carve stores the records of a new key and its value side by side.
func (d *DB) carve(key, value []byte) (k, v record) {
	ks := recSize(len(key))
	buf := d.block(ks + recSize(len(value)))
	buf = appendRec(buf, key)
	buf = appendRec(buf, value)
	return record(&buf[0]), valRec(buf, ks)
}

// carveEntry stores an entry of a new key (see entry).
func (d *DB) carveEntry(seq uint64, key, value []byte) entry {
	buf := d.block(recSize(len(key)) + recSize(len(value)) + uvarintLen(seq))
	buf = appendRec(buf, key)
	buf = appendRec(buf, value)
	buf = binary.AppendUvarint(buf, seq)
	return entry(&buf[0])
}

func uvarintLen(v uint64) int {
	n := 1
	for ; v >= 0x80; v >>= 7 {
		n++
	}
	return n
}

// carveKey stores the record of a new key.
func (d *DB) carveKey(key []byte) record {
	buf := appendRec(d.block(recSize(len(key))), key)
	return record(&buf[0])
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
	if it == nil || it.val == nil {
		return nil
	}
	bk.deletes = true
	d.mu.Lock()
	if it.seq != t.seq {
		d.push(it)
		d.undo = append(d.undo, undo{b: bk, it: it})
	}
	it.seq, it.val = t.seq, nil
	d.mu.Unlock()
	return nil
}

// scanBatch is how many visible entries a Scan gathers per lock hold, and
// scanExamine caps the items examined per hold when most are invisible.
const (
	scanBatch   = 64
	scanExamine = 512
)

// hit is a visible key a Scan gathered; both share stored bytes.
type hit struct {
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

	batch := make([]hit, 0, scanBatch)
	feed := storage.Feed{Limit: o.Limit}
	for {
		batch = batch[:0]
		exhausted := true
		examined := 0
		last := ""
		take := func(key string, val []byte, ok bool) bool {
			if excl && key == cursor {
				return true
			}
			if !strings.HasPrefix(key, prefix) {
				return false
			}
			last = key
			examined++
			if ok {
				batch = append(batch, hit{key, val})
			}
			if len(batch) == scanBatch || examined == scanExamine {
				exhausted = false
				return false
			}
			return true
		}
		visitItem := func(e entry) bool {
			it := (*item)(e)
			if t.write {
				return take(recString(it.key), recBytes(it.val), it.val != nil)
			}
			val, ok := it.visibleAt(t.seq)
			return take(recString(it.key), val, ok)
		}
		visitEntry := func(e entry) bool {
			ok := t.write || entSeq(e) <= t.seq
			return take(recString(e), recBytes(entVal(e)), ok)
		}
		if !t.write {
			d.mu.RLock()
		}
		switch bk := t.bucket(b); {
		case bk == nil:
		case bk.log != nil && !o.Reverse:
			bk.log.AscendGreaterOrEqual(probe(t, cursor), visitEntry)
		case bk.log != nil && bounded:
			bk.log.DescendLessOrEqual(probe(t, cursor), visitEntry)
		case bk.log != nil:
			bk.log.Descend(visitEntry)
		case !o.Reverse:
			probe(t, cursor)
			bk.tree.AscendGreaterOrEqual(entry(&t.search.find), visitItem)
		case bounded:
			probe(t, cursor)
			bk.tree.DescendLessOrEqual(entry(&t.search.find), visitItem)
		default:
			bk.tree.Descend(visitItem)
		}
		if !t.write {
			d.mu.RUnlock()
		}
		for _, e := range batch {
			// Send copies the key out before fn sees it.
			key := unsafe.Slice(unsafe.StringData(e.key), len(e.key))
			if more, err := feed.Send(fn, key, e.val); !more {
				return err
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
