package httpapi_test

import (
	"strings"
	"testing"
)

func TestAccountDetails(t *testing.T) {
	e := newEnv(t)
	tr := newTrees(e)
	usdc := e.account(e.key, "", "USC")
	r := e.must(201, "POST", "/account-details", e.key, map[string]any{"account_id": tr.acctRoot})
	det := r.data()
	if det["account_id"] != tr.acctRoot || det["id"] == nil {
		t.Fatalf("create: %s", r.Raw)
	}
	fiat := det["id"].(string)
	r = e.must(201, "POST", "/account-details", e.key, map[string]any{"account_id": usdc, "chain": "base", "terminate_after": 30})
	coin := r.str("data", "id")
	if r.str("data", "status") != "pending" {
		t.Fatalf("stablecoin details not pending: %s", r.Raw)
	}
	e.run(t, []call{
		{"CreateErrMissing", "POST", "/account-details", map[string]any{}, e.key, 422, "validation_error", "account_id"},
		{"CreateErrUnknownAccount", "POST", "/account-details", map[string]any{"account_id": "01HZZZZZZZZZZZZZZZZZZZZZZZ"}, e.key, 404, "not_found", ""},
		{"CreateErrChain", "POST", "/account-details", map[string]any{"account_id": usdc, "chain": "doge"}, e.key, 422, "validation_error", "chain"},
		{"CreateErrTerminate", "POST", "/account-details", map[string]any{"account_id": usdc, "chain": "eth", "terminate_after": -1}, e.key, 422, "validation_error", "terminate_after"},
		{"CreateErrTerminateType", "POST", "/account-details", map[string]any{"account_id": usdc, "terminate_after": "soon"}, e.key, 422, "validation_error", "terminate_after"},
		{"CreateErrUnknownField", "POST", "/account-details", map[string]any{"account_id": usdc, "chains": "eth"}, e.key, 422, "validation_error", "chains"},
		{"CreateErrReadOnly", "POST", "/account-details", map[string]any{"account_id": usdc}, e.roKey, 403, "forbidden", ""},
		{"CreateErrNoKey", "POST", "/account-details", map[string]any{"account_id": usdc}, "", 401, "unauthorized", ""},
		{"GetOK", "GET", "/account-details/" + fiat, nil, e.key, 200, "", ""},
		{"GetErrUnknown", "GET", "/account-details/nope", nil, e.key, 404, "not_found", ""},
		{"GetErrOtherTree", "GET", "/account-details/" + fiat, nil, tr.keyA, 404, "not_found", ""},
		{"ListOK", "GET", "/account-details", nil, e.key, 200, "", ""},
		{"ListOKAccount", "GET", "/account-details?account_id=" + usdc, nil, e.key, 200, "", ""},
		{"ListErrLimit", "GET", "/account-details?limit=0", nil, e.key, 422, "validation_error", "limit"},
		{"ListErrCursor", "GET", "/account-details?cursor=x", nil, e.key, 422, "validation_error", "cursor"},
		{"ListErrEntity", "GET", "/account-details?entity_id=" + tr.b, nil, tr.keyA, 404, "not_found", ""},
		{"ActivateErrOtherTree", "POST", "/sandbox/account-details/" + coin + "/activate", nil, tr.keyA, 404, "not_found", ""},
		{"ActivateErrUnknown", "POST", "/sandbox/account-details/nope/activate", nil, e.key, 404, "not_found", ""},
		{"ActivateErrBody", "POST", "/sandbox/account-details/" + coin + "/activate", `{"x":1}`, e.key, 422, "validation_error", "x"},
		{"ActivateOK", "POST", "/sandbox/account-details/" + coin + "/activate", nil, e.key, 200, "", ""},
	})
	r = e.must(200, "GET", "/account-details/"+coin, e.key, nil)
	v := r.data()
	for _, f := range []string{"account_detail", "entity", "account", "statistics"} {
		if v[f] == nil {
			t.Fatalf("details view lacks %s: %s", f, r.Raw)
		}
	}
	if r.str("data", "account_detail", "status") != "active" || r.str("data", "entity", "id") != e.root || r.str("data", "account", "id") != usdc {
		t.Fatalf("details view: %s", r.Raw)
	}
	r = e.must(200, "GET", "/account-details?account_id="+usdc, e.key, nil)
	if n := len(r.Body["data"].([]any)); n != 1 || r.Body["meta"].(map[string]any)["pagination"].(map[string]any)["total_count"] != 1.0 {
		t.Fatalf("list by account: %s", r.Raw)
	}
	// Pagination over details.
	var want []string
	r = e.must(200, "GET", "/account-details?limit=100", e.key, nil)
	for _, it := range r.Body["data"].([]any) {
		want = append(want, it.(map[string]any)["id"].(string))
	}
	for i := 0; i < 5; i++ {
		r = e.must(201, "POST", "/account-details", e.key, map[string]any{"account_id": tr.acctRoot})
		want = append(want, r.str("data", "id"))
	}
	fwd, _ := walk(t, e, "/account-details", 2)
	if strings.Join(fwd, ",") != strings.Join(want, ",") {
		t.Fatalf("details walk: %v want %v", fwd, want)
	}
	// Deleting the account removes its details.
	e.must(200, "DELETE", "/accounts/"+usdc, e.key, nil)
	r = e.must(200, "GET", "/account-details?account_id="+usdc, e.key, nil)
	if n := len(r.Body["data"].([]any)); n != 0 {
		t.Fatalf("details outlive their account: %s", r.Raw)
	}
}
