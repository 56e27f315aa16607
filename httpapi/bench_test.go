package httpapi_test

import (
	"bytes"
	"net/http/httptest"
	"strconv"
	"testing"
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
