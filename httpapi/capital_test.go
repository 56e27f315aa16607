package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The deposits of the life tests: 10 000.00 USD (basis 360) at 10 % a
// year for 30 days, a penalty of a quarter of the interest earned when
// withdrawn early (from day 7), a tenth withheld. Worked by hand:
//
//	10 days: gross 1 000 000 × 0.10 × 10 / 360 = 2 777.7… → 2 777
//	         penalty floor(2 777 × 0.25) = 694
//	         withholding floor(2 777 × 0.10) = 277
//	         net 1 000 000 + 2 777 − 694 − 277 = 1 001 806
//	30 days: gross 1 000 000 × 0.10 × 30 / 360 = 8 333.3… → 8 333
//	         penalty 0; withholding floor(833.3) = 833
//	         net 1 000 000 + 8 333 − 833 = 1 007 500
const (
	depositPrincipal = 1_000_000
	depositFunds     = 2_000_000
	early10Gross     = 2_777
	early10Penalty   = 694
	early10Withheld  = 277
	early10Net       = 1_001_806
	mature30Gross    = 8_333
	mature30Withheld = 833
	mature30Net      = 1_007_500
)

// depositProduct is the body of POST /sandbox/products for the deposit
// above.
func depositProduct() map[string]any {
	return map[string]any{"type": "FIXED_RETURN", "display_name": "30-day USD deposit",
		"description": "<p>Fixed 10% a year.</p>", "currency": "USD",
		"tenor_days": 30, "annual_rate": "0.10", "min_principal": 10_000, "max_principal": 100_000_000,
		"early_withdrawal_enabled": true, "early_withdrawal_penalty_rate": "0.25",
		"early_withdrawal_min_days": 7, "lock_in_days": 0, "withholding_rate": "0.10",
		"documents": []any{map[string]any{"title": "Terms", "url": "https://example.com/terms.pdf", "version": 2}}}
}

// affirmAll is the affirmations of every document of product p (an
// answer's data or bare product).
func affirmAll(p map[string]any) []any {
	var out []any
	docs, _ := p["documents"].([]any)
	for _, d := range docs {
		d := d.(map[string]any)
		out = append(out, map[string]any{"document_id": d["id"], "version": d["version"]})
	}
	return out
}

// num reads the integer at path of m (a decoded body), failing the test
// when there is none.
func num(t testing.TB, m map[string]any, path ...string) int64 {
	t.Helper()
	var v any = m
	for _, p := range path {
		o, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("no %v in %v", path, m)
		}
		v = o[p]
	}
	f, ok := v.(float64)
	if !ok {
		t.Fatalf("%v is %v, not a number", path, v)
	}
	return int64(f)
}

// advance moves the sandbox clock by days over HTTP, running the due work.
func (e *env) advanceDays(days int) {
	e.t.Helper()
	e.must(200, "POST", "/sandbox/clock/advance", e.key, map[string]any{"seconds": days * 24 * 3600})
}

// depositOrder makes the deposit product, funds a USD account of the
// root with depositFunds and orders depositPrincipal on it: the product,
// the account and the RESERVED order.
func (e *env) depositOrder(t *testing.T) (product map[string]any, account string, order map[string]any) {
	t.Helper()
	product = e.must(201, "POST", "/sandbox/products", e.key, depositProduct()).Body
	account = e.account(e.key, "", "USD")
	e.fund(e.key, account, depositFunds)
	r := e.must(201, "POST", "/product-orders", e.key, map[string]any{"product_id": product["id"], "account_id": account,
		"principal": depositPrincipal, "waive_early_withdrawal": false, "affirmations": affirmAll(product)})
	return product, account, r.data()
}

// capitalTx is a capital transaction as the life tests compare them.
type capitalTx struct {
	Type   string
	Amount int64
}

// orderTxs lists an order's capital transactions, every page.
func (e *env) orderTxs(t *testing.T, order string) []capitalTx {
	t.Helper()
	var out []capitalTx
	path := "/product-orders/" + order + "/transactions?limit=100"
	for {
		r := e.must(200, "GET", path, e.key, nil)
		for _, it := range r.Body["data"].([]any) {
			m := it.(map[string]any)
			out = append(out, capitalTx{Type: m["event_type"].(string), Amount: num(t, m, "amount")})
		}
		next, _ := r.Body["meta"].(map[string]any)["pagination"].(map[string]any)["next_cursor"].(string)
		if next == "" {
			return out
		}
		path = "/product-orders/" + order + "/transactions?limit=100&cursor=" + next
	}
}

