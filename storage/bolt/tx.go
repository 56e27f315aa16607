package bolt

import (
	"bytes"
	"encoding/binary"
	"errors"

	bbolt "go.etcd.io/bbolt"

	"github.com/corebank/corebank/storage"
)

// An overlay value is a header, a tag byte and the number of the commit
// round that wrote it, followed by the value. A deleted key is a header
// alone, tagged tagDeleted; it hides the key in bbolt until a checkpoint
// deletes it there. The round number tells a View whether what it reads is
// fsynced yet.
const (
	tagDeleted = 0
	tagLive    = 1

	overHeader = 9
)

// overValue returns the overlay form of value, written by round, in buf.
func overValue(buf []byte, tag byte, round uint64, value []byte) []byte {
	buf = append(buf[:0], tag)
	buf = binary.BigEndian.AppendUint64(buf, round)
	return append(buf, value...)
}

func roundOf(v []byte) uint64 { return binary.BigEndian.Uint64(v[1:overHeader]) }

// tx is one run of one function: transactions of the overlays (the active
// one first, then the frozen one a checkpoint is folding, if any) layered
// over a bbolt read transaction of the commit they lie on. Reads take the
// first overlay that has the key, else bbolt; writes go to the active
// overlay and, in an Update, to the log record of the round.
type tx struct {
	d       *DB
	overs   []storage.Tx
	base    *bbolt.Tx
	active  *layer // nil in a View
	log     *wal   // nil in a View
	round   uint64 // the round an Update's writes belong to
	done    bool
	writes  uint64 // bumped by Put and Delete so a Scan knows to re-read the overlay
	scratch []byte
	buckets []baseBucket
}

type baseBucket struct {
	name storage.Bucket
	bk   *bbolt.Bucket
}

// baseBucket returns bucket b of the bbolt snapshot, or nil. A bbolt read
// transaction looks a bucket up (and allocates it) on every call, and a
// transaction reads few buckets many times, so they are kept.
func (t *tx) baseBucket(b storage.Bucket) *bbolt.Bucket {
	for _, c := range t.buckets {
		if c.name == b {
			return c.bk
		}
	}
	bk := t.base.Bucket([]byte(b))
	t.buckets = append(t.buckets, baseBucket{b, bk})
	return bk
}

// visible checks an overlay value about to be shown to a View: if the
// round that wrote it is not fsynced yet, it waits until it is. An Update
// may read such a value, since it returns only once every round before
// its own is durable.
func (t *tx) visible(v []byte) error {
	if t.log != nil {
		return nil
	}
	return t.d.awaitDurable(roundOf(v))
}

// lookup returns the value under key, aliasing storage it does not own.
func (t *tx) lookup(b storage.Bucket, key []byte) ([]byte, bool, error) {
	for _, o := range t.overs {
		v, err := o.(storage.Peeker).Peek(b, key)
		switch {
		case err == nil:
			if err := t.visible(v); err != nil {
				return nil, false, err
			}
			if v[0] == tagDeleted {
				return nil, false, nil
			}
			return v[overHeader:], true, nil
		case !errors.Is(err, storage.ErrNotFound):
			return nil, false, err
		}
	}
	bk := t.baseBucket(b)
	if bk == nil {
		return nil, false, nil
	}
	v := bk.Get(key)
	return v, v != nil, nil
}

// Get returns a copy of the value under key, or storage.ErrNotFound.
func (t *tx) Get(b storage.Bucket, key []byte) ([]byte, error) {
	if t.done {
		return nil, storage.ErrTxDone
	}
	v, ok, err := t.lookup(b, key)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, storage.ErrNotFound
	}
	return clone(v), nil
}

