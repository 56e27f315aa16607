package ledger

import (
	"bytes"
	"crypto/rand"
	"errors"
	"time"

	"github.com/corebank/corebank/storage"
)

// System accounts' balances are kept as changes. Every movement into or out
// of the ledger crosses a system account, so a balance record that each of
// them read and rewrote would be one key every transfer writes: on a store
// that runs transactions at once (PostgreSQL), any two unrelated transfers
// would conflict on it and wait for or retry against each other. Instead a
// movement writes what it changed on a system account as a record of its
// own under a key nobody else writes (bucketDeltas: the account's ID, '/',
// the Service's random prefix and a counter) and reads nothing of the
// account: a system account has no rule its balance must keep, and its
// currency is in its ID. Readers (BalanceTx, TrialBalance, Check) add the
// changes to the account's balance record, and the "ledger.fold" due job
// folds them into it every foldEvery, so that they stay few.

const (
	// dueFold is the one item of the fold job, queued by the
	// "ledger.fold" migration and by each run for the next.
	dueFold = "ledger.fold"
	foldID  = "system-balances"
	// foldEvery is how often the fold runs; foldBatch how many changes one
	// transaction folds (a full batch runs again at once): few enough that
	// a store locking keys one by one (storage/postgres, up to 256 in a
	// bucket) does not lock the whole bucket instead, which would stop
	// every transfer writing a change until the fold commits.
	foldEvery = 5 * time.Second
	foldBatch = 200
)

// deltaTail is the length of a change key's suffix after the account ID:
// '/', the 8-byte prefix and the 8-byte counter.
const deltaTail = 1 + 8 + 8

// newDeltaPrefix returns a Service's random change-key prefix.
func newDeltaPrefix() (p [8]byte) {
	_, _ = rand.Read(p[:])
	return p
}

// putSysDelta records what r, a system account's record loaded by loadBal
// (zero then), changed since it was loaded or last put, and zeroes it, so
// that a record put twice counts its change once.
func (s *Service) putSysDelta(tx storage.Tx, id string, r *balRec) error {
	if r.Balance == (Balance{}) && r.credits == 0 && r.debits == 0 {
		return nil
	}
	bp := s.buf()
	b := append(*bp, id...)
	b = append(b, '/')
	b = append(b, s.deltaPrefix[:]...)
	b = storage.AppendUint64(b, s.deltaSeq.Add(1))
	k := len(b)
	b = r.appendTo(b)
	err := tx.Put(bucketDeltas, b[:k], b[k:])
	s.release(bp, b)
	r.Balance, r.credits, r.debits = Balance{}, 0, 0
	return err
}

// add adds d's amounts to r.
func (r *balRec) add(d *balRec) {
	r.Settled += d.Settled
	r.PendingDebits += d.PendingDebits
	r.PendingCredits += d.PendingCredits
	r.credits += d.credits
	r.debits += d.debits
}

// scanDeltas calls fn with each system account change whose account ID
// starts with prefix, in key order; as a queue's scan
// (storage.ScanOptions.Queue) when queue is set.
func scanDeltas(tx storage.Tx, prefix []byte, queue bool, fn func(k []byte, id string, d *balRec) error) error {
	return tx.Scan(bucketDeltas, storage.ScanOptions{Prefix: prefix, Queue: queue}, func(k, v []byte) error {
		if len(k) <= deltaTail || k[len(k)-deltaTail] != '/' {
			return storage.ErrCorrupt
		}
		d, err := decodeBal(v)
		if err != nil {
			return err
		}
		return fn(k, string(k[:len(k)-deltaTail]), d)
	})
}

// sysBalance is a system account's balance: its record plus its changes.
func sysBalance(tx storage.Tx, id string) (*balRec, error) {
	r, err := loadBase(tx, id)
	if err != nil {
		return nil, err
	}
	prefix := append([]byte(id), '/')
	err = scanDeltas(tx, prefix, false, func(_ []byte, _ string, d *balRec) error {
		r.add(d)
		return nil
	})
	return r, err
}

// loadBase reads an account's balance record as stored, a system account
// never folded into as zero.
func loadBase(tx storage.Tx, id string) (*balRec, error) {
	r := &balRec{}
	raw, err := storage.Peek(tx, bucketBalances, []byte(id))
	if err := decodeBalAt(raw, err, id, r); err != nil {
		return nil, err
	}
	return r, nil
}

// foldTx folds up to foldBatch system account changes into their
// accounts' records, and queues the next fold: at once when the batch was
// full, else foldEvery later.
func (s *Service) foldTx(tx storage.Tx, now time.Time, it storage.DueItem) error {
	sums := map[string]*balRec{}
	var keys [][]byte
	// A queue: the changes committed while it runs are the next fold's.
	err := scanDeltas(tx, nil, true, func(k []byte, id string, d *balRec) error {
		if len(keys) == foldBatch {
			return storage.ErrStop
		}
		r := sums[id]
		if r == nil {
			r = &balRec{}
			sums[id] = r
		}
		r.add(d)
		keys = append(keys, bytes.Clone(k))
		return nil
	})
	if err != nil && !errors.Is(err, storage.ErrStop) {
		return err
	}
	for id, d := range sums {
		r, err := loadBase(tx, id)
		if err != nil {
			return err
		}
		r.add(d)
		if err := s.putRecord(tx, id, r); err != nil {
			return err
		}
	}
	for _, k := range keys {
		if err := tx.Delete(bucketDeltas, k); err != nil {
			return err
		}
	}
	next := now.Add(foldEvery).UnixMilli()
	if len(keys) == foldBatch {
		next = it.At + 1
	}
	return storage.Schedule(tx, dueFold, next, foldID)
}
