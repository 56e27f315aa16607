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

// serveOpenAPI answers GET /openapi.json; it needs no key.
func serveOpenAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(openAPIDoc)
	}
}
