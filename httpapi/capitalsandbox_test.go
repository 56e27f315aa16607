package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCapitalShareOffering: an offering sold out by three orders of 33,
// 33 and 40 shares (allocated down to the 34 left) is listed as not
// orderable; a final allotment of 50
// shares gives 16.5, 16.5 and 17 rounded down, the one share left to the
// earlier of the two largest remainders (17, 16, 17), refunds each
// order's unallotted shares at the offer price to its funding account, and
// the price and unlock routes move the holdings on.
func TestCapitalShareOffering(t *testing.T) {
	e := newEnv(t)
	offering := e.must(201, "POST", "/sandbox/products", e.key, map[string]any{"type": "SHARE_OFFERING",
		"display_name": "Offering", "description": "<p>Shares</p>", "currency": "USD",
		"offer_price": 1000, "inventory_shares": 100, "brokerage_fee_rate": "0", "cross_deal_fee_rate": "0",
		"lock_days": 30}).Body
	pid := offering["id"].(string)
	const funds = 100_000
	var accts, orders []string
	// The third asks for 40 shares and is allocated down to the 34 left.
	for i, asked := range []int64{33, 33, 40} {
		shares := []int64{33, 33, 34}[i]
		acct := e.account(e.key, "", "USD")
		e.fund(e.key, acct, funds)
		o := e.must(201, "POST", "/product-orders", e.key, map[string]any{"product_id": pid, "account_id": acct,
			"amount": asked * 1000, "affirmations": []any{}}).data()
		got := map[string]any{"requested_amount": o["requested_amount"], "allocated_shares": o["allocated_shares"],
			"total_debit": o["total_debit"], "amount": o["amount"]}
		want := map[string]any{"requested_amount": float64(asked * 1000), "allocated_shares": float64(shares),
			"total_debit": float64(shares * 1000), "amount": float64(shares * 1000)}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("order %d (-want +got):\n%s", i, diff)
		}
		e.must(200, "POST", "/product-orders/"+o["id"].(string)+"/confirm", e.key, nil)
		accts, orders = append(accts, acct), append(orders, o["id"].(string))
	}
	list := e.must(200, "GET", "/products?type=SHARE_OFFERING", e.key, nil)
	var listed map[string]any
	for _, p := range list.Body["data"].([]any) {
		if p := p.(map[string]any); p["id"] == pid {
			listed = p
		}
	}
	if listed == nil || listed["orderable"] != false || listed["inventory"].(map[string]any)["status"] != "sold_out" || listed["documents"] != nil {
		t.Errorf("sold out offering as listed: %v", listed)
	}
	// Capital lists default to 25 a page (SPEC.md).
	for _, path := range []string{"/products", "/product-orders", "/product-orders/" + orders[0] + "/transactions"} {
		m := e.must(200, "GET", path, e.key, nil).Body["meta"].(map[string]any)
		if l := m["pagination"].(map[string]any)["limit"]; l != float64(25) {
			t.Errorf("GET %s: limit %v, want 25", path, l)
		}
	}
	page := e.must(200, "GET", "/product-orders?limit=2&type=SHARE_OFFERING", e.key, nil)
	next, _ := page.Body["meta"].(map[string]any)["pagination"].(map[string]any)["next_cursor"].(string)
	rest := e.must(200, "GET", "/product-orders?limit=2&type=SHARE_OFFERING&cursor="+next, e.key, nil).Body["data"].([]any)
	if len(page.Body["data"].([]any)) != 2 || len(rest) != 1 || rest[0].(map[string]any)["id"] != orders[2] {
		t.Errorf("orders by pages of 2: %s then %v", page.Raw, rest)
	}
	if r := e.do("GET", "/product-orders?limit=2&cursor="+next, e.key, nil); r.Status != 422 || r.details()["cursor"] == nil {
		t.Errorf("a cursor under other filters: %d %s", r.Status, r.Raw)
	}
	for _, id := range orders {
		if h := e.holding(t, id); h == nil || h["status"].(map[string]any)["state"] != "LOCKED" || h["market_value"] != nil {
			t.Errorf("holding before allotment: %v", h)
		}
	}

	e.must(200, "POST", "/sandbox/products/"+pid+"/allotment", e.key, map[string]any{"allotted_shares": 50})
	wantShares := []int64{17, 16, 17}
	bought := []int64{33, 33, 34}
	// check compares each holding with the allotment, in state with its
	// refund in refundStatus.
	check := func(when, state, refundStatus string) {
		t.Helper()
		for i, id := range orders {
			h := e.holding(t, id)
			if h == nil {
				t.Fatalf("%s, order %d: no holding", when, i)
			}
			st := h["status"].(map[string]any)
			got := map[string]any{"allocated_shares": h["allocated_shares"], "shares_purchased": h["shares_purchased"],
				"unallocated_value": h["unallocated_value"], "state": st["state"], "refund_status": st["refund_status"]}
			want := map[string]any{"allocated_shares": float64(wantShares[i]), "shares_purchased": float64(bought[i]),
				"unallocated_value": float64((bought[i] - wantShares[i]) * 1000), "state": state, "refund_status": refundStatus}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s, order %d (-want +got):\n%s", when, i, diff)
			}
		}
	}
	check("after the allotment", "ALLOTMENT_ADJUSTED", "pending")
	e.advanceDays(1) // refunds are due work
	check("after the refunds", "ALLOTMENT_CONFIRMED", "completed")
	for i := range orders {
		// Shares plus refund are the money paid.
		if avail, _ := e.balance(e.key, accts[i]); avail != funds-wantShares[i]*1000 {
			t.Errorf("order %d: account holds %d after the refund, want %d", i, avail, funds-wantShares[i]*1000)
		}
	}

	e.must(200, "POST", "/sandbox/products/"+pid+"/price", e.key, map[string]any{"price": 1200})
	if h := e.holding(t, orders[1]); num(t, h, "market_value") != 16*1200 {
		t.Errorf("market value after a price: %v", h["market_value"])
	}
	p := e.must(200, "GET", "/capital-portfolio?currency=USD", e.key, nil).data()
	if totals := p["totals"].([]any); len(totals) != 1 || num(t, totals[0].(map[string]any), "market_value") != 50*1200 {
		t.Errorf("portfolio totals: %v", p["totals"])
	}
	e.must(200, "POST", "/sandbox/products/"+pid+"/unlock", e.key, nil)
	for _, id := range orders {
		if h := e.holding(t, id); h == nil || h["status"].(map[string]any)["state"] != "TRANSFERABLE" {
			t.Errorf("after unlock: %v", h)
		}
	}
}

