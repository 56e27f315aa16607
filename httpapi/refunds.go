package httpapi

import (
	"context"
	"net/http"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/acquiring"
)

// createRefund answers 200 with the refund, pending, in an envelope
// (SPEC.md "Refunds"). An invalid refund (a field's value breaking
// SPEC.md's rules, an action that is not completed, an amount over what
// is still refundable) is 400 with the fields under details; a body that
// cannot be read (malformed JSON, an unknown field, a wrong type) is 422
// as on every route (see "Request bodies" in doc.go); a merchant account
// that cannot cover the amount is 422 insufficient_funds.
func (h *handler) createRefund(x *exchange, r *http.Request) error {
	return created(x, r, enveloped(http.StatusOK, "refund created"),
		func(q *acquiring.NewRefund) *string { return &q.EntityID }, h.acq.CreateRefund)
}

func (h *handler) getRefund(x *exchange, r *http.Request) error {
	return fetched(x, r, enveloped(http.StatusOK, "refund retrieved"), h.acq.GetRefund)
}

// listRefunds lists one entity's refunds, oldest first, under data.items,
// with the intent lists' filters.
func (h *handler) listRefunds(x *exchange, r *http.Request) error {
	return listed(x, r, acqList("refunds", "refunds retrieved", h.acq.ListRefunds))
}

// simulateRefund is POST /sandbox/refunds/{id}/simulate {"outcome":
// "successful"|"failed", "status_reason"?}: the acquirer's answer, bare,
// as every sandbox route answers.
func (h *handler) simulateRefund(x *exchange, r *http.Request) error {
	var req simulateActionReq
	return moved(x, r, bare(http.StatusOK), &req, &req.EntityID, func(ctx context.Context, c corebank.Caller, entity, id string) (*acquiring.Refund, error) {
		return h.acq.SimulateRefund(ctx, c, entity, id, req.Outcome, req.StatusReason)
	})
}
