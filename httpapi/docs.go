package httpapi

import (
	_ "embed"
	"net/http"
)

// docsHTML is the API reference rendered from openapi.json by
// internal/docgen, served at GET /docs. TestGeneratedDocsFresh fails when it
// is not what the committed document renders: after changing openapi.json,
// run go generate ./httpapi/ and commit.
//
//go:generate go run ./internal/docgen -o docs.html openapi.json
//go:embed docs.html
var docsHTML []byte

// docsCSP is the reference's Content-Security-Policy: the page loads
// nothing, runs no script, and only its own stylesheet (by hash) applies.
var docsCSP = "default-src 'none'; style-src " + styleHash(string(docsHTML)) +
	"; form-action 'none'; frame-ancestors 'none'; base-uri 'none'"

// docs answers GET /docs, an open route (no key): the HTML reference of
// the OpenAPI document. It answers HTML, not an adapter's JSON
// (helpers.go).
func (h *handler) docs(x *exchange, r *http.Request) error {
	hd := x.Header()
	hd.Set("Content-Type", "text/html; charset=utf-8")
	hd.Set("Content-Security-Policy", docsCSP)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("X-Frame-Options", "DENY")
	x.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		x.Write(docsHTML)
	}
	return nil
}
