package httpapi_test

import (
	"fmt"
	"maps"
	"net/url"
	"strings"
)

// The kinds of object the authorization fixture makes in each tree; an
// authzSide's ids holds one of each.
const (
	kEntity       = "entity"          // the tree's own entity (A or B), a business
	kAccount      = "account"         // a funded USD account
	kSpareAccount = "spare_account"   // an empty USD account (one that may be deleted)
	kDetails      = "details"         // account details of kAccount
	kCounterparty = "counterparty"    // an individual counterparty, "Ada Lovelace"
	kPayment      = "payment_detail"  // a USD ACH payment detail of kCounterparty
	kEURDetail    = "eur_detail"      // a EUR SEPA payment detail of kCounterparty
	kQuote        = "quote"           // a USD->EUR FX quote, amount_to 5000
	kTransfer     = "transfer"        // a transfer from kAccount to kPayment
	kWebhook      = "webhook"         // a webhook on every event, with deliveries
	kEvent        = "event"           // an event of kEntity
	kReady        = "ready"           // an individual below kEntity with both documents, not submitted
	kPerson       = "person"          // kReady's person
	kDocument     = "document"        // kReady's two-sided identity document
	kSubmission   = "submission"      // the submission of another individual below kEntity
	kAPIKey       = "api_key"         // a full-access API key of kEntity
	kSession      = "funding_session" // an open-banking USD session of kAccount
	kETransfer    = "etransfer"       // an etransfer session of a CAD account of kEntity, awaiting_user
	kIntent       = "payment_intent"  // a USD payment intent of kAccount, requires_action
	kOpenIntent   = "open_intent"     // another, for POST /intent-actions to confirm
	kAction       = "intent_action"   // a completed walletpay intent action
	kChallenge    = "challenge"       // the challenge token of a card action pending_user_action
	kDisputable   = "disputable"      // a completed walletpay intent action with no dispute
	kDispute      = "dispute"         // a dispute of another completed walletpay action, needs_response
	kRefund       = "refund"          // a pending refund of kAction
	kCard         = "card"            // a virtual card of kAccount
	kCardAuth     = "card_auth"       // a pending card transaction of kCard, 100
	kCardClear    = "card_clear"      // another, to clear
	kCardExpire   = "card_expire"     // another, to expire
	kCardSettled  = "card_settled"    // a settled card transaction of kCard, 100
	kProduct      = "product"         // a USD 30-day deposit of kEntity, withdrawable at once, no documents
	kShareProduct = "share_product"   // a USD share offering of kEntity with one LOCKED holding (kShareOrder)
	kSpareProduct = "spare_product"   // another deposit, to deactivate
	kOrder        = "product_order"   // an APPROVED order of kProduct on kAccount, 1000
	kOpenOrder    = "open_order"      // a RESERVED order of kProduct on kAccount, 1000, to confirm
	kShareOrder   = "share_order"     // an APPROVED order of kShareProduct on kAccount, 1000
)

// authzKinds lists the kinds; a kind's index makes its missing ID.
var authzKinds = []string{kEntity, kAccount, kSpareAccount, kDetails, kCounterparty, kPayment, kEURDetail,
	kQuote, kTransfer, kWebhook, kEvent, kReady, kPerson, kDocument, kSubmission, kAPIKey, kSession, kETransfer,
	kIntent, kOpenIntent, kAction, kChallenge, kDisputable, kDispute, kRefund, kCard,
	kCardAuth, kCardClear, kCardExpire, kCardSettled,
	kProduct, kShareProduct, kSpareProduct, kOrder, kOpenOrder, kShareOrder}

// authzMissingID is a well-formed ULID that names no object, one per kind so
// that a request naming several missing objects still tells them apart.
func authzMissingID(kind string) string {
	for i, k := range authzKinds {
		if k == kind {
			return fmt.Sprintf("01HZZZZZZZZZZZZZZZZZZZZ%03d", i)
		}
	}
	panic("authz: unknown kind " + kind)
}

