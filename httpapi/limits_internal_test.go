package httpapi

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/storage/memory"
)

// TestFailedAuthNoLookup: once a client address is over its failed
// authentications, its requests with unknown keys are refused without
// any lookup of the key, and the lookups it got are exactly the burst.
func TestFailedAuthNoLookup(t *testing.T) {
	clk := clock.NewMock()
	db := memory.New()
	t.Cleanup(func() { db.Close() })
	h := newHandler(db, &Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Limits:     &Limits{FailedAuth: Rate{Count: 10, Per: time.Minute, Burst: 20}, Clock: clk},
		ClientAddr: func(r *http.Request) string { return r.Header.Get("X-Test-Client") }})
	var lookups atomic.Int64
	h.auth = func(ctx context.Context, secret string) (corebank.Caller, error) {
		lookups.Add(1)
		if secret == "good" {
			return corebank.Caller{KeyID: "k1", EntityID: "E1"}, nil
		}
		if secret == "down" {
			return corebank.Caller{}, corebank.E(corebank.KindUnavailable, "", "store down")
		}
		return corebank.Caller{}, corebank.E(corebank.KindUnauthorized, "unauthorized", "unknown key")
	}
	h.register([]route{{"GET /ping", func(h *handler, x *exchange, r *http.Request) error {
		return ok(x, http.StatusOK, "pong", map[string]string{})
	}}})
	send := func(key, addr string) int {
		r := httptest.NewRequest("GET", "/ping", nil)
		r.Header.Set("Authorization", "Bearer "+key)
		r.Header.Set("X-Test-Client", addr)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	// Store failures are not the caller's: they count nothing.
	for range 30 {
		if got := send("down", "10.0.0.1"); got != 503 {
			t.Fatalf("store down: %d", got)
		}
	}
	statuses := map[int]int{}
	for i := range 1000 {
		statuses[send("guess"+strconv.Itoa(i), "10.0.0.1")]++
	}
	if diff := cmp.Diff(map[int]int{401: 20, 429: 980}, statuses); diff != "" {
		t.Fatalf("statuses of 1000 guesses (-want +got):\n%s", diff)
	}
	if n := lookups.Load(); n != 30+20 {
		t.Fatalf("%d lookups, want 50 (30 while the store was down, then the burst of 20)", n)
	}
	if got := send("guess", "10.0.0.2"); got != 401 {
		t.Fatalf("another address: %d", got)
	}
	clk.Add(6 * time.Second)
	if got := send("guess", "10.0.0.1"); got != 401 {
		t.Fatalf("a token later: %d", got)
	}
	if got := send("guess", "10.0.0.1"); got != 429 {
		t.Fatalf("and only one: %d", got)
	}
}

func TestLimitAddr(t *testing.T) {
	for in, want := range map[string]string{
		"192.0.2.1":                "192.0.2.1",
		"2001:db8:a:b:c:d:e:f":     "2001:db8:a:b::/64",
		"2001:db8:a:b::1%eth0":     "2001:db8:a:b::/64",
		"::ffff:192.0.2.1":         "::ffff:192.0.2.1",
		"::1":                      "::/64",
		"not an address":           "not an address",
		"":                         "",
		"[2001:db8::1]":            "[2001:db8::1]",
		"2001:db8::1:443 (broken)": "2001:db8::1:443 (broken)",
	} {
		if got := limitAddr(in); got != want {
			t.Errorf("limitAddr(%q) = %q, want %q", in, got, want)
		}
	}
}
