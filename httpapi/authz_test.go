package httpapi_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/corebank/corebank/httpapi"
	"github.com/google/go-cmp/cmp"
)

// The authorization table (issue 10, "Must show"): for every route in the
// route table, a key of tree B naming an object of sibling tree A, in the
// path, the query or the body, gets exactly the answer a missing object of
// that kind gets (404, or 409 where CONTRACT.md says so), and an entity_id
// naming A's entity gets the entity-not-found answer whatever the objects
// named beside it; a read-only key gets 403 on every route but GET and
// changes nothing; and the owner's own request, the one the cases vary,
// succeeds (so a 404 above is about scope, not a broken fixture).

// authzReq is one request of a route: its path with the query, and its JSON
// body (nil: none).
type authzReq struct {
	path string
	body map[string]any
}

// authzSlot is one place where a route's request names an object.
type authzSlot struct {
	// name says where: "path.id", "query.account_id", "body.counterparty_id".
	name string
	kind string
	// want is the status a foreign and a missing object both get: 0 means
	// 404; authzAsMissing means whatever a missing one gets (a 4xx), for an ID
	// the route compares with another object rather than looking it up.
	want int
	why  string // why want is not 404
	// build makes the request when the route's own does not name the
	// slot (nil: the route's build).
	build func(s *authzSide) authzReq
}

const authzAsMissing = -1

// authzRoute is the authorization cases of one route pattern.
type authzRoute struct {
	// build makes a request of s's key on s's objects that would succeed
	// but for the case's change; owner, when set, makes the one the owner
	// sends (when build's is meant to clash with A's state, see POST
	// /counterparties).
	build, owner func(s *authzSide) authzReq
	slots        []authzSlot
	// bare, when set, is build without its optional objects, so that the
	// entity_id cases also try entity_id alone.
	bare func(s *authzSide) authzReq
	// entity lists where the route takes entity_id ("query", "body");
	// entityKind is the kind it names in the cases (default kEntity) and
	// entityWant the status of a foreign or unknown one (default 404).
	entity     []string
	entityKind string
	entityWant int
	// noObject says why a route has no foreign case: it names no object
	// and takes no entity_id.
	noObject string
	// last runs the owner's request after the others', because it takes
	// away something they need.
	last bool
}

var (
	entQuery = []string{"query"}
	entBody  = []string{"body"}
	entBoth  = []string{"query", "body"}
)

var authzSeq atomic.Int64

// fresh is a name no earlier request used.
func authzFresh(prefix string) string { return fmt.Sprintf("%s%d", prefix, authzSeq.Add(1)) }

// get is a build for a body-less request of path, with %s replaced by the
// IDs of kinds.
func authzGet(path string, kinds ...string) func(s *authzSide) authzReq {
	return func(s *authzSide) authzReq {
		args := make([]any, len(kinds))
		for i, k := range kinds {
			args[i] = s.ids[k]
		}
		return authzReq{path: fmt.Sprintf(path, args...)}
	}
}

// send is get with a body.
func authzSend(path string, body func(s *authzSide) map[string]any, kinds ...string) func(s *authzSide) authzReq {
	return func(s *authzSide) authzReq {
		r := authzGet(path, kinds...)(s)
		r.body = body(s)
		return r
	}
}

func authzFixed(m map[string]any) func(*authzSide) map[string]any {
	return func(*authzSide) map[string]any { return maps.Clone(m) }
}

func authzPathID(kind string) authzSlot { return authzSlot{name: "path.id", kind: kind} }

