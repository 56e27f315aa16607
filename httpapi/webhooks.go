package httpapi

import (
	"net/http"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/webhooks"
)

// Webhook routes (SPEC "Webhook", CONTRACT.md "Webhooks"). Every answer is
// the success envelope {status, message, data}, lists with meta as for
// accounts:
//
//	POST   /entity-webhooks                    201 data: the webhook with its secret (shown this once)
//	GET    /entity-webhooks                    200 list of webhooks (filter entity_id), oldest first
//	GET    /entity-webhooks/{id}               200 data: the webhook (deleted ones too, deleted != 0)
//	PATCH  /entity-webhooks/{id}               200 data: the webhook
//	DELETE /entity-webhooks/{id}               200 data: the webhook, deleted set and status inactive
//	POST   /entity-webhooks/{id}/test          200 data: the test delivery with its attempt's outcome
//	POST   /entity-webhooks/{id}/rotate_secret 200 data: the webhook with its new secret (shown this once)
//	GET    /entity-webhooks/{id}/deliveries    200 list of deliveries with their attempts, oldest first
//
// A secret appears only in the answers of create and rotate_secret: never
// in a read, a list, a stored Idempotency-Key replay (see redactSecrets)
// or a log. A webhook whose entity lies outside the caller's tree answers
// 404 exactly as a missing one; so does an entity_id (query or body)
// outside it. The by-id routes take an optional entity_id, in the query or
// the body (both only when they agree), that the webhook must lie under.
// The handlers pass the caller and the raw entity_id through: the webhooks
// service decides scope, in the transaction that reads the webhook.

// errNoWebhooks answers the webhook and event routes of a server built
// without Services.Webhooks.
var errNoWebhooks = corebank.E(corebank.KindUnavailable, codeUnavailable, "webhooks are not configured on this server")

// hookEntity returns the entity_id a by-id webhook route names (query or
// body, both only when they agree; "" when neither does).
func (h *handler) hookEntity(r *http.Request, bodyEntity string) (string, error) {
	if h.wh == nil {
		return "", errNoWebhooks
	}
	return entityParam(r, bodyEntity)
}

// bodyHookEntity is hookEntity for the by-id routes whose body takes
// nothing but entity_id (see bodyEntityID).
func (h *handler) bodyHookEntity(x *exchange, r *http.Request) (string, error) {
	bodyEntity, err := bodyEntityID(x)
	if err != nil {
		return "", err
	}
	return h.hookEntity(r, bodyEntity)
}

// createWebhook serves POST /entity-webhooks. entity_id defaults to the
// caller's entity and must lie in its tree.
func (h *handler) createWebhook(x *exchange, r *http.Request) error {
	if h.wh == nil {
		return errNoWebhooks
	}
	var req webhooks.NewWebhook
	if err := decodeJSON(x.body, &req); err != nil {
		return err
	}
	w, err := h.wh.Create(r.Context(), x.caller(), req)
	if err != nil {
		return err
	}
	return ok(x, http.StatusCreated, "webhook created", w)
}

// listWebhooks serves GET /entity-webhooks: the webhooks of entity_id
// (default the caller's entity) that are not deleted.
func (h *handler) listWebhooks(x *exchange, r *http.Request) error {
	if h.wh == nil {
		return errNoWebhooks
	}
	q := newQuery(r.URL.RawQuery)
	filters := map[string]string{}
	l, err := h.readScopedList(x, q, "entity-webhooks", filters)
	if err != nil {
		return err
	}
	page, err := h.wh.List(r.Context(), x.caller(), l.requested, l.opts)
	if err != nil {
		return err
	}
	if l.cursorErr != nil {
		return l.cursorErr
	}
	for i := range page.Items {
		page.Items[i].Secret = "" // List never sets it; a read must never show it
	}
	writeJSON(x, http.StatusOK, list(h, "webhooks retrieved", page, l.opts.Limit, l.fh, filters))
	return nil
}

