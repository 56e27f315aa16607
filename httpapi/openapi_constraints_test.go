package httpapi_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"maps"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/corebank/corebank/httpapi"
)

// The document-derived refusal test (issue 25, "An exact document"): for
// every constraint openapi.json declares on a request (a body property at
// any depth, through $ref, allOf, map values and the oneOf branch a valid
// body takes; a form field; a query parameter), one request that is valid
// but for one value just outside that constraint must be refused with the
// document's validation status, code validation_error, and details naming
// the field, and the same request without the change must succeed. The
// changed value replaces one the valid request holds (an operation whose
// fields exclude each other has variants, each valid), and the operation's
// other valid requests must not take it either, so a bound that holds
// only in some requests shows. Besides the declared bounds, every typed
// field a valid request reaches gets one value of a wrong JSON type
// (CONTRACT.md: "A wrong JSON type ... is 422 with the field named"). So a
// constraint added to the document without a validator, or a validator
// whose bound drifts from the document's, fails here.

// constraintKinds are the kinds checked, in the order the log counts them.
var constraintKinds = []string{"enum", "minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum",
	"minLength", "maxLength", "pattern", "format", "minItems", "maxItems", "type"}

// constraint is one declared constraint on one request field.
type constraint struct {
	in   string   // "body" (JSON), "form" or "query"
	path []string // the JSON path in the body ("0" for an array's first item); a form or query field's name
	// where is path with "*" for a map's key: the place in the schema,
	// the same whatever key a valid request's map holds.
	where string
	kind  string // one of constraintKinds
	s     *openapi3.Schema
	// alts are the types a oneOf/anyOf allows, for a type constraint on it.
	alts []string
}

func (c constraint) field() string { return strings.Join(c.path, ".") }

// constraintReq is one valid request of an operation.
type constraintReq struct {
	path  string // without the query
	query url.Values
	body  map[string]any // JSON body; nil: none
	form  url.Values     // a page form's body, instead of JSON
	key   string         // "" for an open route
}

// constraintFixture is what the valid requests are built from: one tree
// of the authorization test's fixture (an approved business with a funded
// account and one object of every kind, authzPopulate), its case table,
// and fresh objects made where a request needs its own.
type constraintFixture struct {
	e     *hookEnv
	s     *authzSide
	authz map[string]authzRoute
}

// baseFunc builds the valid request of the operation whose route pattern
// is pattern.
type baseFunc func(f *constraintFixture, pattern string) constraintReq

// viaAuthz is the request the authorization test's owner sends on the
// route (authzRoutes), known to succeed in the route table's order.
func viaAuthz(f *constraintFixture, pattern string) constraintReq {
	f.e.t.Helper()
	c, ok := f.authz[pattern]
	if !ok {
		f.e.t.Fatalf("authzRoutes has no case for %s", pattern)
	}
	r := c.ownerReq(f.s)
	return f.req(r.path, r.body)
}

// withAuthz is viaAuthz with the body changed by edit (a richer body, so
// that more of the document's fields are reached).
func withAuthz(edit func(f *constraintFixture, body map[string]any)) baseFunc {
	return func(f *constraintFixture, pattern string) constraintReq {
		r := viaAuthz(f, pattern)
		if r.body == nil {
			r.body = map[string]any{}
		}
		edit(f, r.body)
		return r
	}
}

// req is a request of f's key on target (a path with its query, if any).
func (f *constraintFixture) req(target string, body map[string]any) constraintReq {
	f.e.t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		f.e.t.Fatal(err)
	}
	return constraintReq{path: u.Path, query: u.Query(), body: body, key: f.s.key}
}

