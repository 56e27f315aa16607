package verify_test

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
	"github.com/corebank/corebank/bank/verify"
	"github.com/corebank/corebank/cards"
	"github.com/corebank/corebank/funding"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/postgres"
	"github.com/corebank/corebank/storage/postgres/pgtest"
)

// TestMain stops the PostgreSQL cluster TestPostgres starts.
func TestMain(m *testing.M) { pgtest.Main(m) }

// TestPostgres runs the check over a PostgreSQL store (one REPEATABLE
// READ transaction): clean after accounts, inflows settled and pending and
// a card authorization, then exactly one finding for a list key that
// names no card. Without PostgreSQL it skips with one line.
func TestPostgres(t *testing.T) {
	ctx := context.Background()
	db, err := postgres.Open(ctx, pgtest.DSN(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	mock := clock.NewMock()
	mock.Set(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	b, err := bank.New(db, bank.Options{SecretKey: make([]byte, 32), Clock: mock, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	root, _, err := b.Entities.Bootstrap(ctx)
	if err != nil {
		t.Fatal(err)
	}
	as := corebank.As(root.EntityID)
	a, err := b.Ledger.CreateAccount(ctx, as, ledger.NewAccount{EntityID: root.EntityID, Type: ledger.TypeChecking, Currency: "USD", DisplayName: "Ops"})
	if err != nil {
		t.Fatal(err)
	}
	later := false
	for _, in := range []funding.NewInflow{{AccountID: a.ID, Amount: 90_000}, {AccountID: a.ID, Amount: 500, Settle: &later}} {
		if _, err := b.Funding.CreateInflow(ctx, as, in); err != nil {
			t.Fatal(err)
		}
	}
	c, err := b.Cards.CreateVirtualCard(ctx, as, cards.NewCard{AccountID: a.ID, CardName: "Ops", Currency: "USD",
		ExpirationMonth: "12", ExpirationYear: "35",
		Cardholder: &cards.Cardholder{FirstName: "Ada", LastName: "Lovelace", Email: "ada@example.com", PhoneNumber: "+14155550100"}})
	if err != nil {
		t.Fatal(err)
	}
	mcc := 5812
	if _, err := b.Cards.AuthorizeCard(ctx, as, "", c.ID, cards.Authorization{Amount: 1_000, MCC: &mcc, MerchantName: "Cafe"}); err != nil {
		t.Fatal(err)
	}
	check := func() []string {
		t.Helper()
		var got []string
		if _, err := verify.Run(ctx, db, func(f storage.Finding) { got = append(got, f.Kind+" "+f.IDs[0]) }); err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := check(); len(got) > 0 {
		t.Fatalf("findings on a consistent store: %q", got)
	}
	const ghost = "01ZZZZZZZZZZZZZZZZZZZZZZZZ"
	err = db.Update(ctx, func(tx storage.Tx) error {
		return tx.Put(storage.Bucket("cards.index"), []byte("l/"+root.EntityID+"/"+ghost), []byte{})
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"index_dangling " + ghost}, check()); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
}
