package webhooks

import (
	"errors"

	"github.com/corebank/corebank/storage"
)

// Migrations returns the webhooks' one-time changes to stores written by
// earlier releases, for storage.Migrate, in order: "webhooks.due-queue"
// moves the webhooks' own time indexes onto storage's due queue: expiry
// ("webhooks.expiry") and pending attempts ("webhooks.ready", first
// attempts by ID, and "webhooks.due", retries by time), each attempt
// queued where the delivery record says it waits; the retention indexes
// ("webhooks.event_time", "webhooks.dlv_time") are dropped, as the sweep
// reads creation times from the IDs. "webhooks.sweep" replaces the queue
// items that purged each event ("webhooks.purge-event") and each delivery
// ("webhooks.purge-delivery") with the one sweep item.
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
	}}, {Name: "webhooks.sweep", Run: func(tx storage.Tx) error {
		for _, kind := range []string{"webhooks.purge-event", "webhooks.purge-delivery"} {
			var keys [][]byte
			if err := tx.Scan(storage.BucketDue, storage.ScanOptions{Prefix: []byte(kind + "/")}, func(k, _ []byte) error {
				keys = append(keys, append([]byte(nil), k...))
				return nil
			}); err != nil {
				return err
			}
			for _, k := range keys {
				if err := tx.Delete(storage.BucketDue, k); err != nil {
					return err
				}
			}
		}
		// Due at once: the sweep purges what has expired and queues itself
		// for the oldest event or delivery left, or not at all.
		return storage.Schedule(tx, dueSweep, 0, sweepID)
	}}}
}
