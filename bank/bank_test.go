package bank_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/bank"
	"github.com/corebank/corebank/funding"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/memory"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// TestDueOrder pins the documented order of due work at one instant: money
// first, then the webhooks that report it, then idempotency expiry.
func TestDueOrder(t *testing.T) {
	mock := clock.NewMock()
	a, err := bank.New(memory.New(), bank.Options{SecretKey: make([]byte, 32), Clock: mock, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"ledger.hold", "ledger.details", "ledger.fold",
		"funding.inflow", "funding.session",
		"payments.quote", "payments.transfer",
		"acquiring.challenge", "acquiring.refund", "acquiring.dispute", "acquiring.evidence", "cards.authorization",
		"capital.recover", "capital.expire", "capital.accrual", "capital.maturity", "capital.settle",
		"capital.refund", "capital.lock",
		"webhooks.attempt", "webhooks.expire", "webhooks.sweep",
		"httpapi.idempotency",
	}
	if diff := cmp.Diff(want, a.Due.Kinds()); diff != "" {
		t.Fatalf("due kinds (-want +got)\n%s", diff)
	}
}

// TestMigrateLegacyDue: work an earlier release left in its own due index
// (funding's "funding.inflows.due": <settle ms><inflow ID>) runs after
// migrate moves it onto the one queue, and migrate runs once.
func TestMigrateLegacyDue(t *testing.T) {
	ctx := context.Background()
	mock := clock.NewMock()
	mock.Set(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	db := memory.New()
	a, err := bank.New(db, bank.Options{SecretKey: make([]byte, 32), Clock: mock, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	root, _, err := a.Entities.Bootstrap(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sys := corebank.System()
	acct, err := a.Ledger.CreateAccount(ctx, sys, ledger.NewAccount{EntityID: root.EntityID, Type: "checking", Currency: "USD", DisplayName: "Ops"})
	if err != nil {
		t.Fatal(err)
	}
	settle := false
	in, err := a.Funding.CreateInflow(ctx, sys, funding.NewInflow{AccountID: acct.ID, Amount: 900, Settle: &settle})
	if err != nil {
		t.Fatal(err)
	}
	// Put the settlement back where the earlier release kept it.
	err = db.Update(ctx, func(tx storage.Tx) error {
		if err := storage.Unschedule(tx, "funding.inflow", *in.SettlesAt, in.ID); err != nil {
			return err
		}
		return tx.Put("funding.inflows.due", append(storage.AppendInt64(nil, *in.SettlesAt), in.ID...), nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	mock.Add(2 * time.Minute)
	if _, err := a.Due.RunDue(ctx, mock.Now()); err != nil {
		t.Fatal(err)
	}
	if got, _ := a.Funding.GetInflow(ctx, in.ID); got.Status != "pending" {
		t.Fatalf("before migrating, status %q: the test did not put the work out of the queue's reach", got.Status)
	}
	if _, err := a.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Due.RunDue(ctx, mock.Now()); err != nil {
		t.Fatal(err)
	}
	if got, _ := a.Funding.GetInflow(ctx, in.ID); got.Status != "completed" {
		t.Fatalf("after migrating, status %q; want completed", got.Status)
	}
	n, err := storage.Migrate(ctx, db, a.Funding.Migrations()...)
	if n != 0 || err != nil {
		t.Fatalf("Migrate again = %d, %v; want 0, nil", n, err)
	}
}
