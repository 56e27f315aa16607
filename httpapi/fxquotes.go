package httpapi

import (
	"context"
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
	return created(x, r, enveloped(http.StatusCreated, "fx quote created"), func(q *payments.NewQuote) *string { return &q.EntityID }, h.pay.CreateQuote)
}

func (h *handler) getQuote(x *exchange, r *http.Request) error {
	return fetched(x, r, enveloped(http.StatusOK, "fx quote retrieved"), h.pay.GetQuote)
}

type outageReq struct {
	Enabled *bool `json:"enabled"`
}

type outageBody struct {
	Enabled bool `json:"enabled"`
}

// fxOutage switches the sandbox FX provider's simulated outage; it
// answers {enabled} bare and reads no entity_id.
func (h *handler) fxOutage(x *exchange, r *http.Request) error {
	var req outageReq
	return moved(x, r, bare(http.StatusOK), &req, nil,
		func(context.Context, corebank.Caller, string, string) (*outageBody, error) {
			if req.Enabled == nil {
				return nil, corebank.InvalidField("enabled", "is required: true or false")
			}
			if !h.pay.SetFXOutage(*req.Enabled) {
				return nil, errNoOutage
			}
			return &outageBody{Enabled: *req.Enabled}, nil
		})
}
