package ledger

import (
	"encoding/binary"
	"errors"
	"sort"

	"github.com/corebank/corebank/storage"
)

// Hot records (balances, holds, history lines, journal entries) are stored
// in a compact binary form: a version byte, then fields appended with
// encoding/binary's varint helpers and length-prefixed strings. JSON costs
// several microseconds per record, which would cap transfers far below the
// target rate; this form costs tens of nanoseconds.

// peeker is implemented by backends (storage/memory) whose transactions
// can return a stored value without copying it.
type peeker interface {
	Peek(b storage.Bucket, key []byte) ([]byte, error)
}

// peek returns the value under key for a decoder that copies what it
// keeps: the stored slice itself when the backend allows it (it must not be
// modified or retained), otherwise a copy from Get.
func peek(tx storage.Tx, b storage.Bucket, key []byte) ([]byte, error) {
	if p, ok := tx.(peeker); ok {
		return p.Peek(b, key)
	}
	return tx.Get(b, key)
}

// errCorrupt reports a stored record that does not decode.
var errCorrupt = errors.New("ledger: corrupt record")

type encoder struct{ b []byte }

func (e *encoder) byte(v byte)      { e.b = append(e.b, v) }
func (e *encoder) varint(v int64)   { e.b = binary.AppendVarint(e.b, v) }
func (e *encoder) uvarint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *encoder) str(s string) {
	e.b = binary.AppendUvarint(e.b, uint64(len(s)))
	e.b = append(e.b, s...)
}
func (e *encoder) bytes(s []byte) {
	e.b = binary.AppendUvarint(e.b, uint64(len(s)))
	e.b = append(e.b, s...)
}
func (e *encoder) strMap(m map[string]string) {
	e.uvarint(uint64(len(m)))
	if len(m) == 0 {
		return
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		e.str(k)
		e.str(m[k])
	}
}

type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail() {
	if d.err == nil {
		d.err = errCorrupt
	}
	d.b = nil
}

func (d *decoder) byte() byte {
	if len(d.b) < 1 {
		d.fail()
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) str() string {
	n := d.uvarint()
	if uint64(len(d.b)) < n {
		d.fail()
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

// raw decodes a length-prefixed string as a slice of the input, without
// copying.
func (d *decoder) raw() []byte {
	n := d.uvarint()
	if uint64(len(d.b)) < n {
		d.fail()
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

// strKnown decodes a string, returning known without allocating when the
// stored bytes equal it.
func (d *decoder) strKnown(known string) string {
	n := d.uvarint()
	if uint64(len(d.b)) < n {
		d.fail()
		return ""
	}
	raw := d.b[:n]
	d.b = d.b[n:]
	if string(raw) == known {
		return known
	}
	return string(raw)
}

// currency decodes a string, returning the canonical currency code without
// allocating when it is one.
func (d *decoder) currency() string {
	n := d.uvarint()
	if uint64(len(d.b)) < n {
		d.fail()
		return ""
	}
	raw := d.b[:n]
	d.b = d.b[n:]
	if c, ok := currencies[string(raw)]; ok {
		return c.Code
	}
	return string(raw)
}

func (d *decoder) strMap() map[string]string {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail()
		return nil
	}
	if n == 0 {
		return nil
	}
	m := make(map[string]string, n)
	for i := uint64(0); i < n && d.err == nil; i++ {
		k := d.str()
		m[k] = d.str()
	}
	return m
}
