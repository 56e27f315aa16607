package storage_test

import (
	"context"
	"errors"
	"testing"

	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/memory"
)

// TestLoadJSON: a record reads back, an absent key is the caller's
// not-found error, and a value that does not decode is ErrCorrupt.
func TestLoadJSON(t *testing.T) {
	db := memory.New()
	ctx := context.Background()
	type rec struct{ N int }
	errMissing := errors.New("missing")
	err := db.Update(ctx, func(tx storage.Tx) error {
		if err := storage.PutJSON(tx, "b", []byte("ok"), rec{7}); err != nil {
			return err
		}
		return tx.Put("b", []byte("bad"), []byte("{"))
	})
	if err != nil {
		t.Fatal(err)
	}
	_ = db.View(ctx, func(tx storage.Tx) error {
		if r, err := storage.LoadJSON[rec](tx, "b", []byte("ok"), errMissing); err != nil || r.N != 7 {
			t.Errorf("ok: %+v %v", r, err)
		}
		if _, err := storage.LoadJSON[rec](tx, "b", []byte("none"), errMissing); err != errMissing {
			t.Errorf("absent: %v, want the not-found error", err)
		}
		if _, err := storage.LoadJSON[rec](tx, "b", []byte("bad"), errMissing); !errors.Is(err, storage.ErrCorrupt) {
			t.Errorf("bad: %v, want ErrCorrupt", err)
		}
		return nil
	})
}
