package bolt_test

import (
	"path/filepath"
	"testing"

	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/bolt"
	"github.com/corebank/corebank/storage/storagetest"
)

// MustOpen opens a bolt DB at path and closes it when the test ends.
func MustOpen(tb testing.TB, path string) *bolt.DB {
	tb.Helper()
	db, err := bolt.Open(path, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = db.Close() })
	return db
}

func TestConformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Backend {
		return MustOpen(t, filepath.Join(t.TempDir(), "db"))
	})
}

// TestConformanceCheckpoints folds the log into the bbolt file after every
// commit round, so that every case also runs across checkpoints: reads that
// merge the overlay with bbolt, Views that outlive a checkpoint. Its
// bbolt pages are 4 KiB, not 16: each fold rewrites a quarter of the bytes,
// and the trees split sooner on the same keys.
func TestConformanceCheckpoints(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Backend {
		db, err := bolt.Open(filepath.Join(t.TempDir(), "db"), &bolt.Options{CheckpointSize: 1, PageSize: 4096})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Close() })
		return db
	})
}

func TestDurable(t *testing.T) {
	storagetest.RunDurable(t, func(t *testing.T, path string) storage.Backend {
		db, err := bolt.Open(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		return db
	})
}
