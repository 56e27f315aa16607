package storage_test

import (
	"context"
	"errors"
	"testing"

	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/memory"
)

// rerunning is a backend whose Update runs fn twice, as group commit or a
// serialization retry may.
type rerunning struct{ storage.Backend }

func (r rerunning) Update(ctx context.Context, fn func(storage.Tx) error) error {
	return r.Backend.Update(ctx, func(tx storage.Tx) error {
		if err := fn(tx); err != nil {
			return err
		}
		return fn(tx)
	})
}

func TestUpdateRerun(t *testing.T) {
	ctx := context.Background()
	db := rerunning{memory.New()}
	// The function appends to a slice it creates: a rerun must not double it.
	got, err := storage.Update(ctx, db, func(tx storage.Tx) ([]string, error) {
		var out []string
		out = append(out, "one")
		return out, tx.Put("t", []byte("k"), []byte("v"))
	})
	if err != nil || len(got) != 1 {
		t.Fatalf("Update = %v, %v; want [one], nil", got, err)
	}
	boom := errors.New("boom")
	runs := 0
	n, err := storage.Update(ctx, db, func(storage.Tx) (int, error) {
		runs++
		if runs == 2 {
			return 0, boom
		}
		return 42, nil
	})
	if !errors.Is(err, boom) || n != 0 {
		t.Fatalf("Update whose rerun fails = %d, %v; want 0, boom", n, err)
	}
	v, err := storage.View(ctx, db, func(tx storage.Tx) (string, error) {
		b, err := tx.Get("t", []byte("k"))
		return string(b), err
	})
	if err != nil || v != "v" {
		t.Fatalf("View = %q, %v", v, err)
	}
	if _, err := storage.View(ctx, db, func(tx storage.Tx) (string, error) {
		_, err := tx.Get("t", []byte("absent"))
		return "x", err
	}); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("View error = %v; want ErrNotFound", err)
	}
}
