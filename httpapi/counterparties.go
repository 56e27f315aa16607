package httpapi

// Payment routes (counterparties.go, paymentdetails.go, fxquotes.go,
// transfers.go) serve the payments package. Their response forms:
//
//	POST  /counterparties                       201 envelope, data: counterparty
//	GET   /counterparties                       200 list (meta.pagination adds has_more)
//	GET   /counterparties/{id}                  200 envelope, data: counterparty
//	PATCH /counterparties/{id}                  200 envelope, data: counterparty
//	POST  /counterparties/{id}/deactivate       200 envelope, data: counterparty (status inactive)
//	GET   /counterparties/{id}/payment-details  200 list
//	POST  /payment-details                      201 the payment detail, bare
//	GET   /payment-details/{id}                 200 envelope, data: payment detail
//	PATCH /payment-details/{id}                 200 envelope, data: payment detail
//	POST  /fx-quotes                            201 envelope, data: quote (quote.status active)
//	GET   /fx-quotes/{id}                       200 envelope, data: quote
//	POST  /transfers                            201 envelope, data: transfer (pending; a book
//	                                                transfer settles at once and is successful)
//	GET   /transfers/{id}                       200 envelope, data: transfer
//	GET   /transfers                            200 list, filters entity_id, account_id, status
//	POST  /sandbox/transfers/{id}/simulate      200 the transfer, bare
//	POST  /sandbox/fx/outage                    200 {enabled}, bare
//
// POST /payment-details answers the bare object, the one form SPEC.md names
// for its create; its retrieval and update answer the envelope SPEC.md names
// for retrieval. When Services.Payments is nil every payment route answers
// 503 unavailable (the routes stay mounted, so a client learns why).
//
// Scope: the handlers pass the request's caller, the entity_id it names
// (query or body; both given must agree) and the IDs it names to the
// service, which decides inside its transaction: entity_id must lie in the
// key's tree (else 404 entity not found, before any object is read), and an
// object named by path or body (counterparty, payment detail, quote,
// transfer, account) must lie in the tree of that entity (the key's own
// when entity_id is absent); the request then acts for the object's owner.
// A foreign object answers 404 exactly as a missing one of its kind, except
// POST /counterparties, whose unknown or foreign entity_id answers 409
// conflict (SPEC.md; both alike, so existence never leaks).

import (
	"errors"
	"net/http"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/payments"
)

var (
	errNoPayments = corebank.E(corebank.KindUnavailable, codeUnavailable, "payments are not configured on this server")
	// errCounterpartyEntity answers POST /counterparties with an entity_id
	// that is unknown or outside the caller's tree, alike.
	errCounterpartyEntity = &corebank.Error{Kind: corebank.KindConflict, Code: corebank.CodeConflict,
		Message: "entity_id does not name an entity this API key may act for",
		Fields:  map[string]string{"entity_id": "is unknown or outside this API key's entities"}}
)

// payRoute guards a payments route: 503 unavailable without
// Services.Payments.
func payRoute(fn handlerFunc) handlerFunc {
	return needs(func(h *handler) bool { return h.pay != nil }, errNoPayments, fn)
}

// needs serves fn when has says the handler has the service it needs, and
// answers missing (503 unavailable) otherwise.
func needs(has func(*handler) bool, missing error, fn handlerFunc) handlerFunc {
	return func(h *handler, x *exchange, r *http.Request) error {
		if !has(h) {
			return missing
		}
		return fn(h, x, r)
	}
}

func (h *handler) createCounterparty(x *exchange, r *http.Request) error {
	var req payments.NewCounterparty
	if err := decodeJSON(x.body, &req); err != nil {
		return err
	}
	requested, err := entityParam(r, req.EntityID)
	if err != nil {
		return err
	}
	req.EntityID = requested
	c, err := h.pay.CreateCounterparty(r.Context(), x.caller(), req)
	if errors.Is(err, corebank.ErrEntityNotFound) {
		return errCounterpartyEntity
	}
	if err != nil {
		return err
	}
	return ok(x, http.StatusCreated, "counterparty created", c)
}

