package webhooks

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/corebank/corebank/storage"
)

// Ingestion: the outbox becomes stored events and deliveries. The
// dispatcher reads the outbox after its persisted cursor and, in one
// transaction per batch, stores each event, fans it out (fanout.go) and
// advances the cursor, so a restart resumes exactly where it stopped and
// an outbox replay creates nothing twice.

const ingestBatch = 256

// storedEvent is an event kept for ListEvents, Redeliver and attempts.
type storedEvent struct {
	Event
	// Entities are the entities the event is indexed under: its own, then
	// its ancestors (with Ancestry all of them, else those owning webhooks
	// at ingestion). Empty for test events.
	Entities []string `json:"entities"`
}

// Wake tells Run that new events may be in the outbox. It never blocks;
// hand it to storage.WithCommitHook so deliveries start right after commit.
func (s *Service) Wake() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

var errCursorMoved = errors.New("webhooks: outbox cursor moved")

func readCursor(tx storage.Tx) (uint64, error) {
	v, err := tx.Get(bucketMeta, keyCursor)
	if errors.Is(err, storage.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return storage.Uint64(v)
}

// ingest moves new outbox events into deliveries, advancing the persisted
// cursor in the same transaction, and returns how many deliveries it made.
func (s *Service) ingest(ctx context.Context) (int, error) {
	s.ingestMu.Lock()
	defer s.ingestMu.Unlock()
	total := 0
	for {
		cursor, err := storage.View(ctx, s.db, readCursor)
		if err != nil {
			return total, err
		}
		evs, err := s.outbox.Events(ctx, cursor, ingestBatch)
		if err != nil {
			return total, fmt.Errorf("webhooks: read outbox: %w", err)
		}
		if len(evs) == 0 {
			return total, nil
		}
		now := s.clock.Now()
		created, err := storage.Update(ctx, s.db, func(tx storage.Tx) (int, error) {
			c, err := readCursor(tx)
			if err != nil {
				return 0, err
			}
			if c != cursor {
				return 0, errCursorMoved
			}
			created, last := 0, cursor
			for _, ev := range evs {
				if ev.Seq <= last {
					continue
				}
				n, err := s.ingestEventTx(tx, now, ev)
				if err != nil {
					return 0, err
				}
				created += n
				last = ev.Seq
			}
			return created, tx.Put(bucketMeta, keyCursor, storage.AppendUint64(nil, last))
		})
		if errors.Is(err, errCursorMoved) {
			continue
		}
		if err != nil {
			return total, err
		}
		total += created
		if len(evs) < ingestBatch {
			return total, nil
		}
	}
}

// ingestEventTx stores and indexes ev and creates a delivery for each
// active webhook of its entity or an ancestor that subscribes to its type.
func (s *Service) ingestEventTx(tx storage.Tx, now time.Time, ev Event) (int, error) {
	if ok, err := storage.Exists(tx, bucketEvents, []byte(ev.ID)); err != nil || ok {
		return 0, err // already ingested (an outbox replay)
	}
	anc, err := s.ancestorsTx(tx, ev.EntityID)
	if err != nil {
		return 0, err
	}
	entities := append([]string{ev.EntityID}, anc...)
	if err := s.storeEventTx(tx, &storedEvent{Event: ev, Entities: entities}); err != nil {
		return 0, err
	}
	ds, err := s.fanOutTx(tx, now, ev, entities, ev.Created+s.window.Milliseconds(), false)
	return len(ds), err
}

// storeEventTx stores se with its indexes and makes sure the sweep that
// purges it once EventRetention has passed is queued.
func (s *Service) storeEventTx(tx storage.Tx, se *storedEvent) error {
	if err := storage.PutJSON(tx, bucketEvents, []byte(se.ID), se); err != nil {
		return err
	}
	for _, ent := range se.Entities {
		if err := tx.Put(bucketEventIndex, storage.Key(ent, se.ID), nil); err != nil {
			return err
		}
		if err := tx.Put(bucketEventTypes, storage.Key(ent, se.Type, se.ID), nil); err != nil {
			return err
		}
	}
	return s.sweepLaterTx(tx, se.Created)
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
