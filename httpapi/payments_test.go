package httpapi_test

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/corebank/corebank/httpapi"
	"github.com/corebank/corebank/storage/bolt"
)

// Fixtures of the payments routes.

func cpBody(first, last string) map[string]any {
	return map[string]any{"type": "individual", "profile": map[string]any{
		"first_name": first, "last_name": last, "relationship": "vendor",
		"email":   strings.ToLower(first+"."+last) + "@example.com",
		"address": map[string]any{"line1": "1 Main St", "city": "London", "country": "GB"}}}
}

// counterparty creates an individual counterparty for entity ("" for the
// key's own) and returns its ID.
func (e *env) counterparty(key, entity, first, last string) string {
	e.t.Helper()
	b := cpBody(first, last)
	if entity != "" {
		b["entity_id"] = entity
	}
	return e.must(201, "POST", "/counterparties", key, b).str("data", "id")
}

func achBody(cp string) map[string]any {
	return map[string]any{"counterparty_id": cp, "payment_method": "bank-transfer", "currency": "USD",
		"country": "US", "scheme": "ach", "account_holder_name": "Ada Lovelace", "routing_number": "091000019",
		"account_number": "123456789", "account_type": "checking"}
}

// achDetail creates a USD ACH payment detail of cp and returns its ID.
func (e *env) achDetail(key, cp string) string {
	e.t.Helper()
	return e.must(201, "POST", "/payment-details", key, achBody(cp)).str("id")
}

// fund credits amount to acct through POST /sandbox/inflows (settled).
func (e *env) fund(key, acct string, amount int64) {
	e.t.Helper()
	e.must(201, "POST", "/sandbox/inflows", key, map[string]any{"account_id": acct, "amount": amount})
}

func transferBody(acct, pd, ref string, amount int64) map[string]any {
	return map[string]any{"account_id": acct, "payment_detail_id": pd, "amount": amount,
		"payment_type": "bank-transfer", "narration": "invoice " + ref, "unique_reference": ref}
}

// balance returns an account's available and current balances.
func (e *env) balance(key, acct string) (available, current int64) {
	e.t.Helper()
	r := e.must(200, "GET", "/accounts/"+acct, key, nil)
	b := r.data()["balance"].(map[string]any)
	return int64(b["available"].(float64)), int64(b["current"].(float64))
}

func (e *env) advance(seconds int) {
	e.t.Helper()
	e.must(200, "POST", "/sandbox/clock/advance", e.key, map[string]any{"seconds": seconds})
}

// payFixture is the root's funded USD account with a counterparty and an
// ACH detail, plus tree B's own.
type payFixture struct {
	tr                  *trees
	cp, pd              string // root's
	cpB, pdB            string // entity B's
	quote, quoteB       string
	transfer, transfer2 string
}

func newPayFixture(e *env) *payFixture {
	e.t.Helper()
	f := &payFixture{tr: newTrees(e)}
	f.cp = e.counterparty(e.key, "", "Ada", "Lovelace")
	f.pd = e.achDetail(e.key, f.cp)
	f.cpB = e.counterparty(f.tr.keyB, "", "Bob", "Builder")
	f.pdB = e.achDetail(f.tr.keyB, f.cpB)
	e.fund(e.key, f.tr.acctRoot, 100_000)
	e.fund(f.tr.keyB, f.tr.acctB, 100_000)
	q := map[string]any{"from_currency": "USD", "to_currency": "EUR", "amount_from": 1000}
	f.quote = e.must(201, "POST", "/fx-quotes", e.key, q).str("data", "id")
	f.quoteB = e.must(201, "POST", "/fx-quotes", f.tr.keyB, q).str("data", "id")
	f.transfer = e.must(201, "POST", "/transfers", e.key, transferBody(f.tr.acctRoot, f.pd, "fx-1", 100)).str("data", "id")
	f.transfer2 = e.must(201, "POST", "/transfers", f.tr.keyB, transferBody(f.tr.acctB, f.pdB, "fx-b", 100)).str("data", "id")
	return f
}

func with2(m map[string]any, kv ...any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(out, kv[i].(string))
			continue
		}
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

