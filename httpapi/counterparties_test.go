package httpapi_test

import (
	"testing"
)

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
