package webhooks

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/corebank/corebank/storage"
)

// Ingestion: new outbox events become deliveries. The dispatcher reads the
// outbox's unread events (the ledger indexes each event as unread in the
// transaction that appends it) and, in one transaction per batch, fans each
// event out (fanout.go) and marks it read, so a restart resumes exactly
// where it stopped, and no event is missed whatever order the transactions
// that appended them committed in (a position after the last ID read
// would miss an event minted earlier and committed later, and minting IDs
// in commit order would make every writer read one key). The events stay
// in the outbox, the one place they are stored: ListEvents, RedeliverEvent
// and attempts read them there, and retention deletes them.

const ingestBatch = 256

// ingestFor bounds how long one ingest reads batches (see ingest).
const ingestFor = time.Second

// Wake tells Run that new events may be in the outbox. It never blocks;
// hand it to storage.WithCommitHook so deliveries start right after commit.
func (s *Service) Wake() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// ingest moves unread outbox events into deliveries, marking them read in
// the same transaction, and returns how many deliveries it made. It stops
// reading batches after ingestFor on its clock: under a steady load the
// outbox is never empty, and the due runs that ingest first (the
// dispatcher's, and RunDue's, which settles payments too) must go on to
// their other work rather than each wait for the other's ingest to end
// with the load.
func (s *Service) ingest(ctx context.Context) (int, error) {
	s.ingestMu.Lock()
	defer s.ingestMu.Unlock()
	// Most commits append no event, and each wakes the dispatcher: look in
	// a read transaction first so that they do not each cost a write one
	// (which queues behind, and delays, the requests' own).
	fresh, err := storage.View(ctx, s.db, func(tx storage.Tx) (bool, error) {
		id, err := s.outbox.OldestUnreadTx(tx)
		return id != "", err
	})
	if err != nil || !fresh {
		return 0, err
	}
	total := 0
	start := s.clock.Now()
	for {
		now := s.clock.Now()
		type batch struct{ events, deliveries int }
		b, err := storage.Update(ctx, s.db, func(tx storage.Tx) (batch, error) {
			evs, err := s.outbox.UnreadEventsTx(tx, ingestBatch)
			if err != nil {
				return batch{}, fmt.Errorf("webhooks: read outbox: %w", err)
			}
			if len(evs) == 0 {
				return batch{}, nil
			}
			created := 0
			ids := make([]string, len(evs))
			oldest := evs[0].Created
			for i, ev := range evs {
				n, err := s.ingestEventTx(tx, now, ev)
				if err != nil {
					return batch{}, err
				}
				created += n
				ids[i] = ev.ID
				oldest = min(oldest, ev.Created)
			}
			if err := s.sweepLaterTx(tx, oldest); err != nil {
				return batch{}, err
			}
			return batch{len(evs), created}, s.outbox.MarkReadTx(tx, ids...)
		})
		if err != nil {
			return total, err
		}
		total += b.deliveries
		if b.events < ingestBatch || s.clock.Since(start) >= ingestFor {
			return total, nil
		}
	}
}

// ingestEventTx creates a delivery of ev for each active webhook of its
// entity or an ancestor that subscribes to its type.
func (s *Service) ingestEventTx(tx storage.Tx, now time.Time, ev Event) (int, error) {
	chain, err := s.chainTx(tx, ev.EntityID)
	if err != nil {
		return 0, err
	}
	ds, err := s.fanOutTx(tx, now, ev, chain, ev.Created+s.window.Milliseconds(), false)
	return len(ds), err
}

// chainTx returns the entities an event about id fans out to: id, then
// its ancestors as ancestorsTx finds them.
func (s *Service) chainTx(tx storage.Tx, id string) ([]string, error) {
	anc, err := s.ancestorsTx(tx, id)
	if err != nil {
		return nil, err
	}
	return append([]string{id}, anc...), nil
}

// ancestorsTx returns the ancestors of id to index an event under and fan
// it out to: every ancestor with Ancestry; without, each entity owning a
// webhook that the tree places above id; none without a tree.
func (s *Service) ancestorsTx(tx storage.Tx, id string) ([]string, error) {
	if s.tree == nil || id == "" {
		return nil, nil
	}
	if s.ancestry != nil {
		anc, err := s.ancestry.AncestorsTx(tx, id)
		if err != nil {
			return nil, fmt.Errorf("webhooks: ancestors of %s: %w", id, err)
		}
		return anc, nil
	}
	var out []string
	var after []byte
	for {
		var owner string
		err := tx.Scan(bucketHooksEntity, storage.ScanOptions{After: after, Limit: 1}, func(k, _ []byte) error {
			owner, _, _ = strings.Cut(string(k), "/")
			return nil
		})
		if err != nil {
			return nil, err
		}
		if owner == "" {
			return out, nil
		}
		after = append(storage.Prefix(owner), 0xff) // skip the rest of owner's webhooks
		if owner == id {
			continue
		}
		in, err := s.tree.InTreeTx(tx, owner, id)
		if err != nil {
			return nil, fmt.Errorf("webhooks: scope of %s: %w", id, err)
		}
		if in {
			out = append(out, owner)
		}
	}
}
