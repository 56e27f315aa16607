package httpapi

import (
	"context"
	"net/http"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/capital"
)

// capitalListLimit is the page size of the capital lists when the caller
// gives none (SPEC.md: default 25).
const capitalListLimit = 25

// listProducts lists the products entity_id's entity may order (filters
// type, currency), without documents.
func (h *handler) listProducts(x *exchange, r *http.Request) error {
	return listed(x, r, listing[capital.Product]{name: "products", message: "products retrieved", limit: capitalListLimit,
		filters: func(q *query, filters map[string]string) { q.pick(filters, "type", "currency") },
		read: func(ctx context.Context, c corebank.Caller, l listRequest) (*corebank.Page[capital.Product], string, error) {
			p, err := h.capital.ListProducts(ctx, c,
				capital.ProductFilter{EntityID: l.entityID, Type: l.filters["type"], Currency: l.filters["currency"]}, l.opts)
			if err != nil {
				return nil, "", err
			}
			return p.Page, p.EntityID, nil
		}})
}

// getProduct answers a product with its documents, as entity_id's entity
// sees it.
func (h *handler) getProduct(x *exchange, r *http.Request) error {
	return fetched(x, r, enveloped(http.StatusOK, "product retrieved"), h.capital.GetProduct)
}
