package storage

import (
	"slices"

	"github.com/corebank/corebank"
)

// PageQuery selects one page of an index: a bucket whose keys under Prefix
// end in a position (an ID, or anything that sorts in list order). Every
// list in corebank is one PageQuery, so a page costs one seek plus its
// items wherever it starts.
type PageQuery struct {
	Bucket Bucket
	Prefix []byte
	// Opts carries the limit and at most one of After and Before, positions
	// from a previous page; check it first with CheckList.
	Opts corebank.ListOptions
	// Limit is the page size CheckList returned.
	Limit int
	// Lower and Upper bound the positions read, inclusive; "" is unbounded.
	Lower, Upper string
	// MaxScan, when above 0, caps the index keys one page examines, so a
	// filter that matches little cannot make a page scan the whole index. A
	// page cut short says HasNext (HasPrevious when paging back) and its
	// Next (Previous) resumes from the last key examined.
	MaxScan int
}

// LoadFunc turns one index entry into an item. ok false skips the entry,
// which is how a list filters on fields its index does not hold.
type LoadFunc[T any] func(pos string, value []byte) (item T, ok bool, err error)

// CheckList checks a list's options: the limit (def when 0) and the
// cursors, which must be positions this list could have issued (IDs).
// Errors: a validation error naming "limit" or "cursor".
func CheckList(opts corebank.ListOptions, def int) (int, error) {
	limit, err := opts.CheckLimit(def)
	if err != nil {
		return 0, err
	}
	for _, c := range [...]string{opts.After, opts.Before} {
		if c != "" && !corebank.ValidID(c) {
			return 0, corebank.ErrCursor
		}
	}
	return limit, nil
}

// ReadPage returns one page of q in ascending position order, loading each
// entry with load. HasNext and HasPrevious say whether a matching item lies
// beyond each end (the cursor's own item counts when the page is empty);
// Next and Previous are the edge positions to resume from. Total is -1.
func ReadPage[T any](tx Tx, q PageQuery, load LoadFunc[T]) (*corebank.Page[T], error) {
	page := &corebank.Page[T]{Items: []T{}, Total: -1}
	back := q.Opts.Before != ""
	cursor := q.Opts.After
	if back {
		cursor = q.Opts.Before
	}
	w := walker[T]{q: q, tx: tx, load: load}
	got, err := w.walk(cursor, back, q.Limit+1)
	if err != nil {
		return nil, err
	}
	more := len(got.pos) > q.Limit || got.cut
	if len(got.pos) > q.Limit {
		got.pos, got.items = got.pos[:q.Limit], got.items[:q.Limit]
	}
	if back {
		slices.Reverse(got.pos)
		slices.Reverse(got.items)
	}
	page.Items = append(page.Items, got.items...)

	// The far side: is there a matching item beyond the page's other edge?
	// With no items that edge is the cursor, whose own item counts.
	var beyond bool
	if cursor != "" || back {
		edge, inclusive := cursor, true
		if len(got.pos) > 0 {
			inclusive = false
			edge = got.pos[0]
			if back {
				edge = got.pos[len(got.pos)-1]
			}
		}
		if beyond, err = w.exists(edge, inclusive, !back); err != nil {
			return nil, err
		}
	}
	if back {
		page.HasPrevious, page.HasNext = more, beyond
	} else {
		page.HasNext, page.HasPrevious = more, beyond
	}
	if n := len(got.pos); n > 0 {
		if page.HasNext {
			page.Next = got.pos[n-1]
		}
		if page.HasPrevious {
			page.Previous = got.pos[0]
		}
	}
	if got.cut {
		if back {
			page.Previous = got.last
		} else {
			page.Next = got.last
		}
	}
	return page, nil
}

type walker[T any] struct {
	q    PageQuery
	tx   Tx
	load LoadFunc[T]
}

type walked[T any] struct {
	pos   []string
	items []T
	last  string // the last position examined
	cut   bool   // MaxScan ended the walk
}

func (w *walker[T]) key(pos string) []byte {
	return append(slices.Clip(w.q.Prefix), pos...)
}

// walk collects up to n matching items strictly beyond from ("" is the
// start) in one direction, within the bounds.
func (w *walker[T]) walk(from string, back bool, n int) (walked[T], error) {
	var out walked[T]
	o := ScanOptions{Prefix: w.q.Prefix, Reverse: back}
	if from != "" {
		o.After = w.key(from)
	}
	// Seek to a bound tighter than the cursor.
	if lo := w.q.Lower; !back && lo != "" && (from == "" || lo > from) {
		k := w.key(lo)
		o.After = k[:len(k)-1] // strictly after a key shorter by one byte includes lo
	}
	if hi := w.q.Upper; back && hi != "" && (from == "" || hi < from) {
		o.After = append(w.key(hi), 0xff)
	}
	examined := 0
	err := w.tx.Scan(w.q.Bucket, o, func(k, v []byte) error {
		pos := string(k[len(w.q.Prefix):])
		if w.q.MaxScan > 0 && examined == w.q.MaxScan {
			out.cut = true
			return ErrStop
		}
		examined++
		out.last = pos
		if w.q.Upper != "" && pos > w.q.Upper {
			if back {
				return nil
			}
			return ErrStop
		}
		if w.q.Lower != "" && pos < w.q.Lower {
			if back {
				return ErrStop
			}
			return nil
		}
		item, ok, err := w.load(pos, v)
		if err != nil || !ok {
			return err
		}
		out.pos = append(out.pos, pos)
		out.items = append(out.items, item)
		if len(out.pos) == n {
			return ErrStop
		}
		return nil
	})
	return out, err
}

// exists reports whether a matching item lies beyond edge in the direction
// back (toward smaller positions) or forward, counting edge itself when
// inclusive.
func (w *walker[T]) exists(edge string, inclusive, back bool) (bool, error) {
	if inclusive && edge != "" && w.inBounds(edge) {
		v, err := w.tx.Get(w.q.Bucket, w.key(edge))
		switch {
		case err == nil:
			if _, ok, err := w.load(edge, v); err != nil || ok {
				return ok, err
			}
		case err != ErrNotFound:
			return false, err
		}
	}
	got, err := w.walk(edge, back, 1)
	return len(got.pos) > 0, err
}

func (w *walker[T]) inBounds(pos string) bool {
	return (w.q.Lower == "" || pos >= w.q.Lower) && (w.q.Upper == "" || pos <= w.q.Upper)
}
