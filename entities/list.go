package entities

import (
	"context"
	"slices"

	"github.com/oklog/ulid/v2"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/storage"
)

// Filter narrows ListEntities; empty fields match everything.
type Filter struct {
	Type         string
	Status       string
	ParentEntity string
}

// ListEntities returns one page of the entities in callerEntity's tree (the
// caller's own entity included), oldest first, with Total -1. Cursors are
// entity IDs. Each page is an index scan from the cursor: the tree index
// (or, with ParentEntity, the child index). Errors: a validation error
// naming "type", "status", "limit" or "cursor"; ErrEntityNotFound when
// ParentEntity lies outside the tree.
func (s *Service) ListEntities(ctx context.Context, callerEntity string, f Filter, opts corebank.ListOptions) (*corebank.Page[Entity], error) {
	v := newValidator(s.clock.Now())
	v.oneOf("type", f.Type, false, TypeIndividual, TypeBusiness)
	v.oneOf("status", f.Status, false, StatusIncomplete, StatusPending, StatusApproved, StatusRejected, StatusSuspended)
	for _, c := range []string{opts.After, opts.Before} {
		if _, err := ulid.ParseStrict(c); c != "" && err != nil {
			v.add("cursor", "is not a cursor from a previous page")
		}
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	limit, err := opts.CheckLimit(corebank.DefaultLimit)
	if err != nil {
		return nil, err
	}
	var out *corebank.Page[Entity]
	err = s.db.View(ctx, func(tx storage.Tx) error {
		prefix := storage.Prefix("by-tree", callerEntity)
		if f.ParentEntity != "" {
			in, err := inTree(tx, callerEntity, f.ParentEntity)
			if err != nil {
				return err
			}
			if !in {
				return ErrEntityNotFound
			}
			prefix = storage.Prefix("by-parent", f.ParentEntity)
		}
		match := func(e *Entity) bool {
			return (f.Type == "" || e.Type == f.Type) && (f.Status == "" || e.Status == f.Status)
		}
		out, err = pageEntities(tx, prefix, opts, limit, match)
		return err
	})
	return out, err
}

// scanMatches visits the entities under an index prefix, from after (a
// full key, nil for the start) in the given direction, and collects up to
// n that match.
func scanMatches(tx storage.Tx, prefix, after []byte, reverse bool, n int, match func(*Entity) bool) ([]Entity, error) {
	var out []Entity
	err := tx.Scan(bucketEntities, storage.ScanOptions{Prefix: prefix, After: after, Reverse: reverse}, func(_, v []byte) error {
		rec, err := getEntity(tx, string(v))
		if err != nil {
			return err
		}
		if match(&rec.Entity) {
			out = append(out, rec.Entity)
			if len(out) >= n {
				return storage.ErrStop
			}
		}
		return nil
	})
	return out, err
}

func pageEntities(tx storage.Tx, prefix []byte, opts corebank.ListOptions, limit int, match func(*Entity) bool) (*corebank.Page[Entity], error) {
	key := func(id string) []byte { return append(slices.Clone(prefix), id...) }
	p := &corebank.Page[Entity]{Items: []Entity{}, Total: -1}
	var err error
	if opts.Before == "" {
		var after []byte
		if opts.After != "" {
			after = key(opts.After)
		}
		items, err := scanMatches(tx, prefix, after, false, limit+1, match)
		if err != nil {
			return nil, err
		}
		p.HasNext = len(items) > limit
		p.Items = append(p.Items, items[:min(limit, len(items))]...)
		if opts.After != "" {
			from := append(key(opts.After), 0xff)
			if len(p.Items) > 0 {
				from = key(p.Items[0].ID)
			}
			prev, err := scanMatches(tx, prefix, from, true, 1, match)
			if err != nil {
				return nil, err
			}
			p.HasPrevious = len(prev) > 0
		}
	} else {
		items, err := scanMatches(tx, prefix, key(opts.Before), true, limit+1, match)
		if err != nil {
			return nil, err
		}
		p.HasPrevious = len(items) > limit
		items = items[:min(limit, len(items))]
		slices.Reverse(items)
		p.Items = append(p.Items, items...)
		var from []byte
		if len(p.Items) > 0 {
			from = key(p.Items[len(p.Items)-1].ID)
		}
		next, err := scanMatches(tx, prefix, from, false, 1, match)
		if err != nil {
			return nil, err
		}
		p.HasNext = len(next) > 0
	}
	if p.HasNext && len(p.Items) > 0 {
		p.Next = p.Items[len(p.Items)-1].ID
	}
	if p.HasPrevious && len(p.Items) > 0 {
		p.Previous = p.Items[0].ID
	}
	return p, err
}
