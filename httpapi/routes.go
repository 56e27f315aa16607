package httpapi

// routes is the whole HTTP surface. Patterns are Go 1.22 ServeMux patterns;
// /sandbox/ routes are mounted only when Options.Env is sandbox. Every route
// but those in open requires a bearer API key; read-only keys may only GET.
// Response forms are documented per route in doc.go.
var routes = []route{
	// Probes (ops.go); open: no key.
	{"GET /healthz", (*handler).healthz},
	{"GET /readyz", (*handler).readyz},
	// The OpenAPI document (openapi.go) and its HTML reference (docs.go);
	// open: no key.
	{"GET /openapi.json", (*handler).openAPI},
	{"GET /docs", (*handler).docs},

	// Accounts.
	{"POST /accounts", (*handler).createAccount},
	{"GET /accounts", (*handler).listAccounts},
	{"GET /accounts/{id}", (*handler).getAccount},
	{"PATCH /accounts/{id}", (*handler).patchAccount},
	{"DELETE /accounts/{id}", (*handler).deleteAccount},
	{"GET /accounts/{id}/statements", (*handler).getStatement},

	// Account details.
	{"POST /account-details", (*handler).createDetails},
	{"GET /account-details", (*handler).listDetails},
	{"GET /account-details/{id}", (*handler).getDetails},

	// Entities and onboarding (entities.go, documents.go, onboarding.go).
	{"POST /individual-entities", (*handler).createIndividual},
	{"PATCH /individual-entities/{id}", (*handler).patchIndividual},
	{"POST /business-entities", (*handler).createBusiness},
	{"PATCH /business-entities/{id}", (*handler).patchBusiness},
	{"GET /entities", (*handler).listEntities},
	{"GET /entities/{id}", (*handler).getEntity},
	{"POST /documents", (*handler).createDocument},
	{"GET /documents/{id}", (*handler).getDocument},
	{"GET /documents/{id}/file", (*handler).downloadDocument},
	{"GET /documents/{id}/file_back", (*handler).downloadDocumentBack},
	{"POST /onboarding-submissions", (*handler).createSubmission},
	{"GET /onboarding-submissions/{id}", (*handler).getSubmission},

	// Payments (counterparties.go, paymentdetails.go, fxquotes.go,
	// transfers.go); 503 unavailable without Services.Payments.
	{"POST /counterparties", payRoute((*handler).createCounterparty)},
	{"GET /counterparties", payRoute((*handler).listCounterparties)},
	{"GET /counterparties/{id}", payRoute((*handler).getCounterparty)},
	{"PATCH /counterparties/{id}", payRoute((*handler).patchCounterparty)},
	{"POST /counterparties/{id}/deactivate", payRoute((*handler).deactivateCounterparty)},
	{"GET /counterparties/{id}/payment-details", payRoute((*handler).listCounterpartyDetails)},
	{"POST /payment-details", payRoute((*handler).createPaymentDetail)},
	{"GET /payment-details/{id}", payRoute((*handler).getPaymentDetail)},
	{"PATCH /payment-details/{id}", payRoute((*handler).patchPaymentDetail)},
	{"POST /fx-quotes", payRoute((*handler).createQuote)},
	{"GET /fx-quotes/{id}", payRoute((*handler).getQuote)},
	{"POST /transfers", payRoute((*handler).createTransfer)},
	{"GET /transfers", payRoute((*handler).listTransfers)},
	{"GET /transfers/{id}", payRoute((*handler).getTransfer)},
	{"POST /sandbox/transfers/{id}/simulate", payRoute((*handler).simulateTransfer)},
	{"POST /sandbox/fx/outage", payRoute((*handler).fxOutage)},

	// Funding sessions (fundingsessions.go); 503 unavailable without
	// Services.FundingSessions.
	{"POST /funding-sessions", sessionRoute((*handler).createFundingSession)},
	{"GET /funding-sessions", sessionRoute((*handler).listFundingSessions)},
	{"GET /funding-sessions/{id}", sessionRoute((*handler).getFundingSession)},
	{"PATCH /funding-sessions/{id}", sessionRoute((*handler).patchFundingSession)},
	{"POST /sandbox/funding-sessions/{id}/simulate", sessionRoute((*handler).simulateFundingSession)},
	// The sandbox checkout page (checkout.go): HTML; open: the token is
	// the capability.
	{"GET /sandbox/checkout/{token}", sessionRoute((*handler).checkoutPageGet)},
	{"POST /sandbox/checkout/{token}", sessionRoute((*handler).checkoutPagePost)},

	// Payment intents and intent actions (paymentintents.go,
	// intentactions.go); 503 unavailable without Services.Acquiring.
	{"POST /payment-intents", acqRoute((*handler).createPaymentIntent)},
	{"GET /payment-intents", acqRoute((*handler).listPaymentIntents)},
	{"GET /payment-intents/{id}", acqRoute((*handler).getPaymentIntent)},
	{"PATCH /payment-intents/{id}", acqRoute((*handler).patchPaymentIntent)},
	{"POST /intent-actions", acqRoute((*handler).createIntentAction)},
	{"GET /intent-actions", acqRoute((*handler).listIntentActions)},
	{"GET /intent-actions/{id}", acqRoute((*handler).getIntentAction)},
	{"POST /intent-verifications/{id}", acqRoute((*handler).verifyIntentAction)},
	{"POST /sandbox/intent-actions/{id}/simulate", acqRoute((*handler).simulateIntentAction)},
	{"GET /disputes", acqRoute((*handler).listDisputes)},
	{"GET /disputes/{id}", acqRoute((*handler).getDispute)},
	{"POST /sandbox/intent-actions/{id}/dispute", acqRoute((*handler).openDispute)},
	{"POST /sandbox/disputes/{id}/simulate", acqRoute((*handler).simulateDispute)},
	// The sandbox 3DS challenge page (challenge.go): HTML; open: the
	// token is the capability.
	{"GET /sandbox/challenge/{token}", acqRoute((*handler).challengePageGet)},
	{"POST /sandbox/challenge/{token}", acqRoute((*handler).challengePagePost)},
	// Refunds (refunds.go); 503 unavailable without Services.Acquiring.
	{"POST /refunds", acqRoute((*handler).createRefund)},
	{"GET /refunds", acqRoute((*handler).listRefunds)},
	{"GET /refunds/{id}", acqRoute((*handler).getRefund)},
	{"POST /sandbox/refunds/{id}/simulate", acqRoute((*handler).simulateRefund)},

	// Issued cards (cards.go); 503 unavailable without Services.Cards.
	{"POST /disposable-cards", cardRoute((*handler).createDisposableCard)},
	{"POST /virtual-cards", cardRoute((*handler).createVirtualCard)},
	{"GET /cards", cardRoute((*handler).listCards)},
	{"GET /cards/{id}", cardRoute((*handler).getCard)},
	{"POST /cards/{id}/freeze", cardRoute((*handler).freezeCard)},
	{"POST /cards/{id}/unfreeze", cardRoute((*handler).unfreezeCard)},
	{"POST /cards/{id}/reassign", cardRoute((*handler).reassignCard)},
	{"DELETE /cards/{id}", cardRoute((*handler).deleteCard)},
	{"GET /cards/{id}/transactions", cardRoute((*handler).listCardTransactions)},
	{"POST /sandbox/cards/{id}/authorizations", cardRoute((*handler).authorizeCard)},
	{"POST /sandbox/card-transactions/{id}/clear", cardRoute((*handler).clearCardTx)},
	{"POST /sandbox/card-transactions/{id}/reverse", cardRoute((*handler).reverseCardTx)},
	{"POST /sandbox/card-transactions/{id}/expire", cardRoute((*handler).expireCardTx)},
	{"POST /sandbox/card-transactions/{id}/increment", cardRoute((*handler).incrementCardTx)},
	{"POST /sandbox/card-transactions/{id}/refund", cardRoute((*handler).refundCardTx)},

	// Capital (capitalproducts.go, capitalorders.go, capitalportfolio.go,
	// capitalsandbox.go); 503 unavailable without Services.Capital.
	{"GET /products", capitalRoute((*handler).listProducts)},
	{"GET /products/{id}", capitalRoute((*handler).getProduct)},
	{"POST /product-orders", capitalRoute((*handler).createProductOrder)},
	{"GET /product-orders", capitalRoute((*handler).listProductOrders)},
	{"GET /product-orders/{id}", capitalRoute((*handler).getProductOrder)},
	{"POST /product-orders/{id}/confirm", capitalRoute((*handler).confirmProductOrder)},
	{"GET /product-orders/{id}/withdrawal/preview", capitalRoute((*handler).previewWithdrawal)},
	{"POST /product-orders/{id}/withdrawal", capitalRoute((*handler).withdrawProductOrder)},
	{"GET /product-orders/{id}/transactions", capitalRoute((*handler).listCapitalTransactions)},
	{"GET /capital-portfolio", capitalRoute((*handler).getCapitalPortfolio)},
	{"POST /sandbox/products", capitalRoute((*handler).createProduct)},
	{"POST /sandbox/products/{id}/allotment", capitalRoute((*handler).allotProduct)},
	{"POST /sandbox/products/{id}/unlock", capitalRoute((*handler).unlockProduct)},
	{"POST /sandbox/products/{id}/price", capitalRoute((*handler).priceProduct)},
	{"POST /sandbox/products/{id}/deactivate", capitalRoute((*handler).deactivateProduct)},

	// Webhooks and events (webhooks.go, events.go); 503 unavailable
	// without Services.Webhooks.
	{"POST /entity-webhooks", hookRoute((*handler).createWebhook)},
	{"GET /entity-webhooks", hookRoute((*handler).listWebhooks)},
	{"GET /entity-webhooks/{id}", hookRoute((*handler).getWebhook)},
	{"PATCH /entity-webhooks/{id}", hookRoute((*handler).patchWebhook)},
	{"DELETE /entity-webhooks/{id}", hookRoute((*handler).deleteWebhook)},
	{"POST /entity-webhooks/{id}/test", hookRoute((*handler).testWebhook)},
	{"POST /entity-webhooks/{id}/rotate_secret", hookRoute((*handler).rotateWebhookSecret)},
	{"GET /entity-webhooks/{id}/deliveries", hookRoute((*handler).listWebhookDeliveries)},
	{"GET /events", hookRoute((*handler).listEvents)},
	{"POST /events/{id}/redeliver", hookRoute((*handler).redeliverEvent)},

	// Sandbox simulation.
	{"GET /sandbox/clock", (*handler).getClock},
	{"POST /sandbox/clock/advance", (*handler).advanceClock},
	{"POST /sandbox/api-keys", (*handler).createAPIKey},
	{"DELETE /sandbox/api-keys/{id}", (*handler).deleteAPIKey},
	{"POST /sandbox/entities/{id}/review", (*handler).reviewEntity},
	{"POST /sandbox/account-details/{id}/activate", (*handler).activateDetails},
	{"POST /sandbox/inflows", (*handler).createInflow},

	// Sandbox workspaces (CONTRACT.md): with -workspaces, bank/workspace
	// serves them in front of this handler, which never sees them; without
	// it they reach this handler, which answers 404 (sandbox.go). Open: no
	// key is read, so that they answer 404 whatever the key; nothing else
	// may live under /sandbox/workspaces/. (In production no /sandbox/
	// route is mounted.)
	{"POST /sandbox/workspaces", (*handler).workspacesOff},
	{"DELETE /sandbox/workspaces/{id}", (*handler).workspacesOff},
}

// open are the routes served without an API key (their paths, whatever the
// method, skip authentication; another method still gets the 405), and
// without the idempotency layer, which is kept per entity. They must
// reveal nothing about any entity but to whoever holds a capability in
// the path: a pattern with a wildcard opens every path under the prefix
// before its first wildcard, so nothing else may live there.
var open = map[string]bool{
	"GET /healthz":                    true,
	"GET /readyz":                     true,
	"GET /openapi.json":               true,
	"GET /docs":                       true,
	"GET /sandbox/checkout/{token}":   true,
	"POST /sandbox/checkout/{token}":  true,
	"GET /sandbox/challenge/{token}":  true,
	"POST /sandbox/challenge/{token}": true,
	"POST /sandbox/workspaces":        true,
	"DELETE /sandbox/workspaces/{id}": true,
}
