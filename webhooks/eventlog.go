package webhooks

import (
	"context"
	"encoding/json"
	"errors"
	"slices"

	"github.com/oklog/ulid/v2"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/storage"
)

// EventFilter narrows ListEvents. Zero fields do not filter.
type EventFilter struct {
	// Type keeps events of this type ("outflows.completed").
	Type string
	// CreatedAfter keeps events created strictly after this time (ms).
	CreatedAfter int64
	// CreatedBefore keeps events created strictly before this time (ms).
	CreatedBefore int64
}

// ulidBound returns the smallest (or, with max, the greatest) ULID string
// of millisecond ms.
func ulidBound(ms int64, max bool) string {
	var u ulid.ULID
	if max {
		for i := 6; i < 16; i++ {
			u[i] = 0xff
		}
	}
	if ms < 0 {
		ms = 0
	}
	if uint64(ms) > ulid.MaxTime() {
		ms = int64(ulid.MaxTime())
	}
	_ = u.SetTime(uint64(ms))
	return u.String()
}

// inTreeTx reports whether id is ancestorID or below it; without a tree
// only equality counts.
func (s *Service) inTreeTx(tx storage.Tx, ancestorID, id string) (bool, error) {
	if id == ancestorID {
		return true, nil
	}
	if s.tree == nil || ancestorID == "" || id == "" {
		return false, nil
	}
	return s.tree.InTreeTx(tx, ancestorID, id)
}

