package payments

import (
	"errors"
	"sync"
	"sync/atomic"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/internal/scope"
	"github.com/corebank/corebank/storage"
)

// account is what CreateTransfer needs of the account it debits.
type account struct {
	ID, EntityID, Currency string
}

// accountRefs remembers the owner and currency of accounts CreateTransfer
// has read. Both are fixed when an account is created and account IDs are
// never reused, so an entry can never be stale and needs no invalidation,
// whichever Service or process changes the store. What does change,
// deletion, is never taken from here: see accountTx.
type accountRefs struct {
	m sync.Map // account ID -> accountRef
	n atomic.Int64
}

type accountRef struct{ entity, currency string }

// maxAccountRefs bounds the map; past it the map starts over.
const maxAccountRefs = 1 << 16

func (c *accountRefs) get(id string) (accountRef, bool) {
	v, ok := c.m.Load(id)
	if !ok {
		return accountRef{}, false
	}
	return v.(accountRef), true
}

func (c *accountRefs) put(id string, r accountRef) {
	if _, loaded := c.m.LoadOrStore(id, r); !loaded && c.n.Add(1) > maxAccountRefs {
		c.m.Clear()
		c.n.Store(0)
	}
}

// accountFor returns account id when c may act on its owner (its entity
// or one below it), or ErrAccountNotFound when it is missing, deleted or
// outside c's tree alike.
func (s *Service) accountFor(tx storage.Tx, c corebank.Caller, id string) (account, error) {
	a, err := s.accountTx(tx, id)
	if err != nil {
		return account{}, err
	}
	if err := scope.Check(tx, s.tree, c, a.EntityID, accountNotFound(id)); err != nil {
		return account{}, err
	}
	return a, nil
}

// accountOf is accountFor for an account entity itself must own.
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

// accountTx returns account id, or ErrAccountNotFound when it does not
// exist or is deleted, read in tx. A missing account answers the ledger's
// message.
//
// Decoding the account record was the largest read of CreateTransfer, so
// for an account seen before the owner and currency come from s.accounts
// and tx is asked only for the balance, a small binary record: a non-zero
// balance proves the account exists and is not deleted, since an account
// can only be deleted empty (ledger.ErrAccountNotEmpty) and a deleted
// account takes part in no movement (ledger.ErrAccountDeleted), so its
// balance stays zero. A zero balance, possibly a deleted account, reads
// the account record as before.
func (s *Service) accountTx(tx storage.Tx, id string) (account, error) {
	if ref, ok := s.accounts.get(id); ok {
		b, err := s.led.BalanceTx(tx, id)
		switch {
		case err != nil && corebank.KindOf(err) == corebank.KindNotFound:
			return account{}, accountNotFound(id)
		case err != nil:
			return account{}, err
		case b.Settled != 0 || b.PendingDebits != 0 || b.PendingCredits != 0:
			return account{ID: id, EntityID: ref.entity, Currency: ref.currency}, nil
		}
	}
	a, err := s.led.GetAccountTx(tx, id)
	var e *corebank.Error
	switch {
	case err != nil && corebank.KindOf(err) == corebank.KindNotFound && errors.As(err, &e):
		return account{}, ErrAccountNotFound.With(e.Message)
	case err != nil:
		return account{}, err
	case a.Deleted != 0:
		return account{}, accountNotFound(id)
	}
	s.accounts.put(id, accountRef{a.EntityID, a.Currency})
	return account{ID: a.ID, EntityID: a.EntityID, Currency: a.Currency}, nil
}