// authzRoutes is the case table, by route pattern. Every pattern of the
// route table must have an entry (TestAuthzCoversEveryRoute).
func authzRoutes(e *hookEnv) map[string]authzRoute {
	transfer := func(s *authzSide) map[string]any {
		b := transferBody(s.ids[kAccount], s.ids[kPayment], authzFresh("authz-"), 100)
		b["counterparty_id"] = s.ids[kCounterparty]
		return b
	}
	fxTransfer := func(s *authzSide) authzReq {
		return authzReq{path: "/transfers", body: map[string]any{"account_id": s.ids[kAccount],
			"payment_detail_id": s.ids[kEURDetail], "fx_quote_id": s.ids[kQuote], "amount": authzQuoteTo,
			"currency": "EUR", "payment_type": "bank-transfer", "narration": "authz fx",
			"unique_reference": authzFresh("authz-fx-")}}
	}
	child := func(body func(string) map[string]any) func(s *authzSide) map[string]any {
		return func(s *authzSide) map[string]any {
			b := body(authzFresh("Authz "))
			b["parent_entity"] = s.ids[kEntity]
			return b
		}
	}
	return map[string]authzRoute{
		"GET /healthz":      {build: authzGet("/healthz"), noObject: "a probe needing no key; it names no object and no entity"},
		"GET /readyz":       {build: authzGet("/readyz"), noObject: "a probe needing no key; it names no object and no entity"},
		"GET /openapi.json": {build: authzGet("/openapi.json"), noObject: "the API's document, needing no key; it names no object and no entity"},
		"GET /docs":         {build: authzGet("/docs"), noObject: "the document's HTML reference, needing no key; it names no object and no entity"},

		"POST /accounts": {build: authzSend("/accounts", authzFixed(map[string]any{"type": "checking", "currency": "EUR",
			"display_name": "Authz EUR"})), entity: entBody},
		"GET /accounts":      {build: authzGet("/accounts"), entity: entQuery},
		"GET /accounts/{id}": {build: authzGet("/accounts/%s", kAccount), slots: []authzSlot{authzPathID(kAccount)}, entity: entQuery},
		"PATCH /accounts/{id}": {build: authzSend("/accounts/%s", authzFixed(map[string]any{"display_name": "Renamed"}), kAccount),
			slots: []authzSlot{authzPathID(kAccount)}, entity: entBody},
		"DELETE /accounts/{id}": {build: authzGet("/accounts/%s", kSpareAccount), slots: []authzSlot{authzPathID(kSpareAccount)}, entity: entBoth},
		"GET /accounts/{id}/statements": {build: authzGet("/accounts/%s/statements?year=2026&month=3", kAccount),
			slots: []authzSlot{authzPathID(kAccount)}, entity: entQuery},

		"POST /account-details": {build: authzSend("/account-details", func(s *authzSide) map[string]any {
			return map[string]any{"account_id": s.ids[kAccount]}
		}), slots: []authzSlot{{name: "body.account_id", kind: kAccount}}, entity: entBody},
		"GET /account-details": {build: authzGet("/account-details?account_id=%s", kAccount), bare: authzGet("/account-details"),
			slots: []authzSlot{{name: "query.account_id", kind: kAccount}}, entity: entQuery},
		"GET /account-details/{id}": {build: authzGet("/account-details/%s", kDetails), slots: []authzSlot{authzPathID(kDetails)}, entity: entQuery},

		"POST /individual-entities": {build: authzSend("/individual-entities", child(individual)),
			slots: []authzSlot{{name: "body.parent_entity", kind: kEntity}}},
		"PATCH /individual-entities/{id}": {build: authzSend("/individual-entities/%s", authzFixed(map[string]any{"name": "Renamed"}), kReady),
			slots: []authzSlot{authzPathID(kReady)}, entity: entBoth},
		"POST /business-entities": {build: authzSend("/business-entities", child(business)),
			slots: []authzSlot{{name: "body.parent_entity", kind: kEntity}}},
		"PATCH /business-entities/{id}": {build: authzSend("/business-entities/%s",
			authzFixed(map[string]any{"business": map[string]any{"industry": "fintech"}}), kEntity),
			slots: []authzSlot{authzPathID(kEntity)}, entity: entBoth},
		"GET /entities": {build: authzGet("/entities?parent_entity=%s", kEntity), bare: authzGet("/entities"),
			slots:  []authzSlot{{name: "query.parent_entity", kind: kEntity}},
			entity: entQuery},
		"GET /entities/{id}": {build: authzGet("/entities/%s", kEntity), slots: []authzSlot{authzPathID(kEntity)}, entity: entQuery},
		"POST /documents": {build: authzSend("/documents", func(s *authzSide) map[string]any {
			d := doc(s.ids[kReady], "identity", pngBytes, "image/png")
			d["link_to_identity"] = map[string]any{"person_id": s.ids[kPerson]}
			return d
		}), slots: []authzSlot{{name: "body.link_to_identity.person_id", kind: kPerson, want: authzAsMissing,
			why: "checked against the persons of entity_id's entity, which is B's own"}},
			entity: entBody, entityKind: kReady},
		"GET /documents/{id}":           {build: authzGet("/documents/%s", kDocument), slots: []authzSlot{authzPathID(kDocument)}, entity: entQuery},
		"GET /documents/{id}/file":      {build: authzGet("/documents/%s/file", kDocument), slots: []authzSlot{authzPathID(kDocument)}, entity: entQuery},
		"GET /documents/{id}/file_back": {build: authzGet("/documents/%s/file_back", kDocument), slots: []authzSlot{authzPathID(kDocument)}, entity: entQuery},
		"POST /onboarding-submissions": {build: authzSend("/onboarding-submissions", func(s *authzSide) map[string]any {
			return map[string]any{"entity_id": s.ids[kReady]}
		}), entity: entBody, entityKind: kReady},
		"GET /onboarding-submissions/{id}": {build: authzGet("/onboarding-submissions/%s", kSubmission),
			slots: []authzSlot{authzPathID(kSubmission)}, entity: entQuery},

		// B's body duplicates A's counterparty: naming A's entity it must
		// still get the 409 of an unknown entity_id, never A's 422
		// duplicate (CONTRACT.md "Entity scoping").
		"POST /counterparties": {build: authzSend("/counterparties", authzFixed(cpBody("Ada", "Lovelace"))),
			owner: func(*authzSide) authzReq {
				return authzReq{path: "/counterparties", body: cpBody(authzFresh("Grace"), "Hopper")}
			},
			entity: entBoth, entityWant: http.StatusConflict},
		"GET /counterparties":      {build: authzGet("/counterparties"), entity: entQuery},
		"GET /counterparties/{id}": {build: authzGet("/counterparties/%s", kCounterparty), slots: []authzSlot{authzPathID(kCounterparty)}, entity: entQuery},
		"PATCH /counterparties/{id}": {build: authzSend("/counterparties/%s", authzFixed(map[string]any{"nickname": "Renamed"}), kCounterparty),
			slots: []authzSlot{authzPathID(kCounterparty)}, entity: entBoth},
		"POST /counterparties/{id}/deactivate": {build: authzGet("/counterparties/%s/deactivate", kCounterparty),
			slots: []authzSlot{authzPathID(kCounterparty)}, entity: entBoth, last: true},
		"GET /counterparties/{id}/payment-details": {build: authzGet("/counterparties/%s/payment-details", kCounterparty),
			slots: []authzSlot{authzPathID(kCounterparty)}, entity: entQuery},
		"POST /payment-details": {build: authzSend("/payment-details", func(s *authzSide) map[string]any {
			return achBody(s.ids[kCounterparty])
		}), slots: []authzSlot{{name: "body.counterparty_id", kind: kCounterparty}}, entity: entBoth},
		"GET /payment-details/{id}": {build: authzGet("/payment-details/%s", kPayment), slots: []authzSlot{authzPathID(kPayment)}, entity: entQuery},
		"PATCH /payment-details/{id}": {build: authzSend("/payment-details/%s", func(s *authzSide) map[string]any {
			return map[string]any{"counterparty_id": s.ids[kCounterparty], "bank_name": "Renamed Bank"}
		}, kPayment), slots: []authzSlot{authzPathID(kPayment), {name: "body.counterparty_id", kind: kCounterparty}}, entity: entBoth},
		"POST /fx-quotes": {build: authzSend("/fx-quotes", func(s *authzSide) map[string]any { return authzQuoteBody(s.ids[kAccount]) }),
			bare:  authzSend("/fx-quotes", func(*authzSide) map[string]any { return authzQuoteBody("") }),
			slots: []authzSlot{{name: "body.account_id", kind: kAccount}}, entity: entBoth},
		"GET /fx-quotes/{id}": {build: authzGet("/fx-quotes/%s", kQuote), slots: []authzSlot{authzPathID(kQuote)}, entity: entQuery},
		"POST /transfers": {build: authzSend("/transfers", transfer), slots: []authzSlot{
			{name: "body.account_id", kind: kAccount},
			{name: "body.payment_detail_id", kind: kPayment},
			{name: "body.counterparty_id", kind: kCounterparty, want: authzAsMissing,
				why: "only compared with the payment detail's counterparty, never looked up"},
			{name: "body.fx_quote_id", kind: kQuote, build: fxTransfer},
		}, entity: entBoth},
		"GET /transfers": {build: authzGet("/transfers?account_id=%s", kAccount), bare: authzGet("/transfers"),
			slots: []authzSlot{{name: "query.account_id", kind: kAccount}}, entity: entQuery},
		"GET /transfers/{id}": {build: authzGet("/transfers/%s", kTransfer), slots: []authzSlot{authzPathID(kTransfer)}, entity: entQuery},
		"POST /sandbox/transfers/{id}/simulate": {build: authzSend("/sandbox/transfers/%s/simulate",
			authzFixed(map[string]any{"outcome": "processing"}), kTransfer), slots: []authzSlot{authzPathID(kTransfer)}, entity: entBoth},
		"POST /sandbox/fx/outage": {build: authzSend("/sandbox/fx/outage", authzFixed(map[string]any{"enabled": false})),
			noObject: "switches the server's sandbox FX provider for everyone; it names no object and no entity"},

		"POST /funding-sessions": {build: authzSend("/funding-sessions", func(s *authzSide) map[string]any {
			return sessionBody(s.ids[kAccount], authzFresh("authz-fs-"))
		}), slots: []authzSlot{{name: "body.account_id", kind: kAccount}}, entity: entBoth},
		"GET /funding-sessions": {build: authzGet("/funding-sessions?account_id=%s", kAccount), bare: authzGet("/funding-sessions"),
			slots: []authzSlot{{name: "query.account_id", kind: kAccount}}, entity: entQuery},
		"GET /funding-sessions/{id}": {build: authzGet("/funding-sessions/%s", kSession), slots: []authzSlot{authzPathID(kSession)}, entity: entQuery},
		"PATCH /funding-sessions/{id}": {build: authzGet("/funding-sessions/%s", kETransfer),
			slots: []authzSlot{authzPathID(kETransfer)}, entity: entBoth, last: true},
		"POST /sandbox/funding-sessions/{id}/simulate": {build: authzSend("/sandbox/funding-sessions/%s/simulate",
			authzFixed(map[string]any{"outcome": "processing"}), kSession), slots: []authzSlot{authzPathID(kSession)}, entity: entBoth},
		"GET /sandbox/checkout/{token}": {build: func(s *authzSide) authzReq { return authzReq{path: checkoutPath(e.env, s)} },
			noObject: "the checkout page needs no key: the token in its path is the capability, and names no entity"},
		// Its success is a form from the page (checkout_test.go).
		"POST /sandbox/checkout/{token}": {build: func(s *authzSide) authzReq { return authzReq{path: checkoutPath(e.env, s)} },
			noObject: "the checkout form needs no key: the token in its path is the capability, and names no entity"},

		"POST /payment-intents": {build: authzSend("/payment-intents", func(s *authzSide) map[string]any {
			return intentBody(s.ids[kAccount], authzFresh("authz-pi-"), 100)
		}), slots: []authzSlot{{name: "body.account_id", kind: kAccount}}, entity: entBoth},
		"GET /payment-intents": {build: authzGet("/payment-intents?account_id=%s", kAccount), bare: authzGet("/payment-intents"),
			slots: []authzSlot{{name: "query.account_id", kind: kAccount}}, entity: entQuery},
		"GET /payment-intents/{id}": {build: authzGet("/payment-intents/%s", kIntent), slots: []authzSlot{authzPathID(kIntent)}, entity: entQuery},
		"PATCH /payment-intents/{id}": {build: authzSend("/payment-intents/%s", authzFixed(map[string]any{"action": "cancel", "reason": "authz"}), kIntent),
			slots: []authzSlot{authzPathID(kIntent)}, entity: entBoth, last: true},
		"POST /intent-actions": {build: authzSend("/intent-actions", func(s *authzSide) map[string]any {
			return map[string]any{"payment_intent_id": s.ids[kOpenIntent], "intent_action": walletAction()}
		}), slots: []authzSlot{{name: "body.payment_intent_id", kind: kOpenIntent}}, entity: entBoth, last: true},
		"GET /intent-actions": {build: authzGet("/intent-actions?account_id=%s", kAccount), bare: authzGet("/intent-actions"),
			slots: []authzSlot{{name: "query.account_id", kind: kAccount}}, entity: entQuery},
		"GET /intent-actions/{id}":        {build: authzGet("/intent-actions/%s", kAction), slots: []authzSlot{authzPathID(kAction)}, entity: entQuery},
		"POST /intent-verifications/{id}": {build: authzGet("/intent-verifications/%s", kAction), slots: []authzSlot{authzPathID(kAction)}, entity: entBoth},
		"POST /sandbox/intent-actions/{id}/simulate": {build: authzSend("/sandbox/intent-actions/%s/simulate",
			authzFixed(map[string]any{"outcome": "completed"}), kAction), slots: []authzSlot{authzPathID(kAction)}, entity: entBoth},
		"GET /disputes": {build: authzGet("/disputes?account_id=%s", kAccount), bare: authzGet("/disputes"),
			slots: []authzSlot{{name: "query.account_id", kind: kAccount}}, entity: entQuery},
		"GET /disputes/{id}": {build: authzGet("/disputes/%s", kDispute), slots: []authzSlot{authzPathID(kDispute)}, entity: entQuery},
		"POST /sandbox/intent-actions/{id}/dispute": {build: authzSend("/sandbox/intent-actions/%s/dispute",
			authzFixed(map[string]any{"amount": 100, "reason": "fraudulent"}), kDisputable),
			slots: []authzSlot{authzPathID(kDisputable)}, entity: entBoth, last: true},
		"POST /sandbox/disputes/{id}/simulate": {build: authzSend("/sandbox/disputes/%s/simulate",
			authzFixed(map[string]any{"outcome": "lost"}), kDispute), slots: []authzSlot{authzPathID(kDispute)}, entity: entBoth},
		"POST /refunds": {build: authzSend("/refunds", func(s *authzSide) map[string]any {
			return refundBody(s.ids[kAction], authzFresh("authz-refund-"), 1)
		}), slots: []authzSlot{{name: "body.payment_intent_action_id", kind: kAction}}, entity: entBoth},
		"GET /refunds": {build: authzGet("/refunds?account_id=%s", kAccount), bare: authzGet("/refunds"),
			slots: []authzSlot{{name: "query.account_id", kind: kAccount}}, entity: entQuery},
		"GET /refunds/{id}": {build: authzGet("/refunds/%s", kRefund), slots: []authzSlot{authzPathID(kRefund)}, entity: entQuery},
		"POST /sandbox/refunds/{id}/simulate": {build: authzSend("/sandbox/refunds/%s/simulate",
			authzFixed(map[string]any{"outcome": "successful"}), kRefund), slots: []authzSlot{authzPathID(kRefund)}, entity: entBoth},
		"POST /disposable-cards": {build: authzSend("/disposable-cards", func(s *authzSide) map[string]any { return cardBody(s.ids[kAccount]) }),
			slots: []authzSlot{{name: "body.account_id", kind: kAccount}}, entity: entBoth},
		"POST /virtual-cards": {build: authzSend("/virtual-cards", func(s *authzSide) map[string]any { return cardBody(s.ids[kAccount]) }),
			slots: []authzSlot{{name: "body.account_id", kind: kAccount}}, entity: entBoth},
		"GET /cards": {build: authzGet("/cards?account_id=%s", kAccount), bare: authzGet("/cards"),
			slots: []authzSlot{{name: "query.account_id", kind: kAccount}}, entity: entQuery},
		"GET /cards/{id}":              {build: authzGet("/cards/%s", kCard), slots: []authzSlot{authzPathID(kCard)}, entity: entQuery},
		"GET /cards/{id}/transactions": {build: authzGet("/cards/%s/transactions", kCard), slots: []authzSlot{authzPathID(kCard)}, entity: entQuery},
		"POST /cards/{id}/freeze":      {build: authzGet("/cards/%s/freeze", kCard), slots: []authzSlot{authzPathID(kCard)}, entity: entBoth},
		"POST /cards/{id}/unfreeze":    {build: authzGet("/cards/%s/unfreeze", kCard), slots: []authzSlot{authzPathID(kCard)}, entity: entBoth},
		"POST /cards/{id}/reassign": {build: authzSend("/cards/%s/reassign", func(s *authzSide) map[string]any {
			return map[string]any{"account_id": s.ids[kAccount]}
		}, kCard), slots: []authzSlot{authzPathID(kCard), {name: "body.account_id", kind: kAccount}}, entity: entBoth},
		"POST /sandbox/cards/{id}/authorizations": {build: authzSend("/sandbox/cards/%s/authorizations",
			authzFixed(map[string]any{"amount": 1, "mcc": 5812, "merchant_name": "Cafe"}), kCard),
			slots: []authzSlot{authzPathID(kCard)}, entity: entBoth},
		"POST /sandbox/card-transactions/{id}/clear": {build: authzSend("/sandbox/card-transactions/%s/clear",
			authzFixed(map[string]any{}), kCardClear), slots: []authzSlot{authzPathID(kCardClear)}, entity: entBoth},
		"POST /sandbox/card-transactions/{id}/reverse": {build: authzSend("/sandbox/card-transactions/%s/reverse",
			authzFixed(map[string]any{"amount": 1}), kCardAuth), slots: []authzSlot{authzPathID(kCardAuth)}, entity: entBoth},
		"POST /sandbox/card-transactions/{id}/expire": {build: authzSend("/sandbox/card-transactions/%s/expire",
			authzFixed(map[string]any{}), kCardExpire), slots: []authzSlot{authzPathID(kCardExpire)}, entity: entBoth},
		"POST /sandbox/card-transactions/{id}/increment": {build: authzSend("/sandbox/card-transactions/%s/increment",
			authzFixed(map[string]any{"amount": 1}), kCardAuth), slots: []authzSlot{authzPathID(kCardAuth)}, entity: entBoth},
		"POST /sandbox/card-transactions/{id}/refund": {build: authzSend("/sandbox/card-transactions/%s/refund",
			authzFixed(map[string]any{"amount": 1}), kCardSettled), slots: []authzSlot{authzPathID(kCardSettled)}, entity: entBoth},
		"DELETE /cards/{id}": {build: authzGet("/cards/%s", kCard), slots: []authzSlot{authzPathID(kCard)}, entity: entBoth, last: true},
		"GET /sandbox/challenge/{token}": {build: authzGet("/sandbox/challenge/%s", kChallenge),
			noObject: "the challenge page needs no key: the token in its path is the capability, and names no entity"},
		// Its success is a form from the page (challenge_test.go).
		"POST /sandbox/challenge/{token}": {build: authzGet("/sandbox/challenge/%s", kChallenge),
			noObject: "the challenge form needs no key: the token in its path is the capability, and names no entity"},

		"GET /products": {build: authzGet("/products?currency=USD"), entity: entQuery},
		// The owner's entity sees its own product; B naming A's must get
		// the 404 of a missing one.
		"GET /products/{id}": {build: authzGet("/products/%s", kProduct), slots: []authzSlot{authzPathID(kProduct)}, entity: entQuery},
		"POST /product-orders": {build: authzSend("/product-orders", func(s *authzSide) map[string]any {
			return authzOrderBody(s.ids[kProduct], s.ids[kAccount])
		}), slots: []authzSlot{{name: "body.product_id", kind: kProduct}, {name: "body.account_id", kind: kAccount}}, entity: entBoth},
		"GET /product-orders":      {build: authzGet("/product-orders?type=FIXED_RETURN"), entity: entQuery},
		"GET /product-orders/{id}": {build: authzGet("/product-orders/%s", kOrder), slots: []authzSlot{authzPathID(kOrder)}, entity: entQuery},
		"POST /product-orders/{id}/confirm": {build: authzSend("/product-orders/%s/confirm",
			authzFixed(map[string]any{"secondary_id": "authz"}), kOpenOrder), slots: []authzSlot{authzPathID(kOpenOrder)}, entity: entBoth},
		"GET /product-orders/{id}/withdrawal/preview": {build: authzGet("/product-orders/%s/withdrawal/preview", kOrder),
			slots: []authzSlot{authzPathID(kOrder)}, entity: entQuery},
		"POST /product-orders/{id}/withdrawal": {build: authzGet("/product-orders/%s/withdrawal", kOrder),
			slots: []authzSlot{authzPathID(kOrder)}, entity: entBoth, last: true},
		"GET /product-orders/{id}/transactions": {build: authzGet("/product-orders/%s/transactions", kOrder),
			slots: []authzSlot{authzPathID(kOrder)}, entity: entQuery},
		"GET /capital-portfolio": {build: authzGet("/capital-portfolio?currency=USD"), entity: entQuery},
		"POST /sandbox/products": {build: authzSend("/sandbox/products", func(*authzSide) map[string]any {
			return authzDeposit(authzFresh("Authz product "))
		}), entity: entBoth},
		"POST /sandbox/products/{id}/allotment": {build: authzSend("/sandbox/products/%s/allotment",
			authzFixed(map[string]any{"allotted_shares": 5}), kShareProduct), slots: []authzSlot{authzPathID(kShareProduct)},
			entity: entBoth, last: true},
		"POST /sandbox/products/{id}/unlock": {build: authzGet("/sandbox/products/%s/unlock", kShareProduct),
			slots: []authzSlot{authzPathID(kShareProduct)}, entity: entBoth, last: true},
		"POST /sandbox/products/{id}/price": {build: authzSend("/sandbox/products/%s/price",
			authzFixed(map[string]any{"price": 120}), kShareProduct), slots: []authzSlot{authzPathID(kShareProduct)}, entity: entBoth},
		"POST /sandbox/products/{id}/deactivate": {build: authzGet("/sandbox/products/%s/deactivate", kSpareProduct),
			slots: []authzSlot{authzPathID(kSpareProduct)}, entity: entBoth, last: true},

		"POST /entity-webhooks":     {build: authzSend("/entity-webhooks", func(*authzSide) map[string]any { return e.hookBody() }), entity: entBody},
		"GET /entity-webhooks":      {build: authzGet("/entity-webhooks"), entity: entQuery},
		"GET /entity-webhooks/{id}": {build: authzGet("/entity-webhooks/%s", kWebhook), slots: []authzSlot{authzPathID(kWebhook)}, entity: entQuery},
		"PATCH /entity-webhooks/{id}": {build: authzSend("/entity-webhooks/%s", authzFixed(map[string]any{"description": "renamed"}), kWebhook),
			slots: []authzSlot{authzPathID(kWebhook)}, entity: entBoth},
		"DELETE /entity-webhooks/{id}": {build: authzGet("/entity-webhooks/%s", kWebhook),
			slots: []authzSlot{authzPathID(kWebhook)}, entity: entBoth, last: true},
		"POST /entity-webhooks/{id}/test": {build: authzGet("/entity-webhooks/%s/test", kWebhook),
			slots: []authzSlot{authzPathID(kWebhook)}, entity: entBoth},
		"POST /entity-webhooks/{id}/rotate_secret": {build: authzGet("/entity-webhooks/%s/rotate_secret", kWebhook),
			slots: []authzSlot{authzPathID(kWebhook)}, entity: entBoth},
		"GET /entity-webhooks/{id}/deliveries": {build: authzGet("/entity-webhooks/%s/deliveries", kWebhook),
			slots: []authzSlot{authzPathID(kWebhook)}, entity: entQuery},
		"GET /events": {build: authzGet("/events"), entity: entQuery},
		"POST /events/{id}/redeliver": {build: authzGet("/events/%s/redeliver", kEvent),
			slots: []authzSlot{authzPathID(kEvent)}, entity: entBoth},

		"GET /sandbox/clock": {build: authzGet("/sandbox/clock"),
			noObject: "reads the server's clock; it names no object and no entity"},
		"POST /sandbox/clock/advance": {build: authzSend("/sandbox/clock/advance", authzFixed(map[string]any{"seconds": 1})),
			noObject: "moves the server's one clock and runs everyone's due work; it names no object and no entity",
			last:     true},
		"POST /sandbox/api-keys":        {build: authzSend("/sandbox/api-keys", authzFixed(map[string]any{"read_only": true})), entity: entBody},
		"DELETE /sandbox/api-keys/{id}": {build: authzGet("/sandbox/api-keys/%s", kAPIKey), slots: []authzSlot{authzPathID(kAPIKey)}},
		"POST /sandbox/entities/{id}/review": {build: authzSend("/sandbox/entities/%s/review",
			authzFixed(map[string]any{"decision": "approved"}), kEntity), slots: []authzSlot{authzPathID(kEntity)}},
		"POST /sandbox/account-details/{id}/activate": {build: authzGet("/sandbox/account-details/%s/activate", kDetails),
			slots: []authzSlot{authzPathID(kDetails)}},
		"POST /sandbox/inflows": {build: authzSend("/sandbox/inflows", func(s *authzSide) map[string]any {
			return map[string]any{"account_id": s.ids[kAccount], "amount": 100}
		}), slots: []authzSlot{{name: "body.account_id", kind: kAccount}}},

		// Open routes httpapi answers 404 (workspaces_test.go).
		"POST /sandbox/workspaces": {build: authzSend("/sandbox/workspaces", authzFixed(map[string]any{})),
			noObject: "bank/workspace serves it in front of httpapi (-workspaces), needing no key, and tests it; httpapi answers 404 whatever the key"},
		"DELETE /sandbox/workspaces/{id}": {build: authzGet("/sandbox/workspaces/0123456789abcdef"),
			noObject: "bank/workspace serves it in front of httpapi (-workspaces) and tests its authorization (only the workspace's own key deletes it); httpapi answers 404 whatever the key"},
	}
}