func TestCounterparties(t *testing.T) {
	e := newEnv(t)
	f := newPayFixture(e)
	tr := f.tr
	r := e.must(201, "POST", "/counterparties", e.key, cpBody("Grace", "Hopper"))
	if r.Body["status"] != "success" || r.str("data", "status") != "active" || r.str("data", "nickname") != "Grace Hopper" ||
		r.str("data", "entity_id") != e.root || r.str("data", "type") != "individual" {
		t.Fatalf("create: %s", r.Raw)
	}
	grace := r.str("data", "id")
	biz := map[string]any{"type": "business", "entity_id": tr.a1, "nickname": "Acme", "meta": map[string]any{"k": "v"},
		"profile": map[string]any{"legal_name": "Acme Inc", "relationship": "supplier", "email": "ap@acme.example",
			"registered_address": map[string]any{"line1": "1 Market St", "city": "SF", "country": "US"},
			"identification":     []any{map[string]any{"type": "L", "number": "C123", "issuing_country": "US"}},
			"phone":              map[string]any{"number": "+14155550100", "type": "work", "country": "US"}}}
	r = e.must(201, "POST", "/counterparties", tr.keyA, biz)
	if r.str("data", "entity_id") != tr.a1 || r.str("data", "profile", "phone", "number") != "+14155550100" {
		t.Fatalf("create for a child: %s", r.Raw)
	}
	acme := r.str("data", "id")
	profile := cpBody("Alan", "Turing")["profile"].(map[string]any)
	ok := cpBody("Alan", "Turing")
	e.run(t, []call{
		// Validation names every field.
		{"CreateErrEmpty", "POST", "/counterparties", map[string]any{}, e.key, 422, "validation_error", "type"},
		{"CreateErrType", "POST", "/counterparties", with2(ok, "type", "robot"), e.key, 422, "validation_error", "type"},
		{"CreateErrFirstName", "POST", "/counterparties", with2(ok, "profile", with2(profile, "first_name", nil)), e.key, 422, "validation_error", "profile.first_name"},
		{"CreateErrRelationship", "POST", "/counterparties", with2(ok, "profile", with2(profile, "relationship", "friend")), e.key, 422, "validation_error", "profile.relationship"},
		{"CreateErrAddressLine1", "POST", "/counterparties", with2(ok, "profile", with2(profile, "address", map[string]any{"city": "x", "country": "GB"})), e.key, 422, "validation_error", "profile.address.line1"},
		{"CreateErrAddressCountry", "POST", "/counterparties", with2(ok, "profile", with2(profile, "address", map[string]any{"line1": "x", "city": "x", "country": "ZZZ"})), e.key, 422, "validation_error", "profile.address.country"},
		{"CreateErrIdentification", "POST", "/counterparties", with2(ok, "profile", with2(profile, "identification", []any{map[string]any{"type": "P"}})), e.key, 422, "validation_error", "profile.identification.0.number"},
		{"CreateErrPhone", "POST", "/counterparties", with2(ok, "profile", with2(profile, "phone", map[string]any{"number": "12", "type": "mobile", "country": "GB"})), e.key, 422, "validation_error", "profile.phone.number"},
		{"CreateErrUnknownField", "POST", "/counterparties", with2(ok, "entity", e.root), e.key, 422, "validation_error", "entity"},
		{"CreateErrUnknownNested", "POST", "/counterparties", with2(ok, "profile", with2(profile, "nick", "x")), e.key, 422, "validation_error", "profile.nick"},
		{"CreateErrWrongType", "POST", "/counterparties", with2(ok, "profile", "x"), e.key, 422, "validation_error", "profile"},
		{"CreateErrDuplicate", "POST", "/counterparties", cpBody("Grace", "Hopper"), e.key, 422, "validation_error", "profile.email"},
		// entity_id unknown or outside the tree: 409, alike.
		{"CreateErrForeignEntity", "POST", "/counterparties", with2(ok, "entity_id", tr.b), tr.keyA, 409, "conflict", "entity_id"},
		{"CreateErrUpEntity", "POST", "/counterparties", with2(ok, "entity_id", e.root), tr.keyA, 409, "conflict", "entity_id"},
		{"CreateErrUnknownEntity", "POST", "/counterparties", with2(ok, "entity_id", "01HZZZZZZZZZZZZZZZZZZZZZZZ"), tr.keyA, 409, "conflict", "entity_id"},
		{"CreateErrNoKey", "POST", "/counterparties", ok, "", 401, "unauthorized", ""},
		{"CreateErrReadOnly", "POST", "/counterparties", ok, e.roKey, 403, "forbidden", ""},
		// Reads.
		{"GetOK", "GET", "/counterparties/" + grace, nil, e.key, 200, "", ""},
		{"GetOKChildFromParent", "GET", "/counterparties/" + acme, nil, e.key, 200, "", ""},
		{"GetOKEntityParam", "GET", "/counterparties/" + acme + "?entity_id=" + tr.a1, nil, tr.keyA, 200, "", ""},
		{"GetOKReadOnly", "GET", "/counterparties/" + grace, nil, e.roKey, 200, "", ""},
		{"GetErrOtherTree", "GET", "/counterparties/" + f.cpB, nil, tr.keyA, 404, "not_found", ""},
		{"GetErrUp", "GET", "/counterparties/" + grace, nil, tr.keyA, 404, "not_found", ""},
		{"GetErrWrongEntityParam", "GET", "/counterparties/" + acme + "?entity_id=" + tr.b, nil, e.key, 404, "not_found", ""},
		{"GetErrMissing", "GET", "/counterparties/nope", nil, e.key, 404, "not_found", ""},
		{"GetErrNoKey", "GET", "/counterparties/" + grace, nil, "", 401, "unauthorized", ""},
		// Updates.
		{"PatchOK", "PATCH", "/counterparties/" + grace, map[string]any{"nickname": "Amazing Grace", "profile": map[string]any{"address": map[string]any{"city": "New York", "country": "US"}}}, e.key, 200, "", ""},
		{"PatchErrEmail", "PATCH", "/counterparties/" + grace, map[string]any{"profile": map[string]any{"email": "nope"}}, e.key, 422, "validation_error", "profile.email"},
		{"PatchErrUnknownField", "PATCH", "/counterparties/" + grace, map[string]any{"status": "inactive"}, e.key, 422, "validation_error", "status"},
		{"PatchErrOtherTree", "PATCH", "/counterparties/" + f.cpB, map[string]any{"nickname": "x"}, tr.keyA, 404, "not_found", ""},
		{"PatchErrEntityMismatch", "PATCH", "/counterparties/" + grace + "?entity_id=" + tr.a, map[string]any{"entity_id": e.root}, e.key, 422, "validation_error", "entity_id"},
		{"PatchErrReadOnly", "PATCH", "/counterparties/" + grace, map[string]any{"nickname": "x"}, e.roKey, 403, "forbidden", ""},
		{"DeactivateErrOtherTree", "POST", "/counterparties/" + f.cpB + "/deactivate", nil, tr.keyA, 404, "not_found", ""},
		{"DeactivateErrReadOnly", "POST", "/counterparties/" + grace + "/deactivate", nil, e.roKey, 403, "forbidden", ""},
		{"DeactivateErrBody", "POST", "/counterparties/" + grace + "/deactivate", map[string]any{"reason": "x"}, e.key, 422, "validation_error", "reason"},
		// Lists.
		{"ListOK", "GET", "/counterparties", nil, e.key, 200, "", ""},
		{"ListOKFilters", "GET", "/counterparties?type=business&status=active&entity_id=" + tr.a1, nil, tr.keyA, 200, "", ""},
		{"ListErrType", "GET", "/counterparties?type=robot&limit=0", nil, e.key, 422, "validation_error", "limit"},
		{"ListErrStatus", "GET", "/counterparties?status=gone", nil, e.key, 422, "validation_error", "status"},
		{"ListErrCursor", "GET", "/counterparties?cursor=abc", nil, e.key, 422, "validation_error", "cursor"},
		{"ListErrLimit", "GET", "/counterparties?limit=101", nil, e.key, 422, "validation_error", "limit"},
		{"ListErrOtherTree", "GET", "/counterparties?entity_id=" + tr.b, nil, tr.keyA, 404, "not_found", ""},
		{"ListErrNoKey", "GET", "/counterparties", nil, "", 401, "unauthorized", ""},
		{"DetailsOK", "GET", "/counterparties/" + f.cp + "/payment-details", nil, e.key, 200, "", ""},
		{"DetailsErrOtherTree", "GET", "/counterparties/" + f.cpB + "/payment-details", nil, tr.keyA, 404, "not_found", ""},
		{"DetailsErrLimit", "GET", "/counterparties/" + f.cp + "/payment-details?limit=0", nil, e.key, 422, "validation_error", "limit"},
	})
	r = e.must(200, "GET", "/counterparties/"+grace, e.key, nil)
	if r.str("data", "nickname") != "Amazing Grace" || r.str("data", "profile", "address", "city") != "New York" || r.str("data", "profile", "address", "line1") != "1 Main St" {
		t.Fatalf("patch did not apply field by field: %s", r.Raw)
	}
	// The list filters and carries has_more beside the standard fields.
	r = e.must(200, "GET", "/counterparties?type=business&entity_id="+tr.a1, tr.keyA, nil)
	items := r.Body["data"].([]any)
	if len(items) != 1 || items[0].(map[string]any)["id"] != acme {
		t.Fatalf("filtered list: %s", r.Raw)
	}
	pag := r.Body["meta"].(map[string]any)["pagination"].(map[string]any)
	for _, k := range []string{"limit", "has_next", "has_previous", "next_cursor", "previous_cursor", "has_more"} {
		if _, ok := pag[k]; !ok {
			t.Fatalf("pagination lacks %s: %s", k, r.Raw)
		}
	}
	fa := r.Body["meta"].(map[string]any)["filters_applied"].(map[string]any)
	if fa["type"] != "business" || fa["entity_id"] != tr.a1 {
		t.Fatalf("filters_applied: %s", r.Raw)
	}
	// A key's own list holds only its entity's counterparties.
	r = e.must(200, "GET", "/counterparties", tr.keyB, nil)
	if items := r.Body["data"].([]any); len(items) != 1 || items[0].(map[string]any)["id"] != f.cpB {
		t.Fatalf("B's list: %s", r.Raw)
	}
	// Deactivate: inactive, it receives no new details or transfers.
	r = e.must(200, "POST", "/counterparties/"+grace+"/deactivate", e.key, nil)
	if r.Body["status"] != "success" || r.str("data", "status") != "inactive" || r.data()["deleted"] == 0.0 {
		t.Fatalf("deactivate: %s", r.Raw)
	}
	e.must(200, "POST", "/counterparties/"+grace+"/deactivate", e.key, nil)
	if r := e.do("POST", "/payment-details", e.key, achBody(grace)); r.Status != 422 || r.details()["counterparty_id"] == nil {
		t.Fatalf("detail for an inactive counterparty: %d %s", r.Status, r.Raw)
	}
	r = e.must(200, "GET", "/counterparties?status=inactive", e.key, nil)
	if items := r.Body["data"].([]any); len(items) != 1 || items[0].(map[string]any)["id"] != grace {
		t.Fatalf("inactive list: %s", r.Raw)
	}
	// The counterparty's payment details list.
	r = e.must(200, "GET", "/counterparties/"+f.cp+"/payment-details", e.key, nil)
	if items := r.Body["data"].([]any); len(items) != 1 || items[0].(map[string]any)["id"] != f.pd {
		t.Fatalf("details list: %s", r.Raw)
	}
	// A foreign entity_id answers exactly as an unknown one.
	foreign := e.do("POST", "/counterparties", tr.keyA, with2(ok, "entity_id", tr.b))
	unknown := e.do("POST", "/counterparties", tr.keyA, with2(ok, "entity_id", "01HZZZZZZZZZZZZZZZZZZZZZZZ"))
	if foreign.Raw != unknown.Raw {
		t.Fatalf("foreign and unknown entity_id differ:\n%s\n%s", foreign.Raw, unknown.Raw)
	}
}

