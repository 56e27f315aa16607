package storage

import (
	"encoding/binary"
	"errors"
	"sort"
)

// Stored records are JSON (LoadJSON, PutJSON) unless a benchmark in the tree
// shows that decoding one costs more than the operation can afford; those
// few are written with Encoder and read with Decoder: a version byte the
// caller chooses, then varints and length-prefixed strings.

// ErrCorrupt reports a stored record that does not decode.
var ErrCorrupt = errors.New("storage: corrupt record")

// Encoder appends a binary record to B.
type Encoder struct{ B []byte }

// Byte appends one byte (a version or a small enum).
func (e *Encoder) Byte(v byte) { e.B = append(e.B, v) }

// Varint appends a signed varint.
func (e *Encoder) Varint(v int64) { e.B = binary.AppendVarint(e.B, v) }

// Uvarint appends an unsigned varint.
func (e *Encoder) Uvarint(v uint64) { e.B = binary.AppendUvarint(e.B, v) }

// Str appends a length-prefixed string.
func (e *Encoder) Str(s string) {
	e.B = binary.AppendUvarint(e.B, uint64(len(s)))
	e.B = append(e.B, s...)
}

// Bytes appends a length-prefixed byte string.
func (e *Encoder) Bytes(s []byte) {
	e.B = binary.AppendUvarint(e.B, uint64(len(s)))
	e.B = append(e.B, s...)
}

// StrMap appends a map as a count and its pairs in key order, so equal maps
// encode to equal bytes.
func (e *Encoder) StrMap(m map[string]string) {
	e.Uvarint(uint64(len(m)))
	if len(m) == 0 {
		return
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		e.Str(k)
		e.Str(m[k])
	}
}

// Decoder reads a record written by Encoder. The first read past the end
// or of a malformed value sets Err to ErrCorrupt; later reads return zero
// values, so a caller checks Err once at the end.
type Decoder struct {
	B   []byte
	Err error
}

func (d *Decoder) fail() {
	if d.Err == nil {
		d.Err = ErrCorrupt
	}
	d.B = nil
}

// Byte reads one byte.
func (d *Decoder) Byte() byte {
	if len(d.B) < 1 {
		d.fail()
		return 0
	}
	v := d.B[0]
	d.B = d.B[1:]
	return v
}

// Varint reads a signed varint.
func (d *Decoder) Varint() int64 {
	v, n := binary.Varint(d.B)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.B = d.B[n:]
	return v
}

// Uvarint reads an unsigned varint.
func (d *Decoder) Uvarint() uint64 {
	v, n := binary.Uvarint(d.B)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.B = d.B[n:]
	return v
}

// Raw reads a length-prefixed string as a slice of the input, without
// copying: it aliases the record.
func (d *Decoder) Raw() []byte {
	n := d.Uvarint()
	if uint64(len(d.B)) < n {
		d.fail()
		return nil
	}
	v := d.B[:n:n]
	d.B = d.B[n:]
	return v
}

// Str reads a length-prefixed string.
func (d *Decoder) Str() string { return string(d.Raw()) }

// StrKnown reads a string, returning known without allocating when the
// stored bytes equal it.
func (d *Decoder) StrKnown(known string) string {
	raw := d.Raw()
	if string(raw) == known {
		return known
	}
	return string(raw)
}

// StrMap reads a map written by Encoder.StrMap; an empty map reads as nil.
func (d *Decoder) StrMap() map[string]string {
	n := d.Uvarint()
	if n > uint64(len(d.B)) {
		d.fail()
		return nil
	}
	if n == 0 {
		return nil
	}
	m := make(map[string]string, n)
	for i := uint64(0); i < n && d.Err == nil; i++ {
		k := d.Str()
		m[k] = d.Str()
	}
	return m
}
