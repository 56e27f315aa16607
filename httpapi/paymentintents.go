package httpapi

import (
	"context"
	"net/http"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/acquiring"
)

// createPaymentIntent answers 201 with the intent in an envelope; with
// intent_action the intent is confirmed in the same request and nests
// the action. A reference the account already used answers 409
// duplicate_reference with the original under data.
func (h *handler) createPaymentIntent(x *exchange, r *http.Request) error {
	return created(x, r, enveloped(http.StatusCreated, "payment intent created"),
		func(q *acquiring.NewIntent) *string { return &q.EntityID }, h.acq.CreateIntent)
}

func (h *handler) getPaymentIntent(x *exchange, r *http.Request) error {
	return fetched(x, r, enveloped(http.StatusOK, "payment intent retrieved"), h.acq.GetIntent)
}

type cancelIntentReq struct {
	Action   string `json:"action"`
	Reason   string `json:"reason"`
	EntityID string `json:"entity_id"`
}

// patchPaymentIntent cancels an intent in requires_action: {"action":
// "cancel", "reason"?, "entity_id"?}.
func (h *handler) patchPaymentIntent(x *exchange, r *http.Request) error {
	var req cancelIntentReq
	return moved(x, r, enveloped(http.StatusOK, "payment intent cancelled"), &req, &req.EntityID,
		func(ctx context.Context, c corebank.Caller, entity, id string) (*acquiring.Intent, error) {
			if req.Action != "cancel" {
				return nil, corebank.InvalidField("action", "must be cancel")
			}
			return h.acq.CancelIntent(ctx, c, entity, id, req.Reason)
		})
}

// listPaymentIntents lists one entity's intents, oldest first, under
// data.items.
func (h *handler) listPaymentIntents(x *exchange, r *http.Request) error {
	return listed(x, r, acqList("payment-intents", "payment intents retrieved", h.acq.ListIntents))
}