// accruals sums an order's DAILY_ACCRUAL transactions and counts them.
func accruals(txs []capitalTx) (sum int64, n int) {
	for _, tx := range txs {
		if tx.Type == "DAILY_ACCRUAL" {
			sum += tx.Amount
			n++
		}
	}
	return sum, n
}

// holding is the order's capital account among the root's portfolio
// holdings (nil when it is not held).
func (e *env) holding(t *testing.T, order string) map[string]any {
	t.Helper()
	r := e.must(200, "GET", "/capital-portfolio", e.key, nil)
	for _, h := range r.data()["holdings"].([]any) {
		if h := h.(map[string]any); h["order_id"] == order {
			return h
		}
	}
	return nil
}

// pick is m with only keys.
func pick(m map[string]any, keys ...string) map[string]any {
	out := map[string]any{}
	for _, k := range keys {
		out[k] = m[k]
	}
	return out
}

// TestCapitalBadInput: bad input is 422 naming the field (400
// error_operation_invalid_for_state for the states SPEC.md names), a
// missing object 404, and none of them changes anything.
func TestCapitalBadInput(t *testing.T) {
	e := newEnv(t)
	product, acct, order := e.depositOrder(t)
	pid, oid := product["id"].(string), order["id"].(string)
	eur := e.account(e.key, "", "EUR")
	e.fund(e.key, eur, depositFunds)
	docs := product["documents"].([]any)
	docID := docs[0].(map[string]any)["id"].(string)
	offering := e.must(201, "POST", "/sandbox/products", e.key, map[string]any{"type": "SHARE_OFFERING",
		"display_name": "Offering", "description": "<p>Shares</p>", "currency": "USD",
		"offer_price": 1000, "inventory_shares": 100, "brokerage_fee_rate": "0.01", "cross_deal_fee_rate": 0.005,
		"lock_days": 30}).Body
	share := e.must(201, "POST", "/product-orders", e.key, map[string]any{"product_id": offering["id"], "account_id": acct,
		"amount": 10_000, "affirmations": []any{}}).data()
	e.must(200, "POST", "/product-orders/"+share["id"].(string)+"/confirm", e.key, nil)
	missing := "01HZZZZZZZZZZZZZZZZZZZZZZZ"

	orderBody := func(edit func(map[string]any)) map[string]any {
		b := map[string]any{"product_id": pid, "account_id": acct, "principal": depositPrincipal,
			"waive_early_withdrawal": false, "affirmations": affirmAll(product)}
		edit(b)
		return b
	}
	productBody := func(edit func(map[string]any)) map[string]any {
		b := depositProduct()
		edit(b)
		return b
	}
	type tc struct {
		name         string
		method, path string
		body         any
		status       int
		code, field  string
	}
	cases := []tc{
		// Products.
		{"tenor", "POST", "/sandbox/products", productBody(func(b map[string]any) { b["tenor_days"] = 45 }), 422, "validation_error", "tenor_days"},
		{"rate not a decimal", "POST", "/sandbox/products", productBody(func(b map[string]any) { b["annual_rate"] = "ten" }), 422, "validation_error", "annual_rate"},
		{"share terms on a deposit", "POST", "/sandbox/products", productBody(func(b map[string]any) { b["offer_price"] = 100 }), 422, "validation_error", "offer_price"},
		{"product type", "POST", "/sandbox/products", productBody(func(b map[string]any) { b["type"] = "BOND" }), 422, "validation_error", "type"},
		{"product unknown field", "POST", "/sandbox/products", productBody(func(b map[string]any) { b["apr"] = "0.1" }), 422, "validation_error", "apr"},
		{"list limit 0", "GET", "/products?limit=0", nil, 422, "validation_error", "limit"},
		{"list limit 101", "GET", "/products?limit=101", nil, 422, "validation_error", "limit"},
		{"list cursor", "GET", "/products?cursor=bogus", nil, 422, "validation_error", "cursor"},
		{"list both cursors", "GET", "/product-orders?cursor=a&prev_cursor=b", nil, 422, "validation_error", "cursor"},
		{"product missing", "GET", "/products/" + missing, nil, 404, "not_found", ""},
		{"deactivate missing", "POST", "/sandbox/products/" + missing + "/deactivate", nil, 404, "not_found", ""},
		{"price missing", "POST", "/sandbox/products/" + pid + "/price", map[string]any{}, 422, "validation_error", "price"},
		{"allotment missing", "POST", "/sandbox/products/" + offering["id"].(string) + "/allotment", map[string]any{}, 422, "validation_error", "allotted_shares"},
		{"allot a deposit", "POST", "/sandbox/products/" + pid + "/allotment", map[string]any{"allotted_shares": 1}, 400, "error_operation_invalid_for_state", ""},

		// Orders.
		{"principal below the minimum", "POST", "/product-orders", orderBody(func(b map[string]any) { b["principal"] = 1 }), 422, "validation_error", "principal"},
		{"principal zero", "POST", "/product-orders", orderBody(func(b map[string]any) { b["principal"] = 0 }), 422, "validation_error", "principal"},
		{"amount on a deposit", "POST", "/product-orders", orderBody(func(b map[string]any) { b["amount"] = 100 }), 422, "validation_error", "amount"},
		{"principal on an offering", "POST", "/product-orders", map[string]any{"product_id": offering["id"], "account_id": acct,
			"principal": 1000, "affirmations": []any{}}, 422, "validation_error", "principal"},
		{"no waiver flag", "POST", "/product-orders", orderBody(func(b map[string]any) { delete(b, "waive_early_withdrawal") }), 422, "validation_error", "waive_early_withdrawal"},
		{"no affirmations", "POST", "/product-orders", orderBody(func(b map[string]any) { b["affirmations"] = []any{} }), 422, "validation_error", "affirmations"},
		{"stale affirmation", "POST", "/product-orders", orderBody(func(b map[string]any) {
			b["affirmations"] = []any{map[string]any{"document_id": docID, "version": 1}}
		}), 422, "validation_error", "affirmations.0.version"},
		{"unknown document", "POST", "/product-orders", orderBody(func(b map[string]any) {
			b["affirmations"] = []any{map[string]any{"document_id": missing, "version": 2}}
		}), 422, "validation_error", "affirmations.0.document_id"},
		{"duplicate affirmation", "POST", "/product-orders", orderBody(func(b map[string]any) {
			a := affirmAll(product)
			b["affirmations"] = append(a, a...)
		}), 422, "validation_error", "affirmations.1.document_id"},
		{"currency of the account", "POST", "/product-orders", orderBody(func(b map[string]any) { b["account_id"] = eur }), 422, "validation_error", "account_id"},
		{"order unknown field", "POST", "/product-orders", orderBody(func(b map[string]any) { b["annual_rate"] = "0.5" }), 422, "validation_error", "annual_rate"},
		{"order product missing", "POST", "/product-orders", orderBody(func(b map[string]any) { b["product_id"] = missing }), 404, "not_found", ""},
		{"order account missing", "POST", "/product-orders", orderBody(func(b map[string]any) { b["account_id"] = missing }), 404, "not_found", ""},
		{"order missing", "GET", "/product-orders/" + missing, nil, 404, "not_found", ""},
		{"orders status", "GET", "/product-orders?status=DONE", nil, 422, "validation_error", "status"},
		{"confirm missing", "POST", "/product-orders/" + missing + "/confirm", nil, 404, "not_found", ""},
		{"confirm with an amount", "POST", "/product-orders/" + oid + "/confirm", map[string]any{"amount": 1}, 422, "validation_error", "amount"},
		{"preview missing", "GET", "/product-orders/" + missing + "/withdrawal/preview", nil, 404, "not_found", ""},
		{"transactions missing", "GET", "/product-orders/" + missing + "/transactions", nil, 404, "not_found", ""},
		{"withdraw a reserved order", "POST", "/product-orders/" + oid + "/withdrawal", nil, 400, "error_operation_invalid_for_state", ""},
		{"withdraw a share holding", "POST", "/product-orders/" + share["id"].(string) + "/withdrawal", nil, 400, "error_operation_invalid_for_state", ""},
		{"preview a share holding", "GET", "/product-orders/" + share["id"].(string) + "/withdrawal/preview", nil, 400, "error_operation_invalid_for_state", ""},
		{"portfolio entity", "GET", "/capital-portfolio?entity_id=" + missing, nil, 404, "not_found", ""},
	}
	// The documents' version 2 is current: bump it by making the product
	// with version 2 (depositProduct), so version 1 is stale.
	before := e.capitalState(t, acct)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.do(c.method, c.path, e.key, c.body)
			if r.Status != c.status || r.code() != c.code {
				t.Fatalf("%d %s, want %d %s: %s", r.Status, r.code(), c.status, c.code, r.Raw)
			}
			if c.field != "" && r.details()[c.field] == nil {
				t.Errorf("details do not name %s: %s", c.field, r.Raw)
			}
		})
	}
	if diff := cmp.Diff(before, e.capitalState(t, acct)); diff != "" {
		t.Errorf("refused requests changed state (-before +after):\n%s", diff)
	}

	// A reservation expires after 15 minutes: confirming it then is 400.
	e.must(200, "POST", "/sandbox/clock/advance", e.key, map[string]any{"seconds": 15*60 + 1})
	if got := e.must(200, "GET", "/product-orders/"+oid, e.key, nil).data(); got["status"] != "EXPIRED" || got["expired_at"] == nil {
		t.Errorf("after 15 minutes: %v", got)
	}
	r := e.do("POST", "/product-orders/"+oid+"/confirm", e.key, nil)
	if r.Status != http.StatusBadRequest || r.code() != "error_operation_invalid_for_state" {
		t.Errorf("confirm an expired order: %d %s", r.Status, r.Raw)
	}
	if avail, _ := e.balance(e.key, acct); avail != depositFunds-num(t, share, "amount") {
		t.Errorf("an expired order moved money: available %d", avail)
	}
}

