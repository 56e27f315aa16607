package webhooks

import (
	"time"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/storage"
)

// Fan-out: one event becomes one pending delivery per matching webhook,
// each queued for an immediate first attempt (see Delivery.queuedAt).

// fanOutTx creates a delivery of ev for each active, subscribed webhook
// owned by one of entities. Unless again (a redelivery), a webhook created
// after the event or already holding a delivery of it gets none.
func (s *Service) fanOutTx(tx storage.Tx, now time.Time, ev Event, entities []string, retryUntil int64, again bool) ([]Delivery, error) {
	nowMS := corebank.Millis(now)
	var out []Delivery
	for _, ent := range entities {
		var hooks []string
		prefix := storage.Prefix(ent)
		if err := tx.Scan(bucketHooksEntity, storage.ScanOptions{Prefix: prefix}, func(k, _ []byte) error {
			hooks = append(hooks, string(k[len(prefix):]))
			return nil
		}); err != nil {
			return nil, err
		}
		for _, hid := range hooks {
			r, err := getRecord(tx, hid)
			if err != nil {
				return nil, err
			}
			if !r.active(nowMS) || !r.EnabledEvents.Enabled(ev.Type) {
				continue
			}
			if !again {
				if ev.Created < r.Created {
					continue // the webhook did not exist yet when the event happened
				}
				if dup, err := storage.Exists(tx, bucketDlvKeys, storage.Key(hid, ev.ID)); err != nil || dup {
					if err != nil {
						return nil, err
					}
					continue
				}
			}
			d, err := s.newDeliveryTx(tx, now, s.ids.New(now), hid, ev, retryUntil, false)
			if err != nil {
				return nil, err
			}
			out = append(out, *d)
		}
	}
	return out, nil
}

// newDeliveryTx stores a pending delivery queued for an immediate first
// attempt, and makes sure the sweep that purges it is queued. The latest
// delivery of (webhook, event) is recorded so that an outbox replay
// creates no duplicate.
func (s *Service) newDeliveryTx(tx storage.Tx, now time.Time, id, hookID string, ev Event, retryUntil int64, test bool) (*Delivery, error) {
	ms := corebank.Millis(now)
	d := &Delivery{
		ID: id, WebhookID: hookID, EventID: ev.ID, EventType: ev.Type, Status: DeliveryPending,
		Attempts: []Attempt{}, NextAttemptAt: ms, RetryUntil: retryUntil, Test: test,
		Created: ms, Updated: ms,
	}
	if err := storage.PutJSON(tx, bucketDeliveries, []byte(id), d); err != nil {
		return nil, err
	}
	if err := tx.Put(bucketDlvHook, storage.Key(hookID, id), nil); err != nil {
		return nil, err
	}
	if err := tx.Put(bucketDlvKeys, storage.Key(hookID, ev.ID), []byte(id)); err != nil {
		return nil, err
	}
	if err := s.sweepLaterTx(tx, ms); err != nil {
		return nil, err
	}
	return d, queueTx(tx, d)
}
