package storage_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/memory"
)

func schedule(t *testing.T, db storage.Backend, kind string, at int64, ids ...string) {
	t.Helper()
	err := db.Update(context.Background(), func(tx storage.Tx) error {
		for _, id := range ids {
			if err := storage.Schedule(tx, kind, at, id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestDueOrder runs two kinds: kinds run in registration order, items in
// time order, only what is due, each once, in batches.
func TestDueOrder(t *testing.T) {
	ctx := context.Background()
	db := memory.New()
	clk := clock.NewMock()
	clk.Set(time.UnixMilli(10_000))
	var log []string
	job := func(kind string) storage.DueJob {
		return storage.DueJob{Kind: kind, Tx: func(tx storage.Tx, now time.Time, it storage.DueItem) error {
			log = append(log, fmt.Sprintf("%s %d %s", kind, it.At, it.ID))
			return tx.Put("test.done", []byte(kind+"/"+it.ID), nil)
		}}
	}
	// b is scheduled first but registered second.
	schedule(t, db, "b", 5, "b1")
	schedule(t, db, "a", 7, "a2")
	schedule(t, db, "a", 3, "a1")
	schedule(t, db, "a", 9_999_999, "later")
	schedule(t, db, "a", 3, "a0", "a1") // a1 twice is one item
	d := storage.NewDue(db, clk, 2, job("a"), job("b"))
	if diff := cmp.Diff([]string{"a", "b"}, d.Kinds()); diff != "" {
		t.Fatalf("Kinds (-want +got)\n%s", diff)
	}
	n, err := d.RunDue(ctx, time.UnixMilli(10))
	if err != nil || n != 4 {
		t.Fatalf("RunDue = %d, %v; want 4, nil", n, err)
	}
	want := []string{"a 3 a0", "a 3 a1", "a 7 a2", "b 5 b1"}
	if diff := cmp.Diff(want, log); diff != "" {
		t.Fatalf("(-want +got)\n%s", diff)
	}
	log = nil
	if n, err := d.RunDue(ctx, time.UnixMilli(10)); n != 0 || err != nil || log != nil {
		t.Fatalf("second RunDue = %d, %v, ran %v; want nothing", n, err, log)
	}
	if n, err := d.RunDue(ctx, time.UnixMilli(9_999_999)); n != 1 || err != nil {
		t.Fatalf("RunDue at the last item = %d, %v; want 1", n, err)
	}
}

// TestDueWhere: RunDueWhere runs the kinds keep accepts, in order, and
// leaves the others' items due.
func TestDueWhere(t *testing.T) {
	ctx := context.Background()
	db := memory.New()
	clk := clock.NewMock()
	var log []string
	job := func(kind string) storage.DueJob {
		return storage.DueJob{Kind: kind, Tx: func(tx storage.Tx, now time.Time, it storage.DueItem) error {
			log = append(log, kind+" "+it.ID)
			return nil
		}}
	}
	schedule(t, db, "a", 1, "a1")
	schedule(t, db, "b", 1, "b1")
	schedule(t, db, "c", 1, "c1")
	d := storage.NewDue(db, clk, 0, job("a"), job("b"), job("c"))
	notB := func(j storage.DueJob) bool { return j.Kind != "b" }
	if n, err := d.RunDueWhere(ctx, time.UnixMilli(1), notB); n != 2 || err != nil {
		t.Fatalf("RunDueWhere = %d, %v; want 2", n, err)
	}
	if n, err := d.RunDue(ctx, time.UnixMilli(1)); n != 1 || err != nil {
		t.Fatalf("RunDue = %d, %v; want b's 1", n, err)
	}
	if diff := cmp.Diff([]string{"a a1", "c c1", "b b1"}, log); diff != "" {
		t.Errorf("ran (-want +got)\n%s", diff)
	}
}

// TestDueReschedule: an item rescheduled later but still due runs again in
// the same call; one rescheduled past asOf waits.
func TestDueReschedule(t *testing.T) {
	ctx := context.Background()
	db := memory.New()
	runs := 0
	d := storage.NewDue(db, clock.NewMock(), 0, storage.DueJob{Kind: "poll",
		Tx: func(tx storage.Tx, _ time.Time, it storage.DueItem) error {
			runs++
			return storage.Schedule(tx, "poll", it.At+10, it.ID)
		}})
	schedule(t, db, "poll", 0, "x")
	if n, err := d.RunDue(ctx, time.UnixMilli(35)); n != 4 || err != nil || runs != 4 {
		t.Fatalf("RunDue = %d, %v after %d runs; want 4 (at 0, 10, 20, 30)", n, err, runs)
	}
}

// TestDueFailure: a failing kind keeps its items and does not stop the
// next kind; the transaction that failed changed nothing.
func TestDueFailure(t *testing.T) {
	ctx := context.Background()
	db := memory.New()
	boom := errors.New("boom")
	fail := true
	d := storage.NewDue(db, clock.NewMock(), 0,
		storage.DueJob{Kind: "bad", Tx: func(tx storage.Tx, _ time.Time, it storage.DueItem) error {
			if err := tx.Put("test.side", []byte(it.ID), nil); err != nil {
				return err
			}
			if fail {
				return boom
			}
			return nil
		}},
		storage.DueJob{Kind: "good", Tx: func(storage.Tx, time.Time, storage.DueItem) error { return nil }})
	schedule(t, db, "bad", 1, "x")
	schedule(t, db, "good", 1, "y")
	n, err := d.RunDue(ctx, time.UnixMilli(1))
	if !errors.Is(err, boom) || n != 1 {
		t.Fatalf("RunDue = %d, %v; want 1 and boom", n, err)
	}
	ok, err := storage.View(ctx, db, func(tx storage.Tx) (bool, error) { return storage.Exists(tx, "test.side", []byte("x")) })
	if err != nil || ok {
		t.Fatalf("the failed transaction left a write (%v, %v)", ok, err)
	}
	fail = false
	if n, err := d.RunDue(ctx, time.UnixMilli(1)); n != 1 || err != nil {
		t.Fatalf("retry RunDue = %d, %v; want 1, nil", n, err)
	}
}

// TestDueBatch: a Batch job sees due items outside a transaction, settles
// what it unschedules, and is not offered what it left in the same call.
func TestDueBatch(t *testing.T) {
	ctx := context.Background()
	db := memory.New()
	var seen [][]string
	d := storage.NewDue(db, clock.NewMock(), 2, storage.DueJob{Kind: "send",
		Batch: func(ctx context.Context, _ time.Time, items []storage.DueItem) (int, error) {
			var ids []string
			for _, it := range items {
				ids = append(ids, it.ID)
			}
			seen = append(seen, ids)
			// Settle everything but "keep".
			return storage.Update(ctx, db, func(tx storage.Tx) (int, error) {
				n := 0
				for _, it := range items {
					if it.ID == "keep" {
						continue
					}
					if err := storage.Unschedule(tx, "send", it.At, it.ID); err != nil {
						return 0, err
					}
					n++
				}
				return n, nil
			})
		}})
	schedule(t, db, "send", 1, "a", "b", "keep")
	schedule(t, db, "send", 2, "c")
	n, err := d.RunDue(ctx, time.UnixMilli(5))
	if err != nil || n != 3 {
		t.Fatalf("RunDue = %d, %v; want 3", n, err)
	}
	if diff := cmp.Diff([][]string{{"a", "b"}, {"keep", "c"}}, seen); diff != "" {
		t.Fatalf("batches (-want +got)\n%s", diff)
	}
	seen = nil
	if n, _ := d.RunDue(ctx, time.UnixMilli(5)); n != 0 || len(seen) != 1 || seen[0][0] != "keep" {
		t.Fatalf("next RunDue = %d with %v; want the kept item offered again", n, seen)
	}
}

func TestDueAddPanics(t *testing.T) {
	for name, jobs := range map[string][]storage.DueJob{
		"no handler": {{Kind: "x"}},
		"two":        {{Kind: "x", Tx: func(storage.Tx, time.Time, storage.DueItem) error { return nil }}, {Kind: "x", Tx: func(storage.Tx, time.Time, storage.DueItem) error { return nil }}},
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("Add did not panic")
				}
			}()
			storage.NewDue(memory.New(), nil, 0, jobs...)
		})
	}
}

// TestDuePrepare: a kind's Prepare runs before its items are read, so work
// it schedules (as the webhooks' outbox reader does) runs in the same call,
// and after the kinds registered before it.
func TestDuePrepare(t *testing.T) {
	ctx := context.Background()
	db := memory.New()
	var log []string
	d := storage.NewDue(db, clock.NewMock(), 0,
		storage.DueJob{Kind: "first", Tx: func(tx storage.Tx, _ time.Time, it storage.DueItem) error {
			log = append(log, "first "+it.ID)
			return tx.Put("test.outbox", []byte(it.ID), nil)
		}},
		storage.DueJob{Kind: "send",
			Prepare: func(ctx context.Context) error {
				log = append(log, "prepare")
				return db.Update(ctx, func(tx storage.Tx) error {
					return tx.Scan("test.outbox", storage.ScanOptions{}, func(k, _ []byte) error {
						if err := tx.Delete("test.outbox", k); err != nil {
							return err
						}
						return storage.Schedule(tx, "send", 0, string(k))
					})
				})
			},
			Batch: func(ctx context.Context, _ time.Time, items []storage.DueItem) (int, error) {
				for _, it := range items {
					log = append(log, "send "+it.ID)
				}
				return storage.Update(ctx, db, func(tx storage.Tx) (int, error) {
					for _, it := range items {
						if err := storage.Unschedule(tx, "send", it.At, it.ID); err != nil {
							return 0, err
						}
					}
					return len(items), nil
				})
			}})
	schedule(t, db, "first", 1, "e1")
	if n, err := d.RunDue(ctx, time.UnixMilli(1)); n != 2 || err != nil {
		t.Fatalf("RunDue = %d, %v; want 2, nil", n, err)
	}
	if diff := cmp.Diff([]string{"first e1", "prepare", "send e1"}, log); diff != "" {
		t.Fatalf("(-want +got)\n%s", diff)
	}
}

// TestDueLag: OnLag hears, once per kind per RunDue, how late the kind's
// oldest due item was, and 0 for a kind with nothing due.
func TestDueLag(t *testing.T) {
	ctx := context.Background()
	db := memory.New()
	clk := clock.NewMock()
	clk.Set(time.UnixMilli(10_000))
	got := map[string]time.Duration{}
	calls := 0
	d := storage.NewDue(db, clk, 1,
		storage.DueJob{Kind: "a", Tx: func(storage.Tx, time.Time, storage.DueItem) error { return nil }},
		storage.DueJob{Kind: "b", Batch: func(ctx context.Context, _ time.Time, items []storage.DueItem) (int, error) {
			return len(items), db.Update(ctx, func(tx storage.Tx) error {
				for _, it := range items {
					if err := storage.Unschedule(tx, "b", it.At, it.ID); err != nil {
						return err
					}
				}
				return nil
			})
		}},
		storage.DueJob{Kind: "c", Tx: func(storage.Tx, time.Time, storage.DueItem) error { return nil }},
	).OnLag(func(kind string, lag time.Duration) { got[kind] = lag; calls++ })
	schedule(t, db, "a", 4_000, "a1")
	schedule(t, db, "a", 7_000, "a2")
	schedule(t, db, "b", 9_500, "b1")
	schedule(t, db, "c", 20_000, "c1") // not due yet
	if _, err := d.RunDue(ctx, clk.Now()); err != nil {
		t.Fatal(err)
	}
	want := map[string]time.Duration{"a": 6 * time.Second, "b": 500 * time.Millisecond, "c": 0}
	if diff := cmp.Diff(want, got); diff != "" || calls != 3 {
		t.Errorf("lags after %d calls (-want +got):\n%s", calls, diff)
	}
	clear(got)
	if _, err := d.RunDue(ctx, clk.Now()); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]time.Duration{"a": 0, "b": 0, "c": 0}, got); diff != "" {
		t.Errorf("lags with nothing due (-want +got):\n%s", diff)
	}
}

