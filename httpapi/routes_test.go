package httpapi_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/corebank/corebank/httpapi"
)

// TestEveryRouteAuth checks 401 without or with an unknown key and 403 for
// a read-only key on every non-GET route in the table but the open ones
// (TestProbes).
func TestEveryRouteAuth(t *testing.T) {
	e := newEnv(t)
	acct := e.account(e.key, "", "USD")
	for _, p := range httpapi.Patterns(e.h) {
		if httpapi.Open(p) {
			continue
		}
		method, path, _ := strings.Cut(p, " ")
		target := strings.ReplaceAll(path, "{id}", acct)
		for _, key := range []string{"", "sk_sandbox_unknown", "Bearer"} {
			r := e.do(method, target, key, map[string]any{})
			if r.Status != 401 || r.code() != "unauthorized" {
				t.Errorf("%s with key %q: %d %s", p, key, r.Status, r.Raw)
			}
		}
		req := httptest.NewRequest(method, target, nil)
		req.Header.Set("Authorization", "Basic "+e.key)
		w := e.serve(req)
		if w.Code != 401 {
			t.Errorf("%s with Basic auth: %d", p, w.Code)
		}
		if method != "GET" {
			r := e.do(method, target, e.roKey, map[string]any{})
			if r.Status != 403 || r.code() != "forbidden" {
				t.Errorf("%s with a read-only key: %d %s", p, r.Status, r.Raw)
			}
		}
	}
}
