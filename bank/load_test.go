package bank_test

import (
	"context"
	"flag"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/corebank/corebank/bank"
	"github.com/corebank/corebank/httpapi"
	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/postgres"
	"github.com/corebank/corebank/storage/postgres/pgtest"
)

var (
	loadDuration = flag.Duration("pgload.duration", 0, "TestPostgresLoad: how long the clients send (0 skips the test; 15s is the figure to quote)")
	loadClients  = flag.Int("pgload.clients", 64, "TestPostgresLoad: clients, each with its own pair of accounts")
	loadDelay    = flag.Duration("pgload.delay", 0, "TestPostgresLoad: latency a proxy adds each way between the bank and PostgreSQL (0: none)")
	loadNodes    = flag.Int("pgload.nodes", 1, "TestPostgresLoad: nodes of the bank, each on its own pool and serving its share of the clients")
)

// TestPostgresLoad measures a bank in process over PostgreSQL, as an
// embedding program runs it: clients each send one-cent book transfers
// over HTTP, one after another, with Idempotency-Keys, while Bank.Run
// settles them; then the test waits until every destination holds what
// was sent. It logs acknowledged/s, settled/s (every accepted transfer
// settled, over the time since the load began), the transfers still
// pending when the load stopped, and how long they took to settle. Unlike
// examples/server's TestPostgresThroughput, the clients share the process
// and no pgbench runs: a quick loop for work on settlement's pace.
func TestPostgresLoad(t *testing.T) {
	if *loadDuration <= 0 {
		t.Skip("a benchmark: give -pgload.duration=15s to run it")
	}
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	if *loadDelay > 0 {
		dsn = pgtest.Proxy(t, dsn, *loadDelay)
	}
	var dbs []*postgres.DB
	open := func() storage.Backend {
		db, err := postgres.Open(ctx, dsn, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Close() })
		dbs = append(dbs, db)
		return db
	}
	stats := func() (s postgres.Stats) {
		for _, db := range dbs {
			st := db.Stats()
			s.Commits += st.Commits
			s.Retries += st.Retries
			s.RoundTrips += st.RoundTrips
		}
		return s
	}
	// As examples/server runs a bank on PostgreSQL: keyed responses stored
	// after their answers, batched.
	o := bank.Options{SecretKey: make([]byte, 32), Logger: quiet, HTTP: httpapi.Options{DeferCompletion: true}}
	db := open()
	nodes := []*httpBank{serveBank(t, db, o)}
	for range *loadNodes - 1 {
		nodes = append(nodes, serveNode(t, open(), o, nodes[0].key))
	}
	b := nodes[0]
	pairs := b.bookPairs(t, *loadClients, 1_000_000_000)
	bg, stop := context.WithCancel(ctx)
	var ran sync.WaitGroup
	for _, n := range nodes {
		ran.Add(1)
		go func() { defer ran.Done(); _ = n.Run(bg) }()
	}
	t.Cleanup(func() { stop(); ran.Wait() })

	before := stats()
	start := time.Now()
	end := start.Add(*loadDuration)
	var sent atomic.Int64
	var wg sync.WaitGroup
	for i, p := range pairs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; time.Now().Before(end); j++ {
				if err := nodes[i%len(nodes)].send(p, fmt.Sprintf("load-%d-%d", i, j)); err != nil {
					t.Error(err)
					return
				}
				sent.Add(1)
			}
		}()
	}
	wg.Wait()
	stopped := time.Now()
	settled := func() int64 {
		var n int64
		err := db.View(ctx, func(tx storage.Tx) error {
			for _, p := range pairs {
				bal, err := b.Ledger.BalanceTx(tx, p.to)
				if err != nil {
					return err
				}
				n += bal.Settled
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	n := sent.Load()
	pending := n - settled()
	for settled() < n {
		if time.Since(stopped) > time.Minute {
			t.Fatalf("%d transfers still pending a minute after the load", n-settled())
		}
		time.Sleep(50 * time.Millisecond)
	}
	drained := time.Now()
	after := stats()
	ack, done := float64(n)/stopped.Sub(start).Seconds(), float64(n)/drained.Sub(start).Seconds()
	t.Logf("%d clients, %d nodes, %s load, proxy delay %v each way: %d transfers, acknowledged %.0f/s, settled %.0f/s (÷ acknowledged %.2f), %d pending at the end, settled %v later; per transfer %.2f commits, %.3f retries, %.1f round trips",
		len(pairs), len(nodes), *loadDuration, *loadDelay, n, ack, done, done/ack, pending, drained.Sub(stopped).Round(time.Millisecond),
		float64(after.Commits-before.Commits)/float64(n), float64(after.Retries-before.Retries)/float64(n), float64(after.RoundTrips-before.RoundTrips)/float64(n))
}
