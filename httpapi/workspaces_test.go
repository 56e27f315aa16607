package httpapi_test

import (
	"strings"
	"testing"

	"github.com/corebank/corebank/httpapi"
)

// workspaceRoutes are the sandbox workspace routes (CONTRACT.md, "Sandbox
// workspaces"): bank/workspace serves them in front of httpapi when the
// server runs with -workspaces, and its tests cover them; httpapi itself
// answers them 404 whatever the key or the body (routes.go).
var workspaceRoutes = map[string]bool{
	"POST /sandbox/workspaces":        true,
	"DELETE /sandbox/workspaces/{id}": true,
}

// TestWorkspacesOff: on a plain handler (no bank/workspace in front) both
// workspace routes answer 404 not_found in the error form, saying how to
// turn workspaces on, with no key, a valid one, a read-only one or an
// unknown one; in production, where no /sandbox/ route is mounted, they
// are 404 to a valid key like every sandbox route.
func TestWorkspacesOff(t *testing.T) {
	e := newEnv(t)
	for p := range workspaceRoutes {
		if !httpapi.Open(p) {
			t.Errorf("%s is not open: without workspaces it would be 401 to a request without a key", p)
		}
	}
	reqs := []struct {
		method, path string
		body         any
	}{
		{"POST", "/sandbox/workspaces", nil},
		{"POST", "/sandbox/workspaces", map[string]any{"fake_clock": true, "clock_start": "2026-01-01T00:00:00Z"}},
		{"POST", "/sandbox/workspaces", map[string]any{"typo": 1}},
		{"DELETE", "/sandbox/workspaces/0123456789abcdef", nil},
	}
	for _, rq := range reqs {
		for _, key := range []string{"", e.key, e.roKey, "sk_sandbox_unknown", "sk_sandbox_ws0123456789abcdef_x"} {
			r := e.do(rq.method, rq.path, key, rq.body)
			if r.Status != 404 || r.code() != "not_found" || !strings.Contains(r.str("message"), "-workspaces") {
				t.Errorf("%s %s with key %q: %d %s", rq.method, rq.path, key, r.Status, r.Raw)
			}
		}
	}
	// Another method on their paths is 405, as on every path.
	e.must(405, "GET", "/sandbox/workspaces", "", nil)
	e.must(405, "GET", "/sandbox/workspaces/0123456789abcdef", "", nil)

	prod := newEnv(t, func(o *httpapi.Options) { o.Env = httpapi.EnvProduction })
	for _, rq := range reqs {
		if r := prod.do(rq.method, rq.path, prod.key, rq.body); r.Status != 404 || r.code() != "not_found" {
			t.Errorf("production: %s %s: %d %s", rq.method, rq.path, r.Status, r.Raw)
		}
	}
}
