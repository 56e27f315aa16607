package workspace_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/corebank/corebank/bank/workspace"
	"github.com/corebank/corebank/httpapi"
)

// operation is one operation of the OpenAPI document, which lists every
// route of httpapi's table (httpapi's TestOpenAPICoversRoutes).
type operation struct {
	method, path string
	open         bool // security: [], no key read
}

func operations(t *testing.T) []operation {
	t.Helper()
	var doc struct {
		Paths map[string]map[string]struct {
			Security *[]any `json:"security"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(httpapi.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	var ops []operation
	for path, item := range doc.Paths {
		for method, op := range item {
			switch method {
			case "get", "post", "patch", "put", "delete":
				ops = append(ops, operation{strings.ToUpper(method), path, op.Security != nil && len(*op.Security) == 0})
			}
		}
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i].path+ops[i].method < ops[j].path+ops[j].method })
	if len(ops) < 100 {
		t.Fatalf("the document lists %d operations", len(ops))
	}
	return ops
}

var param = regexp.MustCompile(`\{[^}]+\}`)

// TestKeysStayHome is the authorization table's workspace cases, on every
// route of the document: a key is 401 on every bank but its own, whichever
// way it comes. Through the server: a deleted workspace's key, and a key
// naming a live workspace with a secret it never issued. Straight to a
// bank's handler (as if routing were wrong): another workspace's key and
// the server's own key on a workspace, and a workspace's key on the
// server's own bank. Open routes (pages, health, the document) read no
// key and are left out of the cases that reach a bank.
func TestKeysStayHome(t *testing.T) {
	h := newHarness(t, workspace.Options{})
	a := h.create(t, map[string]any{"fake_clock": true})
	b := h.create(t, nil)
	gone := h.create(t, nil)
	if s, _ := h.call(t, gone.APIKey, "DELETE", "/sandbox/workspaces/"+gone.ID, nil); s != 204 {
		t.Fatalf("delete: %d", s)
	}
	banks := map[string]http.Handler{"A": h.m.Get(a.ID).Bank.Handler, "own": h.own.Handler}
	direct := []struct {
		name, bank, key string
	}{
		{"B's key on A's bank", "A", b.APIKey},
		{"B's read-only key on A's bank", "A", b.ReadOnlyAPIKey},
		{"the server's key on A's bank", "A", h.ownKey},
		{"A's key on the server's bank", "own", a.APIKey},
	}
	for _, op := range operations(t) {
		if strings.HasPrefix(op.path, "/sandbox/workspaces") {
			continue // TestDeleteAuthz
		}
		path := param.ReplaceAllString(op.path, "01JD0000000000000000000000")
		var body string
		if op.method != "GET" && op.method != "DELETE" {
			body = "{}"
		}
		t.Run(op.method+" "+op.path, func(t *testing.T) {
			probes := []struct{ name, key string }{{"a deleted workspace's key", gone.APIKey}}
			if !op.open {
				probes = append(probes, struct{ name, key string }{"a forged key of A", "sk_sandbox_ws" + a.ID + "_forged0000000000000000"})
			}
			for _, p := range probes {
				if s, raw := h.call(t, p.key, op.method, path, body); s != 401 || !isAuthError(raw) {
					t.Errorf("%s: %d %.200s, want 401", p.name, s, raw)
				}
			}
			if op.open {
				return
			}
			for _, d := range direct {
				req := httptest.NewRequest(op.method, path, strings.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+d.key)
				req.Header.Set("Content-Type", "application/json")
				rec := httptest.NewRecorder()
				banks[d.bank].ServeHTTP(rec, req)
				if rec.Code != 401 || !isAuthError(rec.Body.Bytes()) {
					t.Errorf("%s: %d %.200s, want 401", d.name, rec.Code, rec.Body.Bytes())
				}
			}
		})
	}
}

// isAuthError says whether raw is the 401 body CONTRACT.md gives.
func isAuthError(raw []byte) bool {
	var body struct {
		Error struct{ Code string } `json:"error"`
	}
	return json.Unmarshal(raw, &body) == nil && body.Error.Code == "unauthorized"
}

// TestDeleteAuthz: only a workspace's own full key deletes it.
func TestDeleteAuthz(t *testing.T) {
	h := newHarness(t, workspace.Options{})
	a := h.create(t, nil)
	b := h.create(t, nil)
	path := "/sandbox/workspaces/" + a.ID
	for _, c := range []struct {
		name, key string
		want      int
	}{
		{"no key", "", 401},
		{"the server's key", h.ownKey, 401},
		{"B's key", b.APIKey, 401},
		{"a forged key of A", "sk_sandbox_ws" + a.ID + "_forged0000000000000000", 401},
		{"A's read-only key", a.ReadOnlyAPIKey, 403},
	} {
		if s, raw := h.call(t, c.key, "DELETE", path, nil); s != c.want {
			t.Errorf("%s: %d %s, want %d", c.name, s, raw, c.want)
		}
	}
	if s, _ := h.call(t, a.APIKey, "GET", "/accounts", nil); s != 200 {
		t.Fatalf("A after the refused deletes: %d", s)
	}
	if s, _ := h.call(t, a.APIKey, "DELETE", path, nil); s != 204 {
		t.Errorf("A's own key: %d, want 204", s)
	}
	if s, _ := h.call(t, a.APIKey, "DELETE", path, nil); s != 401 {
		t.Errorf("A's key again: %d, want 401", s)
	}
	if s, _ := h.call(t, b.APIKey, "DELETE", "/sandbox/workspaces/nosuchworkspace0", nil); s != 401 {
		t.Errorf("a workspace that is not: %d, want 401", s)
	}
}
