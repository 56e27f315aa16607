package httpapi

import (
	"context"
	"net/http"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/capital"
)

// createProductOrder reserves an order and answers it 201 in the
// envelope; no money moves.
func (h *handler) createProductOrder(x *exchange, r *http.Request) error {
	return created(x, r, "product order created", func(q *capital.NewOrder) *string { return &q.EntityID }, h.capital.CreateOrder)
}

// listProductOrders lists entity_id's orders (filters status, type),
// without agreements.
func (h *handler) listProductOrders(x *exchange, r *http.Request) error {
	q := newQuery(r.URL.RawQuery)
	filters := capitalFilters(q, "status", "type")
	f := capital.OrderFilter{Status: filters["status"], Type: filters["type"]}
	return capitalPage(h, x, q, "product-orders", "product orders retrieved", filters,
		func(requested string, opts corebank.ListOptions) (*corebank.Page[capital.Order], string, error) {
			p, err := h.capital.ListOrders(r.Context(), x.caller(), requested, f, opts)
			if err != nil {
				return nil, "", err
			}
			return p.Page, p.EntityID, nil
		})
}

// getProductOrder answers an order with its agreements and capital
// account.
func (h *handler) getProductOrder(x *exchange, r *http.Request) error {
	return fetched(x, r, "product order retrieved", h.capital.GetOrder)
}

// confirmProductOrder confirms an order ({entity_id?, secondary_id?}) and
// answers it 200 in the envelope: APPROVED with its capital account, or
// as it stands when it was already.
func (h *handler) confirmProductOrder(x *exchange, r *http.Request) error {
	var req capital.Confirmation
	return moved(x, r, &req, &req.EntityID, "product order confirmed",
		func(ctx context.Context, c corebank.Caller, entity, id string) (*capital.Order, error) {
			return h.capital.Confirm(ctx, c, entity, id, req)
		})
}

// previewWithdrawal answers what a withdrawal would pay now; it changes
// nothing.
func (h *handler) previewWithdrawal(x *exchange, r *http.Request) error {
	return fetched(x, r, "withdrawal preview", h.capital.PreviewWithdrawal)
}

// withdrawProductOrder withdraws an order's fixed return capital account
// ({entity_id?}) and answers the order with it, 200 in the envelope.
func (h *handler) withdrawProductOrder(x *exchange, r *http.Request) error {
	var req entityOnly
	return moved(x, r, &req, &req.EntityID, "withdrawal initiated", h.capital.Withdraw)
}

// listCapitalTransactions lists the capital transactions of an order's
// capital account, oldest first.
func (h *handler) listCapitalTransactions(x *exchange, r *http.Request) error {
	q := newQuery(r.URL.RawQuery)
	id := r.PathValue("id")
	// The order is in the list's name, so that a cursor of one order's
	// transactions does not page another's.
	return capitalPage(h, x, q, "capital-transactions/"+id, "capital transactions retrieved", map[string]string{},
		func(requested string, opts corebank.ListOptions) (*corebank.Page[capital.Transaction], string, error) {
			p, err := h.capital.ListTransactions(r.Context(), x.caller(), requested, id, opts)
			if err != nil {
				return nil, "", err
			}
			return p.Page, p.EntityID, nil
		})
}
