package pgtest_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/corebank/corebank/storage/postgres/pgtest"
)

// TestClusterRestart stops a cluster of the test's own as a crash does
// (pg_ctl stop -m immediate): connections fail while it is down, and
// after Start a committed row is there and the DSN works again.
func TestClusterRestart(t *testing.T) {
	ctx := context.Background()
	cl := pgtest.NewCluster(t)
	dsn := cl.DSN(t)
	exec := func(sql string) error {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		conn, err := pgx.Connect(cctx, dsn)
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		_, err = conn.Exec(cctx, sql)
		return err
	}
	if err := exec("CREATE TABLE t (v int); INSERT INTO t VALUES (42)"); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	cl.Stop(t, "immediate")
	stopped := time.Now()
	if err := exec("SELECT 1"); err == nil {
		t.Fatal("a connection succeeded while the cluster was stopped")
	}
	cl.Start(t)
	t.Logf("stop took %v, start (with recovery) %v", stopped.Sub(began), time.Since(stopped))
	if err := exec("DO $$ BEGIN IF (SELECT v FROM t) <> 42 THEN RAISE 'lost'; END IF; END $$"); err != nil {
		t.Fatalf("after the restart: %v", err)
	}
	if other := cl.DSN(t); other == dsn {
		t.Errorf("DSN gave the same database twice: %s", dsn)
	}
}