// BucketNames returns the buckets of the overlays and of the bbolt
// snapshot (storage.BucketLister), but not the backend's own, whose name
// starts with a NUL byte. A bbolt bucket stays once a checkpoint made it,
// and an overlay may hold only deletes of a bucket, so some may be empty.
func (t *tx) BucketNames() ([]storage.Bucket, error) {
	if t.done {
		return nil, storage.ErrTxDone
	}
	var names []storage.Bucket
	for _, o := range t.overs {
		more, err := o.(storage.BucketLister).BucketNames()
		if err != nil {
			return nil, err
		}
		names = append(names, more...)
	}
	err := t.base.ForEach(func(name []byte, _ *bbolt.Bucket) error {
		if !bytes.Equal(name, metaBucket) {
			names = append(names, storage.Bucket(name))
		}
		return nil
	})
	if err != nil {
		return nil, mapErr(err)
	}
	return names, nil
}

// clone copies b into a new non-nil slice: bbolt reads a nil value as
// absent, and its memory is valid only inside its transaction.
func clone(b []byte) []byte {
	c := make([]byte, len(b))
	copy(c, b)
	return c
}

func (t *tx) writable(key []byte) error {
	return storage.CheckWrite(t.done, t.log != nil, key)
}

// Put stores a copy of value under key.
func (t *tx) Put(b storage.Bucket, key, value []byte) error {
	if err := t.writable(key); err != nil {
		return err
	}
	t.scratch = overValue(t.scratch, tagLive, t.round, value)
	if err := t.overs[0].Put(b, key, t.scratch); err != nil {
		return err
	}
	t.active.touch(b)
	t.log.put(b, key, value)
	t.writes++
	return nil
}

// Delete removes key; an absent key is not an error and writes nothing.
func (t *tx) Delete(b storage.Bucket, key []byte) error {
	if err := t.writable(key); err != nil {
		if errors.Is(err, storage.ErrEmptyKey) {
			return nil
		}
		return err
	}
	if _, ok, err := t.lookup(b, key); err != nil || !ok {
		return err
	}
	t.scratch = overValue(t.scratch, tagDeleted, t.round, nil)
	if err := t.overs[0].Put(b, key, t.scratch); err != nil {
		return err
	}
	t.active.touch(b)
	t.log.delete(b, key)
	t.writes++
	return nil
}

// Scan merges a bbolt cursor over the commit the overlays lie on with the
// overlays' keys in the same range: of equal keys the newest layer's
// entry wins, and a deleted one hides the key. bbolt and the frozen
// overlay never change under a transaction, so their iterators stay valid;
// the active overlay is read in batches, and re-read from the last key
// visited whenever fn writes. fn receives copies in buffers reused for the
// next entry.
func (t *tx) Scan(b storage.Bucket, o storage.ScanOptions, fn func(key, value []byte) error) error {
	if t.done {
		return storage.ErrTxDone
	}
	its := make([]overIter, len(t.overs))
	for i := range its {
		its[i] = overIter{tx: t.overs[i], b: b, o: o}
		if err := its[i].fetch(o.After); err != nil {
			return err
		}
	}
	var c *bbolt.Cursor
	var bk, bv []byte
	if bkt := t.baseBucket(b); bkt != nil {
		c = bkt.Cursor()
		switch from, exclusive, bounded := o.Start(); {
		case !bounded:
			bk, bv = c.Last()
		case o.Reverse:
			bk, bv = seekBefore(c, from)
		case exclusive:
			bk, bv = seekAfter(c, from)
		case len(from) > 0:
			bk, bv = c.Seek(from)
		default:
			bk, bv = c.First()
		}
	}
	step := func() {
		if o.Reverse {
			bk, bv = c.Prev()
		} else {
			bk, bv = c.Next()
		}
	}
	feed := storage.Feed{Limit: o.Limit}
	for {
		for bk != nil && bv == nil { // a nested bucket; storage never makes them
			step()
		}
		if bk != nil && !bytes.HasPrefix(bk, o.Prefix) {
			bk = nil
		}
		// The next key in scan order, and the newest layer holding it.
		k, v, from := bk, bv, -1
		for i := range its {
			ok, ov, err := its[i].peek()
			if err != nil {
				return err
			}
			if ok != nil && (k == nil || before(ok, k, o.Reverse) < 0) {
				k, v, from = ok, ov, i
			}
		}
		if k == nil {
			return nil
		}
		// Step every source past k; only the newest one's entry counts.
		for i := range its {
			if ok, _, _ := its[i].peek(); ok != nil && bytes.Equal(ok, k) {
				if from < 0 {
					from = i
				}
				if i == from {
					v = its[i].vals[its[i].i]
				}
				its[i].i++
			}
		}
		if bk != nil && bytes.Equal(bk, k) {
			step()
		}
		if from >= 0 {
			if err := t.visible(v); err != nil {
				return err
			}
			if v[0] == tagDeleted {
				continue
			}
			v = v[overHeader:]
		}
		w := t.writes
		if more, err := feed.Send(fn, k, v); !more {
			return err
		}
		if t.done {
			return storage.ErrTxDone
		}
		if t.writes != w {
			// Resume from the key fn got a copy of.
			if err := its[0].fetch(append([]byte(nil), k...)); err != nil {
				return err
			}
		}
	}
}

