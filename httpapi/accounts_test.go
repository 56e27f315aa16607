package httpapi_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
)

// call is one row of a route table test.
type call struct {
	name   string
	method string
	path   string
	body   any
	key    string
	status int
	code   string
	field  string // a details key the error must name
}

func (e *env) run(t *testing.T, tests []call) {
	t.Helper()
	runCalls(t, e, tests, e.do, nil)
}

// runCalls runs each call as a subtest through do, with e pointed at the
// subtest: the status, the error code and the details field it names must
// be as the call says, the response must have the API's form, and more,
// when given, checks the rest.
func runCalls(t *testing.T, e *env, tests []call, do func(method, path, key string, body any, hdr ...string) resp, more func(t *testing.T, got resp)) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.t = t
			got := do(tt.method, tt.path, tt.key, tt.body)
			if got.Status != tt.status || got.code() != tt.code {
				t.Fatalf("%s %s: got %d %q, want %d %q: %.400s", tt.method, tt.path, got.Status, got.code(), tt.status, tt.code, got.Raw)
			}
			if tt.field != "" {
				if _, ok := got.details()[tt.field]; !ok {
					t.Fatalf("details do not name %q: %s", tt.field, got.Raw)
				}
			}
			checkForm(t, got)
			if more != nil {
				more(t, got)
			}
		})
	}
}

// checkForm asserts the response form rules every route follows.
func checkForm(t *testing.T, r resp) {
	t.Helper()
	switch {
	case r.Status == 401 || r.Status == 403:
		if _, ok := r.Body["error"].(map[string]any); !ok || len(r.Body) != 1 {
			t.Fatalf("auth error not {error:{code,message}}: %s", r.Raw)
		}
	case r.Status >= 400:
		if r.Body["status"] != "error" || r.code() == "" || r.Body["message"] == nil {
			t.Fatalf("error body lacks status/code/message: %s", r.Raw)
		}
		if _, ok := r.Body["details"].(map[string]any); !ok {
			t.Fatalf("error body lacks details: %s", r.Raw)
		}
	}
	if r.Status >= 500 {
		t.Fatalf("server error: %s", r.Raw)
	}
}