// authzSide is one of the two sibling trees: its entity's keys and one
// object of every kind.
type authzSide struct {
	name      string
	key, ro   string            // full-access and read-only keys of ids[kEntity]
	ids       map[string]string // kind -> ID
	keySecret string            // the secret of ids[kAPIKey]
}

// with returns a copy of s whose kinds name ids[kind] (pairs of kind, ID).
func (s *authzSide) with(pairs ...string) *authzSide {
	c := *s
	c.ids = maps.Clone(s.ids)
	for i := 0; i+1 < len(pairs); i += 2 {
		c.ids[pairs[i]] = pairs[i+1]
	}
	return &c
}

// newAuthzSides builds root -> A and root -> B (newTrees), each approved
// with a full-access and a read-only key, and gives each tree one object
// of every kind, all made through the API by the tree's own key.
func newAuthzSides(e *hookEnv) (a, b *authzSide) {
	e.t.Helper()
	tr := newTrees(e.env)
	_, roB := e.newKey(e.key, tr.b, true)
	a = &authzSide{name: "A", key: tr.keyA, ro: tr.roA, ids: map[string]string{kEntity: tr.a, kAccount: tr.acctA}}
	b = &authzSide{name: "B", key: tr.keyB, ro: roB, ids: map[string]string{kEntity: tr.b, kAccount: tr.acctB}}
	for _, s := range []*authzSide{a, b} {
		e.authzPopulate(s)
	}
	e.drain() // events become listable, and the webhooks get their deliveries
	for _, s := range []*authzSide{a, b} {
		r := e.must(200, "GET", "/events?limit=100", s.key, nil)
		for _, it := range r.Body["data"].([]any) {
			if ev := it.(map[string]any); ev["entity_id"] == s.ids[kEntity] {
				s.ids[kEvent], _ = ev["id"].(string)
				break
			}
		}
		if s.ids[kEvent] == "" {
			e.t.Fatalf("tree %s has no event of its own: %.500s", s.name, r.Raw)
		}
		if r := e.must(200, "GET", "/entity-webhooks/"+s.ids[kWebhook]+"/deliveries", s.key, nil); len(r.Body["data"].([]any)) == 0 {
			e.t.Fatalf("tree %s's webhook has no deliveries: %.500s", s.name, r.Raw)
		}
	}
	for _, k := range authzKinds {
		if a.ids[k] == "" || b.ids[k] == "" || a.ids[k] == b.ids[k] {
			e.t.Fatalf("fixture kind %s: A %q, B %q", k, a.ids[k], b.ids[k])
		}
	}
	return a, b
}

