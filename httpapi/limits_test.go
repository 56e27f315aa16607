package httpapi_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank/httpapi"
)

// testClient is the header the limit tests name the client address in,
// through Options.ClientAddr.
const testClient = "X-Test-Client"

// newLimitEnv is newEnv with lim, the client address read from the
// testClient header, and a mock clock of the limits' own (the bank's
// fake clock does not move them).
func newLimitEnv(t *testing.T, lim *httpapi.Limits) (*env, *clock.Mock) {
	t.Helper()
	clk := clock.NewMock()
	clk.Set(time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC))
	lim.Clock = clk
	e := newEnv(t, func(o *httpapi.Options) {
		o.Limits = lim
		o.ClientAddr = func(r *http.Request) string { return r.Header.Get(testClient) }
	})
	return e, clk
}

// from sends one request from the client address addr, checked against
// the OpenAPI document as env.do's are.
func from(t *testing.T, h http.Handler, method, path, key, addr string) resp {
	t.Helper()
	r := httptest.NewRequest(method, path, nil)
	if key != "" {
		r.Header.Set("Authorization", "Bearer "+key)
	}
	if addr != "" {
		r.Header.Set(testClient, addr)
	}
	w := serveChecked(t, h, r)
	out := resp{Status: w.Code, Header: w.Header(), Raw: w.Body.String()}
	_ = json.Unmarshal(w.Body.Bytes(), &out.Body)
	checkRequestID(t, r, &out)
	return out
}

// want429 checks a 429 of Limits: its Retry-After, and its body as card
// creation's limit answers (message aside).
func want429(t *testing.T, got resp, limitType string, retry, count, limit int) {
	t.Helper()
	if got.Status != http.StatusTooManyRequests {
		t.Fatalf("got %d, want 429: %s", got.Status, got.Raw)
	}
	if ra := got.Header.Get("Retry-After"); ra != strconv.Itoa(retry) {
		t.Errorf("Retry-After %q, want %d", ra, retry)
	}
	fields := map[string]any{"retry_after": float64(retry), "limit_type": limitType,
		"current_count": float64(count), "limit": float64(limit)}
	want := map[string]any{"status": "error", "code": "rate_limited", "message": got.Body["message"],
		"details": fields, "data": fields}
	for k, v := range fields {
		want[k] = v
	}
	if diff := cmp.Diff(want, got.Body); diff != "" {
		t.Errorf("429 body (-want +got):\n%s", diff)
	}
	if msg, _ := got.Body["message"].(string); msg == "" {
		t.Error("429 without a message")
	}
}

// TestRateLimitKey: a burst past a key's limit is refused with the wait
// until its next token, and the call after that wait succeeds.
func TestRateLimitKey(t *testing.T) {
	e, clk := newLimitEnv(t, &httpapi.Limits{Key: httpapi.Rate{Count: 3, Per: time.Minute, Burst: 3}})
	for i := range 3 {
		if got := from(t, e.h, "GET", "/accounts", e.key, "203.0.113.1"); got.Status != 200 {
			t.Fatalf("request %d: %d %s", i+1, got.Status, got.Raw)
		}
	}
	// A token every 20 s.
	want429(t, from(t, e.h, "GET", "/accounts", e.key, "203.0.113.1"), httpapi.LimitTypeKey, 20, 3, 3)
	// The bucket is the key's, whatever the address; another key has its
	// own.
	want429(t, from(t, e.h, "GET", "/accounts", e.key, "203.0.113.2"), httpapi.LimitTypeKey, 20, 3, 3)
	if got := from(t, e.h, "GET", "/accounts", e.roKey, "203.0.113.1"); got.Status != 200 {
		t.Fatalf("another key: %d %s", got.Status, got.Raw)
	}
	clk.Add(19 * time.Second)
	want429(t, from(t, e.h, "GET", "/accounts", e.key, "203.0.113.1"), httpapi.LimitTypeKey, 1, 3, 3)
	clk.Add(time.Second)
	if got := from(t, e.h, "GET", "/accounts", e.key, "203.0.113.1"); got.Status != 200 {
		t.Fatalf("after Retry-After: %d %s", got.Status, got.Raw)
	}
	// A refused write changes nothing.
	before := from(t, e.h, "GET", "/accounts", e.roKey, "203.0.113.1")
	r := httptest.NewRequest("POST", "/accounts", nil)
	r.Header.Set("Authorization", "Bearer "+e.key)
	w := httptest.NewRecorder()
	e.h.ServeHTTP(w, r)
	if w.Code != 429 {
		t.Fatalf("POST over the limit: %d %s", w.Code, w.Body)
	}
	if after := from(t, e.h, "GET", "/accounts", e.roKey, "203.0.113.1"); after.Raw != before.Raw {
		t.Fatalf("a refused POST changed the accounts:\n%s\n%s", before.Raw, after.Raw)
	}
}

