package webhooks

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/oklog/ulid/v2"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/internal/scope"
	"github.com/corebank/corebank/storage"
)

// EventFilter narrows ListEvents. Zero fields do not filter.
type EventFilter struct {
	// EntityID keeps the events of this entity and its descendants (""
	// is the caller's entity).
	EntityID string
	// Type keeps events of this type ("outflows.completed").
	Type string
	// CreatedAfter keeps events created strictly after this time (ms).
	CreatedAfter int64
	// CreatedBefore keeps events created strictly before this time (ms).
	CreatedBefore int64
}

// ulidBound returns the smallest (or, with max, the greatest) ULID string
// of millisecond ms.
// ulidBefore returns the greatest ULID (in its text form) below the ULID
// id; ok is false when id is not a ULID or is the least one.
func ulidBefore(id string) (string, bool) {
	u, err := ulid.ParseStrict(id)
	if err != nil || u == (ulid.ULID{}) {
		return "", false
	}
	for i := len(u) - 1; i >= 0; i-- {
		u[i]--
		if u[i] != 0xff {
			break
		}
	}
	return u.String(), true
}

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

// ListEvents returns one page of the events of f.EntityID ("" is the
// caller's entity) and its descendants that are still retained
// (EventRetention, 30 days by default), oldest first, filtered by f;
// cursors are event IDs. Only events the dispatcher has read from the
// outbox are listed (Run, RunDue and Drain read it); webhook.test events
// are not. The page is read from the outbox in ID order, which is time
// order, so the time filters seek directly; the entity and type filters
// are checked event by event, and a page examines at most MaxEventScan
// events: one cut short comes back with HasNext set and a Next cursor to
// continue from.
//
// Errors: a validation error for a bad filter; corebank.ErrEntityNotFound
// for an entity outside the caller's tree or unknown; a validation error
// for a bad limit or cursor (corebank.ErrCursor).
func (s *Service) ListEvents(ctx context.Context, caller corebank.Caller, f EventFilter, opts corebank.ListOptions) (*corebank.Page[Event], error) {
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
	q := storage.PageQuery{Opts: opts, MaxScan: MaxEventScan}
	if f.CreatedAfter > 0 {
		q.Lower = ulidBound(f.CreatedAfter+1, false)
	}
	if f.CreatedBefore > 0 {
		q.Upper = ulidBound(f.CreatedBefore-1, true)
	}
	return storage.View(ctx, s.db, func(tx storage.Tx) (*corebank.Page[Event], error) {
		entity, err := scope.Entity(tx, s.tree, caller, f.EntityID)
		if err != nil {
			return nil, err
		}
		if q.Limit, err = storage.CheckList(opts, corebank.DefaultLimit); err != nil {
			return nil, err
		}
		unread, err := s.outbox.OldestUnreadTx(tx)
		if err != nil {
			return nil, err
		}
		if unread != "" {
			// Only events the dispatcher has read: those before the oldest
			// it has not.
			last, ok := ulidBefore(unread)
			if !ok {
				return &corebank.Page[Event]{Items: []Event{}, Total: -1}, nil
			}
			if q.Upper == "" || last < q.Upper {
				q.Upper = last
			}
		}
		under := corebank.As(entity)
		allowed := map[string]bool{entity: true} // an entity's place is looked up once a page
		return s.outbox.PageEventsTx(tx, q, func(ev Event) (bool, error) {
			if f.Type != "" && ev.Type != f.Type {
				return false, nil
			}
			if (f.CreatedAfter > 0 && ev.Created <= f.CreatedAfter) || (f.CreatedBefore > 0 && ev.Created >= f.CreatedBefore) {
				return false, nil
			}
			in, seen := allowed[ev.EntityID]
			if !seen {
				var err error
				if in, err = scope.Allowed(tx, s.tree, under, ev.EntityID); err != nil {
					return false, err
				}
				allowed[ev.EntityID] = in
			}
			return in, nil
		})
	})
}

// retainedEvent is an event as scope.Get reads it: owned by the entity it
// is about.
type retainedEvent struct{ Event }

// Owner is the entity the event is about.
func (e *retainedEvent) Owner() string { return e.EntityID }

