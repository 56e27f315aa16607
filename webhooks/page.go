package webhooks

import (
	"bytes"

	"github.com/oklog/ulid/v2"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/storage"
)

// pageBounds limits a page to IDs in [lower, upper] ("" is unbounded) and,
// with maxScan > 0, to that many keys examined: a page cut short continues
// from the last key examined.
type pageBounds struct {
	lower, upper string
	maxScan      int
}

// scanPage returns one page of an index whose keys are prefix+ID, in ID
// order. load returns the item for an ID, or nil to skip it.
func scanPage[T any](tx storage.Tx, b storage.Bucket, prefix []byte, opts corebank.ListOptions, bounds pageBounds, load func(id string) (*T, error)) (*corebank.Page[T], error) {
	limit, err := opts.CheckLimit(corebank.DefaultLimit)
	if err != nil {
		return nil, err
	}
	for _, c := range []string{opts.After, opts.Before} {
		if c != "" {
			if _, err := ulid.ParseStrict(c); err != nil {
				return nil, corebank.InvalidField("cursor", "is malformed")
			}
		}
	}
	reverse := opts.Before != ""
	so := storage.ScanOptions{Prefix: prefix, Reverse: reverse}
	switch {
	case opts.After != "":
		so.After = append(bytes.Clone(prefix), opts.After...)
	case opts.Before != "":
		so.After = append(bytes.Clone(prefix), opts.Before...)
	}
	// Seek to a bound that is tighter than the cursor.
	if !reverse && bounds.lower != "" && (opts.After == "" || bounds.lower > opts.After) {
		so.After = append(bytes.Clone(prefix), bounds.lower...)
		so.After = so.After[:len(so.After)-1] // strictly after: drop the last byte
	}
	var items []T
	var ids []string
	more, cut := false, false
	examined, lastSeen := 0, ""
	err = tx.Scan(b, so, func(k, _ []byte) error {
		id := string(k[len(prefix):])
		if bounds.maxScan > 0 && examined == bounds.maxScan {
			more, cut = true, true
			return storage.ErrStop
		}
		examined++
		lastSeen = id
		if !reverse && bounds.upper != "" && id > bounds.upper {
			return storage.ErrStop
		}
		if reverse && bounds.lower != "" && id < bounds.lower {
			return storage.ErrStop
		}
		if (bounds.lower != "" && id < bounds.lower) || (bounds.upper != "" && id > bounds.upper) {
			return nil
		}
		if len(items) == limit {
			more = true
			return storage.ErrStop
		}
		it, err := load(id)
		if err != nil || it == nil {
			return err
		}
		items = append(items, *it)
		ids = append(ids, id)
		return nil
	})
	if err != nil {
		return nil, err
	}
	page := &corebank.Page[T]{Items: items, Total: -1}
	if items == nil {
		page.Items = []T{}
	}
	if reverse {
		for i, j := 0, len(items)-1; i < j; i, j = i+1, j-1 {
			items[i], items[j] = items[j], items[i]
			ids[i], ids[j] = ids[j], ids[i]
		}
		page.HasPrevious, page.HasNext = more, true
	} else {
		page.HasNext, page.HasPrevious = more, opts.After != ""
	}
	if len(ids) > 0 {
		if page.HasNext {
			page.Next = ids[len(ids)-1]
		}
		if page.HasPrevious {
			page.Previous = ids[0]
		}
	}
	if cut && reverse {
		page.Previous = lastSeen
	} else if cut {
		page.Next = lastSeen
	}
	return page, nil
}
