package ledger_test

import (
	"context"
	"testing"

	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/postgres"
	"github.com/corebank/corebank/storage/postgres/pgtest"
)

// TestMain stops the PostgreSQL cluster that the postgres subtests start.
func TestMain(m *testing.M) { pgtest.Main(m) }

// openPostgres opens a backend on a fresh database of pgtest's throwaway
// cluster; without PostgreSQL installed the test skips with one line.
func openPostgres(tb testing.TB) storage.Backend {
	tb.Helper()
	db, err := postgres.Open(context.Background(), pgtest.DSN(tb), nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}
