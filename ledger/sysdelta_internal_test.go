package ledger

import (
	"context"
	"testing"
	"time"

	"github.com/corebank/corebank/storage"
)

// TestFold: system accounts' balances read the same before and after their
// changes are folded into their records, Check passes on both sides, and
// folding leaves no change behind and queues the next fold.
func TestFold(t *testing.T) {
	ctx := context.Background()
	s, db, _ := checkFixture(t)
	sys := s.SystemAccount("USD", PurposeClearingBank)
	count := func() int {
		n, err := storage.View(ctx, db, func(tx storage.Tx) (int, error) {
			n := 0
			return n, scanDeltas(tx, nil, false, func([]byte, string, *balRec) error { n++; return nil })
		})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	state := func() (Balance, map[string]Balance) {
		b, err := s.GetBalance(ctx, sys)
		if err != nil {
			t.Fatal(err)
		}
		tb, err := s.TrialBalance(ctx)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := s.Check(ctx, nil)
		if err != nil || len(rep.Problems) > 0 {
			t.Fatalf("Check = %v, %v", rep, err)
		}
		return b, tb
	}
	if n := count(); n != 2 {
		t.Fatalf("%d changes recorded, want 2 (one per funding entry)", n)
	}
	bal, trial := state()
	if bal.Settled != -2000 {
		t.Fatalf("clearing balance %+v, want settled -2000", bal)
	}
	if err := db.Update(ctx, func(tx storage.Tx) error {
		return storage.Schedule(tx, dueFold, 0, foldID)
	}); err != nil {
		t.Fatal(err)
	}
	for range 2 { // the second fold finds nothing and changes nothing
		if _, err := s.RunDue(ctx, s.clock.Now()); err != nil {
			t.Fatal(err)
		}
		if n := count(); n != 0 {
			t.Fatalf("%d changes left after the fold", n)
		}
		if b, tb := state(); b != bal || tb["USD"] != trial["USD"] {
			t.Fatalf("after the fold: %+v %+v, want %+v %+v", b, tb, bal, trial)
		}
		s.clock.(interface{ Add(time.Duration) }).Add(foldEvery)
	}
	// A record put twice counts its change once.
	if err := db.Update(ctx, func(tx storage.Tx) error {
		r, err := loadBal(tx, sys)
		if err != nil {
			return err
		}
		r.Settled += 5
		if err := s.putBal(tx, sys, r); err != nil {
			return err
		}
		if err := s.putBal(tx, sys, r); err != nil {
			return err
		}
		r.Settled -= 5
		return s.putBal(tx, sys, r)
	}); err != nil {
		t.Fatal(err)
	}
	if b, _ := state(); b != bal {
		t.Fatalf("after +5 put twice and -5: %+v, want %+v", b, bal)
	}
}
