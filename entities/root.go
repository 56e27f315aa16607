package entities

import (
	"context"
	"errors"

	"github.com/corebank/corebank/storage"
)

// RootID returns the ID of the bootstrap root entity, or ErrEntityNotFound
// before Bootstrap has run. Operators use it to issue fresh root keys when
// the bootstrap keys are lost.
func (s *Service) RootID(ctx context.Context) (string, error) {
	return storage.View(ctx, s.db, func(tx storage.Tx) (string, error) {
		raw, err := tx.Get(bucketEntities, keyRoot)
		if errors.Is(err, storage.ErrNotFound) {
			return "", ErrEntityNotFound
		}
		return string(raw), err
	})
}