// TestAuthzCoversEveryRoute fails when a route of the table has no
// authorization case, or a case names a route that is gone.
func TestAuthzCoversEveryRoute(t *testing.T) {
	table := authzRoutes(&hookEnv{})
	for _, p := range httpapi.RoutePatterns {
		c, ok := table[p]
		switch {
		case !ok:
			t.Errorf("route %q has no authorization case: add it to authzRoutes (authz_test.go)", p)
		case c.build == nil:
			t.Errorf("route %q: no build", p)
		case len(c.slots) == 0 && len(c.entity) == 0 && c.noObject == "":
			t.Errorf("route %q names no object and no entity_id: say why in noObject, or add its slots", p)
		case (len(c.slots) > 0 || len(c.entity) > 0) && c.noObject != "":
			t.Errorf("route %q has cases but claims noObject", p)
		}
		for _, sl := range c.slots {
			if sl.want != 0 && sl.why == "" {
				t.Errorf("route %q, %s: say why it answers other than 404", p, sl.name)
			}
		}
		delete(table, p)
	}
	for p := range table {
		t.Errorf("authzRoutes has a case for %q, which is not in the route table", p)
	}
}

func TestAuthz(t *testing.T) {
	e := newHookEnv(t, false)
	a, b := newAuthzSides(e)
	table := authzRoutes(e)
	var patterns []string
	for _, p := range httpapi.RoutePatterns {
		if _, ok := table[p]; ok {
			patterns = append(patterns, p)
		}
	}

	// B on A's objects: every case answers as the missing object does.
	t.Run("foreign", func(t *testing.T) {
		for _, p := range patterns {
			c := table[p]
			method, _, _ := strings.Cut(p, " ")
			t.Run(p, func(t *testing.T) {
				for _, sl := range c.slots {
					t.Run(sl.name, func(t *testing.T) { authzForeignSlot(t, e, method, c, sl, a, b) })
				}
				for _, where := range c.entity {
					t.Run(where+".entity_id", func(t *testing.T) { authzForeignEntity(t, e, method, c, where, a, b) })
				}
			})
		}
	})

	// A's read-only key: 403 on everything but GET, and nothing changes.
	t.Run("read_only", func(t *testing.T) {
		before := authzState(e, a)
		var forbidden map[string]any
		for _, p := range patterns {
			method, _, _ := strings.Cut(p, " ")
			if method == http.MethodGet || httpapi.Open(p) { // an open route reads no key
				continue
			}
			t.Run(p, func(t *testing.T) {
				r := table[p].ownerReq(a)
				got := e.do(method, r.path, a.ro, authzBody(r.body))
				if got.Status != http.StatusForbidden {
					t.Fatalf("%s %s: %d, want 403: %.300s", method, r.path, got.Status, got.Raw)
				}
				// CONTRACT.md/SPEC.md: {error: {code: forbidden, message}},
				// one body for every route.
				var body map[string]any
				if err := json.Unmarshal([]byte(got.Raw), &body); err != nil {
					t.Fatalf("403 body is not JSON: %q", got.Raw)
				}
				errObj, _ := body["error"].(map[string]any)
				msg, _ := errObj["message"].(string)
				if msg == "" {
					t.Errorf("403 body has no error.message: %s", got.Raw)
				}
				want := map[string]any{"error": map[string]any{"code": "forbidden", "message": msg}}
				if forbidden != nil {
					want = forbidden
				}
				if diff := cmp.Diff(want, body); diff != "" {
					t.Errorf("403 body (-want +got):\n%s", diff)
				} else {
					forbidden = body
				}
			})
		}
		if diff := cmp.Diff(before, authzState(e, a)); diff != "" {
			t.Errorf("read-only requests changed state (-before +after):\n%s", diff)
		}
	})

	// Each tree's own requests, the ones the cases vary, succeed: a case's
	// 404 above is about scope, not a broken request.
	t.Run("owner", func(t *testing.T) {
		for _, p := range ownerOrder(table, patterns) {
			method, _, _ := strings.Cut(p, " ")
			if method != http.MethodGet && httpapi.Open(p) {
				continue // a form, not an API request (checkout_test.go)
			}
			t.Run(p, func(t *testing.T) {
				for _, s := range []*authzSide{a, b} {
					reqs := []authzReq{table[p].ownerReq(s)}
					for _, sl := range table[p].slots {
						if sl.build != nil {
							reqs = append(reqs, sl.build(s))
						}
					}
					for _, r := range reqs {
						if got := e.do(method, r.path, s.key, authzBody(r.body)); got.Status < 200 || got.Status > 299 {
							t.Errorf("%s %s by tree %s's own key: %d %.500s", method, r.path, s.name, got.Status, got.Raw)
						}
					}
				}
			})
		}
	})
}

