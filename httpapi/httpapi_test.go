package httpapi_test

import (
	"testing"

	"github.com/corebank/corebank/httpapi"
)

// TestCapitalUnavailable: without Services.Capital the capital routes
// answer 503; outside the sandbox the /sandbox/products routes do not
// exist while the others do.
func TestCapitalUnavailable(t *testing.T) {
	e := newEnv(t)
	e.h = httpapi.New(httpapi.Services{DB: e.db, Ledger: e.led, Entities: e.ent}, nil)
	for _, c := range []struct{ method, path string }{
		{"GET", "/products"}, {"GET", "/products/x"}, {"POST", "/product-orders"}, {"GET", "/product-orders"},
		{"GET", "/product-orders/x"}, {"POST", "/product-orders/x/confirm"}, {"GET", "/product-orders/x/withdrawal/preview"},
		{"POST", "/product-orders/x/withdrawal"}, {"GET", "/product-orders/x/transactions"}, {"GET", "/capital-portfolio"},
		{"POST", "/sandbox/products"}, {"POST", "/sandbox/products/x/allotment"}, {"POST", "/sandbox/products/x/unlock"},
		{"POST", "/sandbox/products/x/price"}, {"POST", "/sandbox/products/x/deactivate"},
	} {
		var body any
		if c.method == "POST" {
			body = map[string]any{}
		}
		if r := e.do(c.method, c.path, e.key, body); r.Status != 503 || r.code() != "unavailable" {
			t.Errorf("%s %s: %d %s", c.method, c.path, r.Status, r.Raw)
		}
	}
	e.h = httpapi.New(httpapi.Services{DB: e.db, Ledger: e.led, Entities: e.ent, Capital: e.capital}, &httpapi.Options{Env: httpapi.EnvProduction})
	for _, p := range []string{"/sandbox/products", "/sandbox/products/x/allotment", "/sandbox/products/x/unlock",
		"/sandbox/products/x/price", "/sandbox/products/x/deactivate"} {
		e.must(404, "POST", p, e.key, map[string]any{})
	}
}

// TestPaymentsUnavailable: without Services.Payments the routes answer 503.
func TestPaymentsUnavailable(t *testing.T) {
	e := newEnv(t)
	h := httpapi.New(httpapi.Services{DB: e.db, Ledger: e.led, Entities: e.ent}, nil)
	e.h = h
	for _, c := range []struct{ method, path string }{
		{"POST", "/transfers"}, {"GET", "/transfers"}, {"GET", "/counterparties/x"}, {"POST", "/sandbox/fx/outage"},
	} {
		r := e.do(c.method, c.path, e.key, map[string]any{})
		if r.Status != 503 || r.code() != "unavailable" {
			t.Fatalf("%s %s: %d %s", c.method, c.path, r.Status, r.Raw)
		}
	}
	// Outside the sandbox the simulation routes do not exist.
	e.h = httpapi.New(httpapi.Services{DB: e.db, Ledger: e.led, Entities: e.ent, Payments: e.pay}, &httpapi.Options{Env: httpapi.EnvProduction})
	e.must(404, "POST", "/sandbox/fx/outage", e.key, map[string]any{"enabled": true})
	e.must(404, "POST", "/sandbox/transfers/x/simulate", e.key, map[string]any{"outcome": "failed"})
	e.must(200, "GET", "/transfers", e.key, nil)
}

// TestWebhookUnconfigured checks the routes of a server without a webhooks
// service: 503, not a crash.
func TestWebhookUnconfigured(t *testing.T) {
	e := newEnv(t)
	e.h = httpapi.New(httpapi.Services{DB: e.db, Ledger: e.led, Entities: e.ent}, nil)
	for _, c := range [][2]string{{"POST", "/entity-webhooks"}, {"GET", "/entity-webhooks"},
		{"GET", "/entity-webhooks/x"}, {"POST", "/entity-webhooks/x/test"}, {"GET", "/events"},
		{"POST", "/events/x/redeliver"}} {
		if r := e.do(c[0], c[1], e.key, nil); r.Status != 503 || r.code() != "unavailable" {
			t.Errorf("%s %s: %d %s", c[0], c[1], r.Status, r.Raw)
		}
	}
}