func TestPaymentDetails(t *testing.T) {
	e := newEnv(t)
	f := newPayFixture(e)
	tr := f.tr
	// Create answers the bare object.
	r := e.must(201, "POST", "/payment-details", e.key, achBody(f.cp))
	if r.Body["status"] != nil || r.Body["data"] != nil || r.str("id") == "" || r.str("counterparty_id") != f.cp ||
		r.str("entity_id") != e.root || r.str("scheme") != "ach" {
		t.Fatalf("create: %s", r.Raw)
	}
	pd := r.str("id")
	gbp := map[string]any{"counterparty_id": f.cp, "payment_method": "bank-transfer", "currency": "GBP", "scheme": "fps",
		"country": "GB", "account_holder_name": "Ada", "sort_code": "040004", "account_number": "12345678"}
	e.must(201, "POST", "/payment-details", e.key, gbp)
	cpA1 := e.counterparty(tr.keyA, tr.a1, "Child", "Payee")
	ach := achBody(f.cp)
	e.run(t, []call{
		{"CreateErrEmpty", "POST", "/payment-details", map[string]any{}, e.key, 422, "validation_error", "payment_method"},
		{"CreateErrRouting", "POST", "/payment-details", with2(ach, "routing_number", "123"), e.key, 422, "validation_error", "routing_number"},
		{"CreateErrAccountType", "POST", "/payment-details", with2(ach, "account_type", "gold"), e.key, 422, "validation_error", "account_type"},
		{"CreateErrScheme", "POST", "/payment-details", with2(ach, "scheme", nil), e.key, 422, "validation_error", "scheme"},
		{"CreateErrMethod", "POST", "/payment-details", with2(ach, "payment_method", "pigeon"), e.key, 422, "validation_error", "payment_method"},
		{"CreateErrOtherRail", "POST", "/payment-details", with2(ach, "sort_code", "040004"), e.key, 422, "validation_error", "sort_code"},
		{"CreateErrSortCode", "POST", "/payment-details", with2(gbp, "sort_code", "04"), e.key, 422, "validation_error", "sort_code"},
		{"CreateErrUnknownField", "POST", "/payment-details", with2(ach, "bic", "x"), e.key, 422, "validation_error", "bic"},
		{"CreateErrWrongType", "POST", "/payment-details", with2(ach, "bank_address", "x"), e.key, 422, "validation_error", "bank_address"},
		{"CreateErrOtherTreeCounterparty", "POST", "/payment-details", achBody(f.cpB), tr.keyA, 404, "not_found", ""},
		{"CreateErrUnknownCounterparty", "POST", "/payment-details", achBody("01HZZZZZZZZZZZZZZZZZZZZZZZ"), e.key, 404, "not_found", ""},
		{"CreateErrEntityParam", "POST", "/payment-details", with2(ach, "entity_id", tr.b), e.key, 404, "not_found", ""},
		{"CreateOKChild", "POST", "/payment-details", achBody(cpA1), tr.keyA, 201, "", ""},
		{"CreateErrNoKey", "POST", "/payment-details", ach, "", 401, "unauthorized", ""},
		{"CreateErrReadOnly", "POST", "/payment-details", ach, e.roKey, 403, "forbidden", ""},
		{"GetOK", "GET", "/payment-details/" + pd, nil, e.key, 200, "", ""},
		{"GetOKReadOnly", "GET", "/payment-details/" + pd, nil, e.roKey, 200, "", ""},
		{"GetErrOtherTree", "GET", "/payment-details/" + f.pdB, nil, tr.keyA, 404, "not_found", ""},
		{"GetErrMissing", "GET", "/payment-details/nope", nil, e.key, 404, "not_found", ""},
		{"GetErrNoKey", "GET", "/payment-details/" + pd, nil, "", 401, "unauthorized", ""},
		{"PatchOK", "PATCH", "/payment-details/" + pd, map[string]any{"account_holder_name": "A. Lovelace", "bank_name": "Chase"}, e.key, 200, "", ""},
		{"PatchErrAccountNumber", "PATCH", "/payment-details/" + pd, map[string]any{"account_number": "x"}, e.key, 422, "validation_error", "account_number"},
		{"PatchErrUnknownField", "PATCH", "/payment-details/" + pd, map[string]any{"id": "x"}, e.key, 422, "validation_error", "id"},
		{"PatchErrForeignCounterparty", "PATCH", "/payment-details/" + pd, map[string]any{"counterparty_id": f.cpB}, e.key, 404, "not_found", ""},
		{"PatchErrOtherTree", "PATCH", "/payment-details/" + f.pdB, map[string]any{"bank_name": "x"}, tr.keyA, 404, "not_found", ""},
		{"PatchErrReadOnly", "PATCH", "/payment-details/" + pd, map[string]any{"bank_name": "x"}, e.roKey, 403, "forbidden", ""},
	})
	r = e.must(200, "GET", "/payment-details/"+pd, e.key, nil)
	if r.Body["status"] != "success" || r.str("data", "id") != pd || r.str("data", "account_holder_name") != "A. Lovelace" ||
		r.str("data", "bank_name") != "Chase" || r.str("data", "routing_number") != "091000019" {
		t.Fatalf("get after patch: %s", r.Raw)
	}
	// Changing the rail clears the old rail's fields.
	r = e.must(200, "PATCH", "/payment-details/"+pd, e.key, map[string]any{"currency": "GBP", "scheme": "fps", "country": "GB",
		"sort_code": "040004", "account_number": "12345678"})
	if r.str("data", "routing_number") != "" || r.str("data", "sort_code") != "040004" {
		t.Fatalf("rail change: %s", r.Raw)
	}
}