func TestAccounts(t *testing.T) {
	e := newEnv(t)
	usd := e.account(e.key, "", "USD")
	long := strings.Repeat("x", 101)
	e.run(t, []call{
		{"CreateOK", "POST", "/accounts", map[string]any{"type": "checking", "currency": "EUR", "display_name": "Euro"}, e.key, 201, "", ""},
		{"CreateOKEntityExplicit", "POST", "/accounts", map[string]any{"entity_id": e.root, "type": "debit", "currency": "GBP", "display_name": "GBP"}, e.key, 201, "", ""},
		{"CreateErrMissing", "POST", "/accounts", map[string]any{}, e.key, 422, "validation_error", "type"},
		{"CreateErrMissingCurrency", "POST", "/accounts", map[string]any{}, e.key, 422, "validation_error", "currency"},
		{"CreateErrMissingName", "POST", "/accounts", map[string]any{}, e.key, 422, "validation_error", "display_name"},
		{"CreateErrType", "POST", "/accounts", map[string]any{"type": "savings", "currency": "USD", "display_name": "x"}, e.key, 422, "validation_error", "type"},
		{"CreateErrCurrency", "POST", "/accounts", map[string]any{"type": "checking", "currency": "XXX", "display_name": "x"}, e.key, 422, "validation_error", "currency"},
		{"CreateErrNameLong", "POST", "/accounts", map[string]any{"type": "checking", "currency": "USD", "display_name": long}, e.key, 422, "validation_error", "display_name"},
		{"CreateErrMetaType", "POST", "/accounts", map[string]any{"type": "checking", "currency": "USD", "display_name": "x", "meta": map[string]any{"a": 1}}, e.key, 422, "validation_error", "meta.a"},
		{"CreateErrUnknownField", "POST", "/accounts", `{"entity_idd":"x","type":"checking","currency":"USD","display_name":"x"}`, e.key, 422, "validation_error", "entity_idd"},
		{"CreateErrWrongType", "POST", "/accounts", `{"type":"checking","currency":"USD","display_name":5}`, e.key, 422, "validation_error", "display_name"},
		{"CreateErrMalformed", "POST", "/accounts", `{"type":"checking",`, e.key, 422, "validation_error", "body"},
		{"CreateErrTrailing", "POST", "/accounts", `{"type":"checking","currency":"USD","display_name":"x"}{}`, e.key, 422, "validation_error", "body"},
		{"CreateErrDeep", "POST", "/accounts", strings.Repeat(`{"a":`, 200) + "1" + strings.Repeat("}", 200), e.key, 422, "validation_error", "body"},
		{"CreateErrEntityUnknown", "POST", "/accounts", map[string]any{"entity_id": "01HZZZZZZZZZZZZZZZZZZZZZZZ", "type": "checking", "currency": "USD", "display_name": "x"}, e.key, 404, "not_found", ""},
		{"CreateErrNoKey", "POST", "/accounts", map[string]any{}, "", 401, "unauthorized", ""},
		{"CreateErrBadKey", "POST", "/accounts", map[string]any{}, "sk_sandbox_nope", 401, "unauthorized", ""},
		{"CreateErrReadOnly", "POST", "/accounts", map[string]any{"type": "checking", "currency": "USD", "display_name": "x"}, e.roKey, 403, "forbidden", ""},

		{"GetOK", "GET", "/accounts/" + usd, nil, e.key, 200, "", ""},
		{"GetOKReadOnly", "GET", "/accounts/" + usd, nil, e.roKey, 200, "", ""},
		{"GetOKEntity", "GET", "/accounts/" + usd + "?entity_id=" + e.root, nil, e.key, 200, "", ""},
		{"GetErrUnknown", "GET", "/accounts/01HZZZZZZZZZZZZZZZZZZZZZZZ", nil, e.key, 404, "not_found", ""},
		{"GetErrEntityUnknown", "GET", "/accounts/" + usd + "?entity_id=nobody", nil, e.key, 404, "not_found", ""},
		{"GetErrNoKey", "GET", "/accounts/" + usd, nil, "", 401, "unauthorized", ""},

		{"ListOK", "GET", "/accounts", nil, e.key, 200, "", ""},
		{"ListOKFilters", "GET", "/accounts?currency=USD&type=checking&entity_id=" + e.root, nil, e.key, 200, "", ""},
		{"ListErrCurrency", "GET", "/accounts?currency=ZZZ", nil, e.key, 422, "validation_error", "currency"},
		{"ListErrType", "GET", "/accounts?type=nope", nil, e.key, 422, "validation_error", "type"},
		{"ListErrLimit0", "GET", "/accounts?limit=0", nil, e.key, 422, "validation_error", "limit"},
		{"ListErrLimit101", "GET", "/accounts?limit=101", nil, e.key, 422, "validation_error", "limit"},
		{"ListErrLimitText", "GET", "/accounts?limit=abc", nil, e.key, 422, "validation_error", "limit"},
		{"ListErrCursor", "GET", "/accounts?cursor=garbage", nil, e.key, 422, "validation_error", "cursor"},
		{"ListErrPrevCursor", "GET", "/accounts?prev_cursor=garbage", nil, e.key, 422, "validation_error", "cursor"},
		{"ListErrEntity", "GET", "/accounts?entity_id=nobody", nil, e.key, 404, "not_found", ""},

		{"PatchErrMissing", "PATCH", "/accounts/" + usd, map[string]any{}, e.key, 422, "validation_error", "display_name"},
		{"PatchErrEmpty", "PATCH", "/accounts/" + usd, map[string]any{"display_name": " "}, e.key, 422, "validation_error", "display_name"},
		{"PatchErrLong", "PATCH", "/accounts/" + usd, map[string]any{"display_name": long}, e.key, 422, "validation_error", "display_name"},
		{"PatchErrOtherField", "PATCH", "/accounts/" + usd, map[string]any{"display_name": "x", "currency": "EUR"}, e.key, 422, "validation_error", "currency"},
		{"PatchErrWrongType", "PATCH", "/accounts/" + usd, `{"display_name":["x"]}`, e.key, 422, "validation_error", "display_name"},
		{"PatchErrUnknown", "PATCH", "/accounts/01HZZZZZZZZZZZZZZZZZZZZZZZ", map[string]any{"display_name": "x"}, e.key, 404, "not_found", ""},
		{"PatchErrReadOnly", "PATCH", "/accounts/" + usd, map[string]any{"display_name": "x"}, e.roKey, 403, "forbidden", ""},
		{"PatchOK", "PATCH", "/accounts/" + usd, map[string]any{"display_name": "Renamed"}, e.key, 200, "", ""},

		{"DeleteErrUnknown", "DELETE", "/accounts/01HZZZZZZZZZZZZZZZZZZZZZZZ", nil, e.key, 404, "not_found", ""},
		{"DeleteErrReadOnly", "DELETE", "/accounts/" + usd, nil, e.roKey, 403, "forbidden", ""},
		{"DeleteErrBody", "DELETE", "/accounts/" + usd, `{"nope":1}`, e.key, 422, "validation_error", "nope"},

		{"StatementOK", "GET", "/accounts/" + usd + "/statements?year=2026&month=3", nil, e.key, 200, "", ""},
		{"StatementOKPending", "GET", "/accounts/" + usd + "/statements?year=2026&month=3&include_pending=true&limit=5", nil, e.key, 200, "", ""},
		{"StatementErrMissing", "GET", "/accounts/" + usd + "/statements", nil, e.key, 422, "validation_error", "year"},
		{"StatementErrMonthMissing", "GET", "/accounts/" + usd + "/statements?year=2026", nil, e.key, 422, "validation_error", "month"},
		{"StatementErrMonth", "GET", "/accounts/" + usd + "/statements?year=2026&month=13", nil, e.key, 422, "validation_error", "month"},
		{"StatementErrYearText", "GET", "/accounts/" + usd + "/statements?year=twenty&month=1", nil, e.key, 422, "validation_error", "year"},
		{"StatementErrBool", "GET", "/accounts/" + usd + "/statements?year=2026&month=1&include_pending=maybe", nil, e.key, 422, "validation_error", "include_pending"},
		{"StatementErrLimit", "GET", "/accounts/" + usd + "/statements?year=2026&month=1&limit=101", nil, e.key, 422, "validation_error", "limit"},
		{"StatementErrCursor", "GET", "/accounts/" + usd + "/statements?year=2026&month=1&cursor=abc", nil, e.key, 422, "validation_error", "cursor"},
		{"StatementErrUnknown", "GET", "/accounts/01HZZZZZZZZZZZZZZZZZZZZZZZ/statements?year=2026&month=1", nil, e.key, 404, "not_found", ""},
	})
}

