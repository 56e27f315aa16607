package httpapi

import (
	"errors"
	"net/http"

	"github.com/corebank/corebank/payments"
)

// createTransfer acts for the owner of account_id, which must lie in the
// tree of entity_id (the caller's entity when omitted); a foreign account
// is 404 as a missing one. Duplicate unique_reference answers 409
// duplicate_reference with the original transfer under data.
//
// The common case, an account of entity_id itself, costs no read beyond
// the service's own transaction: the service is asked first for entity_id,
// and only when it does not find the account is the account looked up to
// act for a descendant that owns it.
func (h *handler) createTransfer(x *exchange, r *http.Request) error {
	var req payments.NewTransfer
	if err := decodeJSON(x.body, &req); err != nil {
		return err
	}
	requested, err := entityParam(r, req.EntityID)
	if err != nil {
		return err
	}
	ctx := r.Context()
	entity, err := h.scope(ctx, x, requested)
	if err != nil {
		return err
	}
	t, err := h.pay.CreateTransfer(ctx, entity, req)
	if errors.Is(err, payments.ErrAccountNotFound) && req.AccountID != "" {
		a, aerr := h.account(ctx, x, req.AccountID, entity)
		if aerr != nil {
			return aerr
		}
		if a.EntityID == entity {
			return err
		}
		t, err = h.pay.CreateTransfer(ctx, a.EntityID, req)
	}
	if err != nil {
		return err
	}
	return ok(x, http.StatusCreated, "transfer created", t)
}

func (h *handler) getTransfer(x *exchange, r *http.Request) error {
	requested, err := queryEntityID(r)
	if err != nil {
		return err
	}
	t, err := h.transfer(r, x, r.PathValue("id"), requested)
	if err != nil {
		return err
	}
	return ok(x, http.StatusOK, "transfer retrieved", t)
}

// transfer loads transfer id for the caller (see within).
func (h *handler) transfer(r *http.Request, x *exchange, id, entityID string) (*payments.Transfer, error) {
	if len(id) > maxIDLen {
		return nil, payments.ErrTransferNotFound
	}
	ctx := r.Context()
	t, err := h.pay.GetTransfer(ctx, "", id)
	if err != nil {
		return nil, err
	}
	if err := h.within(ctx, x, t.EntityID, entityID, payments.ErrTransferNotFound); err != nil {
		return nil, err
	}
	return t, nil
}

var transferStatuses = map[string]bool{payments.StatusPending: true, payments.StatusProcessing: true,
	payments.StatusSuccessful: true, payments.StatusFailed: true, payments.StatusReversed: true}

// listTransfers lists one entity's transfers: the owner of account_id when
// given (it must lie in the tree of entity_id), else entity_id.
func (h *handler) listTransfers(x *exchange, r *http.Request) error {
	q := newQuery(r.URL.RawQuery)
	filters := map[string]string{}
	if s := q.str("status"); s != "" {
		if !transferStatuses[s] {
			q.add("status", "must be one of pending, processing, successful, failed, reversed")
		}
		filters["status"] = s
	}
	requested := q.str("entity_id")
	accountID := q.str("account_id")
	limit := q.limit()
	if err := q.err(); err != nil {
		return err
	}
	ctx := r.Context()
	var entity string
	if accountID != "" {
		a, err := h.account(ctx, x, accountID, requested)
		if err != nil {
			return err
		}
		entity = a.EntityID
		filters["account_id"] = a.ID
	} else {
		var err error
		if entity, err = h.scope(ctx, x, requested); err != nil {
			return err
		}
	}
	filters["entity_id"] = entity
	fh, opts, err := h.listPage(q, "transfers", filters, limit)
	if err != nil {
		return err
	}
	page, err := h.pay.ListTransfers(ctx, payments.TransferFilter{EntityID: entity,
		AccountID: filters["account_id"], Status: filters["status"]}, opts)
	if err != nil {
		return err
	}
	writeJSON(x, http.StatusOK, list(h, "transfers retrieved", page, limit, fh, filters))
	return nil
}

type simulateReq struct {
	Outcome      string `json:"outcome"`
	StatusReason string `json:"status_reason"`
	EntityID     string `json:"entity_id"`
}

// simulateTransfer answers the transfer bare, as every sandbox route does.
func (h *handler) simulateTransfer(x *exchange, r *http.Request) error {
	var req simulateReq
	if err := decodeJSON(x.body, &req); err != nil {
		return err
	}
	requested, err := entityParam(r, req.EntityID)
	if err != nil {
		return err
	}
	t, err := h.transfer(r, x, r.PathValue("id"), requested)
	if err != nil {
		return err
	}
	t, err = h.pay.Simulate(r.Context(), t.EntityID, t.ID, req.Outcome, req.StatusReason)
	if err != nil {
		return err
	}
	writeJSON(x, http.StatusOK, t)
	return nil
}