// authzPopulate makes one object of every kind in s's tree with s's key.
func (e *hookEnv) authzPopulate(s *authzSide) {
	e.t.Helper()
	s.ids[kWebhook], _ = e.createHook(s.key, "")
	e.fund(s.key, s.ids[kAccount], 100_000)
	s.ids[kSpareAccount] = e.account(s.key, "", "USD")
	s.ids[kDetails] = e.must(201, "POST", "/account-details", s.key, map[string]any{"account_id": s.ids[kAccount]}).str("data", "id")
	s.ids[kCounterparty] = e.counterparty(s.key, "", "Ada", "Lovelace")
	s.ids[kPayment] = e.achDetail(s.key, s.ids[kCounterparty])
	s.ids[kEURDetail] = e.must(201, "POST", "/payment-details", s.key, authzSEPA(s.ids[kCounterparty])).str("id")
	s.ids[kQuote] = e.must(201, "POST", "/fx-quotes", s.key, authzQuoteBody("")).str("data", "id")
	s.ids[kTransfer] = e.must(201, "POST", "/transfers", s.key,
		transferBody(s.ids[kAccount], s.ids[kPayment], "authz-"+s.name, 100)).str("data", "id")

	sub := e.must(201, "POST", "/individual-entities", s.key, individual("Sub "+s.name)).str("data", "entity", "id")
	e.must(201, "POST", "/documents", s.key, doc(sub, "identity", pngBytes, "image/png"))
	e.must(201, "POST", "/documents", s.key, doc(sub, "proof_of_address", pdfBytes, "application/pdf"))
	s.ids[kSubmission] = e.must(201, "POST", "/onboarding-submissions", s.key, map[string]any{"entity_id": sub}).str("data", "id")

	ready := e.must(201, "POST", "/individual-entities", s.key, individual("Ready "+s.name))
	s.ids[kReady], s.ids[kPerson] = ready.str("data", "entity", "id"), ready.str("data", "person", "id")
	d := doc(s.ids[kReady], "identity", pngBytes, "image/png")
	d["file_back"] = b64(append(append([]byte(nil), pngBytes...), "back side"...))
	s.ids[kDocument] = e.must(201, "POST", "/documents", s.key, d).str("data", "document", "id")
	e.must(201, "POST", "/documents", s.key, doc(s.ids[kReady], "proof_of_address", pdfBytes, "application/pdf"))

	s.ids[kAPIKey], s.keySecret = e.newKey(s.key, "", false)

	s.ids[kSession] = e.must(201, "POST", "/funding-sessions", s.key, sessionBody(s.ids[kAccount], "authz-session-"+s.name)).str("data", "id")
	cad := e.account(s.key, "", "CAD")
	s.ids[kETransfer] = e.must(201, "POST", "/funding-sessions", s.key, map[string]any{"amount": 500, "currency": "CAD",
		"account_id": cad, "unique_reference": "authz-etransfer-" + s.name, "funding_type": "etransfer",
		"redirect_url": "https://example.com/back", "meta": map[string]any{"name": "Ada Lovelace", "email": "ada@example.com"}}).str("data", "id")

	s.ids[kIntent] = e.must(201, "POST", "/payment-intents", s.key, intentBody(s.ids[kAccount], "authz-pi-"+s.name, 700)).str("data", "id")
	s.ids[kOpenIntent] = e.must(201, "POST", "/payment-intents", s.key, intentBody(s.ids[kAccount], "authz-open-"+s.name, 700)).str("data", "id")
	wallet := intentBody(s.ids[kAccount], "authz-wallet-"+s.name, 700)
	wallet["intent_action"] = walletAction()
	s.ids[kAction] = e.must(201, "POST", "/payment-intents", s.key, wallet).str("data", "intent_action", "id")
	s.ids[kRefund] = e.must(200, "POST", "/refunds", s.key, refundBody(s.ids[kAction], "authz-refund-"+s.name, 100)).str("data", "id")
	card := intentBody(s.ids[kAccount], "authz-card-"+s.name, 700)
	card["intent_action"] = cardAction(encryptCard(e.t, testPub(e.t), cardNumber("4242"), "123"), "3ds_required", "https://shop.example/back")
	u := e.must(201, "POST", "/payment-intents", s.key, card).str("data", "intent_action", "next_action", "url")
	_, s.ids[kChallenge], _ = strings.Cut(u, "/sandbox/challenge/")
	for _, k := range []string{kDisputable, kDispute} {
		w := intentBody(s.ids[kAccount], "authz-"+k+"-"+s.name, 700)
		w["intent_action"] = walletAction()
		s.ids[k] = e.must(201, "POST", "/payment-intents", s.key, w).str("data", "intent_action", "id")
	}
	s.ids[kDispute] = e.must(201, "POST", "/sandbox/intent-actions/"+s.ids[kDispute]+"/dispute", s.key,
		map[string]any{"amount": 300}).str("id")
	s.ids[kCard] = e.must(201, "POST", "/virtual-cards", s.key, cardBody(s.ids[kAccount])).str("data", "id")
	for _, k := range []string{kCardAuth, kCardClear, kCardExpire, kCardSettled} {
		s.ids[k] = e.must(201, "POST", "/sandbox/cards/"+s.ids[kCard]+"/authorizations", s.key,
			map[string]any{"amount": 100, "mcc": 5812, "merchant_name": "Cafe"}).str("id")
	}
	e.must(200, "POST", "/sandbox/card-transactions/"+s.ids[kCardSettled]+"/clear", s.key, nil)

	s.ids[kProduct] = e.must(201, "POST", "/sandbox/products", s.key, authzDeposit("Authz deposit "+s.name)).str("id")
	s.ids[kSpareProduct] = e.must(201, "POST", "/sandbox/products", s.key, authzDeposit("Authz spare "+s.name)).str("id")
	s.ids[kShareProduct] = e.must(201, "POST", "/sandbox/products", s.key, authzOffering("Authz offering "+s.name)).str("id")
	s.ids[kOrder] = e.must(201, "POST", "/product-orders", s.key, authzOrderBody(s.ids[kProduct], s.ids[kAccount])).str("data", "id")
	e.must(200, "POST", "/product-orders/"+s.ids[kOrder]+"/confirm", s.key, nil)
	s.ids[kOpenOrder] = e.must(201, "POST", "/product-orders", s.key, authzOrderBody(s.ids[kProduct], s.ids[kAccount])).str("data", "id")
	s.ids[kShareOrder] = e.must(201, "POST", "/product-orders", s.key, map[string]any{"product_id": s.ids[kShareProduct],
		"account_id": s.ids[kAccount], "amount": 1000, "affirmations": []any{}}).str("data", "id")
	e.must(200, "POST", "/product-orders/"+s.ids[kShareOrder]+"/confirm", s.key, nil)
}

