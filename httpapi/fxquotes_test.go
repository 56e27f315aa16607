package httpapi_test

import (
	"testing"
)

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