// constraintBases is one valid request per operation, by operationId.
// Each operation that declares a constraint on its request must be here
// or in constraintExcluded (TestOpenAPIConstraintsCovered).
var constraintBases = map[string]baseFunc{
	"postAccounts": withAuthz(func(f *constraintFixture, b map[string]any) {
		b["meta"] = map[string]any{"team": "ops"}
	}),
	"getAccounts": func(f *constraintFixture, _ string) constraintReq {
		return f.req("/accounts?currency=USD&type=checking&limit=10", nil)
	},
	"patchAccountsById":  viaAuthz,
	"deleteAccountsById": viaAuthz,
	"getAccountsStatements": func(f *constraintFixture, _ string) constraintReq {
		return f.req("/accounts/"+f.s.ids[kAccount]+"/statements?year=2026&month=3&limit=10&include_pending=true", nil)
	},
	"postAccountDetails": withAuthz(func(f *constraintFixture, b map[string]any) {
		b["terminate_after"], b["meta"] = 30, map[string]any{"team": "ops"}
	}),
	"getAccountDetails": viaAuthz,

	"postIndividualEntities": withAuthz(func(f *constraintFixture, b map[string]any) {
		b["parent_relationship"] = "subsidiary"
		b["address"].(map[string]any)["line_2"], b["address"].(map[string]any)["line_3"] = "Floor 2", "Suite 7"
		b["identification"] = constraintIdentification("NG")
		b["business"] = constraintSoleTrader()
	}),
	"patchIndividualEntitiesById": func(f *constraintFixture, _ string) constraintReq {
		id := f.e.must(201, "POST", "/individual-entities", f.s.key, individual("Patched person")).str("data", "entity", "id")
		return f.req("/individual-entities/"+id, map[string]any{"name": "Renamed",
			"person": map[string]any{"first_name": "Ada", "last_name": "Obi", "middle_name": "N", "gender": "f",
				"date_of_birth": "1990-04-01", "email": "ada@example.com", "nationality": "NG", "phonenumber": "+2348012345678", "is_pep": false},
			"address":        constraintAddress("NG"),
			"identification": constraintIdentification("NG"),
			"business":       constraintSoleTrader()})
	},
	"postBusinessEntities": withAuthz(func(f *constraintFixture, b map[string]any) {
		b["parent_relationship"] = "subsidiary"
		b["address"], b["operating_address"] = constraintAddress("US"), constraintAddress("US")
		constraintBusinessDetails(b["business"].(map[string]any))
		b["business_officers"] = []any{constraintOfficer(60)}
		b["meta"] = map[string]any{"sales_channels": []any{"online"}, "tax_id": "12-3456789"}
	}),
	"patchBusinessEntitiesById": func(f *constraintFixture, _ string) constraintReq {
		id := f.e.must(201, "POST", "/business-entities", f.s.key, business("Patched business")).str("data", "entity", "id")
		details := map[string]any{"legal_name": "Patched business LLC", "type": "llc", "industry": "fintech"}
		constraintBusinessDetails(details)
		return f.req("/business-entities/"+id, map[string]any{"name": "Renamed business", "business": details,
			"address": constraintAddress("US"), "operating_address": constraintAddress("US"),
			"business_officers": []any{constraintOfficer(30)},
			"meta":              map[string]any{"sales_channels": []any{"online"}, "tax_id": "12-3456789"}})
	},
	"getEntities":               viaAuthz,
	"postDocuments":             viaAuthz,
	"postOnboardingSubmissions": viaAuthz,

	"postCounterparties": withAuthz(func(f *constraintFixture, b map[string]any) {
		b["nickname"], b["meta"] = "Ada", map[string]any{"team": "ops"}
		pr := b["profile"].(map[string]any)
		pr["address"] = constraintCPAddress()
		pr["phone"] = map[string]any{"number": "+442071838750", "type": "mobile", "country": "GB"}
		pr["identification"] = []any{map[string]any{"type": "P", "number": "X1234567", "issuing_country": "GB"}}
	}),
	"getCounterparties": func(f *constraintFixture, _ string) constraintReq {
		return f.req("/counterparties?limit=10&type=individual&status=active", nil)
	},
	"patchCounterpartiesById": withAuthz(func(f *constraintFixture, b map[string]any) {
		b["meta"] = map[string]any{"team": "ops"}
		b["profile"] = map[string]any{"first_name": "Ada", "last_name": "Lovelace", "relationship": "supplier",
			"email": "ada.lovelace@example.com", "address": constraintCPAddress(),
			"phone":          map[string]any{"number": "+442071838750", "type": "work", "country": "GB"},
			"identification": []any{map[string]any{"type": "D", "number": "D7654321", "issuing_country": "GB"}}}
	}),
	"postCounterpartiesDeactivate":    viaAuthz,
	"getCounterpartiesPaymentDetails": viaAuthz,
	"postPaymentDetails": withAuthz(func(f *constraintFixture, b map[string]any) {
		b["bank_name"], b["meta"] = "Chase", map[string]any{"team": "ops"}
	}),
	"patchPaymentDetailsById": withAuthz(func(f *constraintFixture, b map[string]any) {
		maps.Copy(b, achBody(f.s.ids[kCounterparty]))
		b["bank_name"] = "Renamed Bank"
	}),
	"postFxQuotes": viaAuthz,
	"postTransfers": withAuthz(func(f *constraintFixture, b map[string]any) {
		b["meta"], b["currency"] = map[string]any{"invoice": "7"}, "USD"
	}),
	"getTransfers":                 viaAuthz,
	"postSandboxTransfersSimulate": viaAuthz,
	"postSandboxFxOutage":          viaAuthz,

	"postEntityWebhooks": viaAuthz,
	"getEntityWebhooks":  viaAuthz,
	"patchEntityWebhooksById": withAuthz(func(f *constraintFixture, b map[string]any) {
		b["url"], b["expires_in"], b["status"], b["tags"] = f.e.recv.url(), 86400, "active", []any{"ops"}
	}),
	"deleteEntityWebhooksById":       viaAuthz,
	"postEntityWebhooksTest":         viaAuthz,
	"postEntityWebhooksRotateSecret": viaAuthz,
	"getEntityWebhooksDeliveries":    viaAuthz,
	"getEvents": func(f *constraintFixture, _ string) constraintReq {
		return f.req("/events?limit=10&created_after=1&created_before=9999999999999", nil)
	},
	"postEventsRedeliver": viaAuthz,

	"postSandboxClockAdvance":   viaAuthz,
	"postSandboxApiKeys":        viaAuthz,
	"postSandboxEntitiesReview": viaAuthz,
	"postSandboxInflows": withAuthz(func(f *constraintFixture, b map[string]any) {
		b["currency"], b["narration"], b["settle"] = "USD", "top-up", true
	}),

	"postFundingSessions": withAuthz(func(f *constraintFixture, b map[string]any) {
		b["funding_type"], b["narration"], b["country"] = "open-banking", "top-up", "US"
		b["meta"] = map[string]any{"team": "ops"}
	}),
	"getFundingSessions": func(f *constraintFixture, _ string) constraintReq {
		return f.req("/funding-sessions?limit=10&created_after=1&created_before=9999999999999&account_id="+f.s.ids[kAccount], nil)
	},
	"patchFundingSessionsById":           viaAuthz,
	"postSandboxFundingSessionsSimulate": viaAuthz,
	"postSandboxCheckout": func(f *constraintFixture, _ string) constraintReq {
		id := f.e.must(201, "POST", "/funding-sessions", f.s.key, sessionBody(f.s.ids[kAccount], authzFresh("constraints-checkout-"))).str("data", "id")
		path := checkoutPathOf(f.e.env, f.s.key, id)
		return constraintReq{path: path, form: url.Values{"nonce": {checkoutForm(f.e.env, path)}, "choice": {"approve"}}}
	},

	"postPaymentIntents": func(f *constraintFixture, _ string) constraintReq {
		b := intentBody(f.s.ids[kAccount], authzFresh("constraints-pi-"), 700)
		b["description"] = "order 7"
		b["intent_action"] = constraintCardAction(f)
		return f.req("/payment-intents", b)
	},
	"getPaymentIntents":       viaAuthz,
	"patchPaymentIntentsById": viaAuthz,
	"postIntentActions": func(f *constraintFixture, _ string) constraintReq {
		id := f.e.must(201, "POST", "/payment-intents", f.s.key, intentBody(f.s.ids[kAccount], authzFresh("constraints-open-"), 700)).str("data", "id")
		return f.req("/intent-actions", map[string]any{"payment_intent_id": id, "intent_action": constraintCardAction(f)})
	},
	"getIntentActions":                 viaAuthz,
	"postIntentVerificationsById":      viaAuthz,
	"postSandboxIntentActionsSimulate": viaAuthz,
	"postSandboxChallenge": func(f *constraintFixture, _ string) constraintReq {
		b := intentBody(f.s.ids[kAccount], authzFresh("constraints-3ds-"), 700)
		b["intent_action"] = cardAction(encryptCard(f.e.t, testPub(f.e.t), cardNumber("4242"), "123"), "3ds_required", "https://shop.example/back")
		u, err := url.Parse(f.e.must(201, "POST", "/payment-intents", f.s.key, b).str("data", "intent_action", "next_action", "url"))
		if err != nil {
			f.e.t.Fatal(err)
		}
		return constraintReq{path: u.Path, form: url.Values{"nonce": {checkoutForm(f.e.env, u.Path)},
			"choice": {"complete"}, "password": {"password"}}}
	},
	"getDisputes":                     viaAuthz,
	"postSandboxIntentActionsDispute": viaAuthz,
	"postSandboxDisputesSimulate":     viaAuthz,
	"postRefunds": withAuthz(func(f *constraintFixture, b map[string]any) {
		b["reason"] = "customer asked"
	}),
	"getRefunds":                 viaAuthz,
	"postSandboxRefundsSimulate": viaAuthz,

	"postDisposableCards": withAuthz(func(f *constraintFixture, b map[string]any) {
		b["metadata"] = map[string]any{"team": "ops"}
	}),
	"postVirtualCards": withAuthz(func(f *constraintFixture, b map[string]any) {
		b["metadata"] = map[string]any{"team": "ops"}
		b["individual_controls"] = map[string]any{"billing_cycle": "monthly", "billing_cycle_day": 1, "time_zone": "Europe/London",
			"daily_amount_limit": 10_000, "daily_transaction_count": 10, "cycle_transaction_count": 100, "transaction_amount_limit": 5_000}
		b["individual_mcc_controls"] = []any{map[string]any{"mcc": 5812, "open": true, "amount": 1_000, "cycle_transaction_count": 50,
			"daily_amount_limit": 2_000, "daily_transaction_count": 5, "transaction_amount_limit": 1_000}}
		b["mcc_group_controls"] = []any{map[string]any{"group_name": "travel", "open": true, "amount": 1_000, "cycle_transaction_count": 50,
			"daily_amount_limit": 2_000, "daily_transaction_count": 5, "transaction_amount_limit": 1_000}}
		b["set_alert_service_flag"] = false
	}),
	"getCards":                             viaAuthz,
	"deleteCardsById":                      viaAuthz,
	"postCardsFreeze":                      withAuthz(func(f *constraintFixture, b map[string]any) { b["status"] = "blocked" }),
	"postCardsUnfreeze":                    viaAuthz,
	"postCardsReassign":                    viaAuthz,
	"postSandboxCardsAuthorizations":       withAuthz(func(f *constraintFixture, b map[string]any) { b["currency"] = "USD" }),
	"postSandboxCardTransactionsClear":     withAuthz(func(f *constraintFixture, b map[string]any) { b["amount"] = 100 }),
	"postSandboxCardTransactionsReverse":   viaAuthz,
	"postSandboxCardTransactionsExpire":    withAuthz(func(f *constraintFixture, b map[string]any) { b["amount"] = 100 }),
	"postSandboxCardTransactionsIncrement": viaAuthz,
	"postSandboxCardTransactionsRefund":    viaAuthz,

	"getProducts": func(f *constraintFixture, _ string) constraintReq {
		return f.req("/products?type=FIXED_RETURN&currency=USD&limit=10", nil)
	},
	"postProductOrders": viaAuthz,
	"getProductOrders": func(f *constraintFixture, _ string) constraintReq {
		return f.req("/product-orders?status=APPROVED&type=FIXED_RETURN&limit=10", nil)
	},
	"postProductOrdersConfirm":     viaAuthz,
	"postProductOrdersWithdrawal":  viaAuthz,
	"getProductOrdersTransactions": viaAuthz,
	"postSandboxProducts": withAuthz(func(f *constraintFixture, b map[string]any) {
		b["visibility"], b["eligible_entity_types"] = "public", []any{"individual", "business"}
		b["documents"] = []any{map[string]any{"title": "Terms", "url": "https://example.com/terms.pdf", "version": 1}}
		b["withholding_rate"] = "0.1"
		b["sale_starts_at"], b["sale_ends_at"] = 1767225600000, 1893456000000 // 2026-01-01, 2030-01-01
	}),
	"postSandboxProductsAllotment":  viaAuthz,
	"postSandboxProductsUnlock":     viaAuthz,
	"postSandboxProductsPrice":      viaAuthz,
	"postSandboxProductsDeactivate": viaAuthz,
}