// ListEvents returns one page of the events of entityID and its
// descendants that are still retained (EventRetention, 30 days by default),
// oldest first, filtered by f; cursors are event IDs. Only events the
// dispatcher has read from the outbox are listed (Run, RunDue and Drain
// read it); webhook.test events are not. It returns a validation error for
// a bad limit, cursor or filter. Event IDs are assumed to be ULIDs minted at
// the event's creation, as corebank.IDs makes them, so the time filters
// seek directly. When Options.Tree lacks Ancestry a page examines at most
// MaxEventScan events and may come back short with HasNext set.
func (s *Service) ListEvents(ctx context.Context, entityID string, f EventFilter, opts corebank.ListOptions) (*corebank.Page[Event], error) {
	p := corebank.Problems{}
	if f.CreatedAfter < 0 {
		p.Add("created_after", "must not be negative")
	}
	if f.CreatedBefore < 0 {
		p.Add("created_before", "must not be negative")
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	var bounds pageBounds
	if f.CreatedAfter > 0 {
		bounds.lower = ulidBound(f.CreatedAfter+1, false)
	}
	if f.CreatedBefore > 0 {
		bounds.upper = ulidBound(f.CreatedBefore-1, true)
	}
	bucket, prefix := bucketEventIndex, storage.Prefix(entityID)
	if f.Type != "" {
		bucket, prefix = bucketEventTypes, storage.Prefix(entityID, f.Type)
	}
	// Without Ancestry an entity's index holds only the events of its tree
	// that arrived while it owned a webhook: scan every event instead.
	scanAll := s.tree != nil && s.ancestry == nil
	if scanAll {
		bucket, prefix, bounds.maxScan = bucketEvents, nil, MaxEventScan
	}
	var page *corebank.Page[Event]
	err := s.db.View(ctx, func(tx storage.Tx) error {
		var err error
		page, err = scanPage(tx, bucket, prefix, opts, bounds, func(id string) (*Event, error) {
			var se storedEvent
			err := storage.GetJSON(tx, bucketEvents, []byte(id), &se)
			if errors.Is(err, storage.ErrNotFound) {
				return nil, nil
			}
			if err != nil {
				return nil, err
			}
			if (f.CreatedAfter > 0 && se.Created <= f.CreatedAfter) || (f.CreatedBefore > 0 && se.Created >= f.CreatedBefore) {
				return nil, nil
			}
			if scanAll {
				if len(se.Entities) == 0 || (f.Type != "" && se.Type != f.Type) {
					return nil, nil
				}
				if in, err := s.tree.InTreeTx(tx, entityID, se.EntityID); err != nil || !in {
					return nil, err
				}
			}
			return &se.Event, nil
		})
		return err
	})
	return page, err
}

// Redeliver sends a retained event again: it creates a fresh delivery, with
// a new RetryWindow counted from now and an immediate first attempt, for
// each active webhook subscribed to the event's type that belongs to the
// event's entity or to one of its ancestors up to entityID (never to
// entities above the caller). Deliveries keep the event's ID, so receivers
// deduplicate as usual. It returns the new deliveries (possibly none) or
// ErrEventNotFound when the event is unknown, purged or not in entityID's
// tree. Call Wake (or RunDue) to send them; the commit hook does.
func (s *Service) Redeliver(ctx context.Context, entityID, eventID string) ([]Delivery, error) {
	now := s.clock.Now()
	var out []Delivery
	err := s.db.Update(ctx, func(tx storage.Tx) error {
		out = nil
		var se storedEvent
		err := storage.GetJSON(tx, bucketEvents, []byte(eventID), &se)
		if errors.Is(err, storage.ErrNotFound) || (err == nil && len(se.Entities) == 0) {
			return ErrEventNotFound // unknown, purged, or a test event
		}
		if err != nil {
			return err
		}
		in, err := s.inTreeTx(tx, entityID, se.EntityID)
		if err != nil {
			return err
		}
		if !in {
			return ErrEventNotFound
		}
		// Keep the event's entity and the ancestors at or below entityID.
		chain := se.Entities[:1]
		for _, ent := range se.Entities[1:] {
			if in, err := s.inTreeTx(tx, entityID, ent); err != nil {
				return err
			} else if in {
				chain = append(chain, ent)
			}
		}
		if s.ancestry == nil {
			// Owners of webhooks added since ingestion count too.
			anc, err := s.ancestorsTx(tx, se.EntityID)
			if err != nil {
				return err
			}
			for _, ent := range anc {
				if in, err := s.inTreeTx(tx, entityID, ent); err != nil {
					return err
				} else if in && !slices.Contains(chain, ent) {
					chain = append(chain, ent)
				}
			}
		}
		out, err = s.fanOutTx(tx, now, se.Event, chain, corebank.Millis(now.Add(s.window)), true)
		return err
	})
	if err != nil {
		return nil, err
	}
	if out == nil {
		out = []Delivery{}
	}
	s.Wake()
	return out, nil
}

// SendTest delivers a synthetic webhook.test event to the webhook now,
// whatever its enabled_events and status, and returns the delivery with the
// attempt's outcome. The test event has its own ID, data {"id",
// "webhook_id", "created"}, and is not retried. It returns
// ErrWebhookNotFound or ErrWebhookDeleted.
func (s *Service) SendTest(ctx context.Context, webhookID string) (*Delivery, error) {
	now := s.clock.Now()
	ms := corebank.Millis(now)
	evID := s.ids.New(now)
	dlvID := s.ids.New(now)
	data, _ := json.Marshal(map[string]any{"id": evID, "webhook_id": webhookID, "created": ms})
	s.claim(dlvID) // fresh ID: keeps Run from racing this first attempt
	defer s.release(dlvID)
	err := s.db.Update(ctx, func(tx storage.Tx) error {
		r, err := getLiveRecord(tx, webhookID)
		if err != nil {
			return err
		}
		ev := Event{ID: evID, Type: TestEventType, EntityID: r.EntityID, Data: data, Created: ms}
		if err := storeEventTx(tx, &storedEvent{Event: ev}); err != nil {
			return err
		}
		_, err = s.newDeliveryTx(tx, now, dlvID, webhookID, ev, ms, true)
		return err
	})
	if err != nil {
		return nil, err
	}
	select {
	case s.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	_, _, err = s.attempt(context.WithoutCancel(ctx), dlvID, now)
	<-s.sem
	if err != nil {
		return nil, err
	}
	return s.GetDelivery(ctx, dlvID)
}

// GetDelivery returns the delivery with id or a not_found error.
func (s *Service) GetDelivery(ctx context.Context, id string) (*Delivery, error) {
	var d *Delivery
	err := s.db.View(ctx, func(tx storage.Tx) error {
		var err error
		d, err = getDelivery(tx, id)
		if errors.Is(err, storage.ErrNotFound) {
			return ErrDeliveryNotFound
		}
		return err
	})
	return d, err
}

// Deliveries returns one page of the webhook's deliveries, oldest first,
// each with its attempts; cursors are delivery IDs. Finished deliveries are
// kept for EventRetention. It returns ErrWebhookNotFound for an unknown
// webhook and a validation error for a bad limit or cursor.
func (s *Service) Deliveries(ctx context.Context, webhookID string, opts corebank.ListOptions) (*corebank.Page[Delivery], error) {
	var page *corebank.Page[Delivery]
	err := s.db.View(ctx, func(tx storage.Tx) error {
		if _, err := getRecord(tx, webhookID); err != nil {
			return err
		}
		var err error
		page, err = scanPage(tx, bucketDlvHook, storage.Prefix(webhookID), opts, pageBounds{},
			func(id string) (*Delivery, error) {
				d, err := getDelivery(tx, id)
				if errors.Is(err, storage.ErrNotFound) {
					return nil, nil
				}
				return d, err
			})
		return err
	})
	return page, err
}
