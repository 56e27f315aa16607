package httpapi

import (
	"net/http"

	"github.com/corebank/corebank/payments"
)

// createPaymentDetail answers the bare payment detail (see counterparties.go).
// It acts for the owner of counterparty_id, which must lie in the tree of
// entity_id.
func (h *handler) createPaymentDetail(x *exchange, r *http.Request) error {
	var req payments.NewPaymentDetail
	if err := decodeJSON(x.body, &req); err != nil {
		return err
	}
	requested, err := entityParam(r, req.EntityID)
	if err != nil {
		return err
	}
	req.EntityID = requested
	d, err := h.pay.CreatePaymentDetail(r.Context(), x.caller(), req)
	if err != nil {
		return err
	}
	writeJSON(x, http.StatusCreated, d)
	return nil
}

func (h *handler) getPaymentDetail(x *exchange, r *http.Request) error {
	entity, err := queryEntityID(r)
	if err != nil {
		return err
	}
	d, err := h.pay.GetPaymentDetail(r.Context(), x.caller(), entity, r.PathValue("id"))
	if err != nil {
		return err
	}
	return ok(x, http.StatusOK, "payment detail retrieved", d)
}

// patchPaymentDetail: a new counterparty_id is checked by the service
// against the detail's own entity: another entity's counterparty is not
// found.
func (h *handler) patchPaymentDetail(x *exchange, r *http.Request) error {
	var req payments.PaymentDetailPatch
	if err := decodeJSON(x.body, &req); err != nil {
		return err
	}
	entity, err := entityParam(r, req.EntityID)
	if err != nil {
		return err
	}
	d, err := h.pay.UpdatePaymentDetail(r.Context(), x.caller(), entity, r.PathValue("id"), req)
	if err != nil {
		return err
	}
	return ok(x, http.StatusOK, "payment detail updated", d)
}
