package payments

import (
	"sync"
	"sync/atomic"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/storage"
)

// Account refs speed up CreateTransfer's account check. Decoding the
// ledger's account record was the largest read of CreateTransfer, so the
// Service remembers, per account it has read, the two fields it needs that
// never change: the owner and the currency (fixed when an account is
// created; account IDs are never reused). Nothing another writer can change
// is cached, so an entry is never stale whichever Service, process or node
// changes the store. What does change, deletion, is never taken from here:
// see accountTx.
//
// Measured for issue 10 (the 2-core machine, one session, runs
// interleaved): without these refs and the payee records
// (transfer_payee_records.go), BenchmarkCreateTransfer/memory/callers=1 ran
// at 35-39k transfers/s with 106 allocs/op against 89-95k with 47, and
// BenchmarkLoopbackTransfers memory/echo fell to 0.35-0.42 (the target is
// 0.60) from 0.58-0.70 (memory 15-17k req/s against 21-26k). Each alone
// recovers only part: without these refs alone (records kept) 69
// allocs/op.
//
// TestAccountRefsEqualPlainRead checks accountTx answers as readAccount.
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

// accountTx is readAccount, reading for an account seen before only its
// balance, a small binary record, with the owner and currency from
// s.accounts: a non-zero balance proves the account exists and is not
// deleted, since an account can only be deleted empty
// (ledger.ErrAccountNotEmpty) and a deleted account takes part in no
// movement (ledger.ErrAccountDeleted), so its balance stays zero. A zero
// balance, possibly a deleted account, reads the account record.
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
	a, err := s.readAccount(tx, id)
	if err == nil {
		s.accounts.put(id, accountRef{a.EntityID, a.Currency})
	}
	return a, err
}
