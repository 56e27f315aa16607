package ledger

import (
	"github.com/corebank/corebank"
	"github.com/corebank/corebank/internal/scope"
	"github.com/corebank/corebank/storage"
)

// The ledger applies internal/scope's one rule inside each transaction of
// a method that takes a caller, before it reveals anything: a requested
// entity_id is resolved first (a foreign or unknown one is
// corebank.ErrEntityNotFound whatever the object), then the object is
// loaded and its owner checked, a foreign object answering its resource's
// not-found error exactly as a missing one.

// scoped loads the object key names (an ID, a service BAN, an account
// number) with load for caller, narrowed to entityID when it is set, and
// returns notFound when its owner lies outside that scope (scope.Load).
func scoped[T interface{ owner() string }](s *Service, tx storage.Tx, caller corebank.Caller, key, entityID string, load func(storage.Tx, string) (T, error), notFound error) (T, error) {
	return scope.Load(tx, s.tree, caller, entityID, notFound, func() (T, string, error) {
		v, err := load(tx, key)
		if err != nil {
			var zero T
			return zero, "", err
		}
		return v, v.owner(), nil
	})
}

// requestedEntity resolves the entity a request names (a list's, a new
// account's owner): requested when caller may act on it, caller's own
// entity for "", and "" for System naming none. Errors: corebank.ErrEntityNotFound
// for an unknown or foreign requested entity.
func (s *Service) requestedEntity(tx storage.Tx, caller corebank.Caller, requested string) (string, error) {
	if requested == "" && caller.IsSystem() {
		return "", nil
	}
	return scope.Entity(tx, s.tree, caller, requested)
}
