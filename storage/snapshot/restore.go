package snapshot

import (
	"context"
	"io"

	"github.com/corebank/corebank/storage"
)

const (
	// batchBytes and batchPairs bound one Update of Read and of Clear.
	batchBytes = 4 << 20
	batchPairs = 20_000
)

// pair is one buffered write of Read: offsets into its batch's arena.
type pair struct {
	b          storage.Bucket
	k, v, next int
}

// Read reads a snapshot from r and writes its pairs into into, in
// Updates of a few MiB each, over whatever into holds (see Empty and
// Clear). Each frame is checked before its pairs are written, and the
// stream's checksum at its end: a damaged or truncated snapshot returns an
// error wrapping ErrCorrupt after writing the pairs before the damage, so
// check a snapshot with Verify first when it can be read twice (a file),
// as server restore does. It returns what it read, and into's errors,
// r's, and ctx's once ctx is done.
func Read(ctx context.Context, r io.Reader, into storage.Backend) (*Info, error) {
	var (
		arena []byte
		batch []pair
	)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		_, err := storage.Update(ctx, into, func(tx storage.Tx) (struct{}, error) {
			for _, p := range batch {
				if err := tx.Put(p.b, arena[p.k:p.v], arena[p.v:p.next]); err != nil {
					return struct{}{}, err
				}
			}
			return struct{}{}, nil
		})
		arena, batch = arena[:0], batch[:0]
		return err
	}
	info, err := Scan(ctx, r, func(b storage.Bucket, k, v []byte) error {
		p := pair{b: b, k: len(arena)}
		arena = append(arena, k...)
		p.v = len(arena)
		arena = append(arena, v...)
		p.next = len(arena)
		batch = append(batch, p)
		if len(arena) >= batchBytes || len(batch) >= batchPairs {
			return flush()
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return info, nil
}

// Empty reports whether db holds no key at all.
func Empty(ctx context.Context, db storage.Backend) (bool, error) {
	return storage.View(ctx, db, func(tx storage.Tx) (bool, error) {
		buckets, err := storage.Buckets(tx)
		return len(buckets) == 0, err
	})
}

// Clear deletes every key of db, in Updates of a bounded number of keys
// each, the same way on every backend, and returns how many it deleted.
// Run it only where nothing else writes to db: keys written meanwhile may
// stay.
func Clear(ctx context.Context, db storage.Backend) (int64, error) {
	var deleted int64
	for {
		buckets, err := storage.View(ctx, db, storage.Buckets)
		if err != nil || len(buckets) == 0 {
			return deleted, err
		}
		for _, b := range buckets {
			for {
				n, err := storage.Update(ctx, db, func(tx storage.Tx) (int, error) {
					var keys [][]byte
					err := tx.Scan(b, storage.ScanOptions{Limit: batchPairs}, func(k, _ []byte) error {
						keys = append(keys, append([]byte(nil), k...))
						return nil
					})
					if err != nil {
						return 0, err
					}
					for _, k := range keys {
						if err := tx.Delete(b, k); err != nil {
							return 0, err
						}
					}
					return len(keys), nil
				})
				deleted += int64(n)
				if err != nil {
					return deleted, err
				}
				if n < batchPairs {
					break
				}
			}
		}
	}
}
