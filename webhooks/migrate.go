package webhooks

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/corebank/corebank"

	"github.com/corebank/corebank/storage"
)

// Migrations returns the webhooks' one-time changes to stores written by
// earlier releases, for storage.Migrate, in order: "webhooks.due-queue"
// moves the webhooks' own time indexes onto storage's due queue: expiry
// ("webhooks.expiry") and pending attempts ("webhooks.ready", first
// attempts by ID, and "webhooks.due", retries by time), each attempt
// queued where the delivery record says it waits; the retention indexes
// ("webhooks.event_time", "webhooks.dlv_time") are dropped, as the sweep
// reads creation times from the IDs. "webhooks.outbox-log" stops copying
// events out of the outbox (see migrateOutboxLog); "webhooks.unread"
// replaces the dispatcher's position with the outbox's unread index (see
// migrateUnread).
func (s *Service) Migrations() []storage.Migration {
	return []storage.Migration{{Name: "webhooks.due-queue", Run: func(tx storage.Tx) error {
		if err := storage.MoveToDue(tx, "webhooks.expiry", nil, dueExpire); err != nil {
			return err
		}
		drop := func(int64, string) error { return nil }
		if err := storage.MoveTimeIndex(tx, "webhooks.event_time", nil, drop); err != nil {
			return err
		}
		if err := storage.MoveTimeIndex(tx, "webhooks.dlv_time", nil, drop); err != nil {
			return err
		}
		queue := func(_ int64, id string) error {
			d, err := getDelivery(tx, id)
			if errors.Is(err, storage.ErrNotFound) {
				return nil
			}
			if err != nil || d.Status != DeliveryPending {
				return err
			}
			return queueTx(tx, d)
		}
		if err := storage.MoveTimeIndex(tx, "webhooks.due", nil, queue); err != nil {
			return err
		}
		// First attempts were keyed by delivery ID alone.
		var ready []string
		if err := tx.Scan("webhooks.ready", storage.ScanOptions{}, func(k, _ []byte) error {
			ready = append(ready, string(k))
			return nil
		}); err != nil {
			return err
		}
		for _, id := range ready {
			if err := queue(0, id); err != nil {
				return err
			}
			if err := tx.Delete("webhooks.ready", []byte(id)); err != nil {
				return err
			}
		}
		return nil
	}}, {Name: "webhooks.outbox-log", Run: s.migrateOutboxLog}, {Name: "webhooks.unread", Run: s.migrateUnread}}
}

// migrateUnread replaces the dispatcher's position in the outbox (the ID
// of the last event ingested, in bucketMeta's keyCursor) with the outbox's
// unread index: each event after the position is marked unread (every
// event, when the dispatcher never ran), and the position is dropped.
func (s *Service) migrateUnread(tx storage.Tx) error {
	after := ""
	v, err := tx.Get(bucketMeta, keyCursor)
	switch {
	case errors.Is(err, storage.ErrNotFound):
	case err != nil:
		return err
	default:
		after = string(v)
	}
	for {
		evs, err := s.outbox.EventsTx(tx, after, ingestBatch)
		if err != nil {
			return err
		}
		for _, ev := range evs {
			if err := s.outbox.MarkUnreadTx(tx, ev.ID); err != nil {
				return err
			}
		}
		if len(evs) < ingestBatch {
			return tx.Delete(bucketMeta, keyCursor)
		}
		after = evs[len(evs)-1].ID
	}
}

// migrateOutboxLog moves the event log into the outbox: it translates the
// cursor from an outbox sequence number to the ID of the last event
// ingested, drops the copies of outbox events ("webhooks.events" keeps
// test events only) and their indexes ("webhooks.event_index",
// "webhooks.event_types"), and replaces the queue items that purged each
// event ("webhooks.purge-event") and each delivery
// ("webhooks.purge-delivery") with the one sweep item. It needs the
// outbox migrated first (the ledger's "ledger.outbox").
func (s *Service) migrateOutboxLog(tx storage.Tx) error {
	old, err := tx.Get(bucketMeta, keyCursor)
	switch {
	case errors.Is(err, storage.ErrNotFound):
	case err != nil:
		return err
	case len(old) == 8:
		// The outbox is now in ID order, which was not commit order: the
		// cursor goes just before the oldest event that was not ingested
		// (neither copied here nor old enough to have been purged).
		// Events after it that were ingested come again, and fan-out
		// skips the webhooks that already have a delivery of them.
		cutoff := corebank.Millis(s.clock.Now()) - s.retention.Milliseconds()
		cursor, after := "", ""
		for {
			evs, err := s.outbox.EventsTx(tx, after, ingestBatch)
			if err != nil {
				return err
			}
			found := false
			for _, ev := range evs {
				copied, err := storage.Exists(tx, bucketTestEvents, []byte(ev.ID))
				if err != nil {
					return err
				}
				if !copied && ev.Created >= cutoff {
					found = true
					break
				}
				cursor = ev.ID
			}
			if found || len(evs) < ingestBatch {
				break
			}
			after = evs[len(evs)-1].ID
		}
		if err := tx.Put(bucketMeta, keyCursor, []byte(cursor)); err != nil {
			return err
		}
	}
	var drop []struct {
		b storage.Bucket
		k []byte
	}
	keep := func(b storage.Bucket, k []byte) {
		drop = append(drop, struct {
			b storage.Bucket
			k []byte
		}{b, append([]byte(nil), k...)})
	}
	if err := tx.Scan(bucketTestEvents, storage.ScanOptions{}, func(k, v []byte) error {
		var copied struct {
			Entities []string `json:"entities"`
		}
		if err := json.Unmarshal(v, &copied); err != nil {
			return fmt.Errorf("webhooks: stored event %s: %w", k, err)
		}
		if len(copied.Entities) > 0 { // an outbox event's copy; test events had none
			keep(bucketTestEvents, k)
		}
		return nil
	}); err != nil {
		return err
	}
	for _, b := range []storage.Bucket{"webhooks.event_index", "webhooks.event_types"} {
		if err := tx.Scan(b, storage.ScanOptions{}, func(k, _ []byte) error {
			keep(b, k)
			return nil
		}); err != nil {
			return err
		}
	}
	for _, kind := range []string{"webhooks.purge-event", "webhooks.purge-delivery"} {
		if err := tx.Scan(storage.BucketDue, storage.ScanOptions{Prefix: []byte(kind + "/")}, func(k, _ []byte) error {
			keep(storage.BucketDue, k)
			return nil
		}); err != nil {
			return err
		}
	}
	for _, d := range drop {
		if err := tx.Delete(d.b, d.k); err != nil {
			return err
		}
	}
	// Due at once: the sweep purges what has expired and queues itself for
	// the oldest event or delivery left, or not at all.
	return storage.Schedule(tx, dueSweep, 0, sweepID)
}