// TestDueLeases: two runners (nodes) over one store share a Batch kind.
// An item one node leased is not handed to the other until the lease ends;
// then the other takes it over, and the first, waking late, can no longer
// settle it.
func TestDueLeases(t *testing.T) {
	ctx := context.Background()
	db := memory.New()
	clk := clock.NewMock()
	clk.Set(time.UnixMilli(1_000_000))
	// settle unschedules items in a transaction that checks the lease, as
	// a Batch job must; hold makes a node keep what it is handed.
	got := map[string][]string{}
	settled := map[string][]string{}
	node := func(name string, hold bool) *storage.Due {
		return storage.NewDue(db, clk, 0, storage.DueJob{Kind: "send", Claim: 2,
			Batch: func(ctx context.Context, _ time.Time, items []storage.DueItem) (int, error) {
				for _, it := range items {
					got[name] = append(got[name], it.ID)
					if it.Lease.Node != name {
						t.Errorf("%s handed %s under lease %+v", name, it.ID, it.Lease)
					}
				}
				if hold {
					return 0, nil
				}
				return settle(ctx, t, db, name, items, settled)
			}}).Lease(name, 10*time.Second)
	}
	schedule(t, db, "send", 1, "a", "b", "c")
	stalled := node("n1", true)
	if _, err := stalled.RunDue(ctx, clk.Now()); err != nil {
		t.Fatal(err)
	}
	// n1 holds all three: n2 finds nothing to do until the leases end.
	n2 := node("n2", false)
	if n, err := n2.RunDue(ctx, clk.Now()); n != 0 || err != nil {
		t.Fatalf("n2 RunDue under n1's leases = %d, %v; want 0", n, err)
	}
	clk.Add(10 * time.Second)
	if n, err := n2.RunDue(ctx, clk.Now()); n != 3 || err != nil {
		t.Fatalf("n2 RunDue after the leases = %d, %v; want 3", n, err)
	}
	// n1 wakes and tries to settle what it was handed: nothing is left to it.
	late := []storage.DueItem{{At: 1, ID: "a", Lease: storage.DueLease{Node: "n1"}}}
	if n, err := settle(ctx, t, db, "n1", late, settled); n != 0 || err != nil {
		t.Fatalf("n1's late settle = %d, %v; want 0", n, err)
	}
	want := map[string][]string{"n1": {"a", "b", "c"}, "n2": {"a", "b", "c"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("handed (-want +got)\n%s", diff)
	}
	if diff := cmp.Diff(map[string][]string{"n2": {"a", "b", "c"}}, settled); diff != "" {
		t.Errorf("settled (-want +got)\n%s", diff)
	}
}

// settleLeased unschedules, in one transaction, the "send" items whose
// lease the runner still holds, and returns their IDs.
func settleLeased(ctx context.Context, db storage.Backend, items []storage.DueItem) ([]string, error) {
	return storage.Update(ctx, db, func(tx storage.Tx) ([]string, error) {
		var done []string
		for _, it := range items {
			if err := storage.CheckLease(tx, "send", it); errors.Is(err, storage.ErrLeaseLost) {
				continue
			} else if err != nil {
				return nil, err
			}
			if err := storage.Unschedule(tx, "send", it.At, it.ID); err != nil {
				return nil, err
			}
			done = append(done, it.ID)
		}
		return done, nil
	})
}

func settle(ctx context.Context, t *testing.T, db storage.Backend, name string, items []storage.DueItem, settled map[string][]string) (int, error) {
	done, err := settleLeased(ctx, db, items)
	if len(done) > 0 {
		settled[name] = append(settled[name], done...)
	}
	return len(done), err
}

// TestDueRelease: items a Batch job gives back are taken by another node at
// once, without waiting for the lease to end.
func TestDueRelease(t *testing.T) {
	ctx := context.Background()
	db := memory.New()
	clk := clock.NewMock()
	var got []string
	job := func(release bool) storage.DueJob {
		return storage.DueJob{Kind: "send", Batch: func(ctx context.Context, _ time.Time, items []storage.DueItem) (int, error) {
			for _, it := range items {
				got = append(got, it.Lease.Node+" "+it.ID)
			}
			if release {
				return 0, storage.Release(ctx, db, "send", items)
			}
			return 0, nil
		}}
	}
	schedule(t, db, "send", 0, "a")
	if _, err := storage.NewDue(db, clk, 0, job(true)).Lease("n1", 0).RunDue(ctx, clk.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := storage.NewDue(db, clk, 0, job(false)).Lease("n2", 0).RunDue(ctx, clk.Now()); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"n1 a", "n2 a"}, got); diff != "" {
		t.Errorf("handed (-want +got)\n%s", diff)
	}
}

