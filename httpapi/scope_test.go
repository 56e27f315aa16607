package httpapi_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/entities"
)

// child creates an approved business under parent and returns its ID.
func (e *env) child(parent, name string, approve bool) string {
	e.t.Helper()
	c, err := e.ent.CreateBusiness(context.Background(), corebank.As(parent), entities.NewBusiness{Name: name,
		Business: &entities.BusinessInput{LegalName: name + " Ltd", Type: "llc"}})
	if err != nil {
		e.t.Fatalf("create business: %v", err)
	}
	if approve {
		if _, err := e.ent.ReviewEntity(context.Background(), corebank.System(), c.Entity.ID, "approved"); err != nil {
			e.t.Fatalf("approve: %v", err)
		}
	}
	return c.Entity.ID
}

// trees sets up root -> a -> a1 and root -> b, each with a key and a USD
// account, and an unapproved entity u under a.
type trees struct {
	a, a1, b, u                    string
	keyA, keyA1, keyB, roA         string
	acctRoot, acctA, acctA1, acctB string
}

func newTrees(e *env) *trees {
	e.t.Helper()
	tr := &trees{}
	tr.a = e.child(e.root, "A", true)
	tr.a1 = e.child(tr.a, "A1", true)
	tr.b = e.child(e.root, "B", true)
	tr.u = e.child(tr.a, "U", false)
	_, tr.keyA = e.newKey(e.key, tr.a, false)
	_, tr.roA = e.newKey(e.key, tr.a, true)
	_, tr.keyA1 = e.newKey(e.key, tr.a1, false)
	_, tr.keyB = e.newKey(e.key, tr.b, false)
	tr.acctRoot = e.account(e.key, "", "USD")
	tr.acctA = e.account(tr.keyA, "", "USD")
	tr.acctA1 = e.account(tr.keyA, tr.a1, "USD")
	tr.acctB = e.account(e.key, tr.b, "USD")
	return tr
}

func TestScoping(t *testing.T) {
	e := newEnv(t)
	tr := newTrees(e)
	mk := func(entity string) map[string]any {
		return map[string]any{"entity_id": entity, "type": "checking", "currency": "EUR", "display_name": "x"}
	}
	e.run(t, []call{
		// Down the tree is allowed.
		{"OKRootReadsGrandchild", "GET", "/accounts/" + tr.acctA1, nil, e.key, 200, "", ""},
		{"OKParentReadsChild", "GET", "/accounts/" + tr.acctA1, nil, tr.keyA, 200, "", ""},
		{"OKParentListsChild", "GET", "/accounts?entity_id=" + tr.a1, nil, tr.keyA, 200, "", ""},
		{"OKParentOpensForChild", "POST", "/accounts", mk(tr.a1), tr.keyA, 201, "", ""},
		{"OKReadOnlyReads", "GET", "/accounts/" + tr.acctA, nil, tr.roA, 200, "", ""},
		// Up and across are 404, exactly as missing.
		{"ErrChildReadsParent", "GET", "/accounts/" + tr.acctA, nil, tr.keyA1, 404, "not_found", ""},
		{"ErrChildReadsRoot", "GET", "/accounts/" + tr.acctRoot, nil, tr.keyA, 404, "not_found", ""},
		{"ErrSiblingReads", "GET", "/accounts/" + tr.acctB, nil, tr.keyA, 404, "not_found", ""},
		{"ErrSiblingEntityParam", "GET", "/accounts/" + tr.acctA + "?entity_id=" + tr.b, nil, tr.keyA, 404, "not_found", ""},
		{"ErrWrongEntityParam", "GET", "/accounts/" + tr.acctA + "?entity_id=" + tr.a1, nil, tr.keyA, 404, "not_found", ""},
		{"ErrSiblingLists", "GET", "/accounts?entity_id=" + tr.b, nil, tr.keyA, 404, "not_found", ""},
		{"ErrSiblingOpens", "POST", "/accounts", mk(tr.b), tr.keyA, 404, "not_found", ""},
		{"ErrUpOpens", "POST", "/accounts", mk(e.root), tr.keyA, 404, "not_found", ""},
		{"ErrSiblingPatch", "PATCH", "/accounts/" + tr.acctB, map[string]any{"display_name": "x"}, tr.keyA, 404, "not_found", ""},
		{"ErrSiblingDelete", "DELETE", "/accounts/" + tr.acctB, nil, tr.keyA, 404, "not_found", ""},
		{"ErrSiblingStatement", "GET", "/accounts/" + tr.acctB + "/statements?year=2026&month=3", nil, tr.keyA, 404, "not_found", ""},
		{"ErrSiblingInflow", "POST", "/sandbox/inflows", map[string]any{"account_id": tr.acctB, "amount": 1}, tr.keyA, 404, "not_found", ""},
		{"ErrSiblingDetails", "POST", "/account-details", map[string]any{"account_id": tr.acctB}, tr.keyA, 404, "not_found", ""},
		{"ErrSiblingDetailsList", "GET", "/account-details?account_id=" + tr.acctB, nil, tr.keyA, 404, "not_found", ""},
		{"ErrSiblingKey", "POST", "/sandbox/api-keys", map[string]any{"entity_id": tr.b}, tr.keyA, 404, "not_found", ""},
		{"ErrSiblingReview", "POST", "/sandbox/entities/" + tr.b + "/review", map[string]any{"decision": "approved"}, tr.keyA, 404, "not_found", ""},
		{"ErrUpReview", "POST", "/sandbox/entities/" + e.root + "/review", map[string]any{"decision": "suspended"}, tr.keyA, 404, "not_found", ""},
		// The approval gate.
		{"ErrNotApproved", "POST", "/accounts", mk(tr.u), tr.keyA, 422, "entity_not_approved", ""},
		{"OKReviewChild", "POST", "/sandbox/entities/" + tr.u + "/review", map[string]any{"decision": "approved"}, tr.keyA, 200, "", ""},
		{"OKApprovedOpens", "POST", "/accounts", mk(tr.u), tr.keyA, 201, "", ""},
		{"ErrReviewDecision", "POST", "/sandbox/entities/" + tr.u + "/review", map[string]any{"decision": "maybe"}, tr.keyA, 422, "validation_error", "decision"},
		{"ErrReviewMissing", "POST", "/sandbox/entities/" + tr.u + "/review", map[string]any{}, tr.keyA, 422, "validation_error", "decision"},
		{"ErrReviewUnknown", "POST", "/sandbox/entities/nobody/review", map[string]any{"decision": "approved"}, tr.keyA, 404, "not_found", ""},
		{"ErrReviewReadOnly", "POST", "/sandbox/entities/" + tr.u + "/review", map[string]any{"decision": "approved"}, tr.roA, 403, "forbidden", ""},
	})

	// A key's list without entity_id shows its own entity only.
	r := e.must(200, "GET", "/accounts", tr.keyA, nil)
	for _, it := range r.Body["data"].([]any) {
		if it.(map[string]any)["entity_id"] != tr.a {
			t.Fatalf("list leaks another entity's account: %s", r.Raw)
		}
	}
	// A deleted key stops working; another tree's key cannot delete it.
	id, secret := e.newKey(tr.keyA, "", false)
	e.must(404, "DELETE", "/sandbox/api-keys/"+id, tr.keyB, nil)
	e.must(200, "GET", "/accounts", secret, nil)
	e.must(200, "DELETE", "/sandbox/api-keys/"+id, tr.keyA, nil)
	e.must(401, "GET", "/accounts", secret, nil)
	e.must(404, "DELETE", "/sandbox/api-keys/"+id, tr.keyA, nil)
}

