package payments

import (
	"errors"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/storage"
)

// account is what CreateTransfer needs of the account it debits.
type account struct {
	ID, EntityID, Currency string
}

// Owner returns the entity that owns the account (scope.Owned).
func (a account) Owner() string { return a.EntityID }

// accountOf returns account id, which entity itself must own and which
// must not be deleted, or ErrAccountNotFound.
func (s *Service) accountOf(tx storage.Tx, entity, id string) (account, error) {
	a, err := s.accountTx(tx, id)
	if err != nil {
		return account{}, err
	}
	if a.EntityID != entity {
		return account{}, accountNotFound(id)
	}
	return a, nil
}

func accountNotFound(id string) error {
	return ErrAccountNotFound.With("account " + id + " not found")
}

// readAccount returns account id, or ErrAccountNotFound when it does not
// exist or is deleted, from the ledger's account record in tx. accountTx
// is the same answer, faster for accounts seen before.
func (s *Service) readAccount(tx storage.Tx, id string) (account, error) {
	a, err := s.ledgerAccount(tx, id)
	if err != nil {
		return account{}, err
	}
	if a.Deleted != 0 {
		return account{}, accountNotFound(id)
	}
	return account{ID: a.ID, EntityID: a.EntityID, Currency: a.Currency}, nil
}

// ledgerAccount is the ledger's account id, deleted or not; a missing one
// is ErrAccountNotFound with the ledger's message. A deleted account still
// has its owner (its history stays listable, see actsFor); the methods
// that use an account reject it themselves.
func (s *Service) ledgerAccount(tx storage.Tx, id string) (*ledger.Account, error) {
	a, err := s.led.GetAccountTx(tx, id)
	var e *corebank.Error
	if err != nil && corebank.KindOf(err) == corebank.KindNotFound && errors.As(err, &e) {
		return nil, ErrAccountNotFound.With(e.Message)
	}
	return a, err
}