// TestCapitalProductDeactivate: a product answers with its documents until
// deactivated; then GET /products/{id} is 404 and GET /products leaves it
// out.
func TestCapitalProductDeactivate(t *testing.T) {
	e := newEnv(t)
	id := e.must(201, "POST", "/sandbox/products", e.key, depositProduct()).str("id")
	got := e.must(200, "GET", "/products/"+id, e.key, nil).data()
	if docs, _ := got["documents"].([]any); len(docs) != 1 || got["status"] != "active" || got["orderable"] != true {
		t.Fatalf("product: %v", got)
	}
	listed := func() bool {
		for _, p := range e.must(200, "GET", "/products", e.key, nil).Body["data"].([]any) {
			if p.(map[string]any)["id"] == id {
				return true
			}
		}
		return false
	}
	if !listed() {
		t.Fatal("an active product is not listed")
	}
	if d := e.must(200, "POST", "/sandbox/products/"+id+"/deactivate", e.key, nil); d.str("status") != "inactive" {
		t.Errorf("deactivate: %s", d.Raw)
	}
	if r := e.do("GET", "/products/"+id, e.key, nil); r.Status != http.StatusNotFound || r.code() != "not_found" {
		t.Errorf("GET an inactive product: %d %s", r.Status, r.Raw)
	}
	if listed() {
		t.Error("an inactive product is listed")
	}
}
