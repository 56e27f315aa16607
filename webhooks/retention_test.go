package webhooks_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/webhooks"
)

// liveKeys counts the keys of the webhooks' event log, deliveries and the
// due queue.
func liveKeys(t *testing.T, db storage.Backend) map[string]int {
	t.Helper()
	out := map[string]int{}
	err := db.View(ctx, func(tx storage.Tx) error {
		for _, b := range []storage.Bucket{"webhooks.events", "webhooks.event_index", "webhooks.event_types",
			"webhooks.deliveries", "webhooks.dlv_hook", "webhooks.dlv_keys", storage.BucketDue} {
			if err := tx.Scan(b, storage.ScanOptions{}, func([]byte, []byte) error {
				out[string(b)]++
				return nil
			}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRetentionSteadyLoad runs a steady load of events, each delivered to
// a webhook, for three retention periods on the mock clock: once the first
// period has passed, what is stored stops growing.
func TestRetentionSteadyLoad(t *testing.T) {
	const perDay, days, retention = 20, 30, 10
	e := newEnv(t, nil, nil, func(o *webhooks.Options) { o.EventRetention = retention * 24 * time.Hour })
	e.mustCreate(t, entityA, events(true))
	var counts []map[string]int
	for day := 0; day < days; day++ {
		for i := 0; i < perDay; i++ {
			e.outbox.Append(t, "accounts.created", entityA, map[string]int{"day": day, "i": i})
		}
		e.mustDrain(t)
		e.clk.Add(24 * time.Hour)
		if _, err := e.svc.RunDue(ctx, e.clk.Now()); err != nil {
			t.Fatal(err)
		}
		counts = append(counts, liveKeys(t, e.db))
	}
	// After the retention period, each day adds as much as the sweep drops.
	for day := retention + 1; day < days; day++ {
		if diff := cmp.Diff(counts[retention], counts[day]); diff != "" {
			t.Fatalf("day %d: live keys changed since day %d (-then +now):\n%s", day, retention, diff)
		}
	}
	if got, max := counts[days-1]["webhooks.events"], (retention+1)*perDay; got > max {
		t.Errorf("events kept = %d, want at most %d", got, max)
	}
	if got := counts[days-1][string(storage.BucketDue)]; got > 2 {
		t.Errorf("due queue holds %d items, want the sweep and the expiry only", got)
	}
}

// TestMigrateSweep: a store whose events and deliveries each have a purge
// item (the earlier layout) gets the one sweep item instead, and the sweep
// purges them after retention.
func TestMigrateSweep(t *testing.T) {
	e := newEnv(t, nil, nil, nil)
	e.mustCreate(t, entityA, events(true))
	e.outbox.Append(t, "accounts.created", entityA, map[string]string{"id": "a"})
	e.mustDrain(t)
	purgeAt := e.clk.Now().Add(30*24*time.Hour).UnixMilli() + 1
	err := e.db.Update(ctx, func(tx storage.Tx) error { // back to the old shape
		var keys [][]byte
		if err := tx.Scan(storage.BucketDue, storage.ScanOptions{Prefix: []byte("webhooks.sweep/")}, func(k, _ []byte) error {
			keys = append(keys, bytes.Clone(k))
			return nil
		}); err != nil {
			return err
		}
		for _, k := range keys {
			if err := tx.Delete(storage.BucketDue, k); err != nil {
				return err
			}
		}
		for _, b := range []struct {
			bucket storage.Bucket
			kind   string
		}{{"webhooks.events", "webhooks.purge-event"}, {"webhooks.deliveries", "webhooks.purge-delivery"}} {
			if err := tx.Scan(b.bucket, storage.ScanOptions{}, func(k, _ []byte) error {
				return storage.Schedule(tx, b.kind, purgeAt, string(k))
			}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := storage.Migrate(ctx, e.db, e.svc.Migrations()...); err != nil || n != len(e.svc.Migrations()) {
		t.Fatalf("Migrate = %d, %v", n, err)
	}
	if got, want := liveKeys(t, e.db)[string(storage.BucketDue)], 2; got != want { // the sweep, the webhook's expiry
		t.Errorf("due items after migrating = %d, want %d", got, want)
	}
	e.clk.Add(30*24*time.Hour + time.Minute)
	if _, err := e.svc.RunDue(ctx, e.clk.Now()); err != nil {
		t.Fatal(err)
	}
	got := liveKeys(t, e.db)
	if got["webhooks.events"]+got["webhooks.deliveries"]+got["webhooks.event_index"] != 0 {
		t.Errorf("after retention: %v", got)
	}
}
