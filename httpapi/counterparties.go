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
// 503 unavailable (payRoute).
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
	"context"
	"errors"
	"net/http"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/payments"
)

// errCounterpartyEntity answers POST /counterparties with an entity_id
// that is unknown or outside the caller's tree, alike.
var errCounterpartyEntity = &corebank.Error{Kind: corebank.KindConflict, Code: corebank.CodeConflict,
	Message: "entity_id does not name an entity this API key may act for",
	Fields:  map[string]string{"entity_id": "is unknown or outside this API key's entities"}}

func (h *handler) createCounterparty(x *exchange, r *http.Request) error {
	return created(x, r, enveloped(http.StatusCreated, "counterparty created"),
		func(q *payments.NewCounterparty) *string { return &q.EntityID },
		func(ctx context.Context, c corebank.Caller, req payments.NewCounterparty) (*payments.Counterparty, error) {
			cp, err := h.pay.CreateCounterparty(ctx, c, req)
			if errors.Is(err, corebank.ErrEntityNotFound) {
				return nil, errCounterpartyEntity
			}
			return cp, err
		})
}

// counterpartyPagination is meta.pagination of GET /counterparties: SPEC
// gives this list has_more beside the standard fields.
type counterpartyPagination struct {
	pagination
	HasMore bool `json:"has_more"`
}

type counterpartyList struct {
	Status  string                  `json:"status"`
	Message string                  `json:"message"`
	Data    []payments.Counterparty `json:"data"`
	Meta    struct {
		Pagination     counterpartyPagination `json:"pagination"`
		FiltersApplied map[string]string      `json:"filters_applied"`
	} `json:"meta"`
}

func (h *handler) listCounterparties(x *exchange, r *http.Request) error {
	return listed(x, r, listing[payments.Counterparty]{name: "counterparties", message: "counterparties retrieved",
		filters: func(q *query, filters map[string]string) {
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
		},
		read: func(ctx context.Context, c corebank.Caller, l listRequest) (*corebank.Page[payments.Counterparty], string, error) {
			p, err := h.pay.ListCounterparties(ctx, c, payments.CounterpartyFilter{EntityID: l.entityID,
				Type: l.filters["type"], Status: l.filters["status"]}, l.opts)
			return p, "", err
		},
		form: func(_ *corebank.Page[payments.Counterparty], l *listResponse[payments.Counterparty]) any {
			out := &counterpartyList{Status: l.Status, Message: l.Message, Data: l.Data}
			out.Meta.Pagination = counterpartyPagination{pagination: l.Meta.Pagination, HasMore: l.Meta.Pagination.HasNext}
			out.Meta.FiltersApplied = l.Meta.FiltersApplied
			return out
		}})
}

func (h *handler) getCounterparty(x *exchange, r *http.Request) error {
	return fetched(x, r, enveloped(http.StatusOK, "counterparty retrieved"), h.pay.GetCounterparty)
}

func (h *handler) patchCounterparty(x *exchange, r *http.Request) error {
	var req payments.CounterpartyPatch
	return moved(x, r, enveloped(http.StatusOK, "counterparty updated"), &req, &req.EntityID,
		func(ctx context.Context, c corebank.Caller, entity, id string) (*payments.Counterparty, error) {
			return h.pay.UpdateCounterparty(ctx, c, entity, id, req)
		})
}

func (h *handler) deactivateCounterparty(x *exchange, r *http.Request) error {
	var req entityOnly
	return moved(x, r, enveloped(http.StatusOK, "counterparty deactivated"), &req, &req.EntityID, h.pay.DeactivateCounterparty)
}

// listCounterpartyDetails lists for the counterparty's owner, which
// filters_applied names.
func (h *handler) listCounterpartyDetails(x *exchange, r *http.Request) error {
	id := r.PathValue("id")
	return listed(x, r, listing[payments.PaymentDetail]{name: "payment-details", message: "payment details retrieved",
		filters: func(_ *query, filters map[string]string) { filters["counterparty_id"] = id },
		read: func(ctx context.Context, c corebank.Caller, l listRequest) (*corebank.Page[payments.PaymentDetail], string, error) {
			p, err := h.pay.ListPaymentDetails(ctx, c, payments.PaymentDetailFilter{EntityID: l.entityID, CounterpartyID: id}, l.opts)
			return p.Page, p.EntityID, err
		}})
}
