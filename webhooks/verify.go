package webhooks

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/corebank/corebank/storage"
)

// VerifyStore checks, in tx, what the webhooks package keeps, and reports each
// broken rule to v: every webhook not deleted is in its entity's list and
// every key of that list names one; an active webhook is queued to
// expire; every delivery is in its webhook's list, names a webhook that
// exists, and is queued for its next attempt while pending; every latest
// delivery key names a delivery of that webhook and event; and every
// "webhooks.expire", "webhooks.attempt" and "webhooks.sweep" item names a
// live object. It writes nothing.
func VerifyStore(tx storage.Tx, v *storage.Verifier) error {
	hooks := storage.ScanJSON[record](bucketHooks, nil, v, "webhook")
	err := storage.VerifyIndexed(tx, v, storage.Indexed[*record]{
		Kind: "webhook",
		Records: func(tx storage.Tx, fn func(string, *record) error) error {
			return hooks(tx, func(id string, r *record) error {
				if r.Deleted == 0 && r.Status == StatusActive {
					if ok, err := storage.IsDue(tx, dueExpire, r.ExpiresAt, id); err != nil {
						return err
					} else if !ok {
						v.Report(storage.FindDueMissing, []string{id}, "active webhook expiring at %d is not queued", r.ExpiresAt)
					}
				}
				return fn(id, r)
			})
		},
		Load: storage.Found(getRecord, ErrWebhookNotFound),
		Keys: func(_ storage.Tx, r *record) ([]storage.KV, error) {
			if r.Deleted != 0 {
				return nil, nil
			}
			return []storage.KV{{Bucket: bucketHooksEntity, Key: storage.Key(r.EntityID, r.ID)}}, nil
		},
		Ranges: []storage.IndexRange{{Bucket: bucketHooksEntity, ID: storage.LastPart}},
	})
	if err != nil {
		return err
	}
	deliveries := storage.ScanJSON[Delivery](bucketDeliveries, nil, v, "webhook delivery")
	err = storage.VerifyIndexed(tx, v, storage.Indexed[*Delivery]{
		Kind: "webhook delivery",
		Records: func(tx storage.Tx, fn func(string, *Delivery) error) error {
			return deliveries(tx, func(id string, d *Delivery) error {
				if ok, err := storage.Exists(tx, bucketHooks, []byte(d.WebhookID)); err != nil {
					return err
				} else if !ok {
					v.Report(storage.FindIndexDangling, []string{id, d.WebhookID}, "webhook delivery names a webhook that does not exist")
				}
				if d.Status == DeliveryPending {
					if ok, err := storage.IsDue(tx, dueAttempt, d.queuedAt(), id); err != nil {
						return err
					} else if !ok {
						v.Report(storage.FindDueMissing, []string{id}, "pending webhook delivery's attempt at %d is not queued", d.queuedAt())
					}
				}
				return fn(id, d)
			})
		},
		Load: func(tx storage.Tx, id string) (*Delivery, error) { return getDelivery(tx, id) },
		Keys: func(_ storage.Tx, d *Delivery) ([]storage.KV, error) {
			return []storage.KV{{Bucket: bucketDlvHook, Key: storage.Key(d.WebhookID, d.ID)}}, nil
		},
		Ranges: []storage.IndexRange{
			{Bucket: bucketDlvHook, ID: storage.LastPart},
			// Only a (webhook, event)'s latest delivery holds its key.
			{Bucket: bucketDlvKeys, ID: storage.ValueID, Loose: true},
		},
	})
	if err != nil {
		return err
	}
	err = tx.Scan(bucketDlvKeys, storage.ScanOptions{}, func(k, id []byte) error {
		d, err := getDelivery(tx, string(id))
		if err != nil {
			return nil // absent: reported above; corrupt: by the scan
		}
		if !bytes.Equal(k, storage.Key(d.WebhookID, d.EventID)) {
			v.Report(storage.FindIndexStale, []string{string(id)}, "latest delivery key %q names a delivery of webhook %s and event %s", k, d.WebhookID, d.EventID)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return verifyWebhooksDue(tx, v)
}

func verifyWebhooksDue(tx storage.Tx, v *storage.Verifier) error {
	err := storage.VerifyDue(tx, v, dueExpire, func(id string, at int64) (string, error) {
		r, err := getRecord(tx, id)
		switch {
		case errors.Is(err, ErrWebhookNotFound):
			return "no such webhook", nil
		case err != nil:
			return "", nil // reported by the scan
		case r.Deleted != 0:
			return "the webhook is deleted", nil
		case r.Status != StatusActive:
			return "the webhook is " + r.Status, nil
		case r.ExpiresAt != at:
			return fmt.Sprintf("the webhook expires at %d", r.ExpiresAt), nil
		}
		return "", nil
	})
	if err != nil {
		return err
	}
	err = storage.VerifyDue(tx, v, dueAttempt, func(id string, at int64) (string, error) {
		d, err := getDelivery(tx, id)
		switch {
		case errors.Is(err, storage.ErrNotFound):
			return "no such webhook delivery", nil
		case err != nil:
			return "", nil
		case d.Status != DeliveryPending:
			return "the webhook delivery is " + d.Status, nil
		case d.queuedAt() != at:
			return fmt.Sprintf("the webhook delivery's next attempt is at %d", d.queuedAt()), nil
		}
		return "", nil
	})
	if err != nil {
		return err
	}
	return storage.VerifyDue(tx, v, dueSweep, func(id string, _ int64) (string, error) {
		if id != sweepID {
			return "the sweep's only item is " + sweepID, nil
		}
		return "", nil
	})
}
