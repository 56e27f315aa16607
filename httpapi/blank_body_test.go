package httpapi_test

import "testing"

// TestBlankBody: a body that is empty or only white space reads as {} (a
// route without required fields succeeds), and the OpenAPI check that
// wraps every test request agrees with the server about it (a random
// garbage seed once found it did not).
func TestBlankBody(t *testing.T) {
	e := newEnv(t)
	for _, b := range []string{"", "  ", "\n\t "} {
		got := e.do("POST", "/sandbox/api-keys", e.key, b, "Content-Type", "application/json")
		if got.Status != 201 {
			t.Errorf("body %q: %d %s", b, got.Status, got.Raw)
		}
	}
}
