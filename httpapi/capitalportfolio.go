package httpapi

import (
	"net/http"

	"github.com/corebank/corebank/capital"
)

// getCapitalPortfolio answers entity_id's open holdings and their totals
// per currency (filter currency), accrued at the time of the request, in
// the envelope.
func (h *handler) getCapitalPortfolio(x *exchange, r *http.Request) error {
	q := newQuery(r.URL.RawQuery)
	entity := q.str("entity_id")
	f := capital.PortfolioFilter{Currency: q.str("currency")}
	if err := q.err(); err != nil {
		return err
	}
	p, err := h.capital.Portfolio(r.Context(), x.caller(), entity, f)
	if err != nil {
		return err
	}
	return ok(x, http.StatusOK, "capital portfolio retrieved", p)
}
