package storage_test

import (
	"context"
	"errors"
	"testing"

	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/memory"
)

// TestBucketsNoLister: a Tx that does not implement BucketLister (here a
// wrapper that hides it) gets ErrNoBucketList, not an empty list that a
// backup would take for an empty store.
func TestBucketsNoLister(t *testing.T) {
	db := memory.New()
	ctx := context.Background()
	if err := db.Update(ctx, func(tx storage.Tx) error { return tx.Put("b", []byte("k"), []byte("v")) }); err != nil {
		t.Fatal(err)
	}
	err := db.View(ctx, func(tx storage.Tx) error {
		got, err := storage.Buckets(struct{ storage.Tx }{tx})
		if !errors.Is(err, storage.ErrNoBucketList) || got != nil {
			t.Errorf("Buckets of a wrapped Tx = %q, %v; want ErrNoBucketList", got, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
