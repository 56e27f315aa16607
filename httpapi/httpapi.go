package httpapi

import (
	"context"
	"github.com/corebank/corebank"
	"net/http"

	"github.com/corebank/corebank/acquiring"
	"github.com/corebank/corebank/capital"
	"github.com/corebank/corebank/cards"
	"github.com/corebank/corebank/entities"
	"github.com/corebank/corebank/funding"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/payments"
	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/webhooks"
)

// Services are the domain services the API serves. DB, Ledger and Entities
// are required; Funding may be nil, and then POST /sandbox/inflows answers
// 503 unavailable.
type Services struct {
	// DB is the store the services use; httpapi keeps its idempotency
	// records in it (buckets "httpapi.idempotency*").
	DB       storage.Backend
	Ledger   *ledger.Service
	Entities *entities.Service
	Funding  *funding.Service
	// FundingSessions serves /funding-sessions and its sandbox simulate
	// route. It may be nil: those routes stay mounted and answer 503
	// unavailable.
	FundingSessions *funding.SessionService
	// Payments serves counterparties, payment details, FX quotes and
	// transfers. It may be nil: the payment routes stay mounted and answer
	// 503 unavailable.
	Payments *payments.Service
	// Webhooks serves /entity-webhooks and /events. It may be nil: those
	// routes stay mounted and answer 503 unavailable.
	Webhooks *webhooks.Service
	// Acquiring serves payment intents, intent actions, their sandbox
	// simulate route and the sandbox 3DS challenge page. It may be nil:
	// those routes stay mounted and answer 503 unavailable.
	Acquiring *acquiring.Service
	// Cards serves the issued-card routes (/disposable-cards,
	// /virtual-cards, /cards). It may be nil: those routes stay mounted
	// and answer 503 unavailable.
	Cards *cards.Service
	// Capital serves the capital routes (/products, /product-orders,
	// /capital-portfolio and /sandbox/products). It may be nil: those
	// routes stay mounted and answer 503 unavailable.
	Capital *capital.Service
}

// New returns the REST API over svc as an http.Handler that can be mounted
// on any mux (it answers paths from the root, so mount it with
// http.StripPrefix when serving under a prefix). opt may be nil.
func New(svc Services, opt *Options) http.Handler {
	if svc.DB == nil || svc.Ledger == nil || svc.Entities == nil {
		panic("httpapi: Services.DB, Ledger and Entities are required")
	}
	h := newHandler(svc.DB, opt)
	h.led, h.ent, h.funding = svc.Ledger, svc.Entities, svc.Funding
	h.pay = svc.Payments
	h.sessions = svc.FundingSessions
	h.wh = svc.Webhooks
	h.acq = svc.Acquiring
	h.cards = svc.Cards
	h.capital = svc.Capital
	ent := svc.Entities
	h.auth = func(ctx context.Context, secret string) (corebank.Caller, error) {
		k, err := ent.AuthenticatePrincipal(ctx, secret)
		if err != nil {
			return corebank.Caller{}, err
		}
		return corebank.Caller{EntityID: k.EntityID, KeyID: k.KeyID, ReadOnly: k.ReadOnly}, nil
	}
	h.routing = sharedRouting(h.env)
	return h
}
