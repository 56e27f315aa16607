package httpapi

import (
	"context"
	"net/http"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/payments"
)

// createPaymentDetail answers the bare payment detail (see counterparties.go).
// It acts for the owner of counterparty_id, which must lie in the tree of
// entity_id.
func (h *handler) createPaymentDetail(x *exchange, r *http.Request) error {
	return created(x, r, bare(http.StatusCreated), func(q *payments.NewPaymentDetail) *string { return &q.EntityID }, h.pay.CreatePaymentDetail)
}

func (h *handler) getPaymentDetail(x *exchange, r *http.Request) error {
	return fetched(x, r, enveloped(http.StatusOK, "payment detail retrieved"), h.pay.GetPaymentDetail)
}

// patchPaymentDetail: a new counterparty_id is checked by the service
// against the detail's own entity: another entity's counterparty is not
// found.
func (h *handler) patchPaymentDetail(x *exchange, r *http.Request) error {
	var req payments.PaymentDetailPatch
	return moved(x, r, enveloped(http.StatusOK, "payment detail updated"), &req, &req.EntityID,
		func(ctx context.Context, c corebank.Caller, entity, id string) (*payments.PaymentDetail, error) {
			return h.pay.UpdatePaymentDetail(ctx, c, entity, id, req)
		})
}
