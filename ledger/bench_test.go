package ledger_test

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/service"
	"github.com/corebank/corebank/storage"
)

var backends = []struct {
	name string
	open func(testing.TB) storage.Backend
}{{"memory", newMemory}, {"bolt", openBolt}}

// benchAccounts opens n funded USD accounts.
func benchAccounts(b *testing.B, s *ledger.Service, n int, funds int64) []string {
	b.Helper()
	var ids []string
	for i := range n {
		a, err := s.CreateAccount(ctx, sys, ledger.NewAccount{EntityID: fmt.Sprintf("e%d", i), Type: "checking", Currency: "USD", DisplayName: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		ids = append(ids, a.ID)
		if _, err := s.Post(ctx, ledger.Entry{Lines: []ledger.Line{
			{AccountID: s.SystemAccount("USD", ledger.PurposeClearingBank), Side: ledger.Debit, Amount: funds},
			{AccountID: a.ID, Side: ledger.Credit, Amount: funds},
		}}); err != nil {
			b.Fatal(err)
		}
	}
	return ids
}

// twoPhase moves 100 from one account to another as a hold, then its full
// post: two transactions, the transfer every benchmark here measures.
func twoPhase(s *ledger.Service, from, to string) error {
	h, err := s.Hold(ctx, ledger.HoldRequest{DebitAccountID: from, CreditAccountID: to, Amount: 100})
	if err != nil {
		return err
	}
	_, err = s.PostHold(ctx, h.ID, 0)
	return err
}

// BenchmarkTwoPhaseTransfer measures a hold followed by a full post, each
// its own transaction, between customer accounts.
func BenchmarkTwoPhaseTransfer(b *testing.B) {
	for _, be := range backends {
		b.Run(be.name+"/sequential", func(b *testing.B) {
			s := ledger.NewService(be.open(b), nil)
			ids := benchAccounts(b, s, 2, 1<<50)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := twoPhase(s, ids[i&1], ids[1-i&1]); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "transfers/s")
		})
		b.Run(be.name+"/outflow", func(b *testing.B) {
			// Customer to rail clearing: the usual payout shape.
			s := ledger.NewService(be.open(b), nil)
			ids := benchAccounts(b, s, 1, 1<<50)
			bank := s.SystemAccount("USD", ledger.PurposeClearingBank)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := twoPhase(s, ids[0], bank); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "transfers/s")
		})
		b.Run(be.name+"/parallel16", func(b *testing.B) {
			// 16 callers whatever GOMAXPROCS: RunParallel starts
			// parallelism × GOMAXPROCS goroutines (more than 16 when
			// GOMAXPROCS does not divide 16).
			procs := runtime.GOMAXPROCS(0)
			per := (16 + procs - 1) / procs
			callers := per * procs
			s := ledger.NewService(be.open(b), nil)
			ids := benchAccounts(b, s, 2*callers, 1<<50)
			var next atomic.Int64
			b.ReportAllocs()
			b.SetParallelism(per)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				// Each caller moves between its own pair of accounts.
				g := int(next.Add(1) - 1)
				from, to := ids[2*g], ids[2*g+1]
				for pb.Next() {
					if err := twoPhase(s, from, to); err != nil {
						b.Error(err)
						return
					}
					from, to = to, from
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "transfers/s")
		})
	}
}

// BenchmarkContention measures two-phase transfers from exactly 16
// callers, whatever GOMAXPROCS: on disjoint accounts (each caller moves
// between its own pair, so nothing but the store is shared) and into one
// hot account (every caller pays the same merchant, so every transfer
// writes its balance). Run it at -cpu 1,2,16: on a store that serializes
// writers, disjoint gains nothing from cores; hot is the floor.
func BenchmarkContention(b *testing.B) {
	const callers = 16
	for _, be := range backends {
		for _, shape := range []string{"disjoint", "hot"} {
			b.Run(be.name+"/"+shape, func(b *testing.B) {
				s := ledger.NewService(be.open(b), nil)
				ids := benchAccounts(b, s, 2*callers+1, 1<<50)
				hot := ids[2*callers]
				var next atomic.Int64
				var wg sync.WaitGroup
				b.ReportAllocs()
				b.ResetTimer()
				for g := range callers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						from, to := ids[2*g], ids[2*g+1]
						if shape == "hot" {
							to = hot
						}
						for next.Add(1) <= int64(b.N) {
							if err := twoPhase(s, from, to); err != nil {
								b.Error(err)
								return
							}
							if shape == "disjoint" {
								from, to = to, from
							}
						}
					}()
				}
				wg.Wait()
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "transfers/s")
			})
		}
	}
}