// TestDueWorkers: runners with several workers each, several runners (nodes)
// and several RunDue calls per runner at once hand every item out once and
// settle it once; a runner works on up to Workers claims at once, and
// never more.
func TestDueWorkers(t *testing.T) {
	ctx := context.Background()
	db := memory.New()
	clk := clock.NewMock()
	clk.Set(time.UnixMilli(1_000_000))
	const items = 600
	ids := make([]string, items)
	for i := range ids {
		ids[i] = fmt.Sprintf("i%04d", i)
	}
	schedule(t, db, "send", 1, ids...)

	var mu sync.Mutex
	handed := map[string]int{}  // item -> times handed
	settled := map[string]int{} // item -> times settled
	var peak [3]atomic.Int64
	nodes := make([]*storage.Due, 3)
	for n := range nodes {
		var inflight atomic.Int64
		name := fmt.Sprintf("n%d", n+1)
		nodes[n] = storage.NewDue(db, clk, 0, storage.DueJob{Kind: "send", Claim: 8,
			Batch: func(ctx context.Context, _ time.Time, items []storage.DueItem) (int, error) {
				now := inflight.Add(1)
				defer inflight.Add(-1)
				for p := peak[n].Load(); now > p && !peak[n].CompareAndSwap(p, now); p = peak[n].Load() {
				}
				time.Sleep(time.Millisecond) // a provider's answer
				done, err := settleLeased(ctx, db, items)
				mu.Lock()
				for _, id := range done {
					settled[id]++
				}
				mu.Unlock()
				return len(done), err
			}}).Lease(name, time.Minute).Workers(4).OnRun(func(_ string, it storage.DueItem) {
			mu.Lock()
			handed[it.ID]++
			mu.Unlock()
		})
	}
	var wg sync.WaitGroup
	var total atomic.Int64
	for _, d := range nodes {
		for range 2 { // two RunDue calls of one runner at once
			wg.Add(1)
			go func() {
				defer wg.Done()
				n, err := d.RunDue(ctx, clk.Now())
				if err != nil {
					t.Error(err)
				}
				total.Add(int64(n))
			}()
		}
	}
	wg.Wait()
	if total.Load() != items {
		t.Errorf("RunDue calls settled %d items, want %d", total.Load(), items)
	}
	for _, id := range ids {
		if handed[id] != 1 || settled[id] != 1 {
			t.Errorf("item %s handed %d times, settled %d times; want once", id, handed[id], settled[id])
		}
	}
	for n := range peak {
		// Two RunDue calls of one runner: up to twice Workers at once.
		if p := peak[n].Load(); p > 8 {
			t.Errorf("node %d worked on %d claims at once, want at most 8", n+1, p)
		}
	}
	if left, err := storage.View(ctx, db, func(tx storage.Tx) (int, error) {
		n := 0
		for _, b := range []storage.Bucket{storage.BucketDue, storage.BucketDueLease} {
			if err := tx.Scan(b, storage.ScanOptions{}, func(_, _ []byte) error { n++; return nil }); err != nil {
				return 0, err
			}
		}
		return n, nil
	}); left != 0 || err != nil {
		t.Errorf("%d items or leases left (%v)", left, err)
	}
}

