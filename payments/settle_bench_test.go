package payments_test

import (
	"fmt"
	"testing"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/storage"
)

// BenchmarkSettle measures settling book transfers: b.N of them are
// created, then one due runner, with one worker or four, settles them all
// (payments.transfer, claims of 16). It reports transfers/s.
func BenchmarkSettle(b *testing.B) {
	for _, be := range backends {
		for _, workers := range []int{1, 4} {
			b.Run(fmt.Sprintf("%s/workers=%d", be.name, workers), func(b *testing.B) {
				e := newEnv(b, be.open(b), nil)
				a, _, d := bookPair(b, e, "USD")
				e.fund(b, a, int64(b.N)*100)
				for i := range b.N {
					if _, err := e.svc.CreateTransfer(ctx, corebank.As("ent1"), newTransfer(a, d, 100, fmt.Sprintf("s%d", i))); err != nil {
						b.Fatal(err)
					}
				}
				due := storage.NewDue(e.db, e.clk, 0, e.svc.DueJobs()...).Workers(workers)
				b.ResetTimer()
				n, err := due.RunDue(ctx, e.clk.Now())
				b.StopTimer()
				if err != nil || n != b.N {
					b.Fatalf("RunDue = %d, %v; want %d", n, err, b.N)
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "transfers/s")
			})
		}
	}
}
