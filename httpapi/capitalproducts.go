package httpapi

import (
	"net/http"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/capital"
)

var errNoCapital = corebank.E(corebank.KindUnavailable, codeUnavailable, "capital products are not configured on this server")

// capitalRoute is a capital route: 503 unavailable without
// Services.Capital.
func capitalRoute(fn handlerFunc) handlerFunc {
	return needs(func(h *handler) bool { return h.capital != nil }, errNoCapital, fn)
}

// capitalListLimit is the page size of the capital lists when the caller
// gives none (SPEC.md: default 25).
const capitalListLimit = 25

// capitalPage answers one page of a capital list in the list form: the
// list's own filters (already read from q into filters), then entity_id,
// limit and the cursors; read lists for the entity asked for and names
// the entity it listed.
func capitalPage[T any](h *handler, x *exchange, q *query, name, message string, filters map[string]string,
	read func(requested string, opts corebank.ListOptions) (*corebank.Page[T], string, error)) error {
	l, err := h.readScopedListOf(x, q, name, filters, capitalListLimit)
	if err != nil {
		return err
	}
	page, entity, err := read(l.requested, l.opts)
	if err != nil {
		return err
	}
	if l.cursorErr != nil {
		return l.cursorErr
	}
	filters["entity_id"] = entity
	writeJSON(x, http.StatusOK, list(h, message, page, l.opts.Limit, l.fh, filters))
	return nil
}

// capitalFilters reads a capital list's own filters, names, from q: those
// given, by name (the service checks their values).
func capitalFilters(q *query, names ...string) map[string]string {
	filters := map[string]string{}
	for _, n := range names {
		if v := q.str(n); v != "" {
			filters[n] = v
		}
	}
	return filters
}

// listProducts lists the products entity_id's entity may order (filters
// type, currency), without documents.
func (h *handler) listProducts(x *exchange, r *http.Request) error {
	q := newQuery(r.URL.RawQuery)
	filters := capitalFilters(q, "type", "currency")
	f := capital.ProductFilter{Type: filters["type"], Currency: filters["currency"]}
	return capitalPage(h, x, q, "products", "products retrieved", filters,
		func(requested string, opts corebank.ListOptions) (*corebank.Page[capital.Product], string, error) {
			p, err := h.capital.ListProducts(r.Context(), x.caller(), requested, f, opts)
			if err != nil {
				return nil, "", err
			}
			return p.Page, p.EntityID, nil
		})
}

// getProduct answers a product with its documents, as entity_id's entity
// sees it.
func (h *handler) getProduct(x *exchange, r *http.Request) error {
	return fetched(x, r, "product retrieved", h.capital.GetProduct)
}
