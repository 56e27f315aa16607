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
	"github.com/corebank/corebank/storage/postgres"
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
// Update (a read and a write of a counter) at a time, each on its own
// counter, and 16 on one shared counter (a hot account), with the default
// group commit (group=16) and with every Update in its own transaction, up
// to 16 at once (group=1). ns/op is per Update; commits/s counts Updates
// committed, retries/op the transactions re-run after a serialization
// failure and exhausted/op the Updates that failed with
// ErrRetriesExhausted.
func BenchmarkUpdate(b *testing.B) {
	for _, bc := range []struct {
		callers int
		shared  bool
		opt     *postgres.Options
	}{
		{1, false, nil}, {16, false, nil}, {16, true, nil},
		{1, false, &postgres.Options{Group: 1, Leaders: 16}},
		{16, false, &postgres.Options{Group: 1, Leaders: 16}},
		{16, true, &postgres.Options{Group: 1, Leaders: 16}},
	} {
		name := fmt.Sprintf("group=16/callers=%d", bc.callers)
		if bc.opt != nil {
			name = fmt.Sprintf("group=1/callers=%d", bc.callers)
		}
		if bc.shared {
			name += "/shared"
		}
		callers := bc.callers
		b.Run(name, func(b *testing.B) {
			db := MustOpen(b, bc.opt)
			var exhausted atomic.Int64
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
					if bc.shared {
						fn = increment([]byte("shared"))
					}
					for next.Add(1) <= int64(b.N) {
						err := db.Update(ctx, fn)
						switch {
						case errors.Is(err, postgres.ErrRetriesExhausted):
							exhausted.Add(1)
						case err != nil:
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
			b.ReportMetric(float64(exhausted.Load())/float64(b.N), "exhausted/op")
		})
	}
}
