package httpapi

import (
	"context"
	"net/http"

	"github.com/corebank/corebank/payments"
)

// paymentDetail loads payment detail id for the caller (see within).
func (h *handler) paymentDetail(ctx context.Context, x *exchange, id, entityID string) (*payments.PaymentDetail, error) {
	if len(id) > maxIDLen {
		return nil, payments.ErrPaymentDetailNotFound
	}
	d, err := h.pay.GetPaymentDetail(ctx, "", id)
	if err != nil {
		return nil, err
	}
	if err := h.within(ctx, x, d.EntityID, entityID, payments.ErrPaymentDetailNotFound); err != nil {
		return nil, err
	}
	return d, nil
}

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
	ctx := r.Context()
	var entity string
	if req.CounterpartyID != "" {
		c, err := h.counterparty(ctx, x, req.CounterpartyID, requested)
		if err != nil {
			return err
		}
		entity = c.EntityID
	} else if entity, err = h.scope(ctx, x, requested); err != nil {
		return err
	}
	d, err := h.pay.CreatePaymentDetail(ctx, entity, req)
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
	d, err := h.paymentDetail(r.Context(), x, r.PathValue("id"), entity)
	if err != nil {
		return err
	}
	return ok(x, http.StatusOK, "payment detail retrieved", d)
}

func (h *handler) patchPaymentDetail(x *exchange, r *http.Request) error {
	var req payments.PaymentDetailPatch
	if err := decodeJSON(x.body, &req); err != nil {
		return err
	}
	entity, err := entityParam(r, req.EntityID)
	if err != nil {
		return err
	}
	ctx := r.Context()
	d, err := h.paymentDetail(ctx, x, r.PathValue("id"), entity)
	if err != nil {
		return err
	}
	// A new counterparty_id is checked by the service against the
	// detail's own entity: another entity's counterparty is not found.
	d, err = h.pay.UpdatePaymentDetail(ctx, d.EntityID, d.ID, req)
	if err != nil {
		return err
	}
	return ok(x, http.StatusOK, "payment detail updated", d)
}
