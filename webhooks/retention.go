package webhooks

import (
	"errors"
	"time"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/storage"
)

// Retention: webhooks whose expires_in elapses become inactive, and events
// and deliveries are purged once EventRetention has passed since their
// creation. Each is an item in storage's due queue, scheduled when the
// webhook, event or delivery is written.

// purgeAt is when an event or delivery created at ms (Unix ms) is purged:
// the first millisecond at which it is older than EventRetention.
func (s *Service) purgeAt(ms int64) int64 { return ms + s.retention.Milliseconds() + 1 }

// housekeeping returns the retention jobs, in the order they run.
func (s *Service) housekeeping() []storage.DueJob {
	return []storage.DueJob{
		{Kind: dueExpire, Tx: expireTx},
		{Kind: duePurgeEvent, Tx: func(tx storage.Tx, _ time.Time, it storage.DueItem) error {
			return purgeEventTx(tx, it.ID)
		}},
		{Kind: duePurgeDelivery, Tx: func(tx storage.Tx, _ time.Time, it storage.DueItem) error {
			return purgeDeliveryTx(tx, it.ID)
		}},
	}
}

// expireTx marks the webhook of it inactive when its expires_in has
// elapsed at it.At and it is still active.
func expireTx(tx storage.Tx, now time.Time, it storage.DueItem) error {
	r, err := getRecord(tx, it.ID)
	if errors.Is(err, ErrWebhookNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if r.Deleted != 0 || r.Status != StatusActive || r.ExpiresAt > it.At {
		return nil
	}
	r.Status, r.Updated = StatusInactive, corebank.Millis(now)
	return putRecord(tx, r)
}

func purgeEventTx(tx storage.Tx, id string) error {
	var se storedEvent
	err := storage.GetJSON(tx, bucketEvents, []byte(id), &se)
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, ent := range se.Entities {
		if err := tx.Delete(bucketEventIndex, storage.Key(ent, id)); err != nil {
			return err
		}
		if err := tx.Delete(bucketEventTypes, storage.Key(ent, se.Type, id)); err != nil {
			return err
		}
	}
	return tx.Delete(bucketEvents, []byte(id))
}

func purgeDeliveryTx(tx storage.Tx, id string) error {
	d, err := getDelivery(tx, id)
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if d.Status == DeliveryPending {
		// Older than the retention period yet never finished (no runner
		// ran): it is far outside its retry window, so drop it too.
		if err := unqueueTx(tx, d); err != nil {
			return err
		}
	}
	if err := tx.Delete(bucketDlvHook, storage.Key(d.WebhookID, id)); err != nil {
		return err
	}
	if v, err := tx.Get(bucketDlvKeys, storage.Key(d.WebhookID, d.EventID)); err == nil && string(v) == id {
		if err := tx.Delete(bucketDlvKeys, storage.Key(d.WebhookID, d.EventID)); err != nil {
			return err
		}
	}
	return tx.Delete(bucketDeliveries, []byte(id))
}
