package main

import (
	"io"
	"log/slog"
	"testing"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank/storage/memory"
)

// TestDueOrder pins the documented order of due work at one instant: money
// first, then the webhooks that report it, then idempotency expiry.
func TestDueOrder(t *testing.T) {
	mock := clock.NewMock()
	a, err := newApp(memory.New(), make([]byte, 32), mock, mock, &config{env: "sandbox"}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"ledger.hold", "ledger.details",
		"funding.inflow",
		"payments.quote", "payments.transfer",
		"webhooks.expire", "webhooks.purge-event", "webhooks.purge-delivery", "webhooks.attempt",
		"httpapi.idempotency",
	}
	if diff := cmp.Diff(want, a.due.Kinds()); diff != "" {
		t.Fatalf("due kinds (-want +got)\n%s", diff)
	}
}
