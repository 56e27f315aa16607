package bolt

import (
	"bytes"
	"errors"

	bbolt "go.etcd.io/bbolt"

	"github.com/corebank/corebank/storage"
)

// Overlay values carry a tag byte: a live value is tagLive followed by the
// value, a deleted key is tagDeleted alone, which hides the key in bbolt
// until the checkpoint deletes it there.
const (
	tagDeleted = 0
	tagLive    = 1
)

// peeker is the overlay transaction's copy-free read (storage/memory).
type peeker interface {
	Peek(b storage.Bucket, key []byte) ([]byte, error)
}

// tx is one run of one function: the overlay transaction layered over a
// bbolt read transaction of the checkpoint it starts from. Reads look in
// the overlay first; writes go to the overlay and, in an Update, to the
// log record of the round.
type tx struct {
	over    storage.Tx
	peek    peeker
	base    *bbolt.Tx
	layer   *layer
	log     *wal // nil in a View
	done    bool
	writes  uint64 // bumped by Put and Delete so a Scan knows to re-read the overlay
	scratch []byte
}

func newTx(over storage.Tx, base *bbolt.Tx, l *layer, log *wal) *tx {
	return &tx{over: over, peek: over.(peeker), base: base, layer: l, log: log}
}

// lookup returns the value under key, aliasing storage it does not own.
func (t *tx) lookup(b storage.Bucket, key []byte) ([]byte, bool, error) {
	v, err := t.peek.Peek(b, key)
	switch {
	case err == nil:
		if v[0] == tagDeleted {
			return nil, false, nil
		}
		return v[1:], true, nil
	case !errors.Is(err, storage.ErrNotFound):
		return nil, false, err
	}
	bk := t.base.Bucket([]byte(b))
	if bk == nil {
		return nil, false, nil
	}
	v = bk.Get(key)
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

// clone copies b into a new non-nil slice: bbolt reads a nil value as
// absent, and its memory is valid only inside its transaction.
func clone(b []byte) []byte {
	c := make([]byte, len(b))
	copy(c, b)
	return c
}

func (t *tx) writable(key []byte) error {
	switch {
	case t.done:
		return storage.ErrTxDone
	case t.log == nil:
		return storage.ErrReadOnly
	case len(key) == 0:
		return storage.ErrEmptyKey
	}
	return nil
}

// Put stores a copy of value under key.
func (t *tx) Put(b storage.Bucket, key, value []byte) error {
	if err := t.writable(key); err != nil {
		return err
	}
	t.scratch = append(append(t.scratch[:0], tagLive), value...)
	if err := t.over.Put(b, key, t.scratch); err != nil {
		return err
	}
	t.layer.touch(b)
	t.log.put(b, key, value)
	t.writes++
	return nil
}

var deleted = []byte{tagDeleted}

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
	if err := t.over.Put(b, key, deleted); err != nil {
		return err
	}
	t.layer.touch(b)
	t.log.delete(b, key)
	t.writes++
	return nil
}

// Scan merges a bbolt cursor over the checkpoint with the overlay's keys
// in the same range: an overlay key replaces the bbolt key it equals, and
// a deleted one hides it. The checkpoint never changes under a
// transaction, so the cursor stays valid; the overlay is read in batches,
// and re-read from the last key visited whenever fn writes. fn receives
// copies in buffers reused for the next entry.
func (t *tx) Scan(b storage.Bucket, o storage.ScanOptions, fn func(key, value []byte) error) error {
	if t.done {
		return storage.ErrTxDone
	}
	ov := overIter{t: t, b: b, o: o}
	if err := ov.fetch(o.After); err != nil {
		return err
	}
	var c *bbolt.Cursor
	var bk, bv []byte
	if bkt := t.base.Bucket([]byte(b)); bkt != nil {
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
	var kbuf, vbuf []byte
	n := 0
	for {
		for bk != nil && bv == nil { // a nested bucket; storage never makes them
			step()
		}
		if bk != nil && !bytes.HasPrefix(bk, o.Prefix) {
			bk = nil
		}
		ok, oval, err := ov.peek()
		if err != nil {
			return err
		}
		if ok == nil && bk == nil {
			return nil
		}
		var k, v []byte
		if ok != nil && (bk == nil || before(ok, bk, o.Reverse) <= 0) {
			if bk != nil && bytes.Equal(ok, bk) {
				step()
			}
			ov.i++
			if oval[0] == tagDeleted {
				continue
			}
			k, v = ok, oval[1:]
		} else {
			k, v = bk, bv
			step()
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
			// fn may have changed kbuf; resume from the key we gave it.
			if err := ov.fetch(append([]byte(nil), k...)); err != nil {
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
	t          *tx
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
	o.Limit = overBatch
	err := it.t.over.Scan(it.b, o, func(k, v []byte) error {
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
	it.exhausted = len(it.keys) < overBatch
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
