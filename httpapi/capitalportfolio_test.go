package httpapi_test

import (
	"testing"
)

// TestCapitalPortfolio covers GET /capital-portfolio: empty before any
// holding, the approved order's holding and its totals after, the
// currency filter, and entity_id (another tree's is 404).
func TestCapitalPortfolio(t *testing.T) {
	e := newEnv(t)
	tr := newTrees(e)
	portfolio := func(query string) (holdings, totals []any) {
		t.Helper()
		d := e.must(200, "GET", "/capital-portfolio"+query, e.key, nil).data()
		holdings, _ = d["holdings"].([]any)
		totals, _ = d["totals"].([]any)
		return holdings, totals
	}
	if h, tot := portfolio(""); len(h) != 0 || len(tot) != 0 {
		t.Fatalf("before any order: holdings %v, totals %v", h, tot)
	}

	_, _, order := e.depositOrder(t)
	id := order["id"].(string)
	e.must(200, "POST", "/product-orders/"+id+"/confirm", e.key, nil)

	h, tot := portfolio("")
	if len(h) != 1 || h[0].(map[string]any)["order_id"] != id || len(tot) != 1 {
		t.Fatalf("after the order: holdings %v, totals %v", h, tot)
	}
	if total := tot[0].(map[string]any); total["currency"] != "USD" || int64(total["principal"].(float64)) != depositPrincipal {
		t.Errorf("totals: %v", total)
	}
	if h, tot := portfolio("?currency=EUR"); len(h) != 0 || len(tot) != 0 {
		t.Errorf("EUR: holdings %v, totals %v", h, tot)
	}
	if h, _ := portfolio("?entity_id=" + e.root); len(h) != 1 {
		t.Errorf("own entity_id: holdings %v", h)
	}
	if h, _ := portfolio("?entity_id=" + tr.b); len(h) != 0 {
		t.Errorf("a child's portfolio holds the parent's: %v", h)
	}
	if r := e.do("GET", "/capital-portfolio?entity_id="+tr.b, tr.keyA, nil); r.Status != 404 || r.code() != "not_found" {
		t.Errorf("another tree's entity_id: %d %s", r.Status, r.Raw)
	}
}
