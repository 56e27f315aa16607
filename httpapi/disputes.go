package httpapi

import (
	"context"
	"net/http"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/acquiring"
)

func (h *handler) getDispute(x *exchange, r *http.Request) error {
	return fetched(x, r, enveloped(http.StatusOK, "dispute retrieved"), h.acq.GetDispute)
}

// listDisputes lists one entity's disputes, oldest first, under
// data.items, with the intent lists' filters (reference is the disputed
// payment's) and payment_intent_action_id.
func (h *handler) listDisputes(x *exchange, r *http.Request) error {
	return listed(x, r, acqList("disputes", "disputes retrieved", h.acq.ListDisputes, "payment_intent_action_id"))
}

// openDispute is the sandbox's card network disputing a completed intent
// action: 201 with the dispute, bare like every sandbox route.
func (h *handler) openDispute(x *exchange, r *http.Request) error {
	return created(x, r, bare(http.StatusCreated), func(q *acquiring.NewDispute) *string { return &q.EntityID },
		func(ctx context.Context, c corebank.Caller, req acquiring.NewDispute) (*acquiring.Dispute, error) {
			return h.acq.OpenDispute(ctx, c, r.PathValue("id"), req)
		})
}

type simulateDisputeReq struct {
	Outcome  string `json:"outcome"`
	EntityID string `json:"entity_id"`
}

// simulateDispute decides a dispute, won or lost, answering it bare.
func (h *handler) simulateDispute(x *exchange, r *http.Request) error {
	var req simulateDisputeReq
	return moved(x, r, bare(http.StatusOK), &req, &req.EntityID, func(ctx context.Context, c corebank.Caller, entity, id string) (*acquiring.Dispute, error) {
		return h.acq.SimulateDispute(ctx, c, entity, id, req.Outcome)
	})
}
