package httpapi_test

import (
	"net/http"
	"testing"
)

// TestUncleanPath: a path that is not clean ("..", "//", a trailing slash)
// names no route; it answers the JSON not-found error, with a key or
// without, rather than net/http's HTML redirect to the cleaned path.
func TestUncleanPath(t *testing.T) {
	e := newEnv(t)
	for _, p := range []string{"/accounts/../accounts", "//accounts", "/accounts/", "/sandbox/checkout/../accounts", "/./healthz"} {
		for _, key := range []string{e.key, ""} {
			got := e.do(http.MethodGet, p, key, nil)
			if got.Status != http.StatusNotFound || got.str("code") != "not_found" {
				t.Errorf("GET %s (key %v): %d %s", p, key != "", got.Status, got.Raw)
			}
		}
	}
}