// ownerOrder is patterns in the order the owner's requests run: those
// marked last after the others, each group in its given order.
func ownerOrder(table map[string]authzRoute, patterns []string) []string {
	order := slices.Clone(patterns)
	slices.SortStableFunc(order, func(x, y string) int {
		switch lx, ly := table[x].last, table[y].last; {
		case lx == ly:
			return 0
		case ly:
			return -1
		}
		return 1
	})
	return order
}

// ownerReq is the request the owner s sends on its own objects.
func (c authzRoute) ownerReq(s *authzSide) authzReq {
	if c.owner != nil {
		return c.owner(s)
	}
	return c.build(s)
}

// authzForeignSlot sends B's request with slot sl naming A's object and again
// naming a missing one: the same status (sl.want) and body, up to the ID.
func authzForeignSlot(t *testing.T, e *hookEnv, method string, c authzRoute, sl authzSlot, a, b *authzSide) {
	build := c.build
	if sl.build != nil {
		build = sl.build
	}
	gone := authzMissingID(sl.kind)
	foreign := build(b.with(sl.kind, a.ids[sl.kind]))
	missing := build(b.with(sl.kind, gone))
	rf := e.do(method, foreign.path, b.key, authzBody(foreign.body))
	rm := e.do(method, missing.path, b.key, authzBody(missing.body))
	want := sl.want
	switch want {
	case 0:
		want = http.StatusNotFound
	case authzAsMissing:
		want = rm.Status
		if want < 400 || want > 499 {
			t.Fatalf("a missing %s answers %d, want a 4xx: %.300s", sl.kind, rm.Status, rm.Raw)
		}
	}
	if rm.Status != want {
		t.Errorf("a missing %s answers %d, want %d: %.300s", sl.kind, rm.Status, want, rm.Raw)
	}
	if rf.Status != want {
		t.Errorf("B naming A's %s answers %d, want %d: %.300s", sl.kind, rf.Status, want, rf.Raw)
	}
	ph := "<" + sl.kind + ">"
	if diff := cmp.Diff(authzNorm(rm.Raw, gone, ph), authzNorm(rf.Raw, a.ids[sl.kind], ph)); diff != "" {
		t.Errorf("B naming A's %s differs from naming a missing one (-missing +foreign):\n%s", sl.kind, diff)
	}
}

