package ledger

import (
	"github.com/corebank/corebank"
	"github.com/corebank/corebank/internal/scope"
	"github.com/corebank/corebank/storage"
)

// The ledger applies internal/scope's one rule inside each transaction of
// a method that takes a caller, before it reveals anything: scope.Get
// resolves a requested entity_id first (a foreign or unknown one is
// corebank.ErrEntityNotFound whatever the object), then loads the object
// and checks its Owner, a foreign object answering its resource's
// not-found error exactly as a missing one.

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