// authzDeposit is a USD 30-day deposit product withdrawable from day 0,
// without documents.
func authzDeposit(name string) map[string]any {
	return map[string]any{"type": "FIXED_RETURN", "display_name": name, "description": "<p>Authz</p>", "currency": "USD",
		"tenor_days": 30, "annual_rate": "0.05", "min_principal": 100, "max_principal": 1_000_000,
		"early_withdrawal_enabled": true, "early_withdrawal_penalty_rate": "0.5", "early_withdrawal_min_days": 0, "lock_in_days": 0}
}

// authzOffering is a USD share offering at 100 a share, 1000 shares,
// without fees or documents.
func authzOffering(name string) map[string]any {
	return map[string]any{"type": "SHARE_OFFERING", "display_name": name, "description": "<p>Authz</p>", "currency": "USD",
		"offer_price": 100, "inventory_shares": 1000, "brokerage_fee_rate": "0", "cross_deal_fee_rate": "0", "lock_days": 30}
}

// authzOrderBody orders 1000 of deposit product on account.
func authzOrderBody(product, account string) map[string]any {
	return map[string]any{"product_id": product, "account_id": account, "principal": 1000,
		"waive_early_withdrawal": false, "affirmations": []any{}}
}

// cardBody is a valid USD card of account (virtual or disposable).
func cardBody(account string) map[string]any {
	return map[string]any{"account_id": account, "card_name": "Travel", "currency": "USD",
		"cardholder":       map[string]any{"first_name": "Ada", "last_name": "Lovelace", "email": "ada@example.com", "phone_number": "+442071838750"},
		"expiration_month": "07", "expiration_year": "29"}
}

// sessionBody is a valid open-banking USD session of account.
func sessionBody(account, ref string) map[string]any {
	return map[string]any{"amount": 1000, "currency": "USD", "account_id": account, "unique_reference": ref,
		"redirect_url": "https://example.com/back"}
}

// authzSEPA is a valid EUR payment detail of cp.
func authzSEPA(cp string) map[string]any {
	return map[string]any{"counterparty_id": cp, "payment_method": "bank-transfer", "currency": "EUR", "country": "DE",
		"account_holder_name": "Ada Lovelace", "iban": "DE36379068449631930531"}
}

// authzQuoteTo is the amount_to of every kQuote.
const authzQuoteTo = 5000

// authzQuoteBody is a USD->EUR quote for authzQuoteTo, for account when not "".
func authzQuoteBody(account string) map[string]any {
	q := map[string]any{"from_currency": "USD", "to_currency": "EUR", "amount_to": authzQuoteTo}
	if account != "" {
		q["account_id"] = account
	}
	return q
}

// authzAddQuery appends name=value to path's query.
func authzAddQuery(path, name, value string) string {
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	return path + sep + url.QueryEscape(name) + "=" + url.QueryEscape(value)
}
