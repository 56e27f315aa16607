package httpapi

import (
	"context"
	"net/http"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/capital"
)

// getCapitalPortfolio answers entity_id's open holdings and their totals
// per currency (filter currency), accrued at the time of the request, in
// the envelope.
func (h *handler) getCapitalPortfolio(x *exchange, r *http.Request) error {
	var f capital.PortfolioFilter
	return fetchedWith(x, r, enveloped(http.StatusOK, "capital portfolio retrieved"),
		func(q *query) { f.Currency = q.str("currency") },
		func(ctx context.Context, c corebank.Caller, entity, _ string) (*capital.Portfolio, error) {
			f.EntityID = entity
			return h.capital.GetPortfolio(ctx, c, f)
		})
}