func TestFXQuotes(t *testing.T) {
	e := newEnv(t)
	f := newPayFixture(e)
	tr := f.tr
	q := map[string]any{"from_currency": "USD", "to_currency": "EUR", "amount_from": 10_000, "account_id": tr.acctRoot}
	r := e.must(201, "POST", "/fx-quotes", e.key, q)
	if r.Body["status"] != "success" || r.str("data", "quote", "status") != "active" || r.str("data", "from") != "USD" ||
		r.str("data", "to") != "EUR" || r.data()["amount_to"].(float64) <= 0 || r.data()["rate"] == nil {
		t.Fatalf("create: %s", r.Raw)
	}
	id := r.str("data", "id")
	e.run(t, []call{
		{"CreateErrEmpty", "POST", "/fx-quotes", map[string]any{}, e.key, 422, "validation_error", "from_currency"},
		{"CreateErrSmall", "POST", "/fx-quotes", with2(q, "amount_from", 99), e.key, 422, "validation_error", "amount_from"},
		{"CreateErrBoth", "POST", "/fx-quotes", with2(q, "amount_to", 5), e.key, 422, "validation_error", "amount_to"},
		{"CreateErrPair", "POST", "/fx-quotes", with2(q, "to_currency", "XYZ", "account_id", nil), e.key, 422, "validation_error", "to_currency"},
		{"CreateErrSame", "POST", "/fx-quotes", with2(q, "to_currency", "USD", "account_id", nil), e.key, 422, "validation_error", ""},
		{"CreateErrAccountCurrency", "POST", "/fx-quotes", with2(q, "from_currency", "GBP"), e.key, 422, "validation_error", "account_id"},
		{"CreateErrWrongType", "POST", "/fx-quotes", with2(q, "amount_from", "100"), e.key, 422, "validation_error", "amount_from"},
		{"CreateErrOtherTreeAccount", "POST", "/fx-quotes", with2(q, "account_id", tr.acctB), tr.keyA, 404, "not_found", ""},
		{"CreateErrOtherTreeEntity", "POST", "/fx-quotes", with2(q, "account_id", nil, "entity_id", tr.b), tr.keyA, 404, "not_found", ""},
		{"CreateOKChildAccount", "POST", "/fx-quotes", with2(q, "account_id", tr.acctA1), tr.keyA, 201, "", ""},
		{"CreateErrNoKey", "POST", "/fx-quotes", q, "", 401, "unauthorized", ""},
		{"CreateErrReadOnly", "POST", "/fx-quotes", q, e.roKey, 403, "forbidden", ""},
		{"GetOK", "GET", "/fx-quotes/" + id, nil, e.key, 200, "", ""},
		{"GetErrOtherTree", "GET", "/fx-quotes/" + f.quoteB, nil, tr.keyA, 404, "not_found", ""},
		{"GetErrMissing", "GET", "/fx-quotes/nope", nil, e.key, 404, "not_found", ""},
		{"GetErrNoKey", "GET", "/fx-quotes/" + id, nil, "", 401, "unauthorized", ""},
		// Outage: 503 until switched off.
		{"OutageErrMissing", "POST", "/sandbox/fx/outage", map[string]any{}, e.key, 422, "validation_error", "enabled"},
		{"OutageErrType", "POST", "/sandbox/fx/outage", map[string]any{"enabled": "yes"}, e.key, 422, "validation_error", "enabled"},
		{"OutageErrReadOnly", "POST", "/sandbox/fx/outage", map[string]any{"enabled": true}, e.roKey, 403, "forbidden", ""},
	})
	// Outage: 503 fx_provider_unavailable until switched off.
	e.must(200, "POST", "/sandbox/fx/outage", e.key, map[string]any{"enabled": true})
	if r := e.do("POST", "/fx-quotes", e.key, q); r.Status != 503 || r.code() != "fx_provider_unavailable" || r.Body["status"] != "error" {
		t.Fatalf("during outage: %d %s", r.Status, r.Raw)
	}
	e.must(200, "GET", "/fx-quotes/"+id, e.key, nil)
	e.must(200, "POST", "/sandbox/fx/outage", e.key, map[string]any{"enabled": false})
	e.must(201, "POST", "/fx-quotes", e.key, q)
	r = e.must(200, "POST", "/sandbox/fx/outage", e.key, map[string]any{"enabled": false})
	if r.Raw != "{\"enabled\":false}\n" {
		t.Fatalf("outage body: %q", r.Raw)
	}
	// valid_for counts down; past expires_at the quote reads expired.
	e.advance(60)
	r = e.must(200, "GET", "/fx-quotes/"+id, e.key, nil)
	if r.data()["quote"].(map[string]any)["valid_for"] != 120.0 {
		t.Fatalf("valid_for after 60 s: %s", r.Raw)
	}
	e.advance(200)
	r = e.must(200, "GET", "/fx-quotes/"+id, e.key, nil)
	if r.str("data", "quote", "status") != "expired" || r.data()["quote"].(map[string]any)["valid_for"] != 0.0 {
		t.Fatalf("expired quote: %s", r.Raw)
	}
}

