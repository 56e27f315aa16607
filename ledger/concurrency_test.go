package ledger_test

import (
	"errors"
	"fmt"
	"math/rand"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/bolt"
)

func openBolt(tb testing.TB) storage.Backend {
	tb.Helper()
	db, err := bolt.Open(filepath.Join(tb.TempDir(), "db"), nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

func TestConcurrentMovements(t *testing.T) {
	for _, backend := range []struct {
		name string
		open func(testing.TB) storage.Backend
	}{{"memory", newMemory}, {"bolt", openBolt}, {"postgres", openPostgres}} {
		t.Run(backend.name, func(t *testing.T) {
			testConcurrent(t, backend.open(t))
		})
	}
}

func testConcurrent(t *testing.T, db storage.Backend) {
	const (
		writers  = 16
		readers  = 2
		accounts = 12
		initial  = 10000
		// Enough movements for every pair of the 12 accounts to collide
		// many times over; the deadline only bounds a slow run (-race).
		movements = 3000
	)
	dur := time.Second
	if testing.Short() {
		dur = 200 * time.Millisecond
	}
	// A real clock: concurrent callers must not share a mock's manual time.
	s := ledger.NewService(db, nil)
	var ids []string
	for i := range accounts {
		a, err := s.CreateAccount(ctx, sys, ledger.NewAccount{EntityID: fmt.Sprintf("e%d", i%3), Type: "checking", Currency: "USD", DisplayName: "c"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, a.ID)
		if _, err := s.Post(ctx, ledger.Entry{Lines: []ledger.Line{
			{AccountID: s.SystemAccount("USD", ledger.PurposeClearingBank), Side: ledger.Debit, Amount: initial},
			{AccountID: a.ID, Side: ledger.Credit, Amount: initial},
		}}); err != nil {
			t.Fatal(err)
		}
	}
	began := time.Now()
	deadline := began.Add(dur)
	deltas := make([]map[string]int64, writers)
	var ok, rejected, views atomic.Int64
	var wg sync.WaitGroup
	errc := make(chan error, writers+readers)
	for w := range writers {
		deltas[w] = map[string]int64{}
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(w)))
			d := deltas[w]
			for ok.Load()+rejected.Load() < movements && time.Now().Before(deadline) {
				from, to := ids[rng.Intn(accounts)], ids[rng.Intn(accounts)]
				if from == to {
					continue
				}
				amt := 1 + rng.Int63n(3000)
				if rng.Intn(2) == 0 {
					_, err := s.Post(ctx, ledger.Entry{Lines: []ledger.Line{{AccountID: from, Side: ledger.Debit, Amount: amt}, {AccountID: to, Side: ledger.Credit, Amount: amt}}})
					if errors.Is(err, ledger.ErrInsufficientFunds) {
						rejected.Add(1)
						continue
					} else if err != nil {
						errc <- err
						return
					}
					d[from] -= amt
					d[to] += amt
					ok.Add(1)
					continue
				}
				h, err := s.Hold(ctx, ledger.HoldRequest{DebitAccountID: from, CreditAccountID: to, Amount: amt})
				if errors.Is(err, ledger.ErrInsufficientFunds) {
					rejected.Add(1)
					continue
				} else if err != nil {
					errc <- err
					return
				}
				switch rng.Intn(3) {
				case 0:
					_, err = s.VoidHold(ctx, h.ID)
				default:
					part := rng.Int63n(amt + 1) // 0 posts all
					h, err = s.PostHold(ctx, h.ID, part)
					if err == nil {
						d[from] -= h.PostedAmount
						d[to] += h.PostedAmount
					}
				}
				if err != nil {
					errc <- err
					return
				}
				ok.Add(1)
			}
		}(w)
	}
	for range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ok.Load()+rejected.Load() < movements && time.Now().Before(deadline) {
				err := db.View(ctx, func(tx storage.Tx) error {
					var settled, pd, pc int64
					for _, id := range ids {
						b, err := s.BalanceTx(tx, id)
						if err != nil {
							return err
						}
						if b.Available() < 0 {
							return fmt.Errorf("%s has negative available: %+v", id, b)
						}
						settled += b.Settled
						pd += b.PendingDebits
						pc += b.PendingCredits
					}
					if settled != accounts*initial || pd != pc {
						return fmt.Errorf("snapshot not conserved: settled %d (want %d), pending debits %d, credits %d", settled, accounts*initial, pd, pc)
					}
					return nil
				})
				if err != nil {
					errc <- err
					return
				}
				views.Add(1)
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	t.Logf("%d movements, %d rejected for funds, %d consistent views in %v", ok.Load(), rejected.Load(), views.Load(), time.Since(began))
	if ok.Load() == 0 || views.Load() == 0 {
		t.Fatal("nothing ran")
	}
	// No lost update: every account ends exactly where its successful
	// movements say.
	trial, err := s.TrialBalance(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if b := trial["USD"]; b.Settled != 0 || b.PendingDebits != 0 || b.PendingCredits != 0 {
		t.Errorf("trial balance %+v", b)
	}
	for _, id := range ids {
		want := int64(initial)
		for _, d := range deltas {
			want += d[id]
		}
		b, err := s.GetBalance(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if b != (ledger.Balance{Settled: want}) {
			t.Errorf("%s = %+v, want settled %d", id, b, want)
		}
	}
}