// TestDueWorkersOrder: with several workers a runner still claims items
// oldest first, works on at most Workers claims at once (and on at most a
// job's own Workers), and finishes a kind before the next kind starts; a
// job's error stops further claims and is returned once the claims in
// flight end.
func TestDueWorkersOrder(t *testing.T) {
	ctx := context.Background()
	db := memory.New()
	clk := clock.NewMock()
	clk.Set(time.UnixMilli(1_000_000))
	for i := range 40 {
		schedule(t, db, "a", int64(40-i), fmt.Sprintf("a%02d", i)) // a39 is the oldest
		schedule(t, db, "b", int64(i), fmt.Sprintf("b%02d", i))
	}
	var mu sync.Mutex
	var claims []string // the first item of each claim, in claim order
	var log []string    // "start kind" and "end kind", in time order
	inflight := map[string]int{}
	peak := map[string]int{}
	job := func(kind string, workers int) storage.DueJob {
		return storage.DueJob{Kind: kind, Claim: 4, Workers: workers,
			Batch: func(ctx context.Context, _ time.Time, items []storage.DueItem) (int, error) {
				mu.Lock()
				log = append(log, "start "+kind)
				inflight[kind]++
				peak[kind] = max(peak[kind], inflight[kind])
				mu.Unlock()
				time.Sleep(2 * time.Millisecond)
				mu.Lock()
				log = append(log, "end "+kind)
				inflight[kind]--
				mu.Unlock()
				return len(items), storage.Release(ctx, db, kind, items)
			}}
	}
	d := storage.NewDue(db, clk, 0, job("a", 0), job("b", 2)).Workers(3).OnRun(func(kind string, it storage.DueItem) {
		mu.Lock()
		claims = append(claims, fmt.Sprintf("%s %02d", kind, it.At))
		mu.Unlock()
	})
	if n, err := d.RunDue(ctx, clk.Now()); n != 80 || err != nil {
		t.Fatalf("RunDue = %d, %v; want 80", n, err)
	}
	if !slices.IsSorted(claims) || len(claims) != 80 {
		t.Errorf("items handed out of order: %v", claims)
	}
	if peak["a"] != 3 || peak["b"] != 2 {
		t.Errorf("claims at once: %v; want a: 3 (the runner's Workers), b: 2 (the job's)", peak)
	}
	if firstB := slices.Index(log, "start b"); firstB < 0 || slices.Contains(log[firstB:], "end a") {
		t.Errorf("kind b started before kind a ended: %v", log)
	}

	// A failing claim: no claim starts after it, and its error is returned.
	boom := errors.New("boom")
	var calls atomic.Int64
	failing := storage.NewDue(db, clk, 0, storage.DueJob{Kind: "a", Claim: 4,
		Batch: func(ctx context.Context, _ time.Time, items []storage.DueItem) (int, error) {
			if calls.Add(1) == 2 {
				return 0, boom
			}
			time.Sleep(5 * time.Millisecond)
			return 0, storage.Release(ctx, db, "a", items)
		}}).Workers(3)
	if _, err := failing.RunDue(ctx, clk.Now()); !errors.Is(err, boom) {
		t.Fatalf("RunDue with a failing claim = %v, want boom", err)
	}
	if c := calls.Load(); c > 4 {
		t.Errorf("%d claims ran, want at most 4: the failing one stops the claims", c)
	}
}

