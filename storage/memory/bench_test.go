package memory_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand"
	"testing"

	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/memory"
)

const benchBucket = storage.Bucket("bench")

func benchKey(i int) []byte { return storage.AppendUint64([]byte("account/"), uint64(i)) }

// fill stores n keys with 100-byte values.
func fill(b *testing.B, db storage.Backend, n int) {
	b.Helper()
	val := make([]byte, 100)
	for start := 0; start < n; start += 10000 {
		err := db.Update(context.Background(), func(tx storage.Tx) error {
			for i := start; i < min(start+10000, n); i++ {
				if err := tx.Put(benchBucket, benchKey(i), val); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// rmw reads and rewrites k random keys: the shape of one ledger step.
func rmw(r *rand.Rand, n, k int) func(storage.Tx) error {
	return func(tx storage.Tx) error {
		for range k {
			key := benchKey(r.Intn(n))
			v, err := tx.Get(benchBucket, key)
			if err != nil && !errors.Is(err, storage.ErrNotFound) {
				return err
			}
			if len(v) < 8 {
				v = make([]byte, 100)
			}
			binary.BigEndian.PutUint64(v, binary.BigEndian.Uint64(v)+1)
			if err := tx.Put(benchBucket, key, v); err != nil {
				return err
			}
		}
		return nil
	}
}

// BenchmarkUpdate measures one sequential Update that reads and rewrites
// five keys (ten operations). "uniform" picks them at random from the whole
// store, so nearly every access misses the CPU cache; "ledger" is the shape
// of a ledger step: four reads and rewrites within 10,000 hot accounts plus
// one new key appended in key order (a journal entry), over a store of the
// given size.
func BenchmarkUpdate(b *testing.B) {
	for _, n := range []int{1000, 1_000_000} {
		for _, shape := range []string{"uniform", "ledger"} {
			b.Run(fmt.Sprintf("keys=%d/%s", n, shape), func(b *testing.B) {
				db := memory.New()
				defer db.Close()
				fill(b, db, n)
				r := rand.New(rand.NewSource(1))
				fn := rmw(r, n, 5)
				if shape == "ledger" {
					next := n
					hot := rmw(r, min(n, 10_000), 4)
					val := make([]byte, 200)
					fn = func(tx storage.Tx) error {
						if err := hot(tx); err != nil {
							return err
						}
						next++
						return tx.Put(benchBucket, benchKey(next), val)
					}
				}
				ctx := context.Background()
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					if err := db.Update(ctx, fn); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "commits/s")
			})
		}
	}
}

// BenchmarkUpdateSmall measures the fixed cost of an Update: one read and
// one write.
func BenchmarkUpdateSmall(b *testing.B) {
	db := memory.New()
	defer db.Close()
	fill(b, db, 1000)
	fn := rmw(rand.New(rand.NewSource(1)), 1000, 1)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := db.Update(ctx, fn); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "commits/s")
}

// BenchmarkView measures a View that reads five random keys.
func BenchmarkView(b *testing.B) {
	for _, n := range []int{1000, 1_000_000} {
		b.Run(fmt.Sprintf("keys=%d", n), func(b *testing.B) { benchView(b, n) })
	}
}

func benchView(b *testing.B, n int) {
	db := memory.New()
	defer db.Close()
	fill(b, db, n)
	r := rand.New(rand.NewSource(1))
	ctx := context.Background()
	fn := func(tx storage.Tx) error {
		for range 5 {
			if _, err := tx.Get(benchBucket, benchKey(r.Intn(n))); err != nil {
				return err
			}
		}
		return nil
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := db.View(ctx, fn); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScan measures a View that pages through 50 keys from a cursor.
func BenchmarkScan(b *testing.B) {
	const n = 100_000
	db := memory.New()
	defer db.Close()
	fill(b, db, n)
	r := rand.New(rand.NewSource(1))
	ctx := context.Background()
	fn := func(tx storage.Tx) error {
		o := storage.ScanOptions{Prefix: []byte("account/"), After: benchKey(r.Intn(n)), Limit: 50}
		return tx.Scan(benchBucket, o, func(k, v []byte) error { return nil })
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := db.View(ctx, fn); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUpdateEmpty measures the fixed cost of an Update that does
// nothing.
func BenchmarkUpdateEmpty(b *testing.B) {
	db := memory.New()
	defer db.Close()
	ctx := context.Background()
	fn := func(storage.Tx) error { return nil }
	b.ReportAllocs()
	for b.Loop() {
		if err := db.Update(ctx, fn); err != nil {
			b.Fatal(err)
		}
	}
}
