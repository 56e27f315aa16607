// Package scope is corebank's one authorization rule: a caller may act on
// its own entity, every entity below it, and the objects they own. Every
// service applies it inside the transaction that reads the object, before
// it reveals anything, and answers a foreign object with the same
// not-found error as a missing one.
package scope

import (
	"github.com/corebank/corebank"
	"github.com/corebank/corebank/storage"
)

// Tree answers whether id is ancestorID or lies below it. entities.Gate
// and *entities.Service implement it; an unknown id lies in no tree.
type Tree interface {
	InTreeTx(tx storage.Tx, ancestorID, id string) (bool, error)
}

// Allowed reports whether c may act on objects owned by entity owner. The
// zero Caller may act on nothing and System on everything; otherwise owner
// must be c's entity or lie below it in t (a nil t knows no descendants).
func Allowed(tx storage.Tx, t Tree, c corebank.Caller, owner string) (bool, error) {
	switch {
	case c.IsSystem():
		return true, nil
	case c.EntityID == "" || owner == "":
		return false, nil
	case owner == c.EntityID:
		return true, nil
	case t == nil:
		return false, nil
	}
	return t.InTreeTx(tx, c.EntityID, owner)
}

// Check returns nil when c may act on objects owned by owner, else
// notFound: the error the caller would get for a missing object, so that
// existence never leaks.
func Check(tx storage.Tx, t Tree, c corebank.Caller, owner string, notFound error) error {
	ok, err := Allowed(tx, t, c, owner)
	if err != nil {
		return err
	}
	if !ok {
		return notFound
	}
	return nil
}

// Entity returns the entity a request acts for: requested when c may act
// on it, c's own entity when requested is "". It returns
// corebank.ErrEntityNotFound for an unknown entity and for one outside c's
// tree alike, and a validation error on "entity_id" when System names none.
func Entity(tx storage.Tx, t Tree, c corebank.Caller, requested string) (string, error) {
	if requested == "" {
		if c.IsSystem() {
			return "", corebank.InvalidField("entity_id", "is required")
		}
		if c.EntityID == "" {
			return "", corebank.ErrEntityNotFound
		}
		return c.EntityID, nil
	}
	if c.IsSystem() {
		// System acts on any entity that exists.
		if t == nil {
			return requested, nil
		}
		ok, err := t.InTreeTx(tx, requested, requested)
		if err != nil {
			return "", err
		}
		if !ok {
			return "", corebank.ErrEntityNotFound
		}
		return requested, nil
	}
	if err := Check(tx, t, c, requested, corebank.ErrEntityNotFound); err != nil {
		return "", err
	}
	return requested, nil
}

// Within returns the caller a request acts as when it names an entity
// (entity_id): that entity, which must lie in c's tree, with c's key and
// read-only flag; objects must then lie in its tree. A foreign or unknown
// within is corebank.ErrEntityNotFound whatever object is asked for, so an
// existing and a missing object answer alike. With within "" it returns c.
func Within(tx storage.Tx, t Tree, c corebank.Caller, within string) (corebank.Caller, error) {
	if within == "" {
		return c, nil
	}
	id, err := Entity(tx, t, c, within)
	if err != nil {
		return corebank.Caller{}, err
	}
	return corebank.Caller{EntityID: id, KeyID: c.KeyID, ReadOnly: c.ReadOnly}, nil
}

// Owned is a record an entity owns: what Get checks a caller against.
type Owned interface {
	Owner() string
}

// Get is the one authorized load: it resolves entityID for caller first
// (see Within: "" is the caller's own entity), then reads the record id
// with read, then checks the record's owner is within that entity's tree,
// answering notFound for a foreign record exactly as read answers for a
// missing one, so that a caller cannot tell the two apart.
func Get[R Owned](tx storage.Tx, t Tree, caller corebank.Caller, entityID, id string,
	read func(tx storage.Tx, id string) (R, error), notFound error) (R, error) {
	var zero R
	c, err := Within(tx, t, caller, entityID)
	if err != nil {
		return zero, err
	}
	rec, err := read(tx, id)
	if err != nil {
		return zero, err
	}
	if err := Check(tx, t, c, rec.Owner(), notFound); err != nil {
		return zero, err
	}
	return rec, nil
}
