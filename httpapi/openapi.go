package httpapi

import (
	_ "embed"
	"net/http"
)

// openAPIDoc is the OpenAPI 3 document of the whole surface (openapi.json),
// served as is at GET /openapi.json. The httpapi tests keep it true: every
// route in the table must be in it and nothing else, and every request and
// response the tests exchange is validated against it.
//
//go:embed openapi.json
var openAPIDoc []byte

// OpenAPI returns the OpenAPI 3 document of the REST API, as JSON.
func OpenAPI() []byte { return append([]byte(nil), openAPIDoc...) }

// openAPI answers GET /openapi.json, an open route (no key): fixed bytes,
// not an adapter's answer (helpers.go).
func (h *handler) openAPI(x *exchange, r *http.Request) error {
	x.Header().Set("Content-Type", "application/json")
	x.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		x.Write(openAPIDoc)
	}
	return nil
}
