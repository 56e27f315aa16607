package httpapi

import (
	"context"
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

// errNoWebhooks answers the webhook and event routes of a server built
// without Services.Webhooks.
var errNoWebhooks = corebank.E(corebank.KindUnavailable, codeUnavailable, "webhooks are not configured on this server")

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
	ctx := r.Context()
	entity, err := h.scope(ctx, x, req.EntityID)
	if err != nil {
		return err
	}
	req.EntityID = entity
	w, err := h.wh.Create(ctx, req)
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
	ctx := r.Context()
	filters := map[string]string{}
	entity, fh, opts, err := h.entityList(ctx, x, q, "entity-webhooks", filters)
	if err != nil {
		return err
	}
	page, err := h.wh.List(ctx, entity, opts)
	if err != nil {
		return err
	}
	for i := range page.Items {
		page.Items[i].Secret = "" // List never sets it; a read must never show it
	}
	writeJSON(x, http.StatusOK, list(h, "webhooks retrieved", page, opts.Limit, fh, filters))
	return nil
}

// webhook loads the webhook a by-id route names, answering exactly as for
// a missing webhook unless it lies in the tree of the route's entity_id
// (query or body, default the caller's entity). The webhooks package does
// no scoping of its own on these calls, so every by-id route starts here.
func (h *handler) webhook(ctx context.Context, x *exchange, r *http.Request, bodyEntity string) (*webhooks.Webhook, error) {
	if h.wh == nil {
		return nil, errNoWebhooks
	}
	scopeTo, err := h.patchScope(ctx, x, r, bodyEntity)
	if err != nil {
		return nil, err
	}
	w, err := h.wh.Get(ctx, r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	in, err := h.inScope(ctx, scopeTo, w.EntityID)
	if err != nil && !notFound(err) {
		return nil, err
	}
	if !in {
		return nil, webhooks.ErrWebhookNotFound
	}
	w.Secret = ""
	return w, nil
}

// bodyWebhook is webhook for the by-id routes whose body takes nothing but
// entity_id (see bodyEntityID).
func (h *handler) bodyWebhook(ctx context.Context, x *exchange, r *http.Request) (*webhooks.Webhook, error) {
	bodyEntity, err := bodyEntityID(x)
	if err != nil {
		return nil, err
	}
	return h.webhook(ctx, x, r, bodyEntity)
}

// getWebhook serves GET /entity-webhooks/{id}.
func (h *handler) getWebhook(x *exchange, r *http.Request) error {
	w, err := h.webhook(r.Context(), x, r, "")
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
	ctx := r.Context()
	w, err := h.webhook(ctx, x, r, bodyEntity)
	if err != nil {
		return err
	}
	w, err = h.wh.Update(ctx, w.ID, req)
	if err != nil {
		return err
	}
	w.Secret = ""
	return ok(x, http.StatusOK, "webhook updated", w)
}

// deleteWebhook serves DELETE /entity-webhooks/{id}; deleting a deleted
// webhook returns it unchanged.
func (h *handler) deleteWebhook(x *exchange, r *http.Request) error {
	ctx := r.Context()
	w, err := h.bodyWebhook(ctx, x, r)
	if err != nil {
		return err
	}
	w, err = h.wh.Delete(ctx, w.ID)
	if err != nil {
		return err
	}
	w.Secret = ""
	return ok(x, http.StatusOK, "webhook deleted", w)
}

// testWebhook serves POST /entity-webhooks/{id}/test: one webhook.test
// event is sent now, whatever the webhook's enabled_events and status, and
// the answer carries the delivery with the attempt's outcome (a receiver's
// failure is reported there, not as an error of this route).
func (h *handler) testWebhook(x *exchange, r *http.Request) error {
	ctx := r.Context()
	w, err := h.bodyWebhook(ctx, x, r)
	if err != nil {
		return err
	}
	d, err := h.wh.SendTest(ctx, w.ID)
	if err != nil {
		return err
	}
	return ok(x, http.StatusOK, "test event sent", d)
}

// rotateWebhookSecret serves POST /entity-webhooks/{id}/rotate_secret: the
// webhook with its new secret, shown this once. The old secret signs
// nothing more, retries of earlier events included.
func (h *handler) rotateWebhookSecret(x *exchange, r *http.Request) error {
	ctx := r.Context()
	w, err := h.bodyWebhook(ctx, x, r)
	if err != nil {
		return err
	}
	w, err = h.wh.RotateSecret(ctx, w.ID)
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
	ctx := r.Context()
	w, err := h.webhook(ctx, x, r, "")
	if err != nil {
		return err
	}
	filters := map[string]string{"webhook_id": w.ID}
	fh, opts, err := h.listPage(q, "webhook-deliveries", filters, limit)
	if err != nil {
		return err
	}
	page, err := h.wh.Deliveries(ctx, w.ID, opts)
	if err != nil {
		return err
	}
	writeJSON(x, http.StatusOK, list(h, "webhook deliveries retrieved", page, limit, fh, filters))
	return nil
}
