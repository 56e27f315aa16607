package httpapi_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
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