func TestTransfers(t *testing.T) {
	e := newEnv(t)
	f := newPayFixture(e)
	tr := f.tr
	body := transferBody(tr.acctRoot, f.pd, "t-1", 2_500)
	r := e.must(201, "POST", "/transfers", e.key, with2(body, "meta", map[string]any{"invoice": "42"}))
	tx := r.data()
	if r.Body["status"] != "success" || tx["status"] != "pending" || tx["status_reason"] != "awaiting_processing" ||
		tx["type"] != "outflow" || tx["amount"] != 2500.0 || tx["applicable_fee"] != 0.0 || tx["currency"] != "USD" ||
		tx["counterparty_id"] != f.cp || tx["entity_id"] != e.root || tx["unique_reference"] != "t-1" {
		t.Fatalf("create: %s", r.Raw)
	}
	id := tx["id"].(string)
	// A duplicate unique_reference returns the original under data.
	r = e.must(409, "POST", "/transfers", e.key, with2(body, "amount", 7))
	if r.code() != "duplicate_reference" || r.str("data", "id") != id || r.data()["amount"] != 2500.0 {
		t.Fatalf("duplicate: %s", r.Raw)
	}
	long := strings.Repeat("x", 101)
	e.run(t, []call{
		{"CreateErrEmpty", "POST", "/transfers", map[string]any{}, e.key, 422, "validation_error", "account_id"},
		{"CreateErrAmount", "POST", "/transfers", with2(body, "amount", 0, "unique_reference", "v1"), e.key, 422, "validation_error", "amount"},
		{"CreateErrNarration", "POST", "/transfers", with2(body, "narration", long, "unique_reference", "v2"), e.key, 422, "validation_error", "narration"},
		{"CreateErrNarrationMissing", "POST", "/transfers", with2(body, "narration", nil, "unique_reference", "v2"), e.key, 422, "validation_error", "narration"},
		{"CreateErrReference", "POST", "/transfers", with2(body, "unique_reference", strings.Repeat("r", 65)), e.key, 422, "validation_error", "unique_reference"},
		{"CreateErrPaymentType", "POST", "/transfers", with2(body, "payment_type", "momo-transfer", "unique_reference", "v3"), e.key, 422, "validation_error", "payment_type"},
		{"CreateErrCurrency", "POST", "/transfers", with2(body, "currency", "EUR", "unique_reference", "v4"), e.key, 422, "validation_error", ""},
		{"CreateErrMeta", "POST", "/transfers", with2(body, "meta", map[string]any{"n": 1}, "unique_reference", "v5"), e.key, 422, "validation_error", "meta.n"},
		{"CreateErrUnknownField", "POST", "/transfers", with2(body, "entityid", tr.b, "unique_reference", "v6"), e.key, 422, "validation_error", "entityid"},
		{"CreateErrAmountType", "POST", "/transfers", with2(body, "amount", 1.5, "unique_reference", "v7"), e.key, 422, "validation_error", "amount"},
		{"CreateErrInsufficient", "POST", "/transfers", with2(body, "amount", 10_000_000, "unique_reference", "v8"), e.key, 422, "insufficient_funds", ""},
		{"CreateErrOtherTreeAccount", "POST", "/transfers", transferBody(tr.acctB, f.pdB, "v9", 1), tr.keyA, 404, "not_found", ""},
		{"CreateErrOtherTreeDetail", "POST", "/transfers", transferBody(tr.acctRoot, f.pdB, "v10", 1), e.key, 404, "not_found", ""},
		{"CreateErrOtherTreeEntity", "POST", "/transfers", with2(body, "entity_id", tr.b, "unique_reference", "v11"), tr.keyA, 404, "not_found", ""},
		{"CreateErrAccountNotEntitys", "POST", "/transfers", with2(body, "entity_id", tr.a, "unique_reference", "v12"), e.key, 404, "not_found", ""},
		{"CreateErrUnknownAccount", "POST", "/transfers", transferBody("01HZZZZZZZZZZZZZZZZZZZZZZZ", f.pd, "v13", 1), e.key, 404, "not_found", ""},
		{"CreateErrNoKey", "POST", "/transfers", body, "", 401, "unauthorized", ""},
		{"CreateErrReadOnly", "POST", "/transfers", body, e.roKey, 403, "forbidden", ""},
		{"GetOK", "GET", "/transfers/" + id, nil, e.key, 200, "", ""},
		{"GetOKReadOnly", "GET", "/transfers/" + id, nil, e.roKey, 200, "", ""},
		{"GetErrOtherTree", "GET", "/transfers/" + f.transfer2, nil, tr.keyA, 404, "not_found", ""},
		{"GetErrUp", "GET", "/transfers/" + id, nil, tr.keyA, 404, "not_found", ""},
		{"GetErrMissing", "GET", "/transfers/nope", nil, e.key, 404, "not_found", ""},
		{"GetErrNoKey", "GET", "/transfers/" + id, nil, "", 401, "unauthorized", ""},
		{"ListOK", "GET", "/transfers", nil, e.key, 200, "", ""},
		{"ListOKFilters", "GET", "/transfers?status=pending&account_id=" + tr.acctRoot + "&entity_id=" + e.root, nil, e.key, 200, "", ""},
		{"ListOKChild", "GET", "/transfers?entity_id=" + tr.b, nil, e.key, 200, "", ""},
		{"ListErrStatus", "GET", "/transfers?status=done", nil, e.key, 422, "validation_error", "status"},
		{"ListErrLimitLow", "GET", "/transfers?limit=0", nil, e.key, 422, "validation_error", "limit"},
		{"ListErrLimitHigh", "GET", "/transfers?limit=101", nil, e.key, 422, "validation_error", "limit"},
		{"ListErrCursor", "GET", "/transfers?cursor=" + url.QueryEscape("not a cursor"), nil, e.key, 422, "validation_error", "cursor"},
		{"ListErrOtherTreeAccount", "GET", "/transfers?account_id=" + tr.acctB, nil, tr.keyA, 404, "not_found", ""},
		{"ListErrOtherTreeEntity", "GET", "/transfers?entity_id=" + tr.b, nil, tr.keyA, 404, "not_found", ""},
		{"ListErrNoKey", "GET", "/transfers", nil, "", 401, "unauthorized", ""},
		{"SimulateErrOutcome", "POST", "/sandbox/transfers/" + id + "/simulate", map[string]any{"outcome": "lost"}, e.key, 422, "validation_error", "outcome"},
		{"SimulateErrMissing", "POST", "/sandbox/transfers/" + id + "/simulate", map[string]any{}, e.key, 422, "validation_error", "outcome"},
		{"SimulateErrState", "POST", "/sandbox/transfers/" + id + "/simulate", map[string]any{"outcome": "reversed"}, e.key, 409, "error_operation_invalid_for_state", ""},
		{"SimulateErrOtherTree", "POST", "/sandbox/transfers/" + f.transfer2 + "/simulate", map[string]any{"outcome": "failed"}, tr.keyA, 404, "not_found", ""},
		{"SimulateErrReadOnly", "POST", "/sandbox/transfers/" + id + "/simulate", map[string]any{"outcome": "failed"}, e.roKey, 403, "forbidden", ""},
		{"SimulateErrUnknown", "POST", "/sandbox/transfers/nope/simulate", map[string]any{"outcome": "failed"}, e.key, 404, "not_found", ""},
	})
	// The list filters by account and status, and defaults to 20.
	r = e.must(200, "GET", "/transfers?status=pending&account_id="+tr.acctRoot, e.key, nil)
	items := r.Body["data"].([]any)
	if len(items) != 2 || r.Body["meta"].(map[string]any)["pagination"].(map[string]any)["limit"] != 20.0 {
		t.Fatalf("list: %s", r.Raw)
	}
	fa := r.Body["meta"].(map[string]any)["filters_applied"].(map[string]any)
	if fa["account_id"] != tr.acctRoot || fa["status"] != "pending" || fa["entity_id"] != e.root {
		t.Fatalf("filters_applied: %s", r.Raw)
	}
	if r := e.must(200, "GET", "/transfers?status=successful", e.key, nil); len(r.Body["data"].([]any)) != 0 {
		t.Fatalf("successful list: %s", r.Raw)
	}
	// Another entity's list (B's, from the root) holds B's transfer only.
	r = e.must(200, "GET", "/transfers?entity_id="+tr.b, e.key, nil)
	if items := r.Body["data"].([]any); len(items) != 1 || items[0].(map[string]any)["id"] != f.transfer2 {
		t.Fatalf("B's list: %s", r.Raw)
	}
	// An account in a child's tree acts for the child without entity_id.
	cpA := e.counterparty(tr.keyA, "", "Child", "Vendor")
	pdA := e.achDetail(tr.keyA, cpA)
	e.fund(tr.keyA, tr.acctA, 1000)
	e.must(201, "POST", "/transfers", e.key, transferBody(tr.acctA, pdA, "child-1", 10))
	r = e.must(200, "GET", "/transfers?account_id="+tr.acctA, e.key, nil)
	if items := r.Body["data"].([]any); len(items) != 1 || items[0].(map[string]any)["entity_id"] != tr.a {
		t.Fatalf("child's transfer: %s", r.Raw)
	}
}

