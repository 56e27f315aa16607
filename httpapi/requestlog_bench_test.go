package httpapi_test

import (
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/corebank/corebank/httpapi"
)

// BenchmarkGetAccountLogged is BenchmarkGetAccount with the request log
// on (text lines to io.Discard), as examples/server runs: what one
// request line costs, the client address included.
func BenchmarkGetAccountLogged(b *testing.B) {
	e := newEnv(b, func(o *httpapi.Options) {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
		o.LogRequests = true
	})
	id := e.account(e.key, "", "USD")
	r := httptest.NewRequest("GET", "/accounts/"+id, nil)
	r.Header.Set("Authorization", "Bearer "+e.key)
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		e.h.ServeHTTP(w, r)
		if w.Code != 200 {
			b.Fatalf("%d %s", w.Code, w.Body)
		}
	}
}
