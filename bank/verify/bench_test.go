package verify_test

import (
	"context"
	"io"
	"log/slog"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/bank"
	"github.com/corebank/corebank/bank/verify"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/memory"
)

// newBank is a bank over memory on a mock clock, its root bootstrapped.
func newBank(tb testing.TB) (*bank.Bank, string) {
	tb.Helper()
	mock := clock.NewMock()
	mock.Set(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	db := memory.New()
	tb.Cleanup(func() { db.Close() })
	b, err := bank.New(db, bank.Options{SecretKey: make([]byte, 32), Clock: mock, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		tb.Fatal(err)
	}
	ctx := context.Background()
	if _, err := b.Migrate(ctx); err != nil {
		tb.Fatal(err)
	}
	root, _, err := b.Entities.Bootstrap(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	return b, root.EntityID
}

// TestEveryDueKindChecked: an item of each kind the bank's due runner
// runs is checked by some domain (none is reported as of an unknown
// kind), so a new kind of due work cannot go unverified.
func TestEveryDueKindChecked(t *testing.T) {
	b, _ := newBank(t)
	err := b.DB.Update(context.Background(), func(tx storage.Tx) error {
		for _, kind := range b.Due.Kinds() {
			if err := storage.Schedule(tx, kind, 1, "01ZZZZZZZZZZZZZZZZZZZZZZZZ"); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = verify.Run(context.Background(), b.DB, func(f storage.Finding) {
		if f.Kind == storage.FindDueUnknown {
			t.Error(f)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
}

// BenchmarkRun checks a store of 2,000 accounts moved by 100,000 journal
// entries and 10,000 holds (half of them still pending), as `server
// verify` would; it reports the time per entry.
func BenchmarkRun(b *testing.B) {
	bk, root := newBank(b)
	ctx := context.Background()
	sys := corebank.System()
	const accounts, entries, holds = 2_000, 100_000, 10_000
	ids := make([]string, accounts)
	for i := range ids {
		a, err := bk.Ledger.CreateAccount(ctx, sys, ledger.NewAccount{EntityID: root, Type: ledger.TypeChecking, Currency: "USD", DisplayName: "a"})
		if err != nil {
			b.Fatal(err)
		}
		ids[i] = a.ID
		if _, err := bk.Ledger.Post(ctx, ledger.Entry{Lines: []ledger.Line{
			{AccountID: bk.Ledger.SystemAccount("USD", ledger.PurposeClearingBank), Side: ledger.Debit, Amount: 1_000_000},
			{AccountID: a.ID, Side: ledger.Credit, Amount: 1_000_000}}}); err != nil {
			b.Fatal(err)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range entries - accounts {
		from, to := ids[r.IntN(accounts)], ids[r.IntN(accounts)]
		if from == to {
			continue
		}
		if _, err := bk.Ledger.Post(ctx, ledger.Entry{Lines: []ledger.Line{
			{AccountID: from, Side: ledger.Debit, Amount: 1}, {AccountID: to, Side: ledger.Credit, Amount: 1}}}); err != nil {
			b.Fatal(err)
		}
	}
	for i := range holds {
		h, err := bk.Ledger.Hold(ctx, ledger.HoldRequest{DebitAccountID: ids[r.IntN(accounts)],
			CreditAccountID: bk.Ledger.SystemAccount("USD", ledger.PurposeClearingCard), Amount: 2})
		if err != nil {
			b.Fatal(err)
		}
		if i%2 == 0 {
			if _, err := bk.Ledger.PostHold(ctx, h.ID, 0); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ResetTimer()
	for range b.N {
		sum, err := verify.Run(ctx, bk.DB, func(f storage.Finding) {
			if !strings.HasPrefix(f.Kind, storage.FindUnclaimed) { // these holds have no owner on purpose
				b.Fatal(f)
			}
		})
		if err != nil || sum.Entries < entries-accounts {
			b.Fatalf("%+v, %v", sum, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*entries), "ns/entry")
}
