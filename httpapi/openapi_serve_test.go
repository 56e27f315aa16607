package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/corebank/corebank/httpapi"
)

var (
	specOnce   sync.Once
	specDoc    *openapi3.T
	specRouter routers.Router
	specErr    error
)

// spec loads the embedded OpenAPI document once per test binary.
func spec() (*openapi3.T, routers.Router, error) {
	specOnce.Do(func() {
		l := openapi3.NewLoader()
		specDoc, specErr = l.LoadFromData(httpapi.OpenAPI())
		if specErr != nil {
			return
		}
		if specErr = specDoc.Validate(context.Background()); specErr != nil {
			return
		}
		specRouter, specErr = legacy.NewRouter(specDoc)
	})
	return specDoc, specRouter, specErr
}

// serve sends r through the handler and checks the request and the response
// against the OpenAPI document (checkExchange). Every request the httpapi
// tests send goes through here.
func (e *env) serve(r *http.Request) *httptest.ResponseRecorder {
	e.t.Helper()
	return serveChecked(e.t, e.h, r)
}

// serveChecked serves r with h and reports to t any disagreement of the
// exchange with the document; benchmarks are not checked.
func serveChecked(t testing.TB, h http.Handler, r *http.Request) *httptest.ResponseRecorder {
	t.Helper()
	var body []byte
	if r.Body != nil {
		body, _ = io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if _, bench := t.(*testing.B); !bench {
		if err := checkExchange(r, body, w); err != nil {
			t.Errorf("OpenAPI: %s %s: %v", r.Method, r.URL.Path, err)
		}
	}
	return w
}

// checked is h with every exchange checked against the document, for a
// test that serves h over a real connection.
func checked(t testing.TB, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := serveChecked(t, h, r)
		maps.Copy(w.Header(), rec.Header())
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	})
}

// checkExchange validates one request and its response against the
// document:
//   - a request the document does not route must be answered 404 or 405
//     in the error form (401 or 403 when its key fails: keys are checked
//     before routing; an unclean path such as /accounts/.. is 404 too);
//   - a request the document rejects must not succeed (a 2xx answer to a
//     request outside the document is a mismatch; a 4xx is the server
//     agreeing);
//   - every response must match the document's response for its status.
//
// The server reads any body as JSON whatever its Content-Type, so a body
// sent without one is checked as application/json. HEAD is checked as the
// GET it mirrors, without a body.
func checkExchange(r *http.Request, body []byte, w *httptest.ResponseRecorder) error {
	doc, router, err := spec()
	if err != nil {
		return fmt.Errorf("loading the document: %w", err)
	}
	req := r.Clone(context.Background())
	if len(bytes.TrimSpace(body)) == 0 {
		body = nil // the server reads a blank body as {}, as an empty one
		req.Header.Del("Content-Type")
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	if req.Header.Get("Content-Type") == "" && len(body) > 0 {
		req.Header.Set("Content-Type", "application/json")
	}
	head := req.Method == http.MethodHead
	if head {
		req.Method = http.MethodGet
	}
	req.URL.Scheme, req.URL.Host = "", ""
	route, params, err := router.FindRoute(req)
	if err == nil && slices.Contains(slices.Collect(maps.Values(params)), "") {
		err = errors.New("empty path parameter") // ServeMux matches no empty {id}
	}
	if err != nil {
		switch w.Code {
		case http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound, http.StatusMethodNotAllowed:
			errResp := doc.Components.Responses[fmt.Sprintf("E%d", w.Code)]
			return validateBody(errResp.Value.Content.Get("application/json").Schema.Value, w)
		}
		return fmt.Errorf("not in the document (%v) but answered %d", err, w.Code)
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: true}}
	// A request only has to be inside the document when the server took it
	// (the 4xx the garbage tests provoke need no decoding of their bodies).
	if w.Code < 300 {
		if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
			return fmt.Errorf("%s: request outside the document answered %d: %s", route.Path, w.Code, explain(err))
		}
	}
	if head {
		return nil
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: w.Code, Header: w.Header(),
		Options: &openapi3filter.Options{MultiError: true, IncludeResponseStatus: true}}
	out.SetBodyBytes(w.Body.Bytes())
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		return fmt.Errorf("%s %s: response %d: %s\nbody: %.400s", req.Method, route.Path, w.Code, explain(err), w.Body.String())
	}
	return nil
}

// validateBody checks a JSON response body against schema.
func validateBody(schema *openapi3.Schema, w *httptest.ResponseRecorder) error {
	var v any
	if err := json.Unmarshal(w.Body.Bytes(), &v); err != nil {
		return fmt.Errorf("answered %d with a body that is not JSON: %v", w.Code, err)
	}
	if err := schema.VisitJSON(v, openapi3.MultiErrors()); err != nil {
		return fmt.Errorf("answered %d: %s", w.Code, explain(err))
	}
	return nil
}

// explain lists each problem with its JSON path.
func explain(err error) string {
	var me openapi3.MultiError
	if errors.As(err, &me) {
		var parts []string
		for _, e := range me {
			parts = append(parts, explain(e))
		}
		return strings.Join(parts, "; ")
	}
	var se *openapi3.SchemaError
	if errors.As(err, &se) {
		return fmt.Sprintf("at /%s: %s", strings.Join(se.JSONPointer(), "/"), se.Reason)
	}
	var re *openapi3filter.ResponseError
	if errors.As(err, &re) && re.Err != nil {
		return re.Reason + ": " + explain(re.Err)
	}
	var rq *openapi3filter.RequestError
	if errors.As(err, &rq) && rq.Err != nil {
		where := "body"
		if rq.Parameter != nil {
			where = rq.Parameter.In + " " + rq.Parameter.Name
		}
		return where + ": " + explain(rq.Err)
	}
	return err.Error()
}

// TestOpenAPIServed checks that GET /openapi.json answers the embedded
// document without a key, and that the document is valid OpenAPI 3.
func TestOpenAPIServed(t *testing.T) {
	if _, _, err := spec(); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t)
	r := e.must(200, "GET", "/openapi.json", "", nil)
	if r.Raw != string(httpapi.OpenAPI()) || r.Header.Get("Content-Type") != "application/json" {
		t.Errorf("GET /openapi.json: %s, %d bytes", r.Header.Get("Content-Type"), len(r.Raw))
	}
	if v, _ := r.Body["openapi"].(string); !strings.HasPrefix(v, "3.") {
		t.Errorf("openapi = %q", v)
	}
}

// TestOpenAPICheckCatches shows that checkExchange reports a response that
// strays from the document with its route, JSON path and reason, and a
// success answered to a request the document rejects.
func TestOpenAPICheckCatches(t *testing.T) {
	for _, c := range []struct {
		method, target, body string
		status               int
		resp, want           string
	}{
		{"GET", "/sandbox/clock", "", 200, `{"now": 5, "now_ms": 1}`, "at /now: value must be a string"},
		{"GET", "/accounts/a1", "", 404, `{"status": "error", "code": "not_found", "message": "x"}`, `property "details" is missing`},
		{"POST", "/accounts", `{"currency": "USD", "typo": 1}`, 201, `{}`, "request outside the document answered 201"},
		{"GET", "/nowhere", "", 200, `{}`, "not in the document"},
	} {
		r := httptest.NewRequest(c.method, c.target, strings.NewReader(c.body))
		w := httptest.NewRecorder()
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Request-Id", "req-1")
		w.WriteHeader(c.status)
		w.WriteString(c.resp)
		err := checkExchange(r, []byte(c.body), w)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %s: got %v, want %q", c.method, c.target, err, c.want)
		}
	}
}
