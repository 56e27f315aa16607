package storage_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/bolt"
	"github.com/corebank/corebank/storage/memory"
)

// BenchmarkDue measures one runner draining due items, on one node: "tx"
// items done inside the transaction that takes them off the queue, "batch"
// items handed to a Batch job (leased first) that settles each in a
// transaction of its own, as the payout checks did, claims of 256 one at a
// time; "batch-w4" the same in claims of 16, four at once (Workers);
// "claim16" and "claim16-w4" claims of 16 each settled in one
// transaction, as the payout checks are, one or four at once. b.N items
// per run.
func BenchmarkDue(b *testing.B) {
	backends := map[string]func(b *testing.B) storage.Backend{
		"memory": func(*testing.B) storage.Backend { return memory.New() },
		"bolt": func(b *testing.B) storage.Backend {
			db, err := bolt.Open(filepath.Join(b.TempDir(), "due.db"), nil)
			if err != nil {
				b.Fatal(err)
			}
			return db
		},
	}
	settle := func(tx storage.Tx, it storage.DueItem) error {
		if err := storage.CheckLease(tx, "bench", it); err != nil {
			return err
		}
		if err := storage.Unschedule(tx, "bench", it.At, it.ID); err != nil {
			return err
		}
		return tx.Put("bench.done", []byte(it.ID), nil)
	}
	for _, name := range []string{"memory", "bolt"} {
		for _, kind := range []string{"tx", "batch", "batch-w4", "claim16", "claim16-w4"} {
			b.Run(name+"/"+kind, func(b *testing.B) {
				ctx := context.Background()
				db := backends[name](b)
				defer db.Close()
				job := storage.DueJob{Kind: "bench"}
				workers := 1
				switch kind {
				case "tx":
					job.Tx = func(tx storage.Tx, _ time.Time, it storage.DueItem) error {
						return tx.Put("bench.done", []byte(it.ID), nil)
					}
				case "batch", "batch-w4":
					job.Batch = func(ctx context.Context, _ time.Time, items []storage.DueItem) (int, error) {
						for _, it := range items {
							if err := db.Update(ctx, func(tx storage.Tx) error { return settle(tx, it) }); err != nil {
								return 0, err
							}
						}
						return len(items), nil
					}
				default:
					job.Batch = func(ctx context.Context, _ time.Time, items []storage.DueItem) (int, error) {
						err := db.Update(ctx, func(tx storage.Tx) error {
							for _, it := range items {
								if err := settle(tx, it); err != nil {
									return err
								}
							}
							return nil
						})
						if err != nil {
							return 0, err
						}
						return len(items), nil
					}
				}
				if kind != "tx" && kind != "batch" {
					job.Claim = 16
				}
				if strings.HasSuffix(kind, "-w4") {
					workers = 4
				}
				for i := 0; i < b.N; i += 1000 {
					err := db.Update(ctx, func(tx storage.Tx) error {
						for j := i; j < min(i+1000, b.N); j++ {
							if err := storage.Schedule(tx, "bench", 1, fmt.Sprintf("item%09d", j)); err != nil {
								return err
							}
						}
						return nil
					})
					if err != nil {
						b.Fatal(err)
					}
				}
				d := storage.NewDue(db, clock.NewMock(), 0, job).Workers(workers)
				b.ResetTimer()
				n, err := d.RunDue(ctx, time.UnixMilli(10))
				b.StopTimer()
				if err != nil || n != b.N {
					b.Fatalf("RunDue = %d, %v; want %d", n, err, b.N)
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "items/s")
			})
		}
	}
}
