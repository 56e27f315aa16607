package httpapi

import (
	"net/http"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/payments"
)

var errNoOutage = corebank.E(corebank.KindConflict, "fx_outage_not_simulated",
	"the exchange rate provider in use cannot simulate an outage")

// createQuote acts for the owner of account_id when one is given (a
// corridor quote; the account must lie in the tree of entity_id), else for
// entity_id (an indicative quote).
func (h *handler) createQuote(x *exchange, r *http.Request) error {
	return created(x, r, "fx quote created", func(q *payments.NewQuote) *string { return &q.EntityID }, h.pay.CreateQuote)
}

func (h *handler) getQuote(x *exchange, r *http.Request) error {
	return fetched(x, r, "fx quote retrieved", h.pay.GetQuote)
}

type outageReq struct {
	Enabled *bool `json:"enabled"`
}

type outageBody struct {
	Enabled bool `json:"enabled"`
}

func (h *handler) fxOutage(x *exchange, r *http.Request) error {
	var req outageReq
	if err := decodeJSON(x.body, &req); err != nil {
		return err
	}
	if req.Enabled == nil {
		return corebank.InvalidField("enabled", "is required: true or false")
	}
	if !h.pay.SetFXOutage(*req.Enabled) {
		return errNoOutage
	}
	writeJSON(x, http.StatusOK, &outageBody{Enabled: *req.Enabled})
	return nil
}