// TestDueGroups: items scheduled in groups (ScheduleGroup). The shares a
// runner works on at once never hold items of one group: a claim keeps a
// group's items in one share, and passes over a group that a share in
// flight holds, until the walk goes round again. Each group's items are
// handed in their order, no more shares are cut than claim-sized shares
// would be, every item is handed once within one RunDue, and items of no
// group are cut in order.
func TestDueGroups(t *testing.T) {
	ctx := context.Background()
	db := memory.New()
	clk := clock.NewMock()
	clk.Set(time.UnixMilli(1_000_000))
	// 60 items of 7 groups (g0..g5, and none), interleaved in time as the
	// transfers of busy accounts are.
	group := map[string]string{}
	err := db.Update(ctx, func(tx storage.Tx) error {
		for i := range 60 {
			id := fmt.Sprintf("i%02d", i)
			if i%7 != 6 {
				group[id] = fmt.Sprintf("g%d", i%7)
			}
			if err := storage.ScheduleGroup(tx, "send", int64(i+1), id, group[id]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var shares [][]string
	holding := map[string]int{} // group -> shares in flight holding it
	job := storage.DueJob{Kind: "send", Claim: 8,
		Batch: func(ctx context.Context, _ time.Time, items []storage.DueItem) (int, error) {
			var ids []string
			mu.Lock()
			for _, it := range items {
				ids = append(ids, it.ID)
				if it.Group != group[it.ID] {
					t.Errorf("item %s comes in group %q, scheduled in %q", it.ID, it.Group, group[it.ID])
				}
			}
			shares = append(shares, ids)
			mine := map[string]bool{}
			for _, it := range items {
				if it.Group != "" && !mine[it.Group] {
					mine[it.Group] = true
					if holding[it.Group]++; holding[it.Group] > 1 {
						t.Errorf("share %v holds group %s while another share does", ids, it.Group)
					}
				}
			}
			mu.Unlock()
			time.Sleep(time.Millisecond) // let the other shares overlap
			mu.Lock()
			for g := range mine {
				holding[g]--
			}
			mu.Unlock()
			done, err := settleLeased(ctx, db, items)
			return len(done), err
		}}
	d := storage.NewDue(db, clk, 0, job).Lease("n1", time.Minute).Workers(4)
	if n, err := d.RunDue(ctx, clk.Now()); n != 60 || err != nil {
		t.Fatalf("RunDue = %d, %v; want 60", n, err)
	}
	handed := map[string]int{}
	last := map[string]string{} // group -> the last item handed
	for _, sh := range shares {
		if len(sh) > 16 {
			t.Errorf("share %v: more than a claim's worth of one group", sh)
		}
		for _, id := range sh {
			handed[id]++
			if g := group[id]; g != "" {
				if last[g] > id {
					t.Errorf("group %s: %s handed after %s", g, id, last[g])
				}
				last[g] = id
			}
		}
	}
	for i := range 60 {
		if id := fmt.Sprintf("i%02d", i); handed[id] != 1 {
			t.Errorf("item %s handed %d times, want once", id, handed[id])
		}
	}

	// Items of no group go in claim-sized shares, in order.
	for i := range 20 {
		schedule(t, db, "send", 100, fmt.Sprintf("late%02d", i))
	}
	shares = nil
	if n, err := d.RunDue(ctx, clk.Now()); n != 20 || err != nil {
		t.Errorf("RunDue of items of no group = %d, %v; want 20", n, err)
	}
	for _, sh := range shares {
		if !slices.IsSorted(sh) || len(sh) > 8 {
			t.Errorf("a share of items of no group %v: want claim-sized, in order", sh)
		}
	}
}

// TestDueNext: the first item of the runner's own kinds, however far off;
// the zero time when none is queued; another runner's kinds do not count.
func TestDueNext(t *testing.T) {
	ctx := context.Background()
	db := memory.New()
	noop := func(storage.Tx, time.Time, storage.DueItem) error { return nil }
	d := storage.NewDue(db, clock.NewMock(), 0, storage.DueJob{Kind: "a", Tx: noop}, storage.DueJob{Kind: "b", Tx: noop})
	if next, err := d.Next(ctx); err != nil || !next.IsZero() {
		t.Fatalf("Next on an empty queue = %v, %v; want the zero time", next, err)
	}
	schedule(t, db, "ab", 5, "other") // a kind whose name extends "a"
	schedule(t, db, "a", 90, "x")
	schedule(t, db, "b", 40, "y")
	schedule(t, db, "b", 70, "z")
	if next, err := d.Next(ctx); err != nil || next.UnixMilli() != 40 {
		t.Fatalf("Next = %v, %v; want 40 ms", next.UnixMilli(), err)
	}
	if _, err := d.RunDue(ctx, time.UnixMilli(50)); err != nil {
		t.Fatal(err)
	}
	if next, err := d.Next(ctx); err != nil || next.UnixMilli() != 70 {
		t.Fatalf("Next after a run = %v, %v; want 70 ms", next.UnixMilli(), err)
	}
}