// TestPaymentsForeignLooksMissing checks that another tree's payment
// objects answer exactly as missing ones.
func TestPaymentsForeignLooksMissing(t *testing.T) {
	e := newEnv(t)
	f := newPayFixture(e)
	const missing = "01HZZZZZZZZZZZZZZZZZZZZZZZ"
	for _, c := range []struct {
		method, path, id string
		body             any
	}{
		{"GET", "/counterparties/%s", f.cpB, nil},
		{"PATCH", "/counterparties/%s", f.cpB, map[string]any{"nickname": "x"}},
		{"POST", "/counterparties/%s/deactivate", f.cpB, nil},
		{"GET", "/counterparties/%s/payment-details", f.cpB, nil},
		{"GET", "/payment-details/%s", f.pdB, nil},
		{"PATCH", "/payment-details/%s", f.pdB, map[string]any{"bank_name": "x"}},
		{"GET", "/fx-quotes/%s", f.quoteB, nil},
		{"GET", "/transfers/%s", f.transfer2, nil},
		{"POST", "/sandbox/transfers/%s/simulate", f.transfer2, map[string]any{"outcome": "failed"}},
		{"GET", "/transfers?account_id=%s", f.tr.acctB, nil},
	} {
		foreign := e.do(c.method, fmt.Sprintf(c.path, c.id), f.tr.keyA, c.body)
		gone := e.do(c.method, fmt.Sprintf(c.path, missing), f.tr.keyA, c.body)
		if foreign.Status != 404 || gone.Status != 404 {
			t.Fatalf("%s %s: foreign %d, missing %d", c.method, c.path, foreign.Status, gone.Status)
		}
		if a, b := strings.ReplaceAll(foreign.Raw, c.id, "ID"), strings.ReplaceAll(gone.Raw, missing, "ID"); a != b {
			t.Errorf("%s %s differs:\nforeign %s\nmissing %s", c.method, c.path, a, b)
		}
	}
	// In bodies too.
	for _, c := range []struct {
		path, field, id string
		body            map[string]any
	}{
		{"/payment-details", "counterparty_id", f.cpB, achBody("")},
		{"/transfers", "account_id", f.tr.acctB, transferBody("", f.pd, "r", 1)},
		{"/transfers", "payment_detail_id", f.pdB, transferBody(f.tr.acctA, "", "r", 1)},
		{"/fx-quotes", "account_id", f.tr.acctB, map[string]any{"from_currency": "USD", "to_currency": "EUR", "amount_from": 1000}},
	} {
		foreign := e.do("POST", c.path, f.tr.keyA, with2(c.body, c.field, c.id))
		gone := e.do("POST", c.path, f.tr.keyA, with2(c.body, c.field, missing))
		if foreign.Status != 404 || gone.Status != 404 {
			t.Fatalf("POST %s %s: foreign %d %s, missing %d", c.path, c.field, foreign.Status, foreign.Raw, gone.Status)
		}
		if a, b := strings.ReplaceAll(foreign.Raw, c.id, "ID"), strings.ReplaceAll(gone.Raw, missing, "ID"); a != b {
			t.Errorf("POST %s %s differs:\nforeign %s\nmissing %s", c.path, c.field, a, b)
		}
	}
}

// TestPaymentsPagination walks GET /counterparties and GET /transfers
// forward and back: every item exactly once, in creation order.
func TestPaymentsPagination(t *testing.T) {
	e := newEnv(t)
	acct := e.account(e.key, "", "USD")
	e.fund(e.key, acct, 1_000_000)
	var cps, trs []string
	for i := 0; i < 23; i++ {
		cps = append(cps, e.counterparty(e.key, "", fmt.Sprintf("Payee%02d", i), "Walk"))
	}
	pd := e.achDetail(e.key, cps[0])
	for i := 0; i < 27; i++ {
		r := e.must(201, "POST", "/transfers", e.key, transferBody(acct, pd, fmt.Sprintf("walk-%d", i), int64(i+1)))
		trs = append(trs, r.str("data", "id"))
	}
	for _, c := range []struct {
		path string
		want []string
	}{{"/counterparties", cps}, {"/transfers", trs}, {"/transfers?status=pending&account_id=" + acct, trs}} {
		for _, limit := range []int{1, 4, 20, 100} {
			fwd, back := walk(t, e, c.path, limit)
			if strings.Join(fwd, ",") != strings.Join(c.want, ",") {
				t.Fatalf("%s limit %d forward: %d items, want %d", c.path, limit, len(fwd), len(c.want))
			}
			if len(c.want) > limit && strings.Join(back, ",") != strings.Join(c.want[:len(back)], ",") {
				t.Fatalf("%s limit %d backward: %v", c.path, limit, back)
			}
			seen := map[string]bool{}
			for _, id := range fwd {
				if seen[id] {
					t.Fatalf("%s: %s twice", c.path, id)
				}
				seen[id] = true
			}
		}
	}
	// has_more follows has_next; a cursor from one list is refused by another.
	r := e.must(200, "GET", "/counterparties?limit=5", e.key, nil)
	pag := r.Body["meta"].(map[string]any)["pagination"].(map[string]any)
	if pag["has_more"] != true || pag["has_next"] != true {
		t.Fatalf("has_more: %s", r.Raw)
	}
	cur := url.QueryEscape(pag["next_cursor"].(string))
	e.must(200, "GET", "/counterparties?limit=5&cursor="+cur, e.key, nil)
	e.must(422, "GET", "/transfers?cursor="+cur, e.key, nil)
	e.must(422, "GET", "/counterparties?type=business&cursor="+cur, e.key, nil)
}