// counterpartyPagination is meta.pagination of GET /counterparties: SPEC
// gives this list has_more beside the standard fields.
type counterpartyPagination struct {
	pagination
	HasMore bool `json:"has_more"`
}

type counterpartyList struct {
	Status  string `json:"status"`
	Message string `json:"message"`
	Data    any    `json:"data"`
	Meta    struct {
		Pagination     counterpartyPagination `json:"pagination"`
		FiltersApplied map[string]string      `json:"filters_applied"`
	} `json:"meta"`
}

func (h *handler) listCounterparties(x *exchange, r *http.Request) error {
	q := newQuery(r.URL.RawQuery)
	filters := map[string]string{}
	if t := q.str("type"); t != "" {
		if t != payments.CounterpartyIndividual && t != payments.CounterpartyBusiness {
			q.add("type", "must be individual or business")
		}
		filters["type"] = t
	}
	if s := q.str("status"); s != "" {
		if s != payments.CounterpartyActive && s != payments.CounterpartyInactive {
			q.add("status", "must be active or inactive")
		}
		filters["status"] = s
	}
	lq, err := h.readScopedList(x, q, "counterparties", filters)
	if err != nil {
		return err
	}
	page, err := h.pay.ListCounterparties(r.Context(), x.caller(), lq.requested,
		payments.CounterpartyFilter{Type: filters["type"], Status: filters["status"]}, lq.opts)
	if err != nil {
		return err
	}
	if lq.cursorErr != nil {
		return lq.cursorErr
	}
	l := list(h, "counterparties retrieved", page, lq.opts.Limit, lq.fh, filters)
	out := &counterpartyList{Status: l.Status, Message: l.Message, Data: l.Data}
	out.Meta.Pagination = counterpartyPagination{pagination: l.Meta.Pagination, HasMore: l.Meta.Pagination.HasNext}
	out.Meta.FiltersApplied = l.Meta.FiltersApplied
	writeJSON(x, http.StatusOK, out)
	return nil
}

func (h *handler) getCounterparty(x *exchange, r *http.Request) error {
	entity, err := queryEntityID(r)
	if err != nil {
		return err
	}
	c, err := h.pay.GetCounterparty(r.Context(), x.caller(), entity, r.PathValue("id"))
	if err != nil {
		return err
	}
	return ok(x, http.StatusOK, "counterparty retrieved", c)
}

func (h *handler) patchCounterparty(x *exchange, r *http.Request) error {
	var req payments.CounterpartyPatch
	if err := decodeJSON(x.body, &req); err != nil {
		return err
	}
	entity, err := entityParam(r, req.EntityID)
	if err != nil {
		return err
	}
	c, err := h.pay.UpdateCounterparty(r.Context(), x.caller(), entity, r.PathValue("id"), req)
	if err != nil {
		return err
	}
	return ok(x, http.StatusOK, "counterparty updated", c)
}

func (h *handler) deactivateCounterparty(x *exchange, r *http.Request) error {
	entity, err := bodyEntityParam(x, r)
	if err != nil {
		return err
	}
	c, err := h.pay.DeactivateCounterparty(r.Context(), x.caller(), entity, r.PathValue("id"))
	if err != nil {
		return err
	}
	return ok(x, http.StatusOK, "counterparty deactivated", c)
}

// listCounterpartyDetails lists for the counterparty's owner, which
// filters_applied names.
func (h *handler) listCounterpartyDetails(x *exchange, r *http.Request) error {
	q := newQuery(r.URL.RawQuery)
	id := r.PathValue("id")
	filters := map[string]string{"counterparty_id": id}
	lq, err := h.readScopedList(x, q, "payment-details", filters)
	if err != nil {
		return err
	}
	page, err := h.pay.ListPaymentDetails(r.Context(), x.caller(), lq.requested, id, lq.opts)
	if err != nil {
		return err
	}
	if lq.cursorErr != nil {
		return lq.cursorErr
	}
	filters["entity_id"] = page.EntityID
	writeJSON(x, http.StatusOK, list(h, "payment details retrieved", page.Page, lq.opts.Limit, lq.fh, filters))
	return nil
}
