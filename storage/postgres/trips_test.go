package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/postgres"
)

// TestRoundTrips checks what a transaction costs: its BEGIN goes with its
// first statement and its writes with its COMMIT, a key is read once, a
// Limit 1 scan reads one row, and a scan repeated with the same bounds
// (the newest entry of a log, a range found empty) is answered from the
// batch it read, merged with the writes since.
func TestRoundTrips(t *testing.T) {
	ctx := context.Background()
	db := MustOpen(t, nil)
	if err := db.Update(ctx, func(tx storage.Tx) error {
		for i := range 5 {
			if err := tx.Put(benchBucket, fmt.Appendf(nil, "log%d", i), []byte("old")); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	newest := func(tx storage.Tx, prefix string) (got []string, err error) {
		err = tx.Scan(benchBucket, storage.ScanOptions{Prefix: []byte(prefix), Reverse: true, Limit: 1}, func(k, v []byte) error {
			got = append(got, string(k)+"="+string(v))
			return nil
		})
		return got, err
	}
	var log []string
	before := postgres.RoundTrips(db)
	if err := db.Update(ctx, func(tx storage.Tx) error {
		for i := range 2 {
			v, err := tx.Get(benchBucket, []byte("log0"))
			log = append(log, fmt.Sprintf("get %d: %s %v", i, v, err))
			for _, p := range []string{"log", "none"} {
				got, err := newest(tx, p)
				log = append(log, fmt.Sprintf("newest %s %d: %v %v", p, i, got, err))
			}
			if err := tx.Put(benchBucket, []byte("log9"), []byte("new")); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"get 0: old <nil>",
		"newest log 0: [log4=old] <nil>",
		"newest none 0: [] <nil>",
		"get 1: old <nil>",
		"newest log 1: [log9=new] <nil>",
		"newest none 1: [] <nil>",
	}
	if diff := cmp.Diff(want, log); diff != "" {
		t.Errorf("reads (-want +got):\n%s", diff)
	}
	// The Get with BEGIN, the two scans, the writes with COMMIT.
	if got := postgres.RoundTrips(db) - before; got != 4 {
		t.Errorf("Update made %d round trips, want 4", got)
	}
	before = postgres.RoundTrips(db)
	if err := db.View(ctx, func(tx storage.Tx) error {
		for range 2 {
			if _, err := tx.Get(benchBucket, []byte("log9")); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// The Get with BEGIN, the ROLLBACK.
	if got := postgres.RoundTrips(db) - before; got != 2 {
		t.Errorf("View made %d round trips, want 2", got)
	}
	// A Prefetch of three keys (one absent) with BEGIN, the Gets of them
	// none, the writes with COMMIT.
	before = postgres.RoundTrips(db)
	if err := db.Update(ctx, func(tx storage.Tx) error {
		keys := []string{"log1", "log2", "none"}
		refs := make([]storage.Ref, len(keys))
		for i, k := range keys {
			refs[i] = storage.Ref{Bucket: benchBucket, Key: []byte(k)}
		}
		if err := storage.Prefetch(tx, refs...); err != nil {
			return err
		}
		for _, k := range keys {
			if _, err := tx.Get(benchBucket, []byte(k)); err != nil && err != storage.ErrNotFound {
				return err
			}
		}
		return tx.Put(benchBucket, []byte("log1"), []byte("newer"))
	}); err != nil {
		t.Fatal(err)
	}
	if got := postgres.RoundTrips(db) - before; got != 2 {
		t.Errorf("Update with a Prefetch made %d round trips, want 2", got)
	}
	// A Prefetch of two prefixes (one empty) with BEGIN, the Scans of
	// them none, the ROLLBACK.
	before = postgres.RoundTrips(db)
	var scanned []string
	if err := db.View(ctx, func(tx storage.Tx) error {
		if err := storage.Prefetch(tx, storage.Ref{Bucket: benchBucket, Key: []byte("log"), Prefix: true},
			storage.Ref{Bucket: benchBucket, Key: []byte("none"), Prefix: true}); err != nil {
			return err
		}
		for _, p := range []string{"log", "none"} {
			if err := tx.Scan(benchBucket, storage.ScanOptions{Prefix: []byte(p)}, func(k, _ []byte) error {
				scanned = append(scanned, string(k))
				return nil
			}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"log0", "log1", "log2", "log3", "log4", "log9"}, scanned); diff != "" {
		t.Errorf("scans after a Prefetch (-want +got):\n%s", diff)
	}
	if got := postgres.RoundTrips(db) - before; got != 2 {
		t.Errorf("View with a prefix Prefetch made %d round trips, want 2", got)
	}
}

// TestDueRunLooks checks that a due run on a store of many kinds, one of
// them with an item due, looks at every kind in one View and runs only
// the one: on PostgreSQL an idle kind costs no transaction.
func TestDueRunLooks(t *testing.T) {
	ctx := context.Background()
	db := MustOpen(t, nil)
	clk := clock.NewMock()
	clk.Set(time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC))
	var ran []string
	var jobs []storage.DueJob
	for i := range 20 {
		kind := fmt.Sprintf("kind%02d", i)
		jobs = append(jobs, storage.DueJob{Kind: kind, Tx: func(tx storage.Tx, _ time.Time, it storage.DueItem) error {
			ran = append(ran, kind+" "+it.ID)
			return nil
		}})
	}
	if err := db.Update(ctx, func(tx storage.Tx) error {
		return storage.Schedule(tx, "kind07", clk.Now().UnixMilli(), "item")
	}); err != nil {
		t.Fatal(err)
	}
	due := storage.NewDue(db, clk, 0, jobs...)
	before := postgres.RoundTrips(db)
	if n, err := due.RunDue(ctx, clk.Now()); n != 1 || err != nil {
		t.Fatalf("RunDue = %d, %v; want 1", n, err)
	}
	// The look (a prefetch of every kind, the ROLLBACK), then kind07's
	// pass (its queue scan, which reads again the rows it locked, and the
	// commit) and its last, empty one (the scan, the ROLLBACK); not two or
	// more for each of the 19 others.
	if got := postgres.RoundTrips(db) - before; got != 7 {
		t.Errorf("RunDue made %d round trips, want 7", got)
	}
	if diff := cmp.Diff([]string{"kind07 item"}, ran); diff != "" {
		t.Errorf("ran (-want +got):\n%s", diff)
	}
}

// TestDueBatchRunLooks checks that a Batch job's run takes the first item
// from the look rather than looking again before it claims.
func TestDueBatchRunLooks(t *testing.T) {
	ctx := context.Background()
	db := MustOpen(t, nil)
	clk := clock.NewMock()
	clk.Set(time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC))
	var ran []string
	job := storage.DueJob{Kind: "batch", Batch: func(_ context.Context, _ time.Time, items []storage.DueItem) (int, error) {
		for _, it := range items {
			ran = append(ran, it.ID)
		}
		return len(items), nil
	}}
	if err := db.Update(ctx, func(tx storage.Tx) error {
		return storage.Schedule(tx, "batch", clk.Now().UnixMilli(), "item")
	}); err != nil {
		t.Fatal(err)
	}
	due := storage.NewDue(db, clk, 0, job).Lease("node", time.Minute)
	before := postgres.RoundTrips(db)
	if n, err := due.RunDue(ctx, clk.Now()); n != 1 || err != nil {
		t.Fatalf("RunDue = %d, %v; want 1", n, err)
	}
	// The look (its prefetch, the ROLLBACK), then the claim (its queue
	// scan, which reads again the rows it locked, the lease's read, and
	// the commit), which read fewer items than it could: no further claim.
	if got := postgres.RoundTrips(db) - before; got != 6 {
		t.Errorf("RunDue made %d round trips, want 6", got)
	}
	if diff := cmp.Diff([]string{"item"}, ran); diff != "" {
		t.Errorf("ran (-want +got):\n%s", diff)
	}
}