// getWebhook serves GET /entity-webhooks/{id}.
func (h *handler) getWebhook(x *exchange, r *http.Request) error {
	entity, err := h.hookEntity(r, "")
	if err != nil {
		return err
	}
	w, err := h.wh.Get(r.Context(), x.caller(), entity, r.PathValue("id"))
	if err != nil {
		return err
	}
	return ok(x, http.StatusOK, "webhook retrieved", w)
}

// patchWebhook serves PATCH /entity-webhooks/{id}: url, description, tags,
// enabled_events, expires_in (still counted from creation) and status
// (active or inactive), each changed only when sent.
func (h *handler) patchWebhook(x *exchange, r *http.Request) error {
	var req webhooks.WebhookUpdate
	bodyEntity, err := decodeWithEntityID(x.body, &req)
	if err != nil {
		return err
	}
	entity, err := h.hookEntity(r, bodyEntity)
	if err != nil {
		return err
	}
	w, err := h.wh.Update(r.Context(), x.caller(), entity, r.PathValue("id"), req)
	if err != nil {
		return err
	}
	return ok(x, http.StatusOK, "webhook updated", w)
}

// deleteWebhook serves DELETE /entity-webhooks/{id}; deleting a deleted
// webhook returns it unchanged.
func (h *handler) deleteWebhook(x *exchange, r *http.Request) error {
	entity, err := h.bodyHookEntity(x, r)
	if err != nil {
		return err
	}
	w, err := h.wh.Delete(r.Context(), x.caller(), entity, r.PathValue("id"))
	if err != nil {
		return err
	}
	return ok(x, http.StatusOK, "webhook deleted", w)
}

// testWebhook serves POST /entity-webhooks/{id}/test: one webhook.test
// event is sent now, whatever the webhook's enabled_events and status, and
// the answer carries the delivery with the attempt's outcome (a receiver's
// failure is reported there, not as an error of this route).
func (h *handler) testWebhook(x *exchange, r *http.Request) error {
	entity, err := h.bodyHookEntity(x, r)
	if err != nil {
		return err
	}
	d, err := h.wh.SendTest(r.Context(), x.caller(), entity, r.PathValue("id"))
	if err != nil {
		return err
	}
	return ok(x, http.StatusOK, "test event sent", d)
}

// rotateWebhookSecret serves POST /entity-webhooks/{id}/rotate_secret: the
// webhook with its new secret, shown this once. The old secret signs
// nothing more, retries of earlier events included.
func (h *handler) rotateWebhookSecret(x *exchange, r *http.Request) error {
	entity, err := h.bodyHookEntity(x, r)
	if err != nil {
		return err
	}
	w, err := h.wh.RotateSecret(r.Context(), x.caller(), entity, r.PathValue("id"))
	if err != nil {
		return err
	}
	return ok(x, http.StatusOK, "webhook secret rotated", w)
}

// listWebhookDeliveries serves GET /entity-webhooks/{id}/deliveries: the
// webhook's deliveries, oldest first, each with its attempts.
func (h *handler) listWebhookDeliveries(x *exchange, r *http.Request) error {
	q := newQuery(r.URL.RawQuery)
	limit := q.limit()
	if err := q.err(); err != nil {
		return err
	}
	entity, err := h.hookEntity(r, "")
	if err != nil {
		return err
	}
	id := r.PathValue("id")
	filters := map[string]string{"webhook_id": id}
	fh, opts, cursorErr := h.listPage(q, "webhook-deliveries", filters, limit)
	page, err := h.wh.Deliveries(r.Context(), x.caller(), entity, id, opts)
	if err != nil {
		return err
	}
	if cursorErr != nil { // reported once the webhook is known to be the caller's
		return cursorErr
	}
	writeJSON(x, http.StatusOK, list(h, "webhook deliveries retrieved", page, limit, fh, filters))
	return nil
}