// constraintVariants are more valid requests of an operation, for the
// fields one request cannot hold at once (a business counterparty's
// legal_name, an individual's first_name). Each must succeed too.
var constraintVariants = map[string][]baseFunc{
	"postCounterparties": {func(f *constraintFixture, _ string) constraintReq {
		return f.req("/counterparties", constraintBusinessCP(authzFresh("Analytical Engines ")))
	}},
	"patchCounterpartiesById": {func(f *constraintFixture, _ string) constraintReq {
		id := f.e.must(201, "POST", "/counterparties", f.s.key, constraintBusinessCP(authzFresh("Difference Engines "))).str("data", "id")
		b := constraintBusinessCP("Renamed Engines")
		delete(b, "type")
		return f.req("/counterparties/"+id, b)
	}},
	"postPaymentDetails": {
		func(f *constraintFixture, _ string) constraintReq {
			return f.req("/payment-details", constraintSwiftDetail(f.s.ids[kCounterparty]))
		},
		func(f *constraintFixture, _ string) constraintReq {
			return f.req("/payment-details", constraintWalletDetail(f.s.ids[kCounterparty]))
		},
	},
	"patchPaymentDetailsById": {
		func(f *constraintFixture, _ string) constraintReq {
			b := constraintSwiftDetail(f.s.ids[kCounterparty])
			id := f.e.must(201, "POST", "/payment-details", f.s.key, b).str("id")
			return f.req("/payment-details/"+id, b)
		},
		func(f *constraintFixture, _ string) constraintReq {
			b := constraintWalletDetail(f.s.ids[kCounterparty])
			id := f.e.must(201, "POST", "/payment-details", f.s.key, b).str("id")
			return f.req("/payment-details/"+id, b)
		},
	},
	"postFxQuotes": {func(f *constraintFixture, _ string) constraintReq {
		return f.req("/fx-quotes", map[string]any{"from_currency": "USD", "to_currency": "EUR", "amount_from": 5000, "account_id": f.s.ids[kAccount]})
	}},
	"postIndividualEntities": {func(f *constraintFixture, _ string) constraintReq {
		// A US national: an SSN, not a BVN or NIN.
		b := individual(authzFresh("Constraint American "))
		p := b["person"].(map[string]any)
		delete(p, "bvn")
		delete(p, "nin")
		p["nationality"], p["phonenumber"], p["ssn"] = "US", "+12025550143", "123450987"
		b["address"], b["identification"] = constraintAddress("US"), constraintIdentification("US")
		return f.req("/individual-entities", b)
	}},
	"postBusinessEntities": {func(f *constraintFixture, _ string) constraintReq {
		// A Nigerian officer: a BVN and a NIN, not an SSN.
		b := business(authzFresh("Constraint Lagos "))
		o := constraintOfficer(40)
		p := o["person"].(map[string]any)
		delete(p, "ssn")
		p["nationality"], p["phonenumber"], p["bvn"], p["nin"] = "NG", "+2348012345678", "22212345678", "33398765432"
		p["identification"] = constraintIdentification("NG")
		b["business_officers"] = []any{o}
		return f.req("/business-entities", b)
	}},
	"patchBusinessEntitiesById": {func(f *constraintFixture, _ string) constraintReq {
		id := f.e.must(201, "POST", "/business-entities", f.s.key, business(authzFresh("Patched Lagos "))).str("data", "entity", "id")
		o := constraintOfficer(20)
		p := o["person"].(map[string]any)
		delete(p, "ssn")
		p["nationality"], p["phonenumber"], p["bvn"], p["nin"] = "NG", "+2348012345678", "22212345678", "33398765432"
		p["identification"] = constraintIdentification("NG")
		return f.req("/business-entities/"+id, map[string]any{"business_officers": []any{o}})
	}},
	"postSandboxTransfersSimulate": {func(f *constraintFixture, _ string) constraintReq {
		id := f.e.must(201, "POST", "/transfers", f.s.key, transferBody(f.s.ids[kAccount], f.s.ids[kPayment], authzFresh("constraints-fail-"), 100)).str("data", "id")
		return f.req("/sandbox/transfers/"+id+"/simulate", map[string]any{"outcome": "failed", "status_reason": "account closed"})
	}},
	"postSandboxFundingSessionsSimulate": {func(f *constraintFixture, _ string) constraintReq {
		id := f.e.must(201, "POST", "/funding-sessions", f.s.key, sessionBody(f.s.ids[kAccount], authzFresh("constraints-fail-"))).str("data", "id")
		return f.req("/sandbox/funding-sessions/"+id+"/simulate", map[string]any{"outcome": "failed", "failure_code": "payment_rejected"})
	}},
	"postAccountDetails": {func(f *constraintFixture, _ string) constraintReq {
		// A stablecoin account's details name their chain.
		return f.req("/account-details", map[string]any{"account_id": f.e.account(f.s.key, "", "USC"), "chain": "eth"})
	}},
	"postSandboxProducts": {func(f *constraintFixture, _ string) constraintReq {
		// A deposit offered in principal bands, not between bounds.
		b := authzDeposit(authzFresh("Constraint bands "))
		delete(b, "min_principal")
		delete(b, "max_principal")
		b["principal_bands"] = []any{1_000, 5_000}
		return f.req("/sandbox/products", b)
	}},
	"postProductOrders": {func(f *constraintFixture, _ string) constraintReq {
		return f.req("/product-orders", map[string]any{"product_id": f.s.ids[kShareProduct], "account_id": f.s.ids[kAccount],
			"amount": 1000, "affirmations": []any{}})
	}},
}

