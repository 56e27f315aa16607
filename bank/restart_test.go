package bank_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/bank"
	"github.com/corebank/corebank/payments"
	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/bolt"
	"github.com/corebank/corebank/storage/memory"
)

// TestRestartResumesLeasedWork: a node stops (its process dies) after
// leasing payout checks. Another node leaves them alone while the lease
// lasts; the node restarted over the same store, under a new NodeID but
// its Instance, takes them back and finishes them on its first due run,
// without waiting for the lease. The dead process, were it to wake,
// changes nothing.
func TestRestartResumesLeasedWork(t *testing.T) {
	backends := map[string]func(t *testing.T) storage.Backend{
		"memory": func(*testing.T) storage.Backend { return memory.New() },
		"bolt": func(t *testing.T) storage.Backend {
			db, err := bolt.Open(filepath.Join(t.TempDir(), "bank.db"), nil)
			if err != nil {
				t.Fatal(err)
			}
			return db
		},
		"postgres": openPostgres,
	}
	onEach(t, backends, testRestartResumesLeasedWork)
}

func testRestartResumesLeasedWork(t *testing.T, db storage.Backend) {
	ctx := context.Background()
	leases := clock.NewMock() // the nodes' shared wall clock; it never reaches the lease's end here
	c, stalled, ids := stalledCluster(t, db, leases)
	root := corebank.As(c.root)
	status := func() []string {
		var out []string
		for _, id := range ids {
			tr, err := c.nodes[1].Payments.GetTransfer(ctx, root, "", id)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, tr.Status)
		}
		return out
	}

	// Node n1 takes the checks (the sandbox rail finishes a payout 5 s
	// after its creation) and stops in the first: its process is dead from
	// here on.
	c.nodes[0].mock.Add(10 * time.Second)
	stalled.stall.Store(true)
	dead := make(chan error, 1)
	go func() {
		_, err := c.nodes[0].Due.RunDue(ctx, c.nodes[0].mock.Now())
		dead <- err
	}()
	<-stalled.entered

	// Node n2 leaves them to n1 until the lease ends.
	c.nodes[1].mock.Set(c.nodes[0].mock.Now())
	leases.Add(29 * time.Second)
	if _, err := c.nodes[1].Due.RunDue(ctx, c.nodes[1].mock.Now()); err != nil {
		t.Fatal(err)
	}
	for i, st := range status() {
		if st != payments.StatusPending {
			t.Fatalf("payout %d under n1's lease: node n2 made it %s", i, st)
		}
	}

	// n1 restarts: a new bank over the same store, with a new NodeID (as
	// a server's is random per start) but n1's Instance, finishes them on
	// its first run, the lease still 1 s from its end.
	mock := clock.NewMock()
	mock.Set(c.nodes[0].mock.Now())
	restarted, err := bank.New(db, bank.Options{SecretKey: make([]byte, 32), Clock: mock, Logger: quiet,
		NodeID: "n1-restarted", Instance: "host-0", LeaseDuration: 30 * time.Second, LeaseClock: leases})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := restarted.RunDue(ctx, mock.Now()); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("the restarted node's first run took %v", took)
	}
	for i, st := range status() {
		if st != payments.StatusSuccessful {
			t.Errorf("payout %d after n1's restart is %s, want %s", i, st, payments.StatusSuccessful)
		}
	}

	// The dead process's late answers change nothing: each check it took
	// was settled and its lease went with it.
	close(stalled.release)
	if err := <-dead; err != nil {
		t.Fatal(err)
	}
	evs, err := c.nodes[0].Ledger.Events(ctx, "", 1000)
	if err != nil {
		t.Fatal(err)
	}
	outflows := 0
	for _, ev := range evs {
		if ev.Type == payments.EventOutflowCompleted {
			outflows++
		}
	}
	if outflows != len(ids) {
		t.Errorf("%d %s events, want %d", outflows, payments.EventOutflowCompleted, len(ids))
	}
	if err := c.balanced(0); err != nil {
		t.Error(err)
	}
}