// eventTx returns the retained event with id that the dispatcher has read,
// or ErrEventNotFound.
func (s *Service) eventTx(tx storage.Tx, id string) (*retainedEvent, error) {
	unread, err := s.outbox.UnreadTx(tx, id)
	if err != nil {
		return nil, err
	}
	if unread {
		return nil, ErrEventNotFound
	}
	ev, err := s.outbox.EventTx(tx, id)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, ErrEventNotFound
	}
	if err != nil {
		return nil, err
	}
	return &retainedEvent{ev}, nil
}

// RedeliverEvent sends a retained event again: it creates a fresh delivery,
// with a new RetryWindow counted from now and an immediate first attempt,
// for each active webhook subscribed to the event's type that belongs to
// the event's entity or to one of its ancestors up to entityID ("" is the
// caller's entity; never entities above the caller). Deliveries keep the
// event's ID, so receivers deduplicate as usual. It returns the new
// deliveries (possibly none) and wakes Run to send them.
//
// Errors: corebank.ErrForbidden for a read-only caller;
// corebank.ErrEntityNotFound for an entityID outside the caller's tree or
// unknown, whatever eventID is; ErrEventNotFound when the event is
// unknown, purged, a test event or outside the tree.
func (s *Service) RedeliverEvent(ctx context.Context, caller corebank.Caller, entityID, eventID string) ([]Delivery, error) {
	if err := caller.CheckWrite(); err != nil {
		return nil, err
	}
	now := s.clock.Now()
	out, err := storage.Update(ctx, s.db, func(tx storage.Tx) ([]Delivery, error) {
		ev, err := scope.Get(tx, s.tree, caller, entityID, eventID, s.eventTx, ErrEventNotFound)
		if err != nil {
			return nil, err
		}
		// The entity the request acts for: the ancestors it reaches get
		// the event too.
		c, err := scope.Within(tx, s.tree, caller, entityID)
		if err != nil {
			return nil, err
		}
		// Keep the event's entity and the ancestors the caller reaches.
		all, err := s.chainTx(tx, ev.EntityID)
		if err != nil {
			return nil, err
		}
		chain := all[:1]
		for _, ent := range all[1:] {
			if in, err := scope.Allowed(tx, s.tree, c, ent); err != nil {
				return nil, err
			} else if in {
				chain = append(chain, ent)
			}
		}
		return s.fanOutTx(tx, now, ev.Event, chain, corebank.Millis(now.Add(s.window)), true)
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

// SendTestEvent delivers a synthetic webhook.test event to the webhook now,
// whatever its enabled_events and status, and returns the delivery with the
// attempt's outcome; entityID is as for GetWebhook. The test event has its
// own ID, data {"id", "webhook_id", "created"}, and is not retried.
//
// Errors: corebank.ErrForbidden for a read-only caller;
// corebank.ErrEntityNotFound and ErrWebhookNotFound as for GetWebhook;
// ErrWebhookDeleted.
func (s *Service) SendTestEvent(ctx context.Context, caller corebank.Caller, entityID, webhookID string) (*Delivery, error) {
	if err := caller.CheckWrite(); err != nil {
		return nil, err
	}
	now := s.clock.Now()
	ms := corebank.Millis(now)
	evID := s.ids.New(now)
	dlvID := s.ids.New(now)
	data, _ := json.Marshal(map[string]any{"id": evID, "webhook_id": webhookID, "created": ms})
	s.claim(dlvID) // fresh ID: keeps Run from racing this first attempt
	defer s.release(dlvID)
	// The delivery's ID comes back from the transaction: a retry of an
	// idempotent request whose delivery committed gets the first one's.
	// The first attempt is leased to this node in the same transaction,
	// so that no other node's runner sends it too.
	type made struct {
		ID   string
		Item storage.DueItem
	}
	got, err := storage.Update(ctx, s.db, func(tx storage.Tx) (made, error) {
		r, err := scope.Get(tx, s.tree, caller, entityID, webhookID, getRecord, ErrWebhookNotFound)
		if err != nil {
			return made{}, err
		}
		if r.Deleted != 0 {
			return made{}, ErrWebhookDeleted
		}
		ev := Event{ID: evID, Type: TestEventType, EntityID: r.EntityID, Data: data, Created: ms}
		if err := storage.PutJSON(tx, bucketTestEvents, []byte(evID), &ev); err != nil {
			return made{}, err
		}
		d, err := s.newDeliveryTx(tx, now, dlvID, webhookID, ev, ms, true)
		if err != nil {
			return made{}, err
		}
		it, err := storage.LeaseTx(tx, dueAttempt, storage.DueItem{At: d.queuedAt(), ID: dlvID},
			storage.DueLease{Node: s.node, Until: s.leaseClk.Now().Add(s.lease).UnixMilli()})
		return made{dlvID, it}, err
	})
	if err != nil {
		return nil, err
	}
	item := got.Item
	if got.ID != dlvID { // the retry's delivery: attempt it unless Run is on it
		if !s.claim(got.ID) {
			return s.GetDelivery(ctx, caller, entityID, got.ID)
		}
		defer s.release(got.ID)
		dlvID = got.ID
	}
	select {
	case s.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	// The attempt's outcome is the delivery's bookkeeping, not a step of
	// the request: a retry finds it recorded (attempt then does nothing).
	_, err = s.attempt(storage.WithoutJournal(context.WithoutCancel(ctx)), item)
	<-s.sem
	if err != nil {
		return nil, err
	}
	return s.GetDelivery(ctx, caller, entityID, dlvID)
}

// GetDelivery returns the delivery with id; entityID is as for
// GetWebhook.
//
// Errors: corebank.ErrEntityNotFound as for GetWebhook;
// ErrDeliveryNotFound for a delivery that is unknown, purged, or of a
// webhook outside the caller's (or entityID's) tree.
func (s *Service) GetDelivery(ctx context.Context, caller corebank.Caller, entityID, id string) (*Delivery, error) {
	return storage.View(ctx, s.db, func(tx storage.Tx) (*Delivery, error) {
		d, err := scope.Get(tx, s.tree, caller, entityID, id, ownedDelivery, ErrDeliveryNotFound)
		if err != nil {
			return nil, err
		}
		return d.Delivery, nil
	})
}

// webhookDelivery is a delivery as scope.Get reads it: owned by its
// webhook's entity.
type webhookDelivery struct {
	*Delivery
	owner string
}

// Owner is the entity of the delivery's webhook.
func (d webhookDelivery) Owner() string { return d.owner }

// ownedDelivery reads delivery id with its webhook's entity:
// ErrDeliveryNotFound when either is gone.
func ownedDelivery(tx storage.Tx, id string) (webhookDelivery, error) {
	d, err := getDelivery(tx, id)
	if errors.Is(err, storage.ErrNotFound) {
		return webhookDelivery{}, ErrDeliveryNotFound
	}
	if err != nil {
		return webhookDelivery{}, err
	}
	r, err := getRecord(tx, d.WebhookID)
	if errors.Is(err, ErrWebhookNotFound) {
		return webhookDelivery{}, ErrDeliveryNotFound
	}
	if err != nil {
		return webhookDelivery{}, err
	}
	return webhookDelivery{d, r.EntityID}, nil
}

// DeliveryFilter names the webhook whose deliveries ListDeliveries lists
// (WebhookID, required), within entity EntityID (as for GetWebhook).
type DeliveryFilter struct {
	EntityID  string
	WebhookID string
}

// ListDeliveries returns one page of webhook f.WebhookID's deliveries,
// oldest first, each with its attempts; cursors are delivery IDs.
// Finished deliveries are kept for EventRetention.
//
// Errors: corebank.ErrEntityNotFound and ErrWebhookNotFound as for
// GetWebhook; a validation error for a bad limit or cursor
// (corebank.ErrCursor).
func (s *Service) ListDeliveries(ctx context.Context, caller corebank.Caller, f DeliveryFilter, opts corebank.ListOptions) (*corebank.Page[Delivery], error) {
	webhookID := f.WebhookID
	return storage.View(ctx, s.db, func(tx storage.Tx) (*corebank.Page[Delivery], error) {
		if _, err := scope.Get(tx, s.tree, caller, f.EntityID, webhookID, getRecord, ErrWebhookNotFound); err != nil {
			return nil, err
		}
		limit, err := storage.CheckList(opts, corebank.DefaultLimit)
		if err != nil {
			return nil, err
		}
		q := storage.PageQuery{Bucket: bucketDlvHook, Prefix: storage.Prefix(webhookID), Opts: opts, Limit: limit}
		return storage.ReadPage(tx, q, func(id string, _ []byte) (Delivery, bool, error) {
			d, err := getDelivery(tx, id)
			if errors.Is(err, storage.ErrNotFound) {
				return Delivery{}, false, nil
			}
			if err != nil {
				return Delivery{}, false, err
			}
			return *d, true, nil
		})
	})
}