// constraintCardAction is an intent_action of a 3-D Secure card payment
// with every billing address line.
func constraintCardAction(f *constraintFixture) map[string]any {
	a := cardAction(encryptCard(f.e.t, testPub(f.e.t), cardNumber("4242"), "123"), "3ds_required", "https://shop.example/back")
	a["payment_type_data"].(map[string]any)["billing_address"].(map[string]any)["address_line_two"] = "Flat 2"
	return a
}

// constraintAddress is an entity's address in country (NG or US) with
// every line.
func constraintAddress(country string) map[string]any {
	return map[string]any{"line_1": "1 Main St", "line_2": "Floor 2", "line_3": "Suite 7", "city": "Springfield",
		"state": "DE", "postal_code": "19901", "country_code": country}
}

// constraintIdentification is an identity document (a national ID with
// its number's kind: a NIN for NG, an SSN for US) and a proof of address.
func constraintIdentification(country string) map[string]any {
	number, subtype := "12345678901", "NIN"
	if country == "US" {
		number, subtype = "123456789", "SSN"
	}
	return map[string]any{
		"document": map[string]any{"type": "national_id", "number": number, "type_specific": map[string]any{"id_subtype": subtype},
			"issue_date": "2020-01-02", "expiry_date": "2030-01-01", "issuing_country": country,
			"issuing_authority": "Registry", "document_id": "doc-1"},
		"proof_of_address": map[string]any{"type": "utility_bill", "document_id": "doc-2"},
	}
}

// constraintSoleTrader is an individual's business (a sole trader).
func constraintSoleTrader() map[string]any {
	return map[string]any{"name": "Ada's Tailoring", "description": "Tailoring and repairs", "category_code": "retail",
		"sub_category_code": "clothing", "website": "https://ada.example", "liveness_report_url": "https://ada.example/liveness"}
}

// constraintBusinessDetails fills a business's optional details.
func constraintBusinessDetails(b map[string]any) {
	b["trade_name"], b["website"], b["description"] = "Acme", "https://acme.example", "Widgets"
	b["phonenumber"], b["registration_number"], b["email"] = "+12025550143", "RC123456", "ops@acme.example"
	b["incorporation_meta"] = map[string]any{"year": 2019, "month": 5, "country": "US", "state": "DE"}
}

// constraintOfficer is officer with every part: an address, and an
// identity document and proof of address.
func constraintOfficer(pct float64) map[string]any {
	o := officer(pct, true)
	p := o["person"].(map[string]any)
	p["middle_name"], p["address"], p["identification"] = "Q", constraintAddress("US"), constraintIdentification("US")
	return o
}

// constraintCPAddress is a counterparty's address with every line.
func constraintCPAddress() map[string]any {
	return map[string]any{"line1": "1 Main St", "line2": "Floor 2", "city": "London", "state_or_province": "LDN",
		"postal_code": "N1 1AA", "country": "GB"}
}

