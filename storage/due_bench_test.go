package storage_test

import (
	"context"
	"fmt"
	"path/filepath"
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
// transaction of its own, as the payout checks do. b.N items per run.
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
	for _, name := range []string{"memory", "bolt"} {
		for _, kind := range []string{"tx", "batch"} {
			b.Run(name+"/"+kind, func(b *testing.B) {
				ctx := context.Background()
				db := backends[name](b)
				defer db.Close()
				job := storage.DueJob{Kind: "bench"}
				if kind == "tx" {
					job.Tx = func(tx storage.Tx, _ time.Time, it storage.DueItem) error {
						return tx.Put("bench.done", []byte(it.ID), nil)
					}
				} else {
					job.Batch = func(ctx context.Context, _ time.Time, items []storage.DueItem) (int, error) {
						for _, it := range items {
							err := db.Update(ctx, func(tx storage.Tx) error {
								if err := storage.Unschedule(tx, "bench", it.At, it.ID); err != nil {
									return err
								}
								return tx.Put("bench.done", []byte(it.ID), nil)
							})
							if err != nil {
								return 0, err
							}
						}
						return len(items), nil
					}
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
				d := storage.NewDue(db, clock.NewMock(), 0, job)
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
