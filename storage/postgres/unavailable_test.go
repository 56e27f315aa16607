package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/postgres"
	"github.com/corebank/corebank/storage/postgres/pgtest"
)

// TestConnectionsTerminated ends the store's connections from the server
// side (pg_terminate_backend, SQLSTATE 57P01 as at a shutdown): the View
// and the Update that meet a dead connection fail with
// storage.ErrUnavailable, the Update's also with ErrOutcomeUnknown (its
// batch carried the COMMIT), and the pool's next connections work without
// anything done.
func TestConnectionsTerminated(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	db, err := postgres.Open(ctx, dsn, &postgres.Options{PoolSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	put := func(v string) error {
		return db.Update(ctx, func(tx storage.Tx) error { return tx.Put("b", []byte("k"), []byte(v)) })
	}
	get := func() (string, error) {
		v, err := storage.View(ctx, db, func(tx storage.Tx) ([]byte, error) { return tx.Get("b", []byte("k")) })
		return string(v), err
	}
	if err := put("1"); err != nil {
		t.Fatal(err)
	}
	terminate := func() {
		t.Helper()
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		// A View's ROLLBACK ends it after View returns: wait until the
		// pool's backend is idle, so that the connection the next call
		// takes from the pool is the one terminated here.
		for deadline := time.Now().Add(10 * time.Second); ; {
			var busy int
			if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
				WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend' AND state <> 'idle'`).Scan(&busy); err != nil {
				t.Fatal(err)
			}
			if busy == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d of the pool's backends still busy after 10 s", busy)
			}
			time.Sleep(time.Millisecond)
		}
		// At least the pool's one: a backend terminated before may still
		// be listed while it exits, and terminating it again is harmless.
		var n int
		if err := conn.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
			WHERE datname = current_database() AND pid <> pg_backend_pid()`).Scan(&n); err != nil || n < 1 {
			t.Fatalf("terminated %d backends: %v; want the pool's", n, err)
		}
	}

	terminate()
	if _, err := get(); !errors.Is(err, storage.ErrUnavailable) {
		t.Errorf("View on a terminated connection: %v, want storage.ErrUnavailable", err)
	}
	if v, err := get(); err != nil || v != "1" {
		t.Fatalf("View after: %q, %v; want 1 on a new connection", v, err)
	}

	terminate()
	// The Update's one round trip (BEGIN, the write, COMMIT) either goes
	// out before the terminated backend's socket closes, and its answer
	// never comes (the outcome is unknown), or fails to go out at all
	// once it has closed (pgx: safe to retry, nothing sent), which is a
	// race with the backend's exit. TestOutcome covers the marking.
	err = put("2")
	if !errors.Is(err, storage.ErrUnavailable) || errors.Is(err, storage.ErrOutcomeUnknown) == pgconn.SafeToRetry(err) {
		t.Errorf("Update on a terminated connection: %v, want storage.ErrUnavailable, and ErrOutcomeUnknown unless nothing was sent", err)
	}
	if err := put("3"); err != nil {
		t.Fatalf("Update after: %v", err)
	}
	if v, err := get(); err != nil || v != "3" {
		t.Fatalf("View after: %q, %v; want 3", v, err)
	}
}

// TestStatementTimeout: an Update whose statement passes the operator's
// statement_timeout (here waiting for a key another connection holds)
// fails with storage.ErrUnavailable, which a server answers 503 with
// Retry-After, not as a fault of the request; it rolled back, so it is
// not ErrOutcomeUnknown, and the same Update succeeds once the key is
// free.
func TestStatementTimeout(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	db := openAt(t, dsn, &postgres.Options{PoolSize: 1, StatementTimeout: 200 * time.Millisecond})
	otx, err := connect(t, dsn).Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := otx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, postgres.KeyLock(db, "b", []byte("k"))); err != nil {
		t.Fatal(err)
	}
	bump := func(tx storage.Tx) error {
		v, err := tx.Get("b", []byte("k"))
		if err != nil && !errors.Is(err, storage.ErrNotFound) {
			return err
		}
		return tx.Put("b", []byte("k"), append(v, 'x'))
	}
	err = db.Update(ctx, bump)
	if !errors.Is(err, storage.ErrUnavailable) || errors.Is(err, storage.ErrOutcomeUnknown) {
		t.Fatalf("Update past the statement timeout: %v; want storage.ErrUnavailable without ErrOutcomeUnknown", err)
	}
	if err := otx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := db.Update(ctx, bump); err != nil {
		t.Fatalf("Update once the key is free: %v", err)
	}
	v, err := storage.View(ctx, db, func(tx storage.Tx) ([]byte, error) { return tx.Get("b", []byte("k")) })
	if err != nil || string(v) != "x" {
		t.Errorf("stored %q, %v; want the one Update that committed", v, err)
	}
}