// constraintBusinessCP is a business counterparty named name.
func constraintBusinessCP(name string) map[string]any {
	return map[string]any{"type": "business", "nickname": "Engines", "profile": map[string]any{
		"legal_name": name + " Ltd", "trading_name": name, "relationship": "supplier",
		"email": "ops@engines.example", "registered_address": constraintCPAddress(),
		"identification": []any{map[string]any{"type": "L", "number": authzFresh("GB"), "issuing_country": "GB"}}}}
}

// constraintSwiftDetail is a USD SWIFT payment detail of cp.
func constraintSwiftDetail(cp string) map[string]any {
	return map[string]any{"counterparty_id": cp, "payment_method": "bank-transfer", "currency": "USD", "country": "US",
		"scheme": "swift", "account_holder_name": "Ada Lovelace", "swift_code": "CHASUS33", "account_number": "123456789",
		"bank_name": "Chase"}
}

// constraintWalletDetail is a USC stablecoin payment detail of cp.
func constraintWalletDetail(cp string) map[string]any {
	return map[string]any{"counterparty_id": cp, "payment_method": "stablecoin-transfer", "currency": "USC",
		"account_holder_name": "Ada Lovelace", "blockchain_network": "ETH_MAINNET",
		"wallet_address": "0x52908400098527886E0F7030069857D2E4169EE7"}
}

// constraintExcluded lists, with the reason, the operations with declared
// constraints that have no valid request here.
var constraintExcluded = map[string]string{
	"postSandboxWorkspaces": "bank/workspace serves it in front of httpapi (-workspaces) and its tests cover the 422s; httpapi answers 404 whatever the body",
}

// constraintStatus is the status of a refused request where it is not
// 422: SPEC.md answers a refund's or a card's invalid fields with 400
// (CONTRACT.md: validation_error, "400 where SPEC.md says 400"). A body
// that does not decode (a wrong JSON type) is 422 everywhere.
var constraintStatus = map[string]int{
	"postRefunds":         http.StatusBadRequest,
	"postDisposableCards": http.StatusBadRequest,
	"postVirtualCards":    http.StatusBadRequest,
}

// docOperation is one operation of the document.
type docOperation struct {
	method, path string
	op           *openapi3.Operation
}

func (o docOperation) pattern() string { return o.method + " " + o.path }

// docOperations returns the document's operations by operationId.
func docOperations(t *testing.T) map[string]docOperation {
	t.Helper()
	doc, _, err := spec()
	if err != nil {
		t.Fatal(err)
	}
	ops := map[string]docOperation{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if op.OperationID == "" {
				t.Fatalf("%s %s has no operationId", method, path)
			}
			ops[op.OperationID] = docOperation{method: method, path: path, op: op}
		}
	}
	return ops
}

// requestConstraints returns every constraint op declares on its request.
// base, when not nil, is the valid request: a oneOf/anyOf then contributes
// the branch base's value matches; without it, every branch.
func requestConstraints(op *openapi3.Operation, base *constraintReq) []constraint {
	w := &constraintWalker{}
	if rb := op.RequestBody; rb != nil && rb.Value != nil {
		for ct, mt := range rb.Value.Content {
			switch ct {
			case "application/json":
				w.in = "body"
				if base != nil {
					w.base, w.haveBase = normalizeJSON(base.body), true
				}
				w.walk(mt.Schema, nil, nil, false)
			case "application/x-www-form-urlencoded":
				w.in = "form"
				if mt.Schema != nil && mt.Schema.Value != nil {
					for _, name := range slices.Sorted(maps.Keys(mt.Schema.Value.Properties)) {
						w.declared(mt.Schema.Value.Properties[name].Value, []string{name}, []string{name})
					}
				}
			}
		}
	}
	w.in = "query"
	for _, p := range op.Parameters {
		if p.Value == nil || p.Value.In != "query" || p.Value.Schema == nil || p.Value.Schema.Value == nil {
			continue
		}
		s := p.Value.Schema.Value
		path := []string{p.Value.Name}
		w.declared(s, path, path)
		// Only numbers and booleans can be of a wrong type in a query.
		if t := schemaType(s); t == "integer" || t == "number" || t == "boolean" {
			w.add(constraint{path: path, where: p.Value.Name, kind: "type", s: s})
		}
	}
	return w.out
}

type constraintWalker struct {
	in       string
	base     any // the valid body, as JSON decodes it
	haveBase bool
	out      []constraint
	seen     map[string]bool
}

func (w *constraintWalker) add(c constraint) {
	c.in = w.in
	key := c.in + " " + c.where + " " + c.kind
	if w.seen == nil {
		w.seen = map[string]bool{}
	}
	if !w.seen[key] {
		w.seen[key] = true
		w.out = append(w.out, c)
	}
}

// walk collects the constraints of ref at path (where, in the schema) and
// below. noType is set for a oneOf branch, whose type is not the field's
// (the field's wrong type is one no branch allows).
func (w *constraintWalker) walk(ref *openapi3.SchemaRef, path, where []string, noType bool) {
	if ref == nil || ref.Value == nil || len(path) > 16 {
		return
	}
	s := ref.Value
	w.declared(s, path, where)
	for _, part := range s.AllOf {
		w.walk(part, path, where, noType)
	}
	if alts := append(slices.Clone(s.OneOf), s.AnyOf...); len(alts) > 0 {
		var types []string
		for _, a := range alts {
			if a.Value != nil {
				types = append(types, schemaType(a.Value))
			}
		}
		if len(path) > 0 && !noType {
			w.add(constraint{path: path, where: strings.Join(where, "."), kind: "type", s: s, alts: types})
		}
		cur, ok := lookupJSON(w.base, path)
		for _, a := range alts {
			if !w.haveBase || !ok || a.Value.VisitJSON(cur) == nil {
				w.walk(a, path, where, true)
				if w.haveBase {
					break
				}
			}
		}
	}
	if t := schemaType(s); t != "" && len(path) > 0 && !noType {
		w.add(constraint{path: path, where: strings.Join(where, "."), kind: "type", s: s})
	}
	next := func(seg, at string) ([]string, []string) {
		return append(slices.Clone(path), seg), append(slices.Clone(where), at)
	}
	for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
		p, wh := next(name, name)
		w.walk(s.Properties[name], p, wh, false)
	}
	if s.Items != nil {
		p, wh := next("0", "0")
		w.walk(s.Items, p, wh, false)
	}
	if ap := s.AdditionalProperties.Schema; ap != nil {
		// A map's values, under the valid request's first key: a request
		// without one reaches none.
		key := "key"
		if w.haveBase {
			cur, _ := lookupJSON(w.base, path)
			m, _ := cur.(map[string]any)
			key = ""
			for _, k := range slices.Sorted(maps.Keys(m)) {
				if _, named := s.Properties[k]; !named {
					key = k
					break
				}
			}
			if key == "" {
				return
			}
		}
		p, wh := next(key, "*")
		w.walk(ap, p, wh, false)
	}
}