// TestTransferLifecycle runs transfers end to end over HTTP.
func TestTransferLifecycle(t *testing.T) {
	e := newEnv(t)
	acct := e.account(e.key, "", "USD")
	e.fund(e.key, acct, 100_000)
	cp := e.counterparty(e.key, "", "Ada", "Lovelace")
	pd := e.achDetail(e.key, cp)
	status := func(id string) string { return e.must(200, "GET", "/transfers/"+id, e.key, nil).str("data", "status") }
	wantBalance := func(avail, cur int64) {
		t.Helper()
		if a, c := e.balance(e.key, acct); a != avail || c != cur {
			t.Fatalf("balance available %d current %d, want %d %d", a, c, avail, cur)
		}
	}

	t.Run("OKSandboxRail", func(t *testing.T) {
		e.t = t
		id := e.must(201, "POST", "/transfers", e.key, transferBody(acct, pd, "life-1", 10_000)).str("data", "id")
		wantBalance(90_000, 90_000)
		e.advance(1)
		if s := status(id); s != "processing" {
			t.Fatalf("after 1 s: %s", s)
		}
		e.advance(4)
		if s := status(id); s != "successful" {
			t.Fatalf("after 5 s: %s", s)
		}
		wantBalance(90_000, 90_000)
		// Reversal returns the money.
		r := e.must(200, "POST", "/sandbox/transfers/"+id+"/simulate", e.key, map[string]any{"outcome": "reversed", "status_reason": "beneficiary_bank_returned"})
		if r.str("status") != "reversed" || r.str("status_reason") != "beneficiary_bank_returned" || r.Body["data"] != nil {
			t.Fatalf("reversed: %s", r.Raw)
		}
		wantBalance(100_000, 100_000)
		e.must(409, "POST", "/sandbox/transfers/"+id+"/simulate", e.key, map[string]any{"outcome": "failed"})
	})
	t.Run("OKFailedReturnsFunds", func(t *testing.T) {
		e.t = t
		id := e.must(201, "POST", "/transfers", e.key, transferBody(acct, pd, "life-2", 30_000)).str("data", "id")
		wantBalance(70_000, 70_000)
		r := e.must(200, "POST", "/sandbox/transfers/"+id+"/simulate", e.key, map[string]any{"outcome": "processing"})
		if r.str("status") != "processing" {
			t.Fatalf("processing: %s", r.Raw)
		}
		r = e.must(200, "POST", "/sandbox/transfers/"+id+"/simulate", e.key, map[string]any{"outcome": "failed", "status_reason": "invalid_account_details"})
		if r.str("status") != "failed" || r.str("status_reason") != "invalid_account_details" {
			t.Fatalf("failed: %s", r.Raw)
		}
		wantBalance(100_000, 100_000)
		e.advance(10)
		if s := status(id); s != "failed" {
			t.Fatalf("the rail moved a failed transfer: %s", s)
		}
	})
	t.Run("OKSimulateSuccessful", func(t *testing.T) {
		e.t = t
		id := e.must(201, "POST", "/transfers", e.key, transferBody(acct, pd, "life-3", 1_000)).str("data", "id")
		e.must(200, "POST", "/sandbox/transfers/"+id+"/simulate", e.key, map[string]any{"outcome": "successful"})
		wantBalance(99_000, 99_000)
		r := e.must(200, "GET", "/transfers?status=successful", e.key, nil)
		if items := r.Body["data"].([]any); len(items) != 1 || items[0].(map[string]any)["id"] != id {
			t.Fatalf("successful list: %s", r.Raw)
		}
	})
	t.Run("OKCrossCurrency", func(t *testing.T) {
		e.t = t
		sepa := map[string]any{"counterparty_id": cp, "payment_method": "bank-transfer", "currency": "EUR", "country": "DE",
			"account_holder_name": "Ada Lovelace", "iban": "DE36379068449631930531"}
		eur := e.must(201, "POST", "/payment-details", e.key, sepa).str("id")
		q := e.must(201, "POST", "/fx-quotes", e.key, map[string]any{"from_currency": "USD", "to_currency": "EUR", "amount_to": 5_000, "account_id": acct})
		qid, from := q.str("data", "id"), int64(q.data()["amount_from"].(float64))
		if q.data()["amount_to"] != 5000.0 || from <= 0 {
			t.Fatalf("quote: %s", q.Raw)
		}
		body := map[string]any{"account_id": acct, "payment_detail_id": eur, "amount": 5_000, "currency": "EUR",
			"payment_type": "bank-transfer", "narration": "euro invoice", "unique_reference": "fx-1"}
		e.must(422, "POST", "/transfers", e.key, with2(body, "unique_reference", "fx-0"))
		r := e.must(201, "POST", "/transfers", e.key, with2(body, "fx_quote_id", qid))
		if r.str("data", "currency") != "EUR" || r.data()["amount"] != 5000.0 || r.str("data", "fx_quote_id") != qid {
			t.Fatalf("fx transfer: %s", r.Raw)
		}
		wantBalance(99_000-from, 99_000-from)
		q = e.must(200, "GET", "/fx-quotes/"+qid, e.key, nil)
		if q.str("data", "quote", "status") != "used" || q.str("data", "quote", "used_in_payment_id") != r.str("data", "id") {
			t.Fatalf("used quote: %s", q.Raw)
		}
		// A used quote cannot pay again.
		if r := e.do("POST", "/transfers", e.key, with2(body, "fx_quote_id", qid, "unique_reference", "fx-2")); r.Status != 422 && r.Status != 409 {
			t.Fatalf("reused quote: %d %s", r.Status, r.Raw)
		}
		e.advance(5)
		wantBalance(99_000-from, 99_000-from)
	})
	t.Run("OKBookTransfer", func(t *testing.T) {
		e.t = t
		av, _ := e.balance(e.key, acct)
		tr := newTrees(e)
		ban := e.must(200, "GET", "/accounts/"+tr.acctB, e.key, nil).str("data", "service_ban")
		book := map[string]any{"counterparty_id": cp, "payment_method": "book-transfer", "currency": "USD",
			"account_holder_name": "B Ltd", "account_number": ban}
		bd := e.must(201, "POST", "/payment-details", e.key, book).str("id")
		body := with2(transferBody(acct, bd, "book-1", 2_000), "payment_type", "book-transfer")
		// Pending like every transfer (SPEC general rule 6): the funds held,
		// the receiver not yet credited.
		r := e.must(201, "POST", "/transfers", e.key, body)
		id := r.str("data", "id")
		if r.str("data", "status") != "pending" || r.str("data", "status_reason") != "awaiting_processing" {
			t.Fatalf("book transfer: %s", r.Raw)
		}
		if a, c := e.balance(tr.keyB, tr.acctB); a != 0 || c != 0 {
			t.Fatalf("receiver before settling: available %d current %d", a, c)
		}
		wantBalance(av-2_000, av-2_000) // a hold counts in both
		// The next due run settles it: no external rail to wait for.
		e.advance(1)
		if r := e.must(200, "GET", "/transfers/"+id, e.key, nil); r.str("data", "status") != "successful" {
			t.Fatalf("book transfer after the due run: %s", r.Raw)
		}
		if a, c := e.balance(tr.keyB, tr.acctB); a != 2_000 || c != 2_000 {
			t.Fatalf("receiver: available %d current %d", a, c)
		}
		wantBalance(av-2_000, av-2_000)
		e.must(409, "POST", "/sandbox/transfers/"+id+"/simulate", e.key, map[string]any{"outcome": "reversed"})

		// A receiving account deleted before the due run fails the
		// transfer and releases its funds, as a rail's failure does.
		ban = e.must(200, "GET", "/accounts/"+tr.acctA, e.key, nil).str("data", "service_ban")
		bd = e.must(201, "POST", "/payment-details", e.key, with2(book, "account_number", ban)).str("id")
		body = with2(transferBody(acct, bd, "book-2", 1_000), "payment_type", "book-transfer")
		id = e.must(201, "POST", "/transfers", e.key, body).str("data", "id")
		wantBalance(av-3_000, av-3_000)
		e.must(200, "DELETE", "/accounts/"+tr.acctA, tr.keyA, nil)
		e.advance(1)
		r = e.must(200, "GET", "/transfers/"+id, e.key, nil)
		if r.str("data", "status") != "failed" || r.str("data", "status_reason") != "invalid_account_details" {
			t.Fatalf("book transfer to a deleted account: %s", r.Raw)
		}
		wantBalance(av-2_000, av-2_000)
	})
	// Every move was reported through the outbox, the receiver's inflow too.
	e.t = t
	evs, err := e.led.Events(context.Background(), "", 1000)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, ev := range evs {
		got[ev.Type]++
	}
	for typ, n := range map[string]int{"outflows.created": 6, "outflows.completed": 4, "outflows.failed": 2, "outflows.refunded": 1} {
		if got[typ] != n {
			t.Errorf("%d %s events, want %d (all: %v)", got[typ], typ, n, got)
		}
	}
	if got["inflows.completed"] != 2 { // the funding and the book transfer's credit
		t.Errorf("inflows.completed: %v", got)
	}
}

