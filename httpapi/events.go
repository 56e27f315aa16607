package httpapi

import (
	"net/http"

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

// maxEventTime is the largest created_after/created_before accepted: the
// last millisecond an event ID (a ULID, 48-bit time) can hold.
const maxEventTime = 1<<48 - 1

// maxEventType bounds the type filter's length.
const maxEventType = 100

// listEvents serves GET /events.
func (h *handler) listEvents(x *exchange, r *http.Request) error {
	if h.wh == nil {
		return errNoWebhooks
	}
	q := newQuery(r.URL.RawQuery)
	filters := map[string]string{}
	var f webhooks.EventFilter
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
	f.CreatedAfter, f.CreatedBefore = q.createdRange(filters, maxEventTime)
	l, err := h.readScopedList(x, q, "events", filters)
	if err != nil {
		return err
	}
	page, err := h.wh.ListEvents(r.Context(), x.caller(), l.requested, f, l.opts)
	if err != nil {
		return err
	}
	if l.cursorErr != nil {
		return l.cursorErr
	}
	writeJSON(x, http.StatusOK, list(h, "events retrieved", page, l.opts.Limit, l.fh, filters))
	return nil
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
	if h.wh == nil {
		return errNoWebhooks
	}
	bodyEntity, err := bodyEntityID(x)
	if err != nil {
		return err
	}
	entity, err := entityParam(r, bodyEntity)
	if err != nil {
		return err
	}
	id := r.PathValue("id")
	// Redeliver wakes the dispatcher: the webhooks service writes to its
	// own store, not through the commit hook.
	ds, err := h.wh.Redeliver(r.Context(), x.caller(), entity, id)
	if err != nil {
		return err
	}
	if ds == nil {
		ds = []webhooks.Delivery{}
	}
	return ok(x, http.StatusOK, "event queued for redelivery", &redelivery{EventID: id, Deliveries: ds})
}
