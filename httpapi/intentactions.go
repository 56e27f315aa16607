package httpapi

import (
	"context"
	"net/http"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/acquiring"
)

// createIntentAction confirms a payment intent: 201 with the action in an
// envelope; when requires_action is true the client sends the cardholder
// to next_action.url.
func (h *handler) createIntentAction(x *exchange, r *http.Request) error {
	return created(x, r, enveloped(http.StatusCreated, "intent action created"), func(q *acquiring.Confirmation) *string { return &q.EntityID }, h.acq.ConfirmIntent)
}

func (h *handler) getIntentAction(x *exchange, r *http.Request) error {
	return fetched(x, r, enveloped(http.StatusOK, "intent action retrieved"), h.acq.GetAction)
}

// listIntentActions lists one entity's actions, oldest first, under
// data.items; payment_type and payment_intent_id filter too.
func (h *handler) listIntentActions(x *exchange, r *http.Request) error {
	return listed(x, r, acqList("intent-actions", "intent actions retrieved", h.acq.ListActions, "payment_type", "payment_intent_id"))
}

// verifyIntentAction is POST /intent-verifications/{id}, {id} an intent
// action: it rechecks a non-final action; a final one comes back
// unchanged.
func (h *handler) verifyIntentAction(x *exchange, r *http.Request) error {
	var req entityOnly
	return moved(x, r, enveloped(http.StatusOK, "intent action verified"), &req, &req.EntityID, h.acq.VerifyAction)
}

type simulateActionReq struct {
	Outcome      string `json:"outcome"`
	StatusReason string `json:"status_reason"`
	EntityID     string `json:"entity_id"`
}

// simulateIntentAction answers the action bare, as every sandbox route
// does; it runs what the issuer's answer (and the challenge page) runs.
func (h *handler) simulateIntentAction(x *exchange, r *http.Request) error {
	var req simulateActionReq
	return moved(x, r, bare(http.StatusOK), &req, &req.EntityID, func(ctx context.Context, c corebank.Caller, entity, id string) (*acquiring.Action, error) {
		return h.acq.SimulateAction(ctx, c, entity, id, req.Outcome, req.StatusReason)
	})
}
