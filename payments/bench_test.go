package payments_test

import (
	"fmt"
	"github.com/corebank/corebank"
	"github.com/corebank/corebank/payments"
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

// BenchmarkListTransfers reads a page of 20 from the middle of 2,000
// transfers (a tenth failed, the rest pending), as each filter reads it.
func BenchmarkListTransfers(b *testing.B) {
	e := newMemEnv(b)
	a, d := setupUSD(b, e, 1<<50)
	var mid string
	for i := range 2000 {
		t, err := e.svc.CreateTransfer(ctx, corebank.As("ent1"), newTransfer(a, d, 100, fmt.Sprint("list-", i)))
		if err != nil {
			b.Fatal(err)
		}
		if i%10 == 0 {
			if _, err := e.svc.SimulateTransfer(ctx, corebank.As("ent1"), "", t.ID, "failed", ""); err != nil {
				b.Fatal(err)
			}
		}
		if i == 1000 {
			mid = t.ID
		}
	}
	for _, f := range []struct {
		name string
		f    payments.TransferFilter
	}{
		{"all", payments.TransferFilter{}},
		{"account", payments.TransferFilter{AccountID: a.ID}},
		{"status", payments.TransferFilter{Status: payments.StatusFailed}},
		{"account+status", payments.TransferFilter{AccountID: a.ID, Status: payments.StatusPending}},
	} {
		b.Run(f.name, func(b *testing.B) {
			for b.Loop() {
				p, err := e.svc.ListTransfers(ctx, corebank.As("ent1"), f.f, corebank.ListOptions{Limit: 20, After: mid})
				if err != nil || len(p.Items) != 20 {
					b.Fatal(err, len(p.Items))
				}
			}
		})
	}
}
