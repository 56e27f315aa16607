package ledger

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/service"
	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/memory"
)

// checkFixture is a ledger with two funded customer accounts, a pending
// hold between them and a posted one.
func checkFixture(t *testing.T) (*Service, storage.Backend, [2]string) {
	t.Helper()
	ctx := context.Background()
	db := memory.New()
	t.Cleanup(func() { db.Close() })
	c := clock.NewMock()
	c.Set(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC))
	s := NewService(db, &Options{Deps: service.Deps{Clock: c}})
	var ids [2]string
	for i := range ids {
		a, err := s.CreateAccount(ctx, corebank.System(), NewAccount{EntityID: "01JENT0000000000000000000A", Type: TypeChecking, Currency: "USD", DisplayName: "a"})
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = a.ID
		if _, err := s.Post(ctx, Entry{Lines: []Line{
			{AccountID: s.SystemAccount("USD", PurposeClearingBank), Side: Debit, Amount: 1000},
			{AccountID: a.ID, Side: Credit, Amount: 1000},
		}}); err != nil {
			t.Fatal(err)
		}
	}
	h, err := s.Hold(ctx, HoldRequest{DebitAccountID: ids[0], CreditAccountID: ids[1], Amount: 300})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PostHold(ctx, h.ID, 200); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Hold(ctx, HoldRequest{DebitAccountID: ids[1], CreditAccountID: ids[0], Amount: 50}); err != nil {
		t.Fatal(err)
	}
	return s, db, ids
}

// TestCheck proves Check clean on a consistent ledger, incremental on a
// second call, and finds each kind of damage written behind the ledger's
// back.
func TestCheck(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, tx storage.Tx, s *Service, ids [2]string)
		want   string // a fragment of the problem reported
	}{
		{"Clean", nil, ""},
		{"SettledChanged", func(t *testing.T, tx storage.Tx, s *Service, ids [2]string) {
			r, err := loadBal(tx, ids[0])
			if err != nil {
				t.Fatal(err)
			}
			r.Settled++
			if err := s.putBal(tx, ids[0], r); err != nil {
				t.Fatal(err)
			}
		}, "settled balances sum to 1"},
		{"PendingRowLost", func(t *testing.T, tx storage.Tx, s *Service, ids [2]string) {
			var key []byte
			_ = tx.Scan(bucketPending, storage.ScanOptions{Limit: 1}, func(k, _ []byte) error { key = append([]byte(nil), k...); return nil })
			if err := tx.Delete(bucketPending, key); err != nil {
				t.Fatal(err)
			}
		}, "pending holds sum to"},
		{"Overdrawn", func(t *testing.T, tx storage.Tx, s *Service, ids [2]string) {
			for i, d := range []int64{-5000, 5000} {
				r, err := loadBal(tx, ids[i])
				if err != nil {
					t.Fatal(err)
				}
				r.Settled += d
				if err := s.putBal(tx, ids[i], r); err != nil {
					t.Fatal(err)
				}
			}
		}, "available balance"},
		{"Unbalanced", func(t *testing.T, tx storage.Tx, s *Service, ids [2]string) {
			j := &JournalEntry{ID: "01ZZZZZZZZZZZZZZZZZZZZZZZZ", Created: 1, Lines: []Line{
				{AccountID: ids[0], Side: Debit, Amount: 10}, {AccountID: ids[1], Side: Credit, Amount: 9},
			}}
			if err := tx.Put(bucketEntries, []byte(j.ID), j.encode()); err != nil {
				t.Fatal(err)
			}
		}, "does not balance in USD"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, db, ids := checkFixture(t)
			var cur CheckCursor
			rep, err := s.Check(ctx, &cur)
			if err != nil || rep.Err() != nil {
				t.Fatalf("Check of a consistent ledger: %v, %v", err, rep.Err())
			}
			if rep.Entries == 0 || rep.Accounts != 3 {
				t.Fatalf("Check read %d entries and %d balances, want some and 3", rep.Entries, rep.Accounts)
			}
			if tc.damage != nil {
				if err := db.Update(ctx, func(tx storage.Tx) error { tc.damage(t, tx, s, ids); return nil }); err != nil {
					t.Fatal(err)
				}
			}
			rep, err = s.Check(ctx, &cur)
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == "" {
				if rep.Err() != nil || rep.Entries != 0 {
					t.Fatalf("second Check: %v, %d entries read again", rep.Err(), rep.Entries)
				}
				return
			}
			if rep.Err() == nil || !strings.Contains(rep.Err().Error(), tc.want) {
				t.Fatalf("Check after damage says %v, want a problem containing %q", rep.Err(), tc.want)
			}
		})
	}
}