// declared adds the constraints s itself declares (not its type).
func (w *constraintWalker) declared(s *openapi3.Schema, path, where []string) {
	at := strings.Join(where, ".")
	if s == nil {
		return
	}
	if len(s.Enum) > 0 {
		w.add(constraint{path: path, where: at, kind: "enum", s: s})
	}
	if s.Min != nil {
		k := "minimum"
		if s.ExclusiveMin.IsTrue() {
			k = "exclusiveMinimum"
		}
		w.add(constraint{path: path, where: at, kind: k, s: s})
	}
	if s.Max != nil {
		k := "maximum"
		if s.ExclusiveMax.IsTrue() {
			k = "exclusiveMaximum"
		}
		w.add(constraint{path: path, where: at, kind: k, s: s})
	}
	if s.MinLength > 0 {
		w.add(constraint{path: path, where: at, kind: "minLength", s: s})
	}
	if s.MaxLength != nil {
		w.add(constraint{path: path, where: at, kind: "maxLength", s: s})
	}
	if s.Pattern != "" {
		w.add(constraint{path: path, where: at, kind: "pattern", s: s})
	}
	if s.Format != "" {
		w.add(constraint{path: path, where: at, kind: "format", s: s})
	}
	if s.MinItems > 0 {
		w.add(constraint{path: path, where: at, kind: "minItems", s: s})
	}
	if s.MaxItems != nil {
		w.add(constraint{path: path, where: at, kind: "maxItems", s: s})
	}
}

// schemaType is s's one declared type, or "".
func schemaType(s *openapi3.Schema) string {
	if s.Type == nil || len(s.Type.Slice()) != 1 {
		return ""
	}
	return s.Type.Slice()[0]
}

// badValue is a value just outside c (cur is the valid request's value
// there, when it has one).
func badValue(c constraint, cur any, haveCur bool) (any, error) {
	s := c.s
	integer := schemaType(s) == "integer"
	switch c.kind {
	case "enum":
		if schemaType(s) == "integer" || schemaType(s) == "number" {
			m := math.Inf(-1)
			for _, v := range s.Enum {
				if f, ok := v.(float64); ok {
					m = max(m, f)
				}
			}
			return m + 1, nil
		}
		bad := "not_in_enum"
		for _, v := range s.Enum {
			if v, ok := v.(string); ok {
				bad = "not_" + v
				break
			}
		}
		for slices.Contains(s.Enum, any(bad)) {
			bad += "_"
		}
		return bad, nil
	case "minimum", "exclusiveMinimum":
		if c.kind == "exclusiveMinimum" {
			return number(*s.Min, integer), nil
		}
		return number(*s.Min-1, integer), nil
	case "maximum", "exclusiveMaximum":
		if c.kind == "exclusiveMaximum" {
			return number(*s.Max, integer), nil
		}
		return number(*s.Max+1, integer), nil
	case "minLength":
		return strings.Repeat("a", int(s.MinLength)-1), nil
	case "maxLength":
		return strings.Repeat("a", int(*s.MaxLength)+1), nil
	case "pattern":
		re, err := regexp.Compile(s.Pattern)
		if err != nil {
			return nil, fmt.Errorf("pattern %q is not RE2: %v", s.Pattern, err)
		}
		for _, v := range []string{"!", "zz", "0", "a b", "-", strings.Repeat("Z", 300), ""} {
			if !re.MatchString(v) {
				return v, nil
			}
		}
		return nil, fmt.Errorf("found no string that fails the pattern %q", s.Pattern)
	case "format":
		bad, ok := map[string]string{"date": "2026-02-30", "date-time": "2026-13-01T00:00:00Z", "email": "not-an-email",
			"uri": "not a uri", "url": "not a url", "uuid": "not-a-uuid", "ipv4": "999.1.1.1", "ipv6": "::zz"}[s.Format]
		if !ok {
			return nil, fmt.Errorf("no malformed value known for format %q: add one to badValue", s.Format)
		}
		return bad, nil
	case "minItems", "maxItems":
		arr, ok := cur.([]any)
		if !haveCur || !ok {
			return nil, fmt.Errorf("the valid request has no %s array to shorten or lengthen: give it one", c.field())
		}
		if c.kind == "minItems" {
			return slices.Clone(arr[:min(uint64(len(arr)), s.MinItems-1)]), nil
		}
		if len(arr) == 0 {
			return nil, fmt.Errorf("the valid request's %s is empty: give it an item to repeat", c.field())
		}
		out := slices.Clone(arr)
		for uint64(len(out)) <= *s.MaxItems {
			out = append(out, arr[0])
		}
		return out, nil
	case "type":
		if c.alts != nil {
			if slices.Contains(c.alts, "boolean") {
				return []any{}, nil
			}
			return true, nil
		}
		switch schemaType(s) {
		case "string":
			return 7, nil
		case "integer", "number":
			return "7", nil
		case "boolean":
			return "yes", nil
		case "object":
			return []any{}, nil
		case "array":
			return map[string]any{}, nil
		}
	}
	return nil, fmt.Errorf("no out-of-range value for kind %s", c.kind)
}

// number is f as an integer when the field is one.
func number(f float64, integer bool) any {
	if integer {
		return int64(f)
	}
	return f
}

