package httpapi_test

import (
	"testing"
)

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
