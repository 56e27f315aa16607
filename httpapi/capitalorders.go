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
	return created(x, r, enveloped(http.StatusCreated, "product order created"),
		func(q *capital.NewOrder) *string { return &q.EntityID }, h.capital.CreateOrder)
}

// listProductOrders lists entity_id's orders (filters status, type),
// without agreements.
func (h *handler) listProductOrders(x *exchange, r *http.Request) error {
	return listed(x, r, listing[capital.Order]{name: "product-orders", message: "product orders retrieved", limit: capitalListLimit,
		filters: func(q *query, filters map[string]string) { q.pick(filters, "status", "type") },
		read: func(ctx context.Context, c corebank.Caller, l listRequest) (*corebank.Page[capital.Order], string, error) {
			p, err := h.capital.ListOrders(ctx, c,
				capital.OrderFilter{EntityID: l.entityID, Status: l.filters["status"], Type: l.filters["type"]}, l.opts)
			if err != nil {
				return nil, "", err
			}
			return p.Page, p.EntityID, nil
		}})
}

// getProductOrder answers an order with its agreements and capital
// account.
func (h *handler) getProductOrder(x *exchange, r *http.Request) error {
	return fetched(x, r, enveloped(http.StatusOK, "product order retrieved"), h.capital.GetOrder)
}

// confirmProductOrder confirms an order ({entity_id?, secondary_id?}) and
// answers it 200 in the envelope: APPROVED with its capital account, or
// as it stands when it was already.
func (h *handler) confirmProductOrder(x *exchange, r *http.Request) error {
	var req capital.Confirmation
	return moved(x, r, enveloped(http.StatusOK, "product order confirmed"), &req, &req.EntityID,
		func(ctx context.Context, c corebank.Caller, entity, id string) (*capital.Order, error) {
			return h.capital.ConfirmOrder(ctx, c, entity, id, req)
		})
}

// previewWithdrawal answers what a withdrawal would pay now; it changes
// nothing.
func (h *handler) previewWithdrawal(x *exchange, r *http.Request) error {
	return fetched(x, r, enveloped(http.StatusOK, "withdrawal preview"), h.capital.PreviewWithdrawal)
}

// withdrawProductOrder withdraws an order's fixed return capital account
// ({entity_id?}) and answers the order with it, 200 in the envelope.
func (h *handler) withdrawProductOrder(x *exchange, r *http.Request) error {
	var req entityOnly
	return moved(x, r, enveloped(http.StatusOK, "withdrawal initiated"), &req, &req.EntityID, h.capital.WithdrawOrder)
}

// listCapitalTransactions lists the capital transactions of an order's
// capital account, oldest first.
func (h *handler) listCapitalTransactions(x *exchange, r *http.Request) error {
	id := r.PathValue("id")
	// The order is in the list's name, so that a cursor of one order's
	// transactions does not page another's.
	return listed(x, r, listing[capital.Transaction]{name: "capital-transactions/" + id,
		message: "capital transactions retrieved", limit: capitalListLimit,
		read: func(ctx context.Context, c corebank.Caller, l listRequest) (*corebank.Page[capital.Transaction], string, error) {
			p, err := h.capital.ListTransactions(ctx, c, capital.TransactionFilter{EntityID: l.entityID, OrderID: id}, l.opts)
			if err != nil {
				return nil, "", err
			}
			return p.Page, p.EntityID, nil
		}})
}