// queryValue is v written in a query string.
func queryValue(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

// normalizeJSON is v as encoding/json decodes it (numbers as float64).
func normalizeJSON(v any) any {
	if v == nil {
		return map[string]any{}
	}
	raw, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	var out any
	if err := json.Unmarshal(raw, &out); err != nil {
		panic(err)
	}
	return out
}

// lookupJSON returns the value at path in v.
func lookupJSON(v any, path []string) (any, bool) {
	for _, p := range path {
		switch c := v.(type) {
		case map[string]any:
			next, ok := c[p]
			if !ok {
				return nil, false
			}
			v = next
		case []any:
			i, err := strconv.Atoi(p)
			if err != nil || i >= len(c) {
				return nil, false
			}
			v = c[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// setJSON returns a copy of body with the value at path set to v. The
// containers on the way must be in body, but for an array of which v is
// the first item. ok is false when one is missing.
func setJSON(body any, path []string, v any) (any, bool) {
	out := normalizeJSON(body)
	cur := out
	for i, p := range path {
		last := i == len(path)-1
		switch c := cur.(type) {
		case map[string]any:
			if last {
				c[p] = v
				return out, true
			}
			next, ok := c[p]
			if !ok || next == nil {
				if i == len(path)-2 && path[i+1] == "0" {
					c[p] = []any{v}
					return out, true
				}
				return nil, false
			}
			cur = next
		case []any:
			n, err := strconv.Atoi(p)
			if err != nil || n > len(c) || n == len(c) && !last {
				return nil, false
			}
			if last {
				if n == len(c) {
					return nil, false // an append would need the parent; arrays in the valid bodies are never empty
				}
				c[n] = v
				return out, true
			}
			cur = c[n]
		default:
			return nil, false
		}
	}
	return nil, false
}

// TestOpenAPIConstraintsCovered fails when an operation that declares a
// constraint on its request has neither a valid request in
// constraintBases nor a reason in constraintExcluded, or when either table
// names an operation that is gone or has nothing to check.
func TestOpenAPIConstraintsCovered(t *testing.T) {
	ops := docOperations(t)
	for _, id := range slices.Sorted(maps.Keys(ops)) {
		n := len(requestConstraints(ops[id].op, nil))
		_, based := constraintBases[id]
		why, excluded := constraintExcluded[id]
		switch {
		case n > 0 && !based && !excluded:
			t.Errorf("%s (%s) declares %d constraints on its request but has no valid request in constraintBases and no reason in constraintExcluded",
				id, ops[id].pattern(), n)
		case based && excluded:
			t.Errorf("%s is both in constraintBases and in constraintExcluded (%s)", id, why)
		case n == 0 && (based || excluded):
			t.Errorf("%s declares no constraint on its request: take it out of the tables", id)
		}
	}
	for id := range constraintBases {
		if _, ok := ops[id]; !ok {
			t.Errorf("constraintBases names %s, which the document does not have", id)
		}
	}
	for id := range constraintVariants {
		if _, ok := constraintBases[id]; !ok {
			t.Errorf("constraintVariants names %s, which has no valid request in constraintBases", id)
		}
	}
	for id := range constraintExcluded {
		if _, ok := ops[id]; !ok {
			t.Errorf("constraintExcluded names %s, which the document does not have", id)
		}
	}
}

// TestOpenAPIConstraints sends, for every operation in constraintBases,
// one refused request per constraint its request declares, then its valid
// request, which must succeed; it logs how many constraints of each kind
// were checked.
func TestOpenAPIConstraints(t *testing.T) {
	ops := docOperations(t)
	e := newHookEnv(t, false)
	a, _ := newAuthzSides(e)
	f := &constraintFixture{e: e, s: a, authz: authzRoutes(e)}

	// The operations run in the order the authorization test's owner
	// requests do (the route table's, those that take away what others
	// need last), so the shared objects are in the state each expects.
	byPattern := map[string]string{}
	for id, o := range ops {
		byPattern[o.pattern()] = id
	}
	var order []string
	for _, p := range ownerOrder(f.authz, httpapi.RoutePatterns) {
		if id, ok := byPattern[p]; ok && constraintBases[id] != nil {
			order = append(order, id)
		}
	}
	// Every request is built before any is sent: building makes objects,
	// and fails the test from its own goroutine.
	bases := map[string][]constraintReq{}
	for _, id := range order {
		for _, build := range append([]baseFunc{constraintBases[id]}, constraintVariants[id]...) {
			bases[id] = append(bases[id], build(f, ops[id].pattern()))
		}
	}

	counts, ran := map[string]int{}, 0
	root := e.t
	for _, id := range order {
		o := ops[id]
		t.Run(id, func(t *testing.T) {
			ran++
			e.t = t
			defer func() { e.t = root }()
			// One subtest per field, one below it per kind.
			type check struct {
				c    constraint
				reqs []constraintReq
			}
			byField := map[string][]check{}
			var fields []string
			// Every declared constraint must be reached by a valid request
			// (a oneOf branch or a map no request takes is a gap).
			reached := map[string]bool{}
			for _, c := range operationConstraints(o.op, bases[id]) {
				reached[c.in+" "+c.where+" "+c.kind] = true
			}
			for _, c := range requestConstraints(o.op, nil) {
				if c.kind != "type" && !reached[c.in+" "+c.where+" "+c.kind] {
					t.Errorf("%s declares a %s on %s %s, which no valid request reaches: add it to constraintBases or constraintVariants",
						id, c.kind, c.in, c.where)
				}
			}
			for _, c := range operationConstraints(o.op, bases[id]) {
				reqs, err := refusedReqsOf(bases[id], c)
				if err != nil {
					t.Errorf("%s %s (%s): %v", id, c.field(), c.kind, err)
					continue
				}
				if len(reqs) == 0 {
					continue
				}
				name := c.in + "." + c.field()
				if byField[name] == nil {
					fields = append(fields, name)
				}
				byField[name] = append(byField[name], check{c, reqs})
			}
			for _, name := range fields {
				t.Run(name, func(t *testing.T) {
					for _, ch := range byField[name] {
						counts[ch.c.kind]++
						t.Run(ch.c.kind, func(t *testing.T) {
							e.t = t
							checkRefused(t, e, id, o, ch.reqs[0], ch.c)
							for _, req := range ch.reqs[1:] {
								checkNotTaken(t, e, o, req, ch.c)
							}
						})
					}
				})
			}
			for i, base := range bases[id] {
				name := "valid"
				if i > 0 {
					name = fmt.Sprintf("valid_variant_%d", i)
				}
				t.Run(name, func(t *testing.T) {
					e.t = t
					got := sendConstraintReq(e, o.method, base)
					if ok := got.Status >= 200 && got.Status < 300 || base.form != nil && got.Status == http.StatusSeeOther; !ok {
						t.Errorf("%s %s, the valid request: %d %.500s", o.method, base.path, got.Status, got.Raw)
					}
				})
			}
		})
	}
	total, declared := 0, 0
	var parts []string
	for _, k := range constraintKinds {
		total += counts[k]
		if k != "type" {
			declared += counts[k]
		}
		if counts[k] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k, counts[k]))
		}
	}
	t.Logf("checked %d constraints over %d operations (%d declared bounds, enums, patterns and formats, and %d wrong JSON types): %s",
		total, ran, declared, counts["type"], strings.Join(parts, ", "))
}

// operationConstraints is every constraint op declares on its request,
// each once, as the valid requests bases reach them (a oneOf counts the
// branch each one takes).
func operationConstraints(op *openapi3.Operation, bases []constraintReq) []constraint {
	var out []constraint
	seen := map[string]bool{}
	for i := range bases {
		for _, c := range requestConstraints(op, &bases[i]) {
			if key := c.in + " " + c.where + " " + c.kind; !seen[key] {
				seen[key] = true
				out = append(out, c)
			}
		}
	}
	return out
}

// refusedReqsOf is refusedReq on each of bases that can carry c's field.
// A declared constraint must be on a field one of them holds, so that the
// change replaces a value the server takes (a field a request cannot
// have, such as an individual counterparty's legal_name, is refused
// whatever its value), and that request comes first; the others then
// show the constraint holds whatever the rest of the request is (an
// empty legal_name must not pass as absent on an individual). A wrong
// type is sent once, and may go into the object around the field.
func refusedReqsOf(bases []constraintReq, c constraint) (reqs []constraintReq, err error) {
	first := -1
	if c.in == "body" {
		for i, b := range bases {
			if _, ok := lookupJSON(normalizeJSON(b.body), c.path); ok {
				first = i
				break
			}
		}
		if first < 0 && c.kind != "type" {
			return nil, errors.New("no valid request holds the field: add it to the operation's constraintBases or constraintVariants entry")
		}
	}
	order := slices.Clone(bases)
	if first > 0 {
		order = append([]constraintReq{bases[first]}, slices.Delete(order, first, first+1)...)
	}
	for _, b := range order {
		req, skip, err := refusedReq(b, c)
		switch {
		case err != nil && len(reqs) == 0:
			return nil, err
		case err != nil || skip:
			continue
		}
		reqs = append(reqs, req)
		if c.kind == "type" {
			break
		}
	}
	return reqs, nil
}

// refusedReq is base with c's field just outside c. skip is set for a
// wrong type in an object the valid request does not have (only declared
// bounds must be reached).
func refusedReq(base constraintReq, c constraint) (req constraintReq, skip bool, err error) {
	req = base
	switch c.in {
	case "query", "form":
		vals := base.query
		if c.in == "form" {
			vals = base.form
		}
		var bad string
		if c.kind == "type" {
			bad = "x" // a number or a boolean of a wrong type ("7" is a number in a query)
		} else {
			v, err := badValue(c, vals.Get(c.path[0]), vals.Has(c.path[0]))
			if err != nil {
				return req, false, err
			}
			bad = queryValue(v)
		}
		changed := url.Values{}
		maps.Copy(changed, vals)
		changed.Set(c.path[0], bad)
		if c.in == "form" {
			req.form = changed
		} else {
			req.query = changed
		}
	case "body":
		cur, have := lookupJSON(normalizeJSON(base.body), c.path)
		bad, err := badValue(c, cur, have)
		if err != nil {
			return req, false, err
		}
		body, ok := setJSON(base.body, c.path, bad)
		if !ok {
			if c.kind == "type" {
				return req, true, nil
			}
			return req, false, fmt.Errorf("the valid request has no object to put %s in: make it reach the field", c.field())
		}
		req.body = body.(map[string]any)
	}
	return req, false, nil
}

// checkRefused sends req, base with c's field just outside c, and checks
// the server refuses it as the document says.
func checkRefused(t *testing.T, e *hookEnv, id string, o docOperation, req constraintReq, c constraint) {
	t.Helper()
	got := sendConstraintReq(e, o.method, req)
	want := http.StatusUnprocessableEntity
	if s, ok := constraintStatus[id]; ok && c.kind != "type" {
		want = s
	}
	if c.in == "form" {
		// A page answers its form in HTML, naming the field in the text.
		if got.Status != want || !strings.Contains(html.UnescapeString(got.Raw), c.field()+":") {
			t.Errorf("%s %s with %s outside its %s: %d, want %d naming %s: %.500s", o.method, req.path, c.field(), c.kind, got.Status, want, c.field(), got.Raw)
		}
		return
	}
	if got.Status != want || got.code() != "validation_error" || got.details()[c.field()] == nil {
		t.Errorf("%s %s with %s outside its %s: %d %q naming %v, want %d validation_error naming %s: %.500s",
			o.method, req.path, c.field(), c.kind, got.Status, got.code(), slices.Sorted(maps.Keys(got.details())), want, c.field(), got.Raw)
	}
}

// checkNotTaken sends req, another valid request with c's field just
// outside c, which the server may refuse for another reason (a field the
// request does not take, two that exclude each other) but must not take.
func checkNotTaken(t *testing.T, e *hookEnv, o docOperation, req constraintReq, c constraint) {
	t.Helper()
	if got := sendConstraintReq(e, o.method, req); got.Status < 300 {
		t.Errorf("%s %s with %s outside its %s, in another valid request: %d, want it refused: %.500s",
			o.method, req.path, c.field(), c.kind, got.Status, got.Raw)
	}
}

// sendConstraintReq sends r, a POST with a new Idempotency-Key (a page
// form with none), so that no stored answer is replayed.
func sendConstraintReq(e *hookEnv, method string, r constraintReq) resp {
	e.t.Helper()
	target := r.path
	if len(r.query) > 0 {
		target += "?" + r.query.Encode()
	}
	switch {
	case r.form != nil:
		return e.do(method, target, "", r.form.Encode(), "Content-Type", "application/x-www-form-urlencoded")
	case method == http.MethodPost:
		return e.do(method, target, r.key, jsonBody(r.body), "Idempotency-Key", authzFresh("constraints-"))
	}
	return e.do(method, target, r.key, jsonBody(r.body))
}

// jsonBody is body to send: nil sends none.
func jsonBody(body map[string]any) any {
	if body == nil {
		return nil
	}
	return body
}
