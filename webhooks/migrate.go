package webhooks

import (
	"errors"

	"github.com/corebank/corebank/storage"
)

// Migrations returns the webhooks' one-time changes to stores written by
// earlier releases, for storage.Migrate: "webhooks.due-queue" moves the
// webhooks' own time indexes onto storage's due queue: expiry
// ("webhooks.expiry"), retention of events and deliveries
// ("webhooks.event_time", "webhooks.dlv_time", which held creation times)
// and pending attempts ("webhooks.ready", first attempts by ID, and
// "webhooks.due", retries by time), each attempt queued where the delivery
// record says it waits.
func (s *Service) Migrations() []storage.Migration {
	return []storage.Migration{{Name: "webhooks.due-queue", Run: func(tx storage.Tx) error {
		if err := storage.MoveToDue(tx, "webhooks.expiry", nil, dueExpire); err != nil {
			return err
		}
		if err := storage.MoveTimeIndex(tx, "webhooks.event_time", nil, func(at int64, id string) error {
			return storage.Schedule(tx, duePurgeEvent, s.purgeAt(at), id)
		}); err != nil {
			return err
		}
		if err := storage.MoveTimeIndex(tx, "webhooks.dlv_time", nil, func(at int64, id string) error {
			return storage.Schedule(tx, duePurgeDelivery, s.purgeAt(at), id)
		}); err != nil {
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
	}}}
}
