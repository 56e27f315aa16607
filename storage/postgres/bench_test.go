package postgres_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/corebank/corebank/storage"
)

const benchBucket storage.Bucket = "bench"

// increment is a small read-modify-write: one counter per caller.
func increment(key []byte) func(storage.Tx) error {
	return func(tx storage.Tx) error {
		n := uint64(0)
		v, err := tx.Get(benchBucket, key)
		switch {
		case err == nil:
			n = binary.BigEndian.Uint64(v)
		case !errors.Is(err, storage.ErrNotFound):
			return err
		}
		return tx.Put(benchBucket, key, binary.BigEndian.AppendUint64(nil, n+1))
	}
}

// BenchmarkUpdate measures 1 and 16 concurrent callers each doing one small
// Update (a read and a write of its own counter) at a time. ns/op is per
// Update; commits/s counts Updates committed and retries/op the runs
// repeated after a serialization failure.
func BenchmarkUpdate(b *testing.B) {
	for _, callers := range []int{1, 16} {
		b.Run(fmt.Sprintf("callers=%d", callers), func(b *testing.B) {
			db := MustOpen(b, nil)
			ctx := context.Background()
			start := db.Retries()
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
			b.ReportMetric(float64(db.Retries()-start)/float64(b.N), "retries/op")
		})
	}
}
