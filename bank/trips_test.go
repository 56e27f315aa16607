package bank_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/corebank/corebank/bank"
	"github.com/corebank/corebank/httpapi"
	"github.com/corebank/corebank/storage/postgres"
	"github.com/corebank/corebank/storage/postgres/pgtest"
)

// TestTransferRoundTrips counts what one book transfer's request costs on
// PostgreSQL, as examples/server runs it (an Idempotency-Key, the keyed
// answer stored after it): its key's check, its transaction and the
// stored answer's, with no due work running. Every round trip is a wait
// of the network's latency, most with a transaction's locks held, so one
// more is a regression to find here rather than in TestPostgresThroughput
// (11.9 round trips per settled transfer there, settlement and webhooks
// included). The debited entity's gate, read in a round trip of its own,
// went with the payee's reads (12 to 11); the receiving account's record
// now does too, named by the payment detail's payee record instead of
// looked up by its BAN first (11 to 10). Change the count only with a
// change meant to move it.
func TestTransferRoundTrips(t *testing.T) {
	db, err := postgres.Open(context.Background(), pgtest.DSN(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	b := serveBank(t, db, bank.Options{SecretKey: make([]byte, 32), Logger: quiet, HTTP: httpapi.Options{DeferCompletion: true}})
	p := b.bookPairs(t, 1, 1_000_000)[0]
	const trips, commits = 10, 2
	for i := range 3 {
		before := db.Stats()
		if err := b.send(p, fmt.Sprintf("trips-%d", i)); err != nil {
			t.Fatal(err)
		}
		// The keyed answer is stored after the answer, in the next batch.
		deadline := time.Now().Add(5 * time.Second)
		for db.Stats().Commits-before.Commits < commits && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(50 * time.Millisecond)
		after := db.Stats()
		if i == 0 {
			continue // the first plans its statements and learns its shapes
		}
		if got := after.RoundTrips - before.RoundTrips; got != trips {
			t.Errorf("transfer %d made %d round trips, want %d", i, got, trips)
		}
		if got := after.Commits - before.Commits; got != commits {
			t.Errorf("transfer %d made %d commits, want %d", i, got, commits)
		}
	}
}