// BenchmarkTwoPhaseTransferBatched measures the same transfer when a caller
// composes 100 holds in one Update (HoldTx) and their 100 posts in another
// (PostHoldTx), as a batch importer or group-committing caller would.
func BenchmarkTwoPhaseTransferBatched(b *testing.B) {
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			db := be.open(b)
			s := ledger.NewService(db, nil)
			ids := benchAccounts(b, s, 2, 1<<50)
			const batch = 100
			holds := make([]string, batch)
			b.ReportAllocs()
			b.ResetTimer()
			for done := 0; done < b.N; done += batch {
				n := min(batch, b.N-done)
				err := db.Update(ctx, func(tx storage.Tx) error {
					now := time.Now()
					for i := 0; i < n; i++ {
						h, err := s.HoldTx(tx, now, ledger.HoldRequest{DebitAccountID: ids[i&1], CreditAccountID: ids[1-i&1], Amount: 100})
						if err != nil {
							return err
						}
						holds[i] = h.ID
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
				err = db.Update(ctx, func(tx storage.Tx) error {
					now := time.Now()
					for i := 0; i < n; i++ {
						if _, err := s.PostHoldTx(tx, now, holds[i], 0); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "transfers/s")
		})
	}
}

// BenchmarkPost measures a direct two-line journal entry.
func BenchmarkPost(b *testing.B) {
	s := ledger.NewService(newMemory(b), nil)
	ids := benchAccounts(b, s, 2, 1<<50)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := s.Post(ctx, ledger.Entry{Lines: []ledger.Line{{AccountID: ids[i&1], Side: ledger.Debit, Amount: 1}, {AccountID: ids[1-i&1], Side: ledger.Credit, Amount: 1}}}); err != nil {
			b.Fatal(err)
		}
	}
}

const bigLines = 1_000_000

// bigFixture is an account with 1,000,000 settled journal lines, one every
// 5 seconds from 2026-01-01 (about two months), written through PostTx in
// large transactions.
type bigFixture struct {
	s       *ledger.Service
	account string
	first   time.Time
	last    time.Time
}

func newBigFixture(b *testing.B, db storage.Backend) *bigFixture {
	b.Helper()
	c := clock.NewMock()
	first := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c.Set(first)
	s := ledger.NewService(db, &ledger.Options{Deps: service.Deps{Clock: c}})
	a, err := s.CreateAccount(ctx, sys, ledger.NewAccount{EntityID: "big", Type: "checking", Currency: "USD", DisplayName: "big"})
	if err != nil {
		b.Fatal(err)
	}
	bank := s.SystemAccount("USD", ledger.PurposeClearingBank)
	fees := s.SystemAccount("USD", ledger.PurposeFees)
	const batch = 100000
	now := first
	for done := 0; done < bigLines; done += batch {
		err := db.Update(ctx, func(tx storage.Tx) error {
			t := now
			for i := 0; i < batch; i++ {
				lines := []ledger.Line{{AccountID: bank, Side: ledger.Debit, Amount: 10}, {AccountID: a.ID, Side: ledger.Credit, Amount: 10}}
				if (done+i)%3 == 2 {
					lines = []ledger.Line{{AccountID: a.ID, Side: ledger.Debit, Amount: 7}, {AccountID: fees, Side: ledger.Credit, Amount: 7}}
				}
				if _, err := s.PostTx(tx, t, ledger.Entry{Lines: lines, Narration: "bench"}); err != nil {
					return err
				}
				t = t.Add(5 * time.Second)
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		now = now.Add(batch * 5 * time.Second)
	}
	return &bigFixture{s: s, account: a.ID, first: first, last: now.Add(-5 * time.Second)}
}

var bigMemory *bigFixture

func memoryBigFixture(b *testing.B) *bigFixture {
	if bigMemory == nil {
		start := time.Now()
		defer debug.SetGCPercent(debug.SetGCPercent(150)) // the build is not measured
		bigMemory = newBigFixture(b, newMemoryShared())
		built := time.Since(start)
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		b.Logf("1M-line fixture built in %v; live heap %d MB", built, ms.HeapAlloc>>20)
	}
	return bigMemory
}

// BenchmarkStatementPage reads one 20-line statement page at the start of
// the account's history (January, first page) and at its end (the page
// ending where the last month's final page starts), over 1,000,000 lines.
func BenchmarkStatementPage(b *testing.B) {
	f := memoryBigFixture(b)
	end := ledger.StatementQuery{Year: f.last.Year(), Month: int(f.last.Month()), ListOptions: corebank.ListOptions{Limit: 100}}
	for {
		st, err := f.s.Statement(ctx, sys, f.account, end)
		if err != nil {
			b.Fatal(err)
		}
		if !st.Pagination.HasNext {
			end.ListOptions = corebank.ListOptions{Before: *st.Pagination.PreviousCursor}
			break
		}
		end.After = *st.Pagination.NextCursor
	}
	for _, tc := range []struct {
		name string
		q    ledger.StatementQuery
	}{
		{"start", ledger.StatementQuery{Year: 2026, Month: 1}},
		{"end", end},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				st, err := f.s.Statement(ctx, sys, f.account, tc.q)
				if err != nil || len(st.Transactions) != 20 {
					b.Fatalf("statement: %v, %d lines", err, len(st.Transactions))
				}
			}
		})
	}
}

// BenchmarkBalanceAt reads a point-in-time balance early and late in the
// 1,000,000-line history.
func BenchmarkBalanceAt(b *testing.B) {
	f := memoryBigFixture(b)
	for name, at := range map[string]time.Time{"start": f.first.Add(time.Hour), "end": f.last.Add(-time.Hour)} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := f.s.BalanceAt(ctx, f.account, at); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

const bigAccounts = 1_000_000

var bigList struct {
	s     *ledger.Service
	first string
	last  string
}

// BenchmarkListAccountsPage reads a 20-account page of one entity's
// accounts at the start and at the end of 1,000,000 accounts of one entity,
// each opened through CreateAccountTx (index keys, counters, BAN, balance,
// event), 50,000 per transaction.
func BenchmarkListAccountsPage(b *testing.B) {
	buildBigList(b)
	for _, tc := range []struct {
		name string
		o    corebank.ListOptions
	}{
		{"start", corebank.ListOptions{}},
		{"end", corebank.ListOptions{Before: bigList.last}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				p, err := bigList.s.ListAccounts(ctx, sys, ledger.AccountFilter{EntityID: "big"}, tc.o)
				if err != nil || len(p.Items) != 20 || p.Total != bigAccounts {
					b.Fatalf("list: %v, %d items, total %d", err, len(p.Items), p.Total)
				}
			}
		})
	}
}

// buildBigList opens bigAccounts accounts of entity "big", once per process,
// and logs the build time and the live heap it leaves.
func buildBigList(b *testing.B) {
	if bigList.s != nil {
		return
	}
	t0 := time.Now()
	defer debug.SetGCPercent(debug.SetGCPercent(150)) // the build is not measured
	db := newMemoryShared()
	s := ledger.NewService(db, nil)
	var ids []string
	const batch = 50000
	for done := 0; done < bigAccounts; done += batch {
		var got []string
		err := db.Update(ctx, func(tx storage.Tx) error {
			got = got[:0]
			now := time.Now()
			for i := 0; i < batch; i++ {
				a, err := s.CreateAccountTx(tx, now, ledger.NewAccount{EntityID: "big", Type: "checking", Currency: "USD", DisplayName: "acct"})
				if err != nil {
					return err
				}
				if done+i < 21 || done+i >= bigAccounts-21 {
					got = append(got, a.ID)
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		ids = append(ids, got...)
	}
	bigList.s, bigList.first, bigList.last = s, ids[0], ids[len(ids)-1]
	built := time.Since(t0)
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.Logf("%d accounts built in %v; live heap %d MB", bigAccounts, built, ms.HeapAlloc>>20)
}