// before compares a and b in scan order.
func before(a, b []byte, reverse bool) int {
	if reverse {
		return bytes.Compare(b, a)
	}
	return bytes.Compare(a, b)
}

// overBatch is how many overlay entries a Scan reads at a time.
const overBatch = 64

// overIter reads the overlay's entries (deleted ones included) in the
// range of a Scan, a batch at a time.
type overIter struct {
	tx         storage.Tx
	b          storage.Bucket
	o          storage.ScanOptions
	keys, vals [][]byte
	i          int
	arena      []byte
	last       []byte // last key fetched, where the next batch starts
	exhausted  bool
}

// fetch reads the batch after the key after (nil for the Scan's own start).
func (it *overIter) fetch(after []byte) error {
	it.keys, it.vals, it.i = it.keys[:0], it.vals[:0], 0
	it.arena = it.arena[:0]
	o := it.o
	if after != nil {
		o.After = after
	}
	// A Scan that wants few keys (the newest one, Limit 1) reads few: an
	// overlay batch copies its values. Batches after the first are full,
	// for the keys that deleted or shadowed entries skip.
	batch := overBatch
	if it.o.Limit > 0 && it.o.Limit < batch && after == nil {
		batch = it.o.Limit
	}
	o.Limit = batch
	err := it.tx.Scan(it.b, o, func(k, v []byte) error {
		start := len(it.arena)
		it.arena = append(it.arena, k...)
		it.arena = append(it.arena, v...)
		it.keys = append(it.keys, it.arena[start:start+len(k)])
		it.vals = append(it.vals, it.arena[start+len(k):])
		return nil
	})
	if err != nil {
		return err
	}
	// The arena may have moved while growing; slice it again.
	off := 0
	for i := range it.keys {
		kl, vl := len(it.keys[i]), len(it.vals[i])
		it.keys[i] = it.arena[off : off+kl : off+kl]
		it.vals[i] = it.arena[off+kl : off+kl+vl : off+kl+vl]
		off += kl + vl
	}
	it.exhausted = len(it.keys) < batch
	if n := len(it.keys); n > 0 {
		it.last = append(it.last[:0], it.keys[n-1]...)
	}
	return nil
}

// peek returns the next overlay entry, or a nil key when there is none.
func (it *overIter) peek() ([]byte, []byte, error) {
	if it.i == len(it.keys) {
		if it.exhausted {
			return nil, nil, nil
		}
		if err := it.fetch(append([]byte(nil), it.last...)); err != nil {
			return nil, nil, err
		}
		if len(it.keys) == 0 {
			return nil, nil, nil
		}
	}
	return it.keys[it.i], it.vals[it.i], nil
}

// seekAfter positions c on the least key greater than key.
func seekAfter(c *bbolt.Cursor, key []byte) ([]byte, []byte) {
	k, v := c.Seek(key)
	if k != nil && bytes.Equal(k, key) {
		return c.Next()
	}
	return k, v
}

// seekBefore positions c on the greatest key less than key.
func seekBefore(c *bbolt.Cursor, key []byte) ([]byte, []byte) {
	if k, _ := c.Seek(key); k == nil {
		return c.Last()
	}
	return c.Prev()
}