// TestRateLimitAddress: each client address has its bucket, counted
// before the key is read, probes aside; Retry-After is whole seconds,
// rounded up, at least 1.
func TestRateLimitAddress(t *testing.T) {
	e, clk := newLimitEnv(t, &httpapi.Limits{Address: httpapi.Rate{Count: 7, Per: time.Minute, Burst: 2}})
	a, b := "198.51.100.1", "198.51.100.2"
	from(t, e.h, "GET", "/accounts", e.key, a)
	from(t, e.h, "GET", "/openapi.json", "", a) // open routes count too
	// A token every 60/7 = 8.57 s: Retry-After 9.
	want429(t, from(t, e.h, "GET", "/accounts", e.key, a), httpapi.LimitTypeAddress, 9, 2, 2)
	want429(t, from(t, e.h, "GET", "/accounts", "", a), httpapi.LimitTypeAddress, 9, 2, 2) // before the key is read
	for _, p := range []string{"/healthz", "/readyz"} {
		if got := from(t, e.h, "GET", p, "", a); got.Status != 200 {
			t.Fatalf("probe %s from a limited address: %d %s", p, got.Status, got.Raw)
		}
	}
	if got := from(t, e.h, "GET", "/accounts", e.key, b); got.Status != 200 {
		t.Fatalf("another address: %d %s", got.Status, got.Raw)
	}
	clk.Add(8 * time.Second)
	want429(t, from(t, e.h, "GET", "/accounts", e.key, a), httpapi.LimitTypeAddress, 1, 2, 2)
	clk.Add(time.Second)
	if got := from(t, e.h, "GET", "/accounts", e.key, a); got.Status != 200 {
		t.Fatalf("after Retry-After: %d %s", got.Status, got.Raw)
	}

	// IPv6 addresses share the bucket of their /64.
	v6 := []string{"2001:db8:1:2::1", "2001:db8:1:2:ffff::9", "2001:db8:1:3::1"}
	from(t, e.h, "GET", "/healthz", "", v6[0])
	from(t, e.h, "GET", "/accounts", e.key, v6[0])
	from(t, e.h, "GET", "/accounts", e.key, v6[1])
	want429(t, from(t, e.h, "GET", "/accounts", e.key, v6[1]), httpapi.LimitTypeAddress, 9, 2, 2)
	if got := from(t, e.h, "GET", "/accounts", e.key, v6[2]); got.Status != 200 {
		t.Fatalf("another /64: %d %s", got.Status, got.Raw)
	}
}

// TestRateLimitDefaultClientAddr: without Options.ClientAddr the address
// is RemoteAddr's host, whatever the port.
func TestRateLimitDefaultClientAddr(t *testing.T) {
	e := newEnv(t, func(o *httpapi.Options) {
		o.Limits = &httpapi.Limits{Address: httpapi.Rate{Count: 1, Per: time.Hour, Burst: 1}}
	})
	for _, tc := range []struct {
		remote string
		status int
	}{
		{"192.0.2.10:1000", 200},
		{"192.0.2.10:2000", 429},
		{"192.0.2.11:1000", 200},
		{"[2001:db8::1]:443", 200},
		{"[2001:db8::2]:443", 429},
		{"unix-socket", 200},
	} {
		r := httptest.NewRequest("GET", "/accounts", nil)
		r.RemoteAddr = tc.remote
		r.Header.Set("Authorization", "Bearer "+e.key)
		w := httptest.NewRecorder()
		e.h.ServeHTTP(w, r)
		if w.Code != tc.status {
			t.Errorf("from %s: %d, want %d: %s", tc.remote, w.Code, tc.status, w.Body)
		}
	}
}

// TestRateLimitFailedAuth: a flood of bad keys from one address is
// refused once over its limit, while other addresses, and keys already
// working from that address, are served.
func TestRateLimitFailedAuth(t *testing.T) {
	e, clk := newLimitEnv(t, &httpapi.Limits{FailedAuth: httpapi.Rate{Count: 10, Per: time.Minute, Burst: 20}})
	attacker, other := "192.0.2.66", "192.0.2.77"
	bad := "sk_sandbox_" + "0123456789abcdef0123456789abcdef0123456789abcdef"
	// The root key works from the attacker's address before the flood
	// (a client sharing the address through one NAT).
	if got := from(t, e.h, "GET", "/accounts", e.key, attacker); got.Status != 200 {
		t.Fatalf("root key: %d %s", got.Status, got.Raw)
	}
	for i := range 20 {
		if got := from(t, e.h, "GET", "/accounts", bad+strconv.Itoa(i), attacker); got.Status != 401 {
			t.Fatalf("bad key %d: %d %s", i, got.Status, got.Raw)
		}
	}
	// A token every 6 s.
	want429(t, from(t, e.h, "GET", "/accounts", bad, attacker), httpapi.LimitTypeFailedAuth, 6, 20, 20)
	// A key that never authenticated from the address is refused too,
	// before the lookup could tell it is good: guessing learns nothing.
	want429(t, from(t, e.h, "GET", "/accounts", e.roKey, attacker), httpapi.LimitTypeFailedAuth, 6, 20, 20)
	// No key at all is a 401 that needs no lookup, and counts nothing.
	if got := from(t, e.h, "GET", "/accounts", "", attacker); got.Status != 401 {
		t.Fatalf("no key: %d %s", got.Status, got.Raw)
	}
	// The key that worked from there goes on working.
	if got := from(t, e.h, "GET", "/accounts", e.key, attacker); got.Status != 200 {
		t.Fatalf("known key from the limited address: %d %s", got.Status, got.Raw)
	}
	// Other addresses are served, bad keys answered 401 as ever.
	if got := from(t, e.h, "GET", "/accounts", e.roKey, other); got.Status != 200 {
		t.Fatalf("other address: %d %s", got.Status, got.Raw)
	}
	if got := from(t, e.h, "GET", "/accounts", bad, other); got.Status != 401 {
		t.Fatalf("bad key from another address: %d %s", got.Status, got.Raw)
	}
	clk.Add(5 * time.Second)
	want429(t, from(t, e.h, "GET", "/accounts", bad, attacker), httpapi.LimitTypeFailedAuth, 1, 20, 20)
	clk.Add(time.Second)
	if got := from(t, e.h, "GET", "/accounts", bad, attacker); got.Status != 401 {
		t.Fatalf("after Retry-After, a bad key is looked up again: %d %s", got.Status, got.Raw)
	}
	want429(t, from(t, e.h, "GET", "/accounts", bad, attacker), httpapi.LimitTypeFailedAuth, 6, 20, 20)
	// Good keys give back the token they took: a client that only
	// succeeds never nears the limit.
	clk.Add(time.Hour)
	for i := range 100 {
		if got := from(t, e.h, "GET", "/accounts", e.roKey, "192.0.2.88"); got.Status != 200 {
			t.Fatalf("good request %d: %d %s", i, got.Status, got.Raw)
		}
	}
}