// TestForeignLooksMissing checks that another tree's object answers exactly
// as a missing one: same status, code, message (up to the ID) and details.
func TestForeignLooksMissing(t *testing.T) {
	e := newEnv(t)
	tr := newTrees(e)
	det := e.must(201, "POST", "/account-details", e.key, map[string]any{"account_id": tr.acctB}).str("data", "id")
	keyID, _ := e.newKey(e.key, tr.b, false)
	const missing = "01HZZZZZZZZZZZZZZZZZZZZZZZ"
	for _, c := range []struct{ method, path, id string }{
		{"GET", "/accounts/%s", tr.acctB},
		{"PATCH", "/accounts/%s", tr.acctB},
		{"DELETE", "/accounts/%s", tr.acctB},
		{"GET", "/accounts/%s/statements?year=2026&month=3", tr.acctB},
		{"GET", "/account-details/%s", det},
		{"POST", "/sandbox/account-details/%s/activate", det},
		{"DELETE", "/sandbox/api-keys/%s", keyID},
		{"POST", "/sandbox/entities/%s/review", tr.b},
		{"GET", "/accounts?entity_id=%s", tr.b},
		{"GET", "/account-details?account_id=%s", tr.acctB},
	} {
		var body any
		switch c.method {
		case "PATCH":
			body = map[string]any{"display_name": "x"}
		case "POST":
			body = map[string]any{"decision": "approved"}
			if strings.Contains(c.path, "activate") {
				body = nil
			}
		}
		foreign := e.do(c.method, fmt.Sprintf(c.path, c.id), tr.keyA, body)
		gone := e.do(c.method, fmt.Sprintf(c.path, missing), tr.keyA, body)
		if foreign.Status != 404 || gone.Status != 404 {
			t.Fatalf("%s %s: foreign %d, missing %d", c.method, c.path, foreign.Status, gone.Status)
		}
		if a, b := strings.ReplaceAll(foreign.Raw, c.id, "ID"), strings.ReplaceAll(gone.Raw, missing, "ID"); a != b {
			t.Errorf("%s %s differs:\nforeign %s\nmissing %s", c.method, c.path, a, b)
		}
	}
}
