package webhooks

import (
	"errors"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/storage"
)

// Retention: webhooks whose expires_in elapses become inactive, each by
// its own item in storage's due queue, and events (in the outbox; test
// events here) and deliveries are purged once EventRetention has passed
// since their creation. All are keyed by ID, a ULID minted at creation,
// and outbox IDs increase in commit order, so key order is time order:
// one "webhooks.sweep" item walks each from the oldest and stops at the
// first one still retained, instead of a queue item per event and per
// delivery.

// sweepBatch bounds what one sweep transaction purges of each kind; a
// sweep that hits it queues itself again at once to go on.
const sweepBatch = 1000

// sweepRead is how many outbox events the sweep reads at a time.
const sweepRead = 32

// sweepID is the ID of the one sweep item.
const sweepID = "events"

// purgeAt is when an event or delivery created at ms (Unix ms) is purged:
// the first millisecond at which it is older than EventRetention.
func (s *Service) purgeAt(ms int64) int64 { return ms + s.retention.Milliseconds() + 1 }

// sweepLaterTx queues the sweep for when something created at ms must go,
// unless it is queued already (for that time or earlier, as it always is
// once anything is retained): a read, not a write, once the first event
// is stored.
func (s *Service) sweepLaterTx(tx storage.Tx, ms int64) error {
	queued := false
	err := tx.Scan(storage.BucketDue, storage.ScanOptions{Prefix: []byte(dueSweep + "/"), Limit: 1}, func([]byte, []byte) error {
		queued = true
		return nil
	})
	if err != nil || queued {
		return err
	}
	return storage.Schedule(tx, dueSweep, s.purgeAt(ms), sweepID)
}

// idTime is the creation time (Unix ms) in a ULID id; ok is false when id
// is not a ULID.
func idTime(id []byte) (ms int64, ok bool) {
	u, err := ulid.ParseStrict(string(id))
	if err != nil {
		return 0, false
	}
	return int64(u.Time()), true
}

// sweepTx purges, oldest first, up to sweepBatch each of the outbox events
// the dispatcher has read, test events and deliveries created before now
// less EventRetention, and queues the next sweep: at once when a batch was
// full, else for when the oldest one left expires (nothing left: none is
// queued until something is stored).
func (s *Service) sweepTx(tx storage.Tx, now time.Time, it storage.DueItem) error {
	cutoff := corebank.Millis(now) - s.retention.Milliseconds() // purge created < cutoff
	next, full := int64(-1), false
	later := func(ms int64) {
		if next < 0 || ms < next {
			next = ms
		}
	}
	// The outbox is read a little at a time: a steady sweep finds only the
	// first few events expired.
	for purged, done := 0, false; !done; {
		evs, err := s.outbox.EventsTx(tx, "", sweepRead)
		if err != nil {
			return err
		}
		done = len(evs) < sweepRead
		for _, ev := range evs {
			unread, err := s.outbox.UnreadTx(tx, ev.ID)
			if err != nil {
				return err
			}
			if unread { // the dispatcher queues the sweep when it reads it
				done = true
				break
			}
			if ev.Created >= cutoff {
				later(ev.Created)
				done = true
				break
			}
			if purged == sweepBatch {
				full, done = true, true
				break
			}
			if err := s.outbox.DeleteEventTx(tx, ev.ID); err != nil {
				return err
			}
			purged++
		}
	}
	for _, b := range []struct {
		bucket storage.Bucket
		purge  func(storage.Tx, string) error
	}{{bucketTestEvents, purgeTestEventTx}, {bucketDeliveries, purgeDeliveryTx}} {
		var ids []string
		err := tx.Scan(b.bucket, storage.ScanOptions{Limit: sweepBatch + 1}, func(k, _ []byte) error {
			ms, ok := idTime(k)
			if ok && ms >= cutoff {
				later(ms)
				return storage.ErrStop
			}
			if len(ids) == sweepBatch {
				full = true
				return storage.ErrStop
			}
			ids = append(ids, string(k)) // expired, or not a ULID (nothing says when it expires)
			return nil
		})
		if err != nil && !errors.Is(err, storage.ErrStop) {
			return err
		}
		for _, id := range ids {
			if err := b.purge(tx, id); err != nil {
				return err
			}
		}
	}
	switch {
	case full:
		// More to purge: just after this item, so that the same RunDue
		// comes back to it.
		return storage.Schedule(tx, dueSweep, it.At+1, sweepID)
	case next < 0:
		return nil
	}
	return storage.Schedule(tx, dueSweep, s.purgeAt(next), sweepID)
}

// housekeeping returns the retention jobs, in the order they run.
func (s *Service) housekeeping() []storage.DueJob {
	return []storage.DueJob{
		{Kind: dueExpire, Tx: expireTx},
		{Kind: dueSweep, Tx: s.sweepTx},
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

func purgeTestEventTx(tx storage.Tx, id string) error {
	return tx.Delete(bucketTestEvents, []byte(id))
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
