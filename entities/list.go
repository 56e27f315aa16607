package entities

import (
	"context"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/internal/scope"
	"github.com/corebank/corebank/storage"
)

// EntityFilter narrows ListEntities; empty fields match everything.
type EntityFilter struct {
	// EntityID is the entity whose tree is listed (the request's
	// entity_id); "" is the caller's own entity.
	EntityID     string
	Type         string
	Status       string
	ParentEntity string
}

// ListEntities returns one page of the entities in the tree of f.EntityID
// ("" for the caller's own entity), that entity included, oldest first,
// with Total -1. Cursors are entity IDs. Each page is one storage.ReadPage
// over the tree index (or, with ParentEntity, the child index). Errors:
// ErrEntityNotFound when f.EntityID or ParentEntity lies outside the
// caller's tree (or f.EntityID's); a validation error naming "type",
// "status", "limit" or "cursor"; a validation error naming "entity_id"
// when a System caller names no entity.
func (s *Service) ListEntities(ctx context.Context, caller corebank.Caller, f EntityFilter, opts corebank.ListOptions) (*corebank.Page[Entity], error) {
	return storage.View(ctx, s.db, func(tx storage.Tx) (*corebank.Page[Entity], error) {
		// Scope first: a foreign entity_id answers alike whatever else is wrong.
		treeOf, err := scope.Entity(tx, s, caller, f.EntityID)
		if err != nil {
			return nil, err
		}
		v := newValidator(s.clock.Now())
		v.oneOf("type", f.Type, false, TypeIndividual, TypeBusiness)
		v.oneOf("status", f.Status, false, StatusIncomplete, StatusPending, StatusApproved, StatusRejected, StatusSuspended)
		if err := v.err(); err != nil {
			return nil, err
		}
		limit, err := storage.CheckList(opts, corebank.DefaultLimit)
		if err != nil {
			return nil, err
		}
		prefix := storage.Prefix("by-tree", treeOf)
		if f.ParentEntity != "" {
			if err := scope.Check(tx, s, corebank.As(treeOf), f.ParentEntity, ErrEntityNotFound); err != nil {
				return nil, err
			}
			prefix = storage.Prefix("by-parent", f.ParentEntity)
		}
		q := storage.PageQuery{Bucket: bucketEntities, Prefix: prefix, Opts: opts, Limit: limit}
		return storage.ReadPage(tx, q, func(_ string, v []byte) (Entity, bool, error) {
			rec, err := getEntity(tx, string(v))
			if err != nil {
				return Entity{}, false, err
			}
			ok := (f.Type == "" || rec.Type == f.Type) && (f.Status == "" || rec.Status == f.Status)
			return rec.Entity, ok, nil
		})
	})
}