func TestAccountShapes(t *testing.T) {
	e := newEnv(t)
	r := e.must(201, "POST", "/accounts", e.key, map[string]any{"type": "checking", "currency": "USD", "display_name": "Main", "meta": map[string]string{"k": "v"}})
	if r.Body["status"] != "success" || r.Body["message"] == "" {
		t.Fatalf("not an envelope: %s", r.Raw)
	}
	d := r.data()
	for _, f := range []string{"id", "entity_id", "type", "currency", "display_name", "service_ban", "balance", "meta", "deleted", "created", "updated", "is_default", "entity_effect"} {
		if _, ok := d[f]; !ok {
			t.Errorf("account lacks %s: %s", f, r.Raw)
		}
	}
	if d["is_default"] != true {
		t.Errorf("first account not default")
	}
	eff := d["entity_effect"].(map[string]any)
	if eff["entity_id"] != e.root || eff["accounts_count"] != 1.0 || eff["default_account_id"] != d["id"] {
		t.Errorf("entity_effect = %v", eff)
	}
	id := d["id"].(string)

	r = e.must(201, "POST", "/accounts", e.key, map[string]any{"type": "checking", "currency": "EUR", "display_name": "Second"})
	eff = r.data()["entity_effect"].(map[string]any)
	if r.data()["is_default"] != false || eff["accounts_count"] != 2.0 || eff["default_account_id"] != id {
		t.Errorf("second: %s", r.Raw)
	}

	r = e.must(200, "PATCH", "/accounts/"+id, e.key, map[string]any{"display_name": "Renamed"})
	ch := r.data()["changes"].([]any)
	if r.data()["display_name"] != "Renamed" || len(ch) != 1 || ch[0].(map[string]any)["from"] != "Main" {
		t.Errorf("patch: %s", r.Raw)
	}
	r = e.must(200, "PATCH", "/accounts/"+id, e.key, map[string]any{"display_name": "Renamed"})
	if len(r.data()["changes"].([]any)) != 0 {
		t.Errorf("no-op patch reports changes: %s", r.Raw)
	}

	// A balance blocks deletion.
	e.must(201, "POST", "/sandbox/inflows", e.key, map[string]any{"account_id": id, "amount": 500})
	r = e.must(422, "DELETE", "/accounts/"+id, e.key, nil)
	if r.code() != "account_not_empty" {
		t.Fatalf("delete with balance: %s", r.Raw)
	}
	empty := e.account(e.key, "", "GBP")
	r = e.must(200, "DELETE", "/accounts/"+empty+"?entity_id="+e.root, e.key, nil)
	d = r.data()
	rev, _ := d["reversibility"].(map[string]any)
	if d["deleted"] == 0.0 || rev["reversible"] != false || d["entity_effect"] == nil {
		t.Fatalf("delete: %s", r.Raw)
	}
	if eff := d["entity_effect"].(map[string]any); eff["accounts_count"] != 2.0 {
		t.Fatalf("delete effect: %v", eff)
	}
	// Deleted accounts leave lists but stay readable.
	r = e.must(200, "GET", "/accounts", e.key, nil)
	if n := len(r.Body["data"].([]any)); n != 2 {
		t.Fatalf("list after delete has %d accounts", n)
	}
	e.must(200, "GET", "/accounts/"+empty, e.key, nil)

	// Statement.
	r = e.must(200, "GET", "/accounts/"+id+"/statements?year=2026&month=3", e.key, nil)
	st := r.data()
	for _, f := range []string{"account_id", "account_name", "currency", "service_ban", "holder_address", "generated_at", "period", "summary", "transactions", "pagination"} {
		if _, ok := st[f]; !ok {
			t.Errorf("statement lacks %s: %s", f, r.Raw)
		}
	}
	if txs := st["transactions"].([]any); len(txs) != 1 || st["summary"].(map[string]any)["closing_balance"] != 500.0 {
		t.Errorf("statement: %s", r.Raw)
	}
}