// TestTransfersConcurrency races POST /transfers: duplicates of a
// unique_reference create exactly one transfer, and racing transfers
// never overdraw the account. Both backends.
func TestTransfersConcurrency(t *testing.T) {
	for _, b := range []struct {
		name string
		env  func(t *testing.T) *env
	}{
		{"memory", func(t *testing.T) *env { return newEnv(t) }},
		{"bolt", func(t *testing.T) *env {
			db, err := bolt.Open(filepath.Join(t.TempDir(), "db"), nil)
			if err != nil {
				t.Fatal(err)
			}
			return newEnvDB(t, db)
		}},
	} {
		t.Run(b.name, func(t *testing.T) {
			e := b.env(t)
			acct := e.account(e.key, "", "USD")
			e.fund(e.key, acct, 1_000)
			pd := e.achDetail(e.key, e.counterparty(e.key, "", "Race", "Payee"))
			race := func(n int, body func(i int) map[string]any) map[int]int {
				var mu sync.Mutex
				counts := map[int]int{}
				var wg sync.WaitGroup
				start := make(chan struct{})
				for i := 0; i < n; i++ {
					wg.Add(1)
					go func(i int) {
						defer wg.Done()
						<-start
						r := e.do("POST", "/transfers", e.key, body(i))
						mu.Lock()
						counts[r.Status]++
						mu.Unlock()
						if r.Status == 409 && r.code() != "duplicate_reference" || r.Status == 422 && r.code() != "insufficient_funds" {
							t.Errorf("%d %s", r.Status, r.Raw)
						}
					}(i)
				}
				close(start)
				wg.Wait()
				return counts
			}
			counts := race(50, func(i int) map[string]any { return transferBody(acct, pd, fmt.Sprintf("dup-%d", i%10), 1) })
			if counts[201] != 10 || counts[409] != 40 {
				t.Fatalf("duplicates: %v", counts)
			}
			r := e.must(200, "GET", "/transfers?limit=100", e.key, nil)
			if n := len(r.Body["data"].([]any)); n != 10 {
				t.Fatalf("%d transfers stored", n)
			}
			// 990 left: 50 racing transfers of 100 fit 9 times.
			counts = race(50, func(i int) map[string]any { return transferBody(acct, pd, fmt.Sprintf("od-%d", i), 100) })
			if counts[201] != 9 || counts[422] != 41 {
				t.Fatalf("overdraft race: %v", counts)
			}
			if a, c := e.balance(e.key, acct); a != 90 || c != 90 {
				t.Fatalf("balance available %d current %d, want 90", a, c)
			}
		})
	}
}

// TestPaymentsUnavailable: without Services.Payments the routes answer 503.
func TestPaymentsUnavailable(t *testing.T) {
	e := newEnv(t)
	h := httpapi.New(httpapi.Services{DB: e.db, Ledger: e.led, Entities: e.ent}, nil)
	e.h = h
	for _, c := range []struct{ method, path string }{
		{"POST", "/transfers"}, {"GET", "/transfers"}, {"GET", "/counterparties/x"}, {"POST", "/sandbox/fx/outage"},
	} {
		r := e.do(c.method, c.path, e.key, map[string]any{})
		if r.Status != 503 || r.code() != "unavailable" {
			t.Fatalf("%s %s: %d %s", c.method, c.path, r.Status, r.Raw)
		}
	}
	// Outside the sandbox the simulation routes do not exist.
	e.h = httpapi.New(httpapi.Services{DB: e.db, Ledger: e.led, Entities: e.ent, Payments: e.pay}, &httpapi.Options{Env: httpapi.EnvProduction})
	e.must(404, "POST", "/sandbox/fx/outage", e.key, map[string]any{"enabled": true})
	e.must(404, "POST", "/sandbox/transfers/x/simulate", e.key, map[string]any{"outcome": "failed"})
	e.must(200, "GET", "/transfers", e.key, nil)
}
