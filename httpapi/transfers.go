package httpapi

import (
	"context"
	"net/http"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/payments"
)

// createTransfer acts for the owner of account_id, which must lie in the
// tree of entity_id (the caller's entity when omitted); the service decides
// that in its one transaction, and a foreign account is 404 as a missing
// one. Duplicate unique_reference answers 409 duplicate_reference with the
// original transfer under data.
func (h *handler) createTransfer(x *exchange, r *http.Request) error {
	return created(x, r, enveloped(http.StatusCreated, "transfer created"), func(q *payments.NewTransfer) *string { return &q.EntityID }, h.pay.CreateTransfer)
}

func (h *handler) getTransfer(x *exchange, r *http.Request) error {
	return fetched(x, r, enveloped(http.StatusOK, "transfer retrieved"), h.pay.GetTransfer)
}

var transferStatuses = map[string]bool{payments.StatusPending: true, payments.StatusProcessing: true,
	payments.StatusSuccessful: true, payments.StatusFailed: true, payments.StatusReversed: true}

// listTransfers lists one entity's transfers: the owner of account_id when
// given (it must lie in the tree of entity_id), else entity_id;
// filters_applied names the entity listed.
func (h *handler) listTransfers(x *exchange, r *http.Request) error {
	return listed(x, r, listing[payments.Transfer]{name: "transfers", message: "transfers retrieved",
		filters: func(q *query, filters map[string]string) {
			if s := q.str("status"); s != "" {
				if !transferStatuses[s] {
					q.add("status", "must be one of pending, processing, successful, failed, reversed")
				}
				filters["status"] = s
			}
			q.pick(filters, "account_id")
		},
		read: func(ctx context.Context, c corebank.Caller, l listRequest) (*corebank.Page[payments.Transfer], string, error) {
			p, err := h.pay.ListTransfers(ctx, c, payments.TransferFilter{EntityID: l.entityID,
				AccountID: l.filters["account_id"], Status: l.filters["status"]}, l.opts)
			return p.Page, p.EntityID, err
		}})
}

type simulateReq struct {
	Outcome      string `json:"outcome"`
	StatusReason string `json:"status_reason"`
	EntityID     string `json:"entity_id"`
}

// simulateTransfer answers the transfer bare, as every sandbox route does.
func (h *handler) simulateTransfer(x *exchange, r *http.Request) error {
	var req simulateReq
	return moved(x, r, bare(http.StatusOK), &req, &req.EntityID, func(ctx context.Context, c corebank.Caller, entity, id string) (*payments.Transfer, error) {
		return h.pay.SimulateTransfer(ctx, c, entity, id, req.Outcome, req.StatusReason)
	})
}