func TestListEnvelope(t *testing.T) {
	e := newEnv(t)
	e.account(e.key, "", "USD")
	r := e.must(200, "GET", "/accounts?currency=USD", e.key, nil)
	if r.Body["status"] != "success" {
		t.Fatalf("list not in envelope: %s", r.Raw)
	}
	meta := r.Body["meta"].(map[string]any)
	p := meta["pagination"].(map[string]any)
	for _, f := range []string{"limit", "total_count", "has_next", "has_previous", "next_cursor", "previous_cursor"} {
		if _, ok := p[f]; !ok {
			t.Errorf("pagination lacks %s: %s", f, r.Raw)
		}
	}
	if p["next_cursor"] != nil || p["previous_cursor"] != nil || p["total_count"] != 1.0 || p["limit"] != 20.0 {
		t.Errorf("pagination = %v", p)
	}
	f := meta["filters_applied"].(map[string]any)
	if f["currency"] != "USD" || f["entity_id"] != e.root {
		t.Errorf("filters_applied = %v", f)
	}
}

// walk pages through path in both directions and returns the IDs seen.
func walk(t *testing.T, e *env, path string, limit int) (fwd, back []string) {
	t.Helper()
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	base := fmt.Sprintf("%s%slimit=%d", path, sep, limit)
	next := base
	var pag map[string]any
	for pages := 0; ; pages++ {
		if pages > 200 {
			t.Fatal("walk does not end")
		}
		r := e.must(200, "GET", next, e.key, nil)
		for _, it := range r.Body["data"].([]any) {
			fwd = append(fwd, it.(map[string]any)["id"].(string))
		}
		pag = r.Body["meta"].(map[string]any)["pagination"].(map[string]any)
		if pag["has_next"] != true {
			break
		}
		next = base + "&cursor=" + url.QueryEscape(pag["next_cursor"].(string))
	}
	for pages := 0; pag["has_previous"] == true; pages++ {
		if pages > 200 {
			t.Fatal("walk does not end")
		}
		r := e.must(200, "GET", base+"&prev_cursor="+url.QueryEscape(pag["previous_cursor"].(string)), e.key, nil)
		var page []string
		for _, it := range r.Body["data"].([]any) {
			page = append(page, it.(map[string]any)["id"].(string))
		}
		back = append(page, back...)
		pag = r.Body["meta"].(map[string]any)["pagination"].(map[string]any)
	}
	return fwd, back
}

