package webhooks_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/webhooks"
)

// TestTwoNodesDeliver: two Services over one store (two nodes), each with
// its dispatcher running and Drain called on both while events arrive and
// every fifth request fails: each (webhook, event) is attempted by one
// node at a time, each event is acknowledged exactly once, and the
// webhook's stats count exactly the requests the receiver got.
func TestTwoNodesDeliver(t *testing.T) {
	e := newEnv(t, openBolt(t, boltPath(t)), func(n int) int {
		if n%5 == 0 {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	}, func(o *webhooks.Options) { o.Concurrency = 4; o.Node = "n1"; o.LeaseClock = clock.New() })
	defer e.db.Close()
	o2 := e.opts
	o2.Node = "n2"
	o2.Clock = clock.NewMock()
	o2.Clock.(*clock.Mock).Set(e.clk.Now())
	nodes := []*webhooks.Service{e.svc, webhooks.NewService(e.db, e.outbox, mustSealer(t), &o2)}
	clocks := []*clock.Mock{e.clk, o2.Clock.(*clock.Mock)}
	w := e.mustCreate(t, entityA, events(true))

	runCtx, cancel := context.WithCancel(ctx)
	var run sync.WaitGroup
	for _, n := range nodes {
		run.Add(1)
		go func() {
			defer run.Done()
			_ = n.Run(runCtx)
		}()
	}
	const events = 60
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := nodes[g%2]
			for i := range events / 4 {
				e.outbox.Append(t, "accounts.created", entityA, map[string]string{"i": fmt.Sprint(g, "-", i)})
				n.Wake()
				if _, err := n.Drain(ctx); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// Retries fall due on both nodes' clocks until every event is
	// acknowledged.
	acked := func() map[string]int {
		got := map[string]int{}
		hits := e.recv.Hits()
		for i, h := range hits {
			if (i+1)%5 != 0 {
				got[h.Header.Get(webhooks.HeaderEventID)]++
			}
		}
		return got
	}
	deadline := time.Now().Add(20 * time.Second)
	for len(acked()) < events && time.Now().Before(deadline) {
		for i, n := range nodes {
			clocks[i].Add(time.Minute)
			if _, err := n.Drain(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	cancel()
	run.Wait()

	got := acked()
	if len(got) != events {
		t.Errorf("%d events acknowledged, want %d", len(got), events)
	}
	for id, n := range got {
		if n != 1 {
			t.Errorf("event %s acknowledged %d times", id, n)
		}
	}
	hits := len(e.recv.Hits())
	st, err := e.svc.GetWebhook(ctx, corebank.System(), "", w.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := webhooks.Stats{TotalWebhooksSent: int64(hits), TotalWebhooksSuccessful: events, TotalWebhooksFailed: int64(hits - events)}
	st.Stats.LastWebhookEvent = 0
	if st.Stats != want {
		t.Errorf("stats %+v, want %+v", st.Stats, want)
	}
}

// TestAttemptTakeover: a node that stalls in an attempt past its lease
// loses the delivery to another node, which attempts and records it; the
// first node's late answer is not recorded, so the delivery has one
// attempt and the stats count one (the receiver, at least once, got two).
func TestAttemptTakeover(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	e := newEnv(t, nil, func(n int) int {
		if n == 1 {
			close(entered)
			<-release
		}
		return http.StatusOK
	}, func(o *webhooks.Options) { o.Node = "n1"; o.Lease = 30 * time.Second; o.LeaseClock = clock.NewMock() })
	leases := e.opts.LeaseClock.(*clock.Mock)
	o2 := e.opts
	o2.Node = "n2"
	n2 := webhooks.NewService(e.db, e.outbox, mustSealer(t), &o2)
	w := e.mustCreate(t, entityA, events(true))
	e.outbox.Append(t, "accounts.created", entityA, map[string]string{"id": "a"})

	stalled := make(chan error, 1)
	go func() {
		_, err := e.svc.Drain(ctx)
		stalled <- err
	}()
	<-entered
	if n, err := n2.Drain(ctx); n != 0 || err != nil {
		t.Fatalf("node 2 under node 1's lease: Drain = %d, %v; want 0", n, err)
	}
	leases.Add(30 * time.Second)
	if n, err := n2.Drain(ctx); n != 1 || err != nil {
		t.Fatalf("node 2 after node 1's lease: Drain = %d, %v; want 1", n, err)
	}
	close(release)
	if err := <-stalled; err != nil {
		t.Fatal(err)
	}
	ds, err := e.svc.ListDeliveries(ctx, corebank.System(), webhooks.DeliveryFilter{WebhookID: w.ID}, corebank.ListOptions{})
	if err != nil || len(ds.Items) != 1 {
		t.Fatalf("deliveries = %v, %v", ds, err)
	}
	if d := ds.Items[0]; d.Status != webhooks.DeliverySucceeded || len(d.Attempts) != 1 {
		t.Errorf("delivery %s with %d attempts, want one succeeded", d.Status, len(d.Attempts))
	}
	got, err := e.svc.GetWebhook(ctx, corebank.System(), "", w.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Stats.TotalWebhooksSent != 1 || got.Stats.TotalWebhooksSuccessful != 1 {
		t.Errorf("stats %+v, want one sent and successful", got.Stats)
	}
	if hits := len(e.recv.Hits()); hits != 2 {
		t.Errorf("receiver got %d requests, want 2 (node 1's late one and node 2's)", hits)
	}
}

// TestLeasedAttemptOutlivesJump: node 1 takes an event's first attempt and
// dies before sending it; then the clock jumps past EventRetention, as a
// sandbox advance can. Node 2's next run must send that first attempt (it
// fell due long before the retention sweep) rather than purge the pending
// delivery as expired: the event reaches the receiver.
func TestLeasedAttemptOutlivesJump(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	e := newEnv(t, nil, func(n int) int {
		if n == 1 {
			close(entered)
			<-release // node 1 hangs until the test ends: it is gone
		}
		return http.StatusOK
	}, func(o *webhooks.Options) { o.Node = "n1"; o.Lease = 30 * time.Second })
	o2 := e.opts
	o2.Node = "n2"
	n2 := webhooks.NewService(e.db, e.outbox, mustSealer(t), &o2)
	if _, err := e.svc.CreateWebhook(ctx, corebank.As(entityA), webhooks.NewWebhook{
		EntityID: entityA, URL: e.recv.srv.URL + "/hook", ExpiresIn: ptr(int64(365 * 86400)), EnabledEvents: events(true),
	}); err != nil {
		t.Fatal(err)
	}
	ev := e.outbox.Append(t, "accounts.created", entityA, map[string]string{"id": "a"})

	stalled := make(chan error, 1)
	go func() {
		_, err := e.svc.Drain(ctx)
		stalled <- err
	}()
	<-entered
	defer func() {
		close(release)
		<-stalled
	}()
	e.clk.Add(31 * 24 * time.Hour)
	if _, err := n2.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	got := 0
	for _, h := range e.recv.Hits() {
		if h.Header.Get(webhooks.HeaderEventID) == ev.ID {
			got++
		}
	}
	if got != 2 {
		t.Errorf("the receiver got the event %d times, want 2 (node 1's hung attempt and node 2's)", got)
	}
}
