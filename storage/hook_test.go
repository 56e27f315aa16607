package storage_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/memory"
	"github.com/corebank/corebank/storage/storagetest"
)

func TestWithCommitHook(t *testing.T) {
	ctx := context.Background()
	const b = storage.Bucket("test.hook")

	t.Run("OK", func(t *testing.T) {
		var calls atomic.Int64
		db := storage.WithCommitHook(memory.New(), func() { calls.Add(1) })
		defer db.Close()
		var seen int64 = -1
		err := db.Update(ctx, func(tx storage.Tx) error {
			seen = calls.Load() // the hook must not have run before the commit
			return tx.Put(b, []byte("k"), []byte("v"))
		})
		if err != nil {
			t.Fatal(err)
		}
		if seen != 0 {
			t.Errorf("hook ran %d times before the commit, want 0", seen)
		}
		if got := calls.Load(); got != 1 {
			t.Errorf("hook calls after one commit = %d, want 1", got)
		}
		// The committed value is visible when the hook runs.
		var visible bool
		db2 := storage.WithCommitHook(memory.New(), nil)
		defer db2.Close()
		db3 := storage.WithCommitHook(db2, func() {
			_ = db2.View(ctx, func(tx storage.Tx) error {
				_, err := tx.Get(b, []byte("k"))
				visible = err == nil
				return nil
			})
		})
		if err := db3.Update(ctx, func(tx storage.Tx) error { return tx.Put(b, []byte("k"), []byte("v")) }); err != nil {
			t.Fatal(err)
		}
		if !visible {
			t.Error("the hook ran before the write was visible to a View")
		}
	})

	t.Run("ErrNoCallOnFailure", func(t *testing.T) {
		var calls atomic.Int64
		db := storage.WithCommitHook(memory.New(), func() { calls.Add(1) })
		defer db.Close()
		boom := errors.New("boom")
		if err := db.Update(ctx, func(tx storage.Tx) error { return boom }); !errors.Is(err, boom) {
			t.Fatalf("Update error = %v, want %v", err, boom)
		}
		if err := db.View(ctx, func(tx storage.Tx) error { return nil }); err != nil {
			t.Fatal(err)
		}
		if got := calls.Load(); got != 0 {
			t.Errorf("hook calls = %d, want 0 (failed Update and View)", got)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		if err := db.Update(ctx, func(tx storage.Tx) error { return nil }); !errors.Is(err, storage.ErrClosed) {
			t.Errorf("Update after Close = %v, want ErrClosed", err)
		}
		if got := calls.Load(); got != 0 {
			t.Errorf("hook calls after Close = %d, want 0", got)
		}
	})

	t.Run("Conformance", func(t *testing.T) {
		storagetest.Run(t, func(t *testing.T) storage.Backend {
			return storage.WithCommitHook(memory.New(), func() {})
		})
	})
}

// TestWithUpdateHook: fn sees every Update, committed or failed, with its
// duration and error, and never a View.
func TestWithUpdateHook(t *testing.T) {
	ctx := context.Background()
	const b = storage.Bucket("test.hook")
	type call struct {
		positive bool
		err      error
	}
	var calls []call
	db := storage.WithUpdateHook(memory.New(), func(took time.Duration, err error) {
		calls = append(calls, call{took > 0, err})
	})
	defer db.Close()
	boom := errors.New("boom")
	if err := db.Update(ctx, func(tx storage.Tx) error { return tx.Put(b, []byte("k"), []byte("v")) }); err != nil {
		t.Fatal(err)
	}
	if err := db.Update(ctx, func(tx storage.Tx) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("Update: %v, want boom", err)
	}
	if err := db.View(ctx, func(tx storage.Tx) error { _, err := tx.Get(b, []byte("k")); return err }); err != nil {
		t.Fatal(err)
	}
	want := []call{{true, nil}, {true, boom}}
	if len(calls) != len(want) || calls[0] != want[0] || calls[1] != want[1] {
		t.Errorf("calls %v, want %v", calls, want)
	}
}