func TestAccountsPagination(t *testing.T) {
	e := newEnv(t)
	var want []string
	for i := 0; i < 23; i++ {
		want = append(want, e.account(e.key, "", []string{"USD", "EUR"}[i%2]))
	}
	for _, limit := range []int{1, 4, 10, 23, 100} {
		fwd, back := walk(t, e, "/accounts", limit)
		if strings.Join(fwd, ",") != strings.Join(want, ",") {
			t.Fatalf("limit %d: forward walk saw %d items, want each of %d once", limit, len(fwd), len(want))
		}
		last := len(want) % limit
		if last == 0 {
			last = limit
		}
		if strings.Join(back, ",") != strings.Join(want[:len(want)-last], ",") {
			t.Fatalf("limit %d: backward walk saw %v", limit, back)
		}
	}
	// A cursor is bound to its filters and cannot be altered.
	r := e.must(200, "GET", "/accounts?limit=2&currency=USD", e.key, nil)
	cur := r.Body["meta"].(map[string]any)["pagination"].(map[string]any)["next_cursor"].(string)
	e.must(200, "GET", "/accounts?limit=2&currency=USD&cursor="+cur, e.key, nil)
	for _, bad := range []string{
		"/accounts?limit=2&currency=EUR&cursor=" + cur,
		"/accounts?limit=2&cursor=" + cur,
		"/accounts?limit=2&currency=USD&cursor=" + cur[:len(cur)-2],
		"/accounts?limit=2&currency=USD&cursor=" + "A" + cur[1:],
		"/accounts?limit=2&currency=USD&cursor=" + cur + "&prev_cursor=" + cur,
		"/accounts/" + want[0] + "/statements?year=2026&month=3&cursor=" + cur,
	} {
		r := e.must(422, "GET", bad, e.key, nil)
		if _, ok := r.details()["cursor"]; !ok {
			t.Fatalf("%s: %s", bad, r.Raw)
		}
	}
	// pre_cursor is accepted as prev_cursor.
	r = e.must(200, "GET", "/accounts?limit=2&currency=USD&cursor="+cur, e.key, nil)
	prev := r.Body["meta"].(map[string]any)["pagination"].(map[string]any)["previous_cursor"].(string)
	r = e.must(200, "GET", "/accounts?limit=2&currency=USD&pre_cursor="+prev, e.key, nil)
	if got := r.Body["data"].([]any); len(got) != 2 || got[0].(map[string]any)["id"] != want[0] {
		t.Fatalf("pre_cursor: %s", r.Raw)
	}
}

// TestForeignEntityParamLooksMissing checks that an entity_id outside the
// caller's tree answers "entity not found" for every account, account
// details and statement route, with the same body whether the object named
// is the caller's own, another tree's, or missing: the entity is checked
// before the object is loaded.
func TestForeignEntityParamLooksMissing(t *testing.T) {
	e := newEnv(t)
	tr := newTrees(e)
	own := e.must(201, "POST", "/account-details", tr.keyA, map[string]any{"account_id": tr.acctA}).str("data", "id")
	foreign := e.must(201, "POST", "/account-details", e.key, map[string]any{"account_id": tr.acctB}).str("data", "id")
	const missing = "01HZZZZZZZZZZZZZZZZZZZZZZZ"
	for _, c := range []struct {
		name, method, path string // path's %s is the object's ID, if it has one
		body               func(id string) any
		ids                [2]string // the caller's own object, another tree's
	}{
		{"GetAccount", "GET", "/accounts/%s?entity_id=" + tr.b, nil, [2]string{tr.acctA, tr.acctB}},
		{"PatchAccount", "PATCH", "/accounts/%s", func(string) any { return map[string]any{"display_name": "x", "entity_id": tr.b} }, [2]string{tr.acctA, tr.acctB}},
		{"DeleteAccount", "DELETE", "/accounts/%s?entity_id=" + tr.b, nil, [2]string{tr.acctA, tr.acctB}},
		{"Statement", "GET", "/accounts/%s/statements?year=2026&month=3&entity_id=" + tr.b, nil, [2]string{tr.acctA, tr.acctB}},
		{"GetDetails", "GET", "/account-details/%s?entity_id=" + tr.b, nil, [2]string{own, foreign}},
		{"ListDetails", "GET", "/account-details?account_id=%s&entity_id=" + tr.b, nil, [2]string{tr.acctA, tr.acctB}},
		{"CreateDetails", "POST", "/account-details", func(id string) any { return map[string]any{"account_id": id, "entity_id": tr.b} }, [2]string{tr.acctA, tr.acctB}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var first string
			for _, id := range []string{c.ids[0], c.ids[1], missing} {
				path := c.path
				if strings.Contains(path, "%s") {
					path = fmt.Sprintf(path, id)
				}
				var body any
				if c.body != nil {
					body = c.body(id)
				}
				got := e.do(c.method, path, tr.keyA, body)
				if got.Status != 404 || got.code() != "not_found" || !strings.Contains(got.Raw, "entity not found") {
					t.Fatalf("%s %s = %d %s", c.method, path, got.Status, got.Raw)
				}
				raw := strings.ReplaceAll(got.Raw, id, "ID")
				if first == "" {
					first = raw
				} else if raw != first {
					t.Errorf("%s %s differs:\n%s\n%s", c.method, path, raw, first)
				}
			}
		})
	}
}