// TestRateLimitFailedAuthConcurrent: bad keys sent all at once from one
// address get exactly the burst of lookups (401), the rest 429.
func TestRateLimitFailedAuthConcurrent(t *testing.T) {
	var (
		mu     sync.Mutex
		counts = map[int]int{}
	)
	e, _ := newLimitEnv(t, &httpapi.Limits{FailedAuth: httpapi.Rate{Count: 1, Per: time.Hour, Burst: 20},
		OnLimited: func(typ string) {
			if typ != httpapi.LimitTypeFailedAuth {
				t.Errorf("OnLimited(%q)", typ)
			}
		}})
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				r := httptest.NewRequest("GET", "/accounts", nil)
				r.Header.Set("Authorization", "Bearer sk_sandbox_guess"+strconv.Itoa(g*100+i))
				r.Header.Set(testClient, "192.0.2.99")
				w := httptest.NewRecorder()
				e.h.ServeHTTP(w, r)
				mu.Lock()
				counts[w.Code]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if diff := cmp.Diff(map[int]int{401: 20, 429: 140}, counts); diff != "" {
		t.Fatalf("statuses (-want +got):\n%s", diff)
	}
}

// TestRateLimitOnLimited: the callback is told the type of every 429.
func TestRateLimitOnLimited(t *testing.T) {
	var got []string
	one := httpapi.Rate{Count: 1, Per: time.Hour, Burst: 1}
	e, _ := newLimitEnv(t, &httpapi.Limits{Key: one, Address: httpapi.Rate{Count: 1, Per: time.Hour, Burst: 3}, FailedAuth: one,
		OnLimited: func(typ string) { got = append(got, typ) }})
	from(t, e.h, "GET", "/accounts", e.key, "a")    // 200
	from(t, e.h, "GET", "/accounts", e.key, "b")    // 429 api_key
	from(t, e.h, "GET", "/accounts", "sk_bad", "a") // 401
	from(t, e.h, "GET", "/accounts", "sk_bad", "a") // 429 failed_auth
	from(t, e.h, "GET", "/accounts", "sk_bad", "a") // 429 client_address
	from(t, e.h, "GET", "/healthz", "", "a")        // 200
	want := []string{httpapi.LimitTypeKey, httpapi.LimitTypeFailedAuth, httpapi.LimitTypeAddress}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("OnLimited (-want +got):\n%s", diff)
	}
}

// TestRateLimitShared: handlers given one *Limits share its buckets; a
// Limits of zero Rates limits nothing.
func TestRateLimitShared(t *testing.T) {
	lim := &httpapi.Limits{Address: httpapi.Rate{Count: 1, Per: time.Hour, Burst: 2}}
	e1, _ := newLimitEnv(t, lim)
	e2 := newEnv(t, func(o *httpapi.Options) {
		o.Limits = lim
		o.ClientAddr = func(r *http.Request) string { return r.Header.Get(testClient) }
	})
	from(t, e1.h, "GET", "/accounts", e1.key, "a")
	from(t, e2.h, "GET", "/accounts", e2.key, "a")
	want429(t, from(t, e1.h, "GET", "/accounts", e1.key, "a"), httpapi.LimitTypeAddress, 3600, 2, 2)

	none, _ := newLimitEnv(t, &httpapi.Limits{})
	for i := range 50 {
		if got := from(t, none.h, "GET", "/accounts", "sk_bad", "a"); got.Status != 401 {
			t.Fatalf("request %d with zero Rates: %d %s", i, got.Status, got.Raw)
		}
	}
}
