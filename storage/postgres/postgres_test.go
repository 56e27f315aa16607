package postgres_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/postgres"
	"github.com/corebank/corebank/storage/postgres/pgtest"
	"github.com/corebank/corebank/storage/storagetest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// MustOpen opens a backend on a fresh database, closed when tb ends.
func MustOpen(tb testing.TB, opt *postgres.Options) *postgres.DB {
	tb.Helper()
	db, err := postgres.Open(context.Background(), pgtest.DSN(tb), opt)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = db.Close() })
	return db
}

func TestConformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Backend { return MustOpen(t, nil) })
}

// TestSchema checks that Open creates the table and its version row, that
// a second Open of the same table (a second node, or a restart) keeps the
// data, that two tables in one database are separate stores, and that a
// table migrated by a newer release is refused.
func TestSchema(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	open := func(table string) *postgres.DB {
		t.Helper()
		db, err := postgres.Open(ctx, dsn, &postgres.Options{Table: table})
		if err != nil {
			t.Fatalf("Open(%q): %v", table, err)
		}
		t.Cleanup(func() { _ = db.Close() })
		return db
	}
	put := func(db *postgres.DB, v string) {
		t.Helper()
		if err := db.Update(ctx, func(tx storage.Tx) error { return tx.Put("b", []byte("k"), []byte(v)) }); err != nil {
			t.Fatal(err)
		}
	}
	get := func(db *postgres.DB) string {
		t.Helper()
		v, err := storage.View(ctx, db, func(tx storage.Tx) ([]byte, error) { return tx.Get("b", []byte("k")) })
		if err != nil {
			t.Fatal(err)
		}
		return string(v)
	}
	a := open("")
	put(a, "default")
	b := open("other.kv_b")
	put(b, "other")
	if got := get(open("corebank_kv")); got != "default" {
		t.Errorf("second Open of the default table reads %q, want %q", got, "default")
	}
	if got := get(b); got != "other" {
		t.Errorf("second table reads %q, want %q", got, "other")
	}

	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var version int
	if err := conn.QueryRow(ctx, `SELECT version FROM corebank_kv_schema WHERE id = 1`).Scan(&version); err != nil || version != 2 {
		t.Errorf("schema version row = %d, %v; want 2", version, err)
	}
	// A table of version 1 (no shapes table) is migrated and keeps its rows.
	if _, err := conn.Exec(ctx, `DROP TABLE corebank_kv_scans; UPDATE corebank_kv_schema SET version = 1`); err != nil {
		t.Fatal(err)
	}
	if got := get(open("")); got != "default" {
		t.Errorf("a version-1 table migrated reads %q, want %q", got, "default")
	}
	if err := conn.QueryRow(ctx, `SELECT version FROM corebank_kv_schema WHERE id = 1`).Scan(&version); err != nil || version != 2 {
		t.Errorf("migrated schema version row = %d, %v; want 2", version, err)
	}
	if _, err := conn.Exec(ctx, `UPDATE corebank_kv_schema SET version = 99`); err != nil {
		t.Fatal(err)
	}
	if _, err := postgres.Open(ctx, dsn, nil); !errors.Is(err, postgres.ErrNewerSchema) {
		t.Errorf("Open of a newer schema = %v, want ErrNewerSchema", err)
	}
	for _, bad := range []string{"kv; DROP TABLE x", "1kv", "a.b.c", `"kv"`} {
		if _, err := postgres.Open(ctx, dsn, &postgres.Options{Table: bad}); err == nil {
			t.Errorf("Open with table %q succeeded, want an error", bad)
		}
	}
}