// capitalState is what a refused capital request must not change: the
// root's products, orders, portfolio and the funding account.
func (e *env) capitalState(t *testing.T, acct string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, p := range []string{"/products?limit=100", "/product-orders?limit=100", "/capital-portfolio", "/accounts/" + acct} {
		out[p] = e.must(200, "GET", p, e.key, nil).Raw
	}
	return out
}

// TestCapitalGolden pins the whole shape of the capital answers: a product
// with its documents, an order reserved, confirmed and withdrawn, the
// preview, the portfolio and the transactions.
func TestCapitalGolden(t *testing.T) {
	e := newEnvSeeded(t, 16)
	product := e.must(201, "POST", "/sandbox/products", e.key, depositProduct())
	golden(t, "capital_product_create", product)
	acct := e.account(e.key, "", "USD")
	e.fund(e.key, acct, depositFunds)
	order := e.must(201, "POST", "/product-orders", e.key, map[string]any{"product_id": product.Body["id"], "account_id": acct,
		"principal": depositPrincipal, "waive_early_withdrawal": false, "affirmations": affirmAll(product.Body)})
	golden(t, "capital_order_create", order)
	id := order.str("data", "id")
	golden(t, "capital_order_confirm", e.must(200, "POST", "/product-orders/"+id+"/confirm", e.key, map[string]any{"secondary_id": "ext-1"}))
	e.advanceDays(2)
	golden(t, "capital_product_list", e.must(200, "GET", "/products", e.key, nil))
	golden(t, "capital_order_get", e.must(200, "GET", "/product-orders/"+id, e.key, nil))
	golden(t, "capital_portfolio", e.must(200, "GET", "/capital-portfolio", e.key, nil))
	e.advanceDays(5)
	golden(t, "capital_withdrawal_preview", e.must(200, "GET", "/product-orders/"+id+"/withdrawal/preview", e.key, nil))
	golden(t, "capital_withdrawal", e.must(200, "POST", "/product-orders/"+id+"/withdrawal", e.key, nil))
	golden(t, "capital_transactions", e.must(200, "GET", "/product-orders/"+id+"/transactions?limit=3", e.key, nil))
	golden(t, "capital_error_invalid_for_state", e.must(400, "POST", "/product-orders/"+id+"/withdrawal", e.key, nil))
}
