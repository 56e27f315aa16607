package payments_test

import (
	"fmt"
	"github.com/corebank/corebank"
	"sync"
	"sync/atomic"
	"testing"
)

// BenchmarkCreateTransfer measures CreateTransfer against one funded
// account, sequentially and from 16 concurrent callers, on both backends.
// It reports transfers/s.
func BenchmarkCreateTransfer(b *testing.B) {
	for _, be := range backends {
		for _, callers := range []int{1, 16} {
			b.Run(fmt.Sprintf("%s/callers=%d", be.name, callers), func(b *testing.B) {
				e := newEnv(b, be.open(b), nil)
				a, d := setupUSD(b, e, 1<<50)
				var seq atomic.Int64
				b.ResetTimer()
				var wg sync.WaitGroup
				per := b.N / callers
				for c := 0; c < callers; c++ {
					n := per
					if c == 0 {
						n += b.N % callers
					}
					wg.Add(1)
					go func(n int) {
						defer wg.Done()
						for i := 0; i < n; i++ {
							ref := fmt.Sprintf("bench-%d", seq.Add(1))
							if _, err := e.svc.CreateTransfer(ctx, corebank.As("ent1"), newTransfer(a, d, 100, ref)); err != nil {
								b.Error(err)
								return
							}
						}
					}(n)
				}
				wg.Wait()
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "transfers/s")
			})
		}
	}
}
