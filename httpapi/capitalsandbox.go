package httpapi

import (
	"context"
	"net/http"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/capital"
)

// createProduct serves POST /sandbox/products: 201 with the bare product
// and its documents.
func (h *handler) createProduct(x *exchange, r *http.Request) error {
	return created(x, r, bare(http.StatusCreated), func(q *capital.NewProduct) *string { return &q.EntityID },
		h.capital.CreateProduct)
}

// allotReq is the body of POST /sandbox/products/{id}/allotment.
type allotReq struct {
	AllottedShares *int64 `json:"allotted_shares"`
	EntityID       string `json:"entity_id"`
}

// allotProduct makes a share offering's final allotment; 200 with the
// bare product.
func (h *handler) allotProduct(x *exchange, r *http.Request) error {
	var req allotReq
	return productWith(x, r, &req, &req.EntityID, "allotted_shares", &req.AllottedShares, h.capital.AllotProduct)
}

// priceReq is the body of POST /sandbox/products/{id}/price.
type priceReq struct {
	Price    *int64 `json:"price"`
	EntityID string `json:"entity_id"`
}

// priceProduct sets a share offering's market price per share; 200 with
// the bare product.
func (h *handler) priceProduct(x *exchange, r *http.Request) error {
	var req priceReq
	return productWith(x, r, &req, &req.EntityID, "price", &req.Price, h.capital.SetProductPrice)
}

// productWith serves a sandbox product move whose body req carries one
// required integer (at n once decoded, field by its JSON name) beside
// entity_id: 200 with the bare product run leaves.
func productWith(x *exchange, r *http.Request, req any, entity *string, field string, n **int64,
	run func(ctx context.Context, c corebank.Caller, entityID, id string, n int64) (*capital.Product, error)) error {
	return moved(x, r, bare(http.StatusOK), req, entity, func(ctx context.Context, c corebank.Caller, entity, id string) (*capital.Product, error) {
		if *n == nil {
			return nil, corebank.InvalidField(field, "is required")
		}
		return run(ctx, c, entity, id, **n)
	})
}

// unlockProduct ends a share offering's lock now; 200 with the bare
// product.
func (h *handler) unlockProduct(x *exchange, r *http.Request) error {
	var req entityOnly
	return moved(x, r, bare(http.StatusOK), &req, &req.EntityID, h.capital.UnlockProduct)
}

// deactivateProduct makes a product inactive; 200 with the bare product.
func (h *handler) deactivateProduct(x *exchange, r *http.Request) error {
	var req entityOnly
	return moved(x, r, bare(http.StatusOK), &req, &req.EntityID, h.capital.DeactivateProduct)
}
