package payments

import (
	"sync"
	"sync/atomic"

	"github.com/corebank/corebank"
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

// accountTx returns account id for a transfer by entityID, or
// ErrAccountNotFound when it does not exist, is deleted or is another
// entity's, checked in tx.
//
// Decoding the account record was the largest read of CreateTransfer, so
// for an account seen before the owner and currency come from s.accounts
// and tx is asked only for the balance, a small binary record: a non-zero
// balance proves the account exists and is not deleted, since an account
// can only be deleted empty (ledger.ErrAccountNotEmpty) and a deleted
// account takes part in no movement (ledger.ErrAccountDeleted), so its
// balance stays zero. A zero balance, possibly a deleted account, reads
// the account record as before.
func (s *Service) accountTx(tx storage.Tx, id, entityID string) (account, error) {
	notFound := func() (account, error) {
		return account{}, ErrAccountNotFound.With("account " + id + " not found")
	}
	if ref, ok := s.accounts.get(id); ok {
		if ref.entity != entityID {
			return notFound()
		}
		b, err := s.led.BalanceTx(tx, id)
		switch {
		case err != nil && corebank.KindOf(err) == corebank.KindNotFound:
			return notFound()
		case err != nil:
			return account{}, err
		case b.Settled != 0 || b.PendingDebits != 0 || b.PendingCredits != 0:
			return account{ID: id, EntityID: ref.entity, Currency: ref.currency}, nil
		}
	}
	a, err := s.led.GetAccountTx(tx, id)
	if err != nil && corebank.KindOf(err) == corebank.KindNotFound || err == nil && (a.Deleted != 0 || a.EntityID != entityID) {
		if err == nil && a.Deleted == 0 {
			s.accounts.put(id, accountRef{a.EntityID, a.Currency})
		}
		return notFound()
	}
	if err != nil {
		return account{}, err
	}
	s.accounts.put(id, accountRef{a.EntityID, a.Currency})
	return account{ID: a.ID, EntityID: a.EntityID, Currency: a.Currency}, nil
}