// authzForeignEntity sends B's request with entity_id (in where) naming A's
// entity: with A's objects, with missing ones, and with B's own, all must
// answer exactly as an unknown entity_id does.
func authzForeignEntity(t *testing.T, e *hookEnv, method string, c authzRoute, where string, a, b *authzSide) {
	kind := c.entityKind
	if kind == "" {
		kind = kEntity
	}
	want := c.entityWant
	if want == 0 {
		want = http.StatusNotFound
	}
	put := func(r authzReq, v string) authzReq {
		if where == "query" {
			r.path = authzAddQuery(r.path, "entity_id", v)
		} else {
			r.body = maps.Clone(r.body)
			if r.body == nil {
				r.body = map[string]any{}
			}
			r.body["entity_id"] = v
		}
		return r
	}
	const ph = "<entity_id>"
	gone := authzMissingID(kind)
	ref := put(c.build(b), gone)
	rref := e.do(method, ref.path, b.key, authzBody(ref.body))
	wantRef := authzNorm(rref.Raw, gone, ph)
	if rref.Status != want {
		t.Fatalf("an unknown entity_id answers %d, want %d: %.300s", rref.Status, want, rref.Raw)
	}
	if want == http.StatusNotFound {
		// corebank.ErrEntityNotFound, as every service answers it.
		notFound := map[string]any{"status": "error", "code": "not_found", "message": "entity not found",
			"details": map[string]any{}}
		if diff := cmp.Diff(notFound, wantRef); diff != "" {
			t.Errorf("an unknown entity_id is not the entity-not-found answer (-want +got):\n%s", diff)
		}
	}

	type variant struct {
		name  string
		build func(s *authzSide) authzReq
		side  *authzSide
		subs  []string // value, placeholder pairs
	}
	vs := []variant{{name: "B's own objects", build: c.build, side: b, subs: []string{a.ids[kind], ph}}}
	if c.bare != nil {
		vs = append(vs, variant{name: "no objects", build: c.bare, side: b, subs: []string{a.ids[kind], ph}})
	}
	var own []authzSlot
	for _, sl := range c.slots {
		if sl.build == nil {
			own = append(own, sl)
		}
	}
	if len(own) > 0 {
		va := variant{name: "A's objects", build: c.build, side: b, subs: []string{a.ids[kind], ph}}
		vm := variant{name: "missing objects", build: c.build, side: b, subs: []string{a.ids[kind], ph}}
		for _, sl := range own {
			va.side = va.side.with(sl.kind, a.ids[sl.kind])
			vm.side = vm.side.with(sl.kind, authzMissingID(sl.kind))
			va.subs = append(va.subs, a.ids[sl.kind], "<"+sl.kind+">")
			vm.subs = append(vm.subs, authzMissingID(sl.kind), "<"+sl.kind+">")
		}
		vs = append(vs, va, vm)
	}
	for _, v := range vs {
		r := put(v.build(v.side), a.ids[kind])
		got := e.do(method, r.path, b.key, authzBody(r.body))
		if got.Status != want {
			t.Errorf("entity_id of A with %s answers %d, want %d: %.300s", v.name, got.Status, want, got.Raw)
		}
		if diff := cmp.Diff(wantRef, authzNorm(got.Raw, v.subs...)); diff != "" {
			t.Errorf("entity_id of A with %s differs from an unknown entity_id (-unknown +A's):\n%s", v.name, diff)
		}
	}
}

