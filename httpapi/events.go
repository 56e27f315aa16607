package httpapi

import (
	"context"
	"net/http"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/webhooks"
)

// Event routes, beyond SPEC (the events webhooks deliver, kept for
// webhooks.Options.EventRetention, 30 days by default):
//
//	GET  /events                 200 list of events {id, type, entity_id, data, created}, oldest first
//	POST /events/{id}/redeliver  200 data: {event_id, deliveries: [...]}
//
// GET /events lists the events of entity_id (default the caller's entity)
// and of every entity below it, filtered by type and by created_after and
// created_before (Unix ms, both exclusive). Redeliver sends a retained
// event again, with a fresh retry window, to each active webhook subscribed
// to its type that belongs to the event's entity or an ancestor of it up to
// entity_id (body or query, default the caller's entity); deliveries is
// empty when none is subscribed. An event outside that tree answers 404 as
// a missing one does.

// maxEventType bounds the type filter's length.
const maxEventType = 100

// listEvents serves GET /events.
func (h *handler) listEvents(x *exchange, r *http.Request) error {
	var f webhooks.EventFilter
	return listed(x, r, listing[webhooks.Event]{name: "events", message: "events retrieved",
		filters: func(q *query, filters map[string]string) {
			if t := q.str("type"); t != "" {
				if t == "funding_sessions_updated" { // SPEC's other spelling
					t = "funding_sessions.updated"
				}
				if !eventTypeShape(t) {
					q.add("type", "must be an event type such as outflows.completed")
				}
				f.Type = t
				filters["type"] = t
			}
			f.CreatedAfter, f.CreatedBefore = q.createdRange(filters)
		},
		read: func(ctx context.Context, c corebank.Caller, l listRequest) (*corebank.Page[webhooks.Event], string, error) {
			f.EntityID = l.entityID
			p, err := h.wh.ListEvents(ctx, c, f, l.opts)
			return p, "", err
		}})
}

// eventTypeShape reports whether t looks like an event type: lower-case
// letters, digits and underscores around one or more dots. Types outside
// webhooks.EventTypes() are allowed, since domains may add events.
func eventTypeShape(t string) bool {
	if len(t) > maxEventType || t[0] == '.' || t[len(t)-1] == '.' {
		return false
	}
	dot := false
	for i := 0; i < len(t); i++ {
		switch c := t[i]; {
		case c == '.':
			if t[i-1] == '.' {
				return false
			}
			dot = true
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '_':
		default:
			return false
		}
	}
	return dot
}

// redelivery is the answer of POST /events/{id}/redeliver.
type redelivery struct {
	EventID    string              `json:"event_id"`
	Deliveries []webhooks.Delivery `json:"deliveries"`
}

// redeliverEvent serves POST /events/{id}/redeliver.
func (h *handler) redeliverEvent(x *exchange, r *http.Request) error {
	var req entityOnly
	return moved(x, r, enveloped(http.StatusOK, "event queued for redelivery"), &req, &req.EntityID,
		func(ctx context.Context, c corebank.Caller, entity, id string) (*redelivery, error) {
			// Redeliver wakes the dispatcher: the webhooks service writes to
			// its own store, not through the commit hook.
			ds, err := h.wh.RedeliverEvent(ctx, c, entity, id)
			if err != nil {
				return nil, err
			}
			if ds == nil {
				ds = []webhooks.Delivery{}
			}
			return &redelivery{EventID: id, Deliveries: ds}, nil
		})
}
