package httpapi

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/storage"
)

// TestStoreUnavailable: a store out of reach (storage.ErrUnavailable,
// however wrapped) answers 503 unavailable with Retry-After, with the
// outcome-unknown message when its commit broke; an error that is not
// marked so stays a 500, and another 503 (a service not configured) gets
// no Retry-After. A keyed request that met it is not replayed: its retry
// runs again.
func TestStoreUnavailable(t *testing.T) {
	f := newFW(t)
	var runs int
	down := storage.Unavailable(fmt.Errorf("storage/postgres: %w", io.ErrUnexpectedEOF))
	f.h.register([]route{
		{"GET /down", func(h *handler, x *exchange, r *http.Request) error { return fmt.Errorf("ledger: %w", down) }},
		{"GET /unknown", func(h *handler, x *exchange, r *http.Request) error {
			return storage.Unavailable(fmt.Errorf("storage/postgres: %w: %w", storage.ErrOutcomeUnknown, io.EOF))
		}},
		{"GET /eof", func(h *handler, x *exchange, r *http.Request) error { return io.ErrUnexpectedEOF }},
		{"GET /unconfigured", func(h *handler, x *exchange, r *http.Request) error { return errNoPayments }},
		{"POST /down", func(h *handler, x *exchange, r *http.Request) error { runs++; return down }},
	})
	type got struct {
		Status     int
		Code       string
		RetryAfter string
		Message    string
	}
	for _, tt := range []struct {
		method, path string
		want         got
	}{
		{"GET", "/down", got{503, "unavailable", "1", storage.ErrUnavailable.Message}},
		{"GET", "/unknown", got{503, "unavailable", "1", storage.Unavailable(storage.ErrOutcomeUnknown).Message}},
		{"GET", "/eof", got{500, corebank.CodeInternal, "", "an internal error occurred"}},
		{"GET", "/unconfigured", got{503, "unavailable", "", errNoPayments.Message}},
	} {
		t.Run(tt.path[1:], func(t *testing.T) {
			r := f.do(t, tt.method, tt.path, "full", nil)
			code, _ := r.body["code"].(string)
			msg, _ := r.body["message"].(string)
			if diff := cmp.Diff(tt.want, got{r.status, code, r.header.Get("Retry-After"), msg}); diff != "" {
				t.Errorf("%s %s (-want +got):\n%s\n%s", tt.method, tt.path, diff, r.raw)
			}
		})
	}
	t.Run("IdempotentRetryRuns", func(t *testing.T) {
		for i := 1; i <= 2; i++ {
			r := f.do(t, "POST", "/down", "full", []byte(`{}`), "Idempotency-Key", "k-down")
			if r.status != 503 || r.header.Get("Idempotent-Replayed") != "" || runs != i {
				t.Fatalf("attempt %d: %d replayed=%q, handler ran %d times; want 503, not replayed, %d runs",
					i, r.status, r.header.Get("Idempotent-Replayed"), runs, i)
			}
		}
	})
}

// TestReadyzReads: /readyz is not ready when the store's read fails,
// though its transaction began (PostgreSQL's View sends nothing until
// the first read, so a dropped pooled connection shows only there).
func TestReadyzReads(t *testing.T) {
	f := newFW(t)
	f.h.register([]route{{"GET /readyz", (*handler).readyz}})
	if r := f.do(t, "GET", "/readyz", "", nil); r.status != 200 {
		t.Fatalf("readyz on a working store = %d %s", r.status, r.raw)
	}
	f.h.db = &failingReads{Backend: f.h.db}
	if r := f.do(t, "GET", "/readyz", "", nil); r.status != 503 || r.body["code"] != "unavailable" {
		t.Fatalf("readyz when reads fail = %d %s, want 503 unavailable", r.status, r.raw)
	}
}

// failingReads is a store whose transactions begin and whose reads fail
// as a dropped connection's do.
type failingReads struct{ storage.Backend }

func (f *failingReads) View(ctx context.Context, fn func(storage.Tx) error) error {
	return f.Backend.View(ctx, func(tx storage.Tx) error { return fn(failingTx{tx}) })
}

type failingTx struct{ storage.Tx }

func (failingTx) Get(storage.Bucket, []byte) ([]byte, error) {
	return nil, storage.Unavailable(io.ErrUnexpectedEOF)
}
