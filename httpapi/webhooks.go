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
// The handlers pass the caller and the raw entity_id through: the webhooks
// service decides scope, in the transaction that reads the webhook. Without
// Services.Webhooks every webhook and event route answers 503 unavailable
// (hookRoute).

// createWebhook serves POST /entity-webhooks. entity_id is the body's
// alone; it defaults to the caller's entity and must lie in its tree.
func (h *handler) createWebhook(x *exchange, r *http.Request) error {
	return created(x, r, enveloped(http.StatusCreated, "webhook created"), nil, h.wh.CreateWebhook)
}

// listWebhooks serves GET /entity-webhooks: the webhooks of entity_id
// (default the caller's entity) that are not deleted.
func (h *handler) listWebhooks(x *exchange, r *http.Request) error {
	return listed(x, r, listing[webhooks.Webhook]{name: "entity-webhooks", message: "webhooks retrieved",
		read: func(ctx context.Context, c corebank.Caller, l listRequest) (*corebank.Page[webhooks.Webhook], string, error) {
			p, err := h.wh.ListWebhooks(ctx, c, webhooks.WebhookFilter{EntityID: l.entityID}, l.opts)
			if err != nil {
				return nil, "", err
			}
			for i := range p.Items {
				p.Items[i].Secret = "" // ListWebhooks never sets it; a read must never show it
			}
			return p, "", nil
		}})
}

// getWebhook serves GET /entity-webhooks/{id}.
func (h *handler) getWebhook(x *exchange, r *http.Request) error {
	return fetched(x, r, enveloped(http.StatusOK, "webhook retrieved"), h.wh.GetWebhook)
}

// patchWebhook serves PATCH /entity-webhooks/{id}: url, description, tags,
// enabled_events, expires_in (still counted from creation) and status
// (active or inactive), each changed only when sent.
func (h *handler) patchWebhook(x *exchange, r *http.Request) error {
	var req withEntity[webhooks.WebhookPatch]
	return moved(x, r, enveloped(http.StatusOK, "webhook updated"), &req, &req.EntityID,
		func(ctx context.Context, c corebank.Caller, entity, id string) (*webhooks.Webhook, error) {
			return h.wh.UpdateWebhook(ctx, c, entity, id, req.Body)
		})
}

// deleteWebhook serves DELETE /entity-webhooks/{id}; deleting a deleted
// webhook returns it unchanged.
func (h *handler) deleteWebhook(x *exchange, r *http.Request) error {
	var req entityOnly
	return moved(x, r, enveloped(http.StatusOK, "webhook deleted"), &req, &req.EntityID, h.wh.DeleteWebhook)
}

// testWebhook serves POST /entity-webhooks/{id}/test: one webhook.test
// event is sent now, whatever the webhook's enabled_events and status, and
// the answer carries the delivery with the attempt's outcome (a receiver's
// failure is reported there, not as an error of this route).
func (h *handler) testWebhook(x *exchange, r *http.Request) error {
	var req entityOnly
	return moved(x, r, enveloped(http.StatusOK, "test event sent"), &req, &req.EntityID, h.wh.SendTestEvent)
}

// rotateWebhookSecret serves POST /entity-webhooks/{id}/rotate_secret: the
// webhook with its new secret, shown this once. The old secret signs
// nothing more, retries of earlier events included.
func (h *handler) rotateWebhookSecret(x *exchange, r *http.Request) error {
	var req entityOnly
	return moved(x, r, enveloped(http.StatusOK, "webhook secret rotated"), &req, &req.EntityID, h.wh.RotateWebhookSecret)
}

// listWebhookDeliveries serves GET /entity-webhooks/{id}/deliveries: the
// webhook's deliveries, oldest first, each with its attempts. The cursor
// is bound to the webhook alone, and filters_applied names it alone.
func (h *handler) listWebhookDeliveries(x *exchange, r *http.Request) error {
	id := r.PathValue("id")
	return listed(x, r, listing[webhooks.Delivery]{name: "webhook-deliveries", message: "webhook deliveries retrieved",
		filters: func(_ *query, filters map[string]string) { filters["webhook_id"] = id },
		scope:   func(string, corebank.Caller, map[string]string) {},
		read: func(ctx context.Context, c corebank.Caller, l listRequest) (*corebank.Page[webhooks.Delivery], string, error) {
			p, err := h.wh.ListDeliveries(ctx, c, webhooks.DeliveryFilter{EntityID: l.entityID, WebhookID: id}, l.opts)
			return p, "", err
		}})
}
