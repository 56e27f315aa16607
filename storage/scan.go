package storage

import (
	"bytes"
	"errors"
)

// Start returns where a Scan with o begins, for backends: the first key
// visited is the least key at or above from (ascending) or the greatest key
// at or below from (descending), skipping from itself when exclusive. It
// returns bounded false for a descending scan with no upper bound, which
// begins at the greatest key. An ascending scan is always bounded: from is
// the prefix (possibly empty) or After.
func (o ScanOptions) Start() (from []byte, exclusive, bounded bool) {
	if !o.Reverse {
		if len(o.After) > 0 && bytes.Compare(o.After, o.Prefix) >= 0 {
			return o.After, true, true
		}
		return o.Prefix, false, true
	}
	from, bounded = PrefixEnd(o.Prefix)
	if len(o.After) > 0 && (!bounded || bytes.Compare(o.After, from) < 0) {
		return o.After, true, true
	}
	return from, bounded, bounded
}

// PrefixEnd returns the least key greater than every key that starts with
// p, or false when there is none (p is empty or all 0xff bytes).
func PrefixEnd(p []byte) ([]byte, bool) {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] != 0xff {
			end := append([]byte(nil), p[:i+1]...)
			end[i]++
			return end, true
		}
	}
	return nil, false
}

// Feed passes a backend's scanned entries to a Scan callback: each key and
// value as copies in buffers reused from entry to entry (as Tx.Scan
// promises), ErrStop taken as the end of the scan, and no more than Limit
// entries when Limit is positive.
type Feed struct {
	Limit      int
	n          int
	kbuf, vbuf []byte
}

// Send passes key and value to fn. It reports whether the scan goes on
// and, when it does not, the error Scan returns.
func (f *Feed) Send(fn func(key, value []byte) error, key, value []byte) (bool, error) {
	f.kbuf = append(f.kbuf[:0], key...)
	f.vbuf = append(f.vbuf[:0], value...)
	if err := fn(f.kbuf, f.vbuf); err != nil {
		if errors.Is(err, ErrStop) {
			return false, nil
		}
		return false, err
	}
	f.n++
	return f.Limit <= 0 || f.n < f.Limit, nil
}
