package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/postgres"
	"github.com/corebank/corebank/storage/postgres/pgtest"
)

// TestViewReturnsBeforeItsEnd: a View that reads one key waits for one
// round trip, its BEGIN and read together, and not for its ROLLBACK,
// which ends the transaction after View returns. Through a proxy of a
// 300 ms round trip it returns within one and a half; waiting for the
// ROLLBACK too took two. The connection is back in the pool for the next
// View, which sees a commit made in between.
func TestViewReturnsBeforeItsEnd(t *testing.T) {
	ctx := context.Background()
	const delay = 150 * time.Millisecond // each way
	db, err := postgres.Open(ctx, pgtest.Proxy(t, pgtest.DSN(t), delay), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	const b = storage.Bucket("view")
	if err := db.Update(ctx, func(tx storage.Tx) error { return tx.Put(b, []byte("k"), []byte("1")) }); err != nil {
		t.Fatal(err)
	}
	get := func() (string, time.Duration) {
		t.Helper()
		start := time.Now()
		var v []byte
		err := db.View(ctx, func(tx storage.Tx) error {
			var err error
			v, err = tx.Get(b, []byte("k"))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return string(v), time.Since(start)
	}
	// The first connects and plans its statement; the timed one gets the
	// same connection, once its ROLLBACK has put it back in the pool.
	get()
	time.Sleep(4 * delay)
	v, took := get()
	if v != "1" || took >= 3*delay {
		t.Errorf("View read %q in %v, want %q in under %v (one round trip and a half)", v, took, "1", 3*delay)
	}
	if err := db.Update(ctx, func(tx storage.Tx) error { return tx.Put(b, []byte("k"), []byte("2")) }); err != nil {
		t.Fatal(err)
	}
	if v, _ := get(); v != "2" {
		t.Errorf("View after a commit read %q, want %q", v, "2")
	}
	// A View whose function fails still ends its transaction.
	boom := errors.New("boom")
	if err := db.View(ctx, func(tx storage.Tx) error {
		if _, err := tx.Get(b, []byte("k")); err != nil {
			return err
		}
		return boom
	}); !errors.Is(err, boom) {
		t.Fatalf("View = %v, want %v", err, boom)
	}
	if v, _ := get(); v != "2" {
		t.Errorf("View after a failed one read %q, want %q", v, "2")
	}
}
