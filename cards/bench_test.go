package cards_test

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/cards"
	"github.com/corebank/corebank/corebanktest"
)

// benchCards issues n cards with every kind of control, none of which
// fires for a 1-unit authorization at MCC 5812.
func benchCards(b *testing.B, n int) (*corebanktest.Bank, corebank.Caller, []string) {
	bk := corebanktest.New(b)
	root := corebank.As(bk.Root.EntityID)
	acct := bk.FundedAccount("USD", 1<<40)
	big := func() *int64 { v := int64(1 << 40); return &v }
	var ids []string
	for range n {
		in := virtual(acct.ID)
		in.IndividualControls = &cards.Controls{DailyAmountLimit: big(), DailyTransactionCount: big(), CycleTransactionCount: big(),
			TransactionAmountLimit: big(), BillingCycle: "Weekly", BillingCycleDay: "Monday", TimeZone: "Europe/London"}
		in.IndividualMCCControls = []cards.MCCControl{{MCC: 5812, Limits: cards.Limits{DailyAmountLimit: big(), Amount: big()}}}
		in.MCCGroupControls = []cards.GroupControl{{GroupName: "restaurants", Limits: cards.Limits{Amount: big()}}, {GroupName: "gambling", Open: new(bool)}}
		c, err := bk.Cards.CreateVirtualCard(ctx, root, in)
		if err != nil {
			b.Fatal(err)
		}
		ids = append(ids, c.ID)
	}
	return bk, root, ids
}

func reportP99(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
}

// BenchmarkAuthorize measures one authorization decision with controls
// through the Go API (memory store), sequential and from 16 goroutines,
// reporting p50 and p99 latency.
func BenchmarkAuthorize(b *testing.B) {
	b.Run("sequential", func(b *testing.B) {
		bk, root, ids := benchCards(b, 1)
		var lat []time.Duration
		b.ReportAllocs()
		for b.Loop() {
			t0 := time.Now()
			tx, err := bk.Cards.AuthorizeCard(ctx, root, "", ids[0], auth(1, 5812))
			lat = append(lat, time.Since(t0))
			if err != nil || tx.Status != cards.TxPending {
				b.Fatalf("%+v %v", tx, err)
			}
		}
		reportP99(b, lat)
	})
	b.Run("concurrent16", func(b *testing.B) {
		bk, root, ids := benchCards(b, 16)
		var (
			mu  sync.Mutex
			lat []time.Duration
			wg  sync.WaitGroup
		)
		b.ReportAllocs()
		b.ResetTimer()
		per := (b.N + 15) / 16
		for g := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				mine := make([]time.Duration, 0, per)
				for range per {
					t0 := time.Now()
					tx, err := bk.Cards.AuthorizeCard(ctx, root, "", ids[g], auth(1, 5812))
					mine = append(mine, time.Since(t0))
					if err != nil || tx.Status != cards.TxPending {
						b.Errorf("%+v %v", tx, err)
						return
					}
				}
				mu.Lock()
				lat = append(lat, mine...)
				mu.Unlock()
			}()
		}
		wg.Wait()
		b.StopTimer()
		reportP99(b, lat)
	})
}
