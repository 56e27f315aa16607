package httpapi_test

import (
	"fmt"
	"strings"
	"testing"
)

// TestPaymentsForeignEntityHidesExistence: with an entity_id outside the
// key's tree (in the query or the body), every payment route naming an
// object answers the same 404 entity-not-found body whether the object
// exists or not, because the entity is resolved before anything is read.
// With an entity_id inside the tree but an object outside that entity's
// tree, the object answers exactly as a missing one of its kind.
func TestPaymentsForeignEntityHidesExistence(t *testing.T) {
	e := newEnv(t)
	f := newPayFixture(e)
	const missing = "01HZZZZZZZZZZZZZZZZZZZZZZZ"
	withEntity := func(body map[string]any, entity string) map[string]any {
		out := map[string]any{"entity_id": entity}
		for k, v := range body {
			out[k] = v
		}
		return out
	}
	type route struct {
		method, path, id string
		body             map[string]any // entity_id is added to it when non-nil
	}
	routes := []route{
		{"GET", "/transfers/%s", f.transfer2, nil},
		{"GET", "/counterparties/%s", f.cpB, nil},
		{"GET", "/payment-details/%s", f.pdB, nil},
		{"GET", "/fx-quotes/%s", f.quoteB, nil},
		{"GET", "/counterparties/%s/payment-details", f.cpB, nil},
		{"PATCH", "/counterparties/%s", f.cpB, map[string]any{"nickname": "x"}},
		{"PATCH", "/payment-details/%s", f.pdB, map[string]any{"bank_name": "x"}},
		{"POST", "/counterparties/%s/deactivate", f.cpB, map[string]any{}},
		{"POST", "/sandbox/transfers/%s/simulate", f.transfer2, map[string]any{"outcome": "failed"}},
	}
	// ask sends route c for object id as key, with entity_id in the query
	// (GET) or the body.
	ask := func(c route, key, entity, id string) resp {
		path := fmt.Sprintf(c.path, id)
		if c.body == nil {
			return e.do(c.method, path+"?entity_id="+entity, key, nil)
		}
		return e.do(c.method, path, key, withEntity(c.body, entity))
	}
	same := func(t *testing.T, what string, a, b resp, ids ...string) {
		t.Helper()
		ra, rb := a.Raw, b.Raw
		for _, id := range ids {
			ra, rb = strings.ReplaceAll(ra, id, "ID"), strings.ReplaceAll(rb, id, "ID")
		}
		if a.Status != b.Status || ra != rb {
			t.Errorf("%s differs:\nexisting %d %s\nmissing  %d %s", what, a.Status, ra, b.Status, rb)
		}
	}
	for _, c := range routes {
		what := c.method + " " + c.path
		// A key of A naming B (a sibling): entity not found, existing or not.
		got := ask(c, f.tr.keyA, f.tr.b, c.id)
		if got.Status != 404 || got.str("code") != "not_found" || got.str("message") != "entity not found" {
			t.Errorf("%s with a foreign entity_id: %d %s", what, got.Status, got.Raw)
		}
		same(t, what+" with a foreign entity_id", got, ask(c, f.tr.keyA, f.tr.b, missing))
		// The root key naming A, whose tree does not hold B's objects: the
		// object's own not found, as for a missing one.
		got = ask(c, e.key, f.tr.a, c.id)
		if got.Status != 404 || got.str("code") != "not_found" || got.str("message") == "entity not found" {
			t.Errorf("%s with entity_id A for B's object: %d %s", what, got.Status, got.Raw)
		}
		same(t, what+" with entity_id A", got, ask(c, e.key, f.tr.a, missing), c.id, missing)
	}
	// POST /payment-details names its counterparty in the body.
	post := func(key, entity, cp string) resp {
		return e.do("POST", "/payment-details", key, withEntity(achBody(cp), entity))
	}
	got := post(f.tr.keyA, f.tr.b, f.cpB)
	if got.Status != 404 || got.str("message") != "entity not found" {
		t.Errorf("POST /payment-details with a foreign entity_id: %d %s", got.Status, got.Raw)
	}
	same(t, "POST /payment-details with a foreign entity_id", got, post(f.tr.keyA, f.tr.b, missing))
	same(t, "POST /payment-details with entity_id A", post(e.key, f.tr.a, f.cpB), post(e.key, f.tr.a, missing), f.cpB, missing)
	// POST /counterparties keeps its 409 for a foreign entity_id.
	cp := map[string]any{"entity_id": f.tr.b, "type": "individual", "profile": map[string]any{
		"first_name": "Eve", "last_name": "Spy", "relationship": "vendor", "email": "eve@example.com",
		"address": map[string]any{"line1": "1 Main St", "city": "London", "country": "GB"}}}
	if r := e.do("POST", "/counterparties", f.tr.keyA, cp); r.Status != 409 || r.str("code") != "conflict" {
		t.Errorf("POST /counterparties with a foreign entity_id: %d %s", r.Status, r.Raw)
	}
	// Lists with a foreign entity_id, whatever else the query says.
	for _, path := range []string{"/transfers?entity_id=%s", "/transfers?entity_id=%s&account_id=" + f.tr.acctB,
		"/counterparties?entity_id=%s", "/transfers?entity_id=%s&cursor=bogus"} {
		r := e.do("GET", fmt.Sprintf(path, f.tr.b), f.tr.keyA, nil)
		if r.Status != 404 || r.str("message") != "entity not found" {
			t.Errorf("GET %s: %d %s", path, r.Status, r.Raw)
		}
	}
}

// TestPaymentsParentActsForChild: a parent's key reaches a child's objects
// with and without entity_id, and a transfer from the child's account acts
// for the child.
func TestPaymentsParentActsForChild(t *testing.T) {
	e := newEnv(t)
	tr := newTrees(e)
	e.fund(tr.keyA, tr.acctA1, 10_000)
	cp := e.counterparty(tr.keyA, tr.a1, "Cy", "Child")
	pd := e.achDetail(tr.keyA, cp)
	r := e.must(201, "POST", "/transfers", tr.keyA, transferBody(tr.acctA1, pd, "child-1", 100))
	id := r.str("data", "id")
	if r.str("data", "entity_id") != tr.a1 {
		t.Fatalf("transfer acts for %s, want the child: %s", r.str("data", "entity_id"), r.Raw)
	}
	for _, path := range []string{"/transfers/" + id, "/transfers/" + id + "?entity_id=" + tr.a1,
		"/transfers/" + id + "?entity_id=" + tr.a, "/counterparties/" + cp, "/payment-details/" + pd} {
		e.must(200, "GET", path, tr.keyA, nil)
	}
	// The child cannot see up, nor its sibling B.
	e.must(404, "GET", "/transfers/"+id, tr.keyB, nil)
	// A parent's detail cannot pay from the child's account: the transfer
	// acts for the child, whose detail it is not.
	pdA := e.achDetail(tr.keyA, e.counterparty(tr.keyA, "", "Pa", "Rent"))
	if r := e.do("POST", "/transfers", tr.keyA, transferBody(tr.acctA1, pdA, "child-2", 100)); r.Status != 404 {
		t.Fatalf("parent's detail from the child's account: %d %s", r.Status, r.Raw)
	}
}