// authzNorm replaces each value of the value, placeholder pairs in raw and
// decodes the JSON (raw itself when it is not JSON), so that two answers
// that differ only in the ID the request named compare equal.
func authzNorm(raw string, subs ...string) any {
	for i := 0; i+1 < len(subs); i += 2 {
		if subs[i] != "" {
			raw = strings.ReplaceAll(raw, subs[i], subs[i+1])
		}
	}
	var v any
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		return raw
	}
	return v
}

// authzBody is body for env.do: a nil map sends no body at all.
func authzBody(body map[string]any) any {
	if body == nil {
		return nil
	}
	return body
}

// authzState reads, with A's full key, what A's read-only key might have
// changed: each of A's objects and lists, and whether A's extra key works.
func authzState(e *hookEnv, a *authzSide) map[string]string {
	e.drain()
	paths := []string{"/accounts?limit=100", "/account-details?limit=100",
		"/account-details?account_id=" + a.ids[kAccount], "/account-details/" + a.ids[kDetails],
		"/entities?limit=100", "/entities/" + a.ids[kEntity], "/entities/" + a.ids[kReady],
		"/documents/" + a.ids[kDocument], "/onboarding-submissions/" + a.ids[kSubmission],
		"/counterparties?limit=100", "/counterparties/" + a.ids[kCounterparty] + "/payment-details",
		"/payment-details/" + a.ids[kPayment], "/payment-details/" + a.ids[kEURDetail],
		"/fx-quotes/" + a.ids[kQuote], "/transfers?limit=100",
		"/entity-webhooks?limit=100", "/entity-webhooks/" + a.ids[kWebhook],
		"/entity-webhooks/" + a.ids[kWebhook] + "/deliveries?limit=100",
		"/events?limit=100", "/sandbox/clock",
		"/products?limit=100", "/product-orders?limit=100", "/product-orders/" + a.ids[kOrder],
		"/product-orders/" + a.ids[kOrder] + "/transactions?limit=100", "/capital-portfolio"}
	out := map[string]string{}
	for _, p := range paths {
		r := e.do("GET", p, a.key, nil)
		out[p] = fmt.Sprintf("%d %s", r.Status, r.Raw)
	}
	r := e.do("GET", "/accounts?limit=1", a.keySecret, nil)
	out["extra API key works"] = fmt.Sprint(r.Status)
	return out
}
