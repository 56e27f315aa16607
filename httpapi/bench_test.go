package httpapi_test

import (
	"bytes"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkGetAccount measures GET /accounts/{id} through the whole stack:
// auth, routing, scope check, ledger read, JSON envelope.
func BenchmarkGetAccount(b *testing.B) {
	e := newEnv(b)
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

// BenchmarkCreateInflow measures POST /sandbox/inflows through the whole
// stack, the fake funding service posting one journal entry each time.
func BenchmarkCreateInflow(b *testing.B) {
	e := newEnv(b)
	id := e.account(e.key, "", "USD")
	body := []byte(`{"account_id":"` + id + `","amount":100,"narration":"bench"}`)
	b.ReportAllocs()
	for b.Loop() {
		r := httptest.NewRequest("POST", "/sandbox/inflows", bytes.NewReader(body))
		r.Header.Set("Authorization", "Bearer "+e.key)
		w := httptest.NewRecorder()
		e.h.ServeHTTP(w, r)
		if w.Code != 201 {
			b.Fatalf("%d %s", w.Code, w.Body)
		}
	}
}

// BenchmarkCreateInflowIdempotent adds a fresh Idempotency-Key per request
// (a reserve and a complete transaction around the handler).
func BenchmarkCreateInflowIdempotent(b *testing.B) {
	e := newEnv(b)
	id := e.account(e.key, "", "USD")
	body := []byte(`{"account_id":"` + id + `","amount":100,"narration":"bench"}`)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		r := httptest.NewRequest("POST", "/sandbox/inflows", bytes.NewReader(body))
		r.Header.Set("Authorization", "Bearer "+e.key)
		r.Header.Set("Idempotency-Key", "k"+strconv.Itoa(i))
		w := httptest.NewRecorder()
		e.h.ServeHTTP(w, r)
		if w.Code != 201 {
			b.Fatalf("%d %s", w.Code, w.Body)
		}
	}
}

// BenchmarkCardAuthorization is one authorization decision with controls
// over HTTP (in process, memory store), with its p99 latency.
func BenchmarkCardAuthorization(b *testing.B) {
	e := newEnv(b)
	id := e.account(e.key, "", "USD")
	e.fund(e.key, id, 1<<40)
	card := cardBody(id)
	card["individual_controls"] = map[string]any{"daily_amount_limit": 1 << 40, "daily_transaction_count": 1 << 40,
		"transaction_amount_limit": 1 << 40, "billing_cycle": "Monthly", "billing_cycle_day": "31"}
	card["individual_mcc_controls"] = []any{map[string]any{"mcc": 5812, "amount": 1 << 40}}
	card["mcc_group_controls"] = []any{map[string]any{"group_name": "gambling", "open": false}}
	cid := e.must(201, "POST", "/virtual-cards", e.key, card).str("data", "id")
	body := []byte(`{"amount":1,"mcc":5812,"merchant_name":"Cafe"}`)
	var lat []time.Duration
	b.ReportAllocs()
	for b.Loop() {
		r := httptest.NewRequest("POST", "/sandbox/cards/"+cid+"/authorizations", bytes.NewReader(body))
		r.Header.Set("Authorization", "Bearer "+e.key)
		w := httptest.NewRecorder()
		t0 := time.Now()
		e.h.ServeHTTP(w, r)
		lat = append(lat, time.Since(t0))
		if w.Code != 201 || !strings.Contains(w.Body.String(), `"status":"pending"`) {
			b.Fatalf("%d %s", w.Code, w.Body)
		}
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}
