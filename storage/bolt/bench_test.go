package bolt_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/bolt"
)

// increment is a small read-modify-write: one counter per caller.
func increment(key []byte) func(storage.Tx) error {
	return func(tx storage.Tx) error {
		n := uint64(0)
		v, err := tx.Get(bucket, key)
		switch {
		case err == nil:
			n = binary.BigEndian.Uint64(v)
		case !errors.Is(err, storage.ErrNotFound):
			return err
		}
		return tx.Put(bucket, key, binary.BigEndian.AppendUint64(nil, n+1))
	}
}

// BenchmarkUpdate measures one caller doing small sequential Updates: every
// commit waits for its own fsync.
func BenchmarkUpdate(b *testing.B) {
	db := MustOpen(b, filepath.Join(b.TempDir(), "db"))
	fn := increment([]byte("counter"))
	ctx := context.Background()
	for b.Loop() {
		if err := db.Update(ctx, fn); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "commits/s")
}

// BenchmarkGroupCommit measures 1, 16 and 64 concurrent callers each doing
// small Updates on their own key. ns/op is per Update; commits/s counts
// Updates committed (each returns after an fsync), and updates/fsync how
// many shared each fsync of the log.
func BenchmarkGroupCommit(b *testing.B) {
	for _, callers := range []int{1, 16, 64} {
		b.Run(fmt.Sprintf("callers=%d", callers), func(b *testing.B) {
			db := MustOpen(b, filepath.Join(b.TempDir(), "db"))
			ctx := context.Background()
			start := bolt.Batches(db)
			var next atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			for c := range callers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					fn := increment(fmt.Appendf(nil, "caller/%d", c))
					for next.Add(1) <= int64(b.N) {
						if err := db.Update(ctx, fn); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "commits/s")
			b.ReportMetric(float64(b.N)/float64(bolt.Batches(db)-start), "updates/fsync")
		})
	}
}

// BenchmarkScanNewest measures the newest key of a bucket read with a
// reverse Scan of Limit 1 (how the ledger's outbox finds its last event)
// while the bucket's recent entries sit in the overlay, not yet folded
// into bbolt: a batch of the overlay copies its values, so a small Limit
// must read a small batch.
func BenchmarkScanNewest(b *testing.B) {
	db := MustOpen(b, filepath.Join(b.TempDir(), "db"))
	ctx := context.Background()
	val := make([]byte, 200)
	err := db.Update(ctx, func(tx storage.Tx) error {
		for i := range 200 {
			if err := tx.Put(bucket, binary.BigEndian.AppendUint64(nil, uint64(i)), val); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		err := db.View(ctx, func(tx storage.Tx) error {
			return tx.Scan(bucket, storage.ScanOptions{Reverse: true, Limit: 1}, func(k, _ []byte) error { return nil })
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}
