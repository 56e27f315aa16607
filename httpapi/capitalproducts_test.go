package httpapi_test

import (
	"testing"
)

// TestProducts covers GET /products and GET /products/{id}: the list's
// filters and default page size, a product with its documents, and an
// entity_id outside the caller's tree answering 404.
func TestProducts(t *testing.T) {
	e := newEnv(t)
	tr := newTrees(e)
	id := e.must(201, "POST", "/sandbox/products", e.key, depositProduct()).str("id")

	r := e.must(200, "GET", "/products", e.key, nil)
	items, _ := r.Body["data"].([]any)
	meta, _ := r.Body["meta"].(map[string]any)
	pag, _ := meta["pagination"].(map[string]any)
	applied, _ := meta["filters_applied"].(map[string]any)
	if len(items) != 1 || items[0].(map[string]any)["id"] != id || pag["limit"] != float64(25) || applied["entity_id"] != e.root {
		t.Fatalf("list: %s", r.Raw)
	}
	if _, ok := items[0].(map[string]any)["documents"]; ok {
		t.Errorf("a listed product carries its documents: %s", r.Raw)
	}

	for _, tc := range []struct {
		name, query string
		n           int
	}{
		{"OKType", "type=FIXED_RETURN", 1},
		{"OKTypeOther", "type=SHARE_OFFERING", 0},
		{"OKCurrency", "currency=USD", 1},
		{"OKCurrencyOther", "currency=EUR", 0},
		{"OKLimit", "limit=1", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.must(200, "GET", "/products?"+tc.query, e.key, nil)
			if items, _ := r.Body["data"].([]any); len(items) != tc.n {
				t.Fatalf("%d items, want %d: %s", len(items), tc.n, r.Raw)
			}
		})
	}

	got := e.must(200, "GET", "/products/"+id, e.key, nil).data()
	if docs, _ := got["documents"].([]any); len(docs) != 1 || got["id"] != id {
		t.Fatalf("get: %v", got)
	}

	for _, tc := range []struct {
		name, path, key string
		status          int
		code, field     string
	}{
		{"ErrEntityOtherTree", "/products?entity_id=" + tr.b, tr.keyA, 404, "not_found", ""},
		{"ErrGetEntityOtherTree", "/products/" + id + "?entity_id=" + tr.b, tr.keyA, 404, "not_found", ""},
		{"ErrEntityTwice", "/products?entity_id=" + tr.a + "&entity_id=" + tr.a1, tr.keyA, 422, "validation_error", "entity_id"},
		{"ErrLimit", "/products?limit=0", e.key, 422, "validation_error", "limit"},
		{"ErrMissing", "/products/01HZZZZZZZZZZZZZZZZZZZZZZZ", e.key, 404, "not_found", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do("GET", tc.path, tc.key, nil)
			if r.Status != tc.status || r.code() != tc.code {
				t.Fatalf("%d %s, want %d %s: %s", r.Status, r.code(), tc.status, tc.code, r.Raw)
			}
			if tc.field != "" && r.details()[tc.field] == nil {
				t.Errorf("details do not name %s: %s", tc.field, r.Raw)
			}
		})
	}
}
