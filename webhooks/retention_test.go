package webhooks_test

import (
	"crypto/rand"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/oklog/ulid/v2"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/webhooks"
)

// liveKeys counts the keys of the outbox, the webhooks' test events,
// deliveries and (former) indexes, and the due queue.
func liveKeys(t *testing.T, db storage.Backend) map[string]int {
	t.Helper()
	out := map[string]int{}
	err := db.View(ctx, func(tx storage.Tx) error {
		for _, b := range []storage.Bucket{"ledger.outbox", "webhooks.events", "webhooks.event_index", "webhooks.event_types",
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
	if got, max := counts[days-1]["ledger.outbox"], (retention+1)*perDay; got > max {
		t.Errorf("events kept = %d, want at most %d", got, max)
	}
	if got := counts[days-1][string(storage.BucketDue)]; got > 2 {
		t.Errorf("due queue holds %d items, want the sweep and the expiry only", got)
	}
}

// TestMigrateOutboxLog builds a store in the earlier layout (the outbox
// keyed by sequence, a sequence cursor, a copy of each ingested event with
// two index keys per entity and a purge item per event and per delivery)
// and migrates it: the copies, indexes and items are gone, the events are
// listed from the outbox, an event not yet ingested (whose ID sorts before
// an ingested one) is delivered once, and the ingested ones not again.
func TestMigrateOutboxLog(t *testing.T) {
	e := newEnv(t, nil, nil, nil)
	e.mustCreate(t, entityA, events(true))
	ev1 := e.outbox.Append(t, "accounts.created", entityA, map[string]string{"id": "a1"})
	e.clk.Add(2 * time.Millisecond)
	ev2 := e.outbox.Append(t, "accounts.created", entityA, map[string]string{"id": "a2"})
	e.mustDrain(t)
	ev3 := webhooks.Event{ID: ulid.MustNew(ulid.Timestamp(e.clk.Now().Add(-time.Millisecond)), rand.Reader).String(),
		Type: "accounts.updated", EntityID: entityA, Data: json.RawMessage(`{"id":"a3"}`), Created: e.clk.Now().Add(-time.Millisecond).UnixMilli()}
	legacy := func(tx storage.Tx, seq uint64, ev webhooks.Event) error {
		v, err := json.Marshal(map[string]any{"seq": seq, "id": ev.ID, "type": ev.Type, "entity_id": ev.EntityID, "object": ev.Data, "created": ev.Created})
		if err != nil {
			return err
		}
		return tx.Put("ledger.events", storage.AppendUint64(nil, seq), v)
	}
	err := e.db.Update(ctx, func(tx storage.Tx) error { // back to the old shape
		for seq, ev := range []webhooks.Event{ev1, ev2, ev3} {
			if err := legacy(tx, uint64(seq+1), ev); err != nil {
				return err
			}
			if err := tx.Delete("ledger.outbox", []byte(ev.ID)); err != nil {
				return err
			}
			if ev.ID == ev3.ID {
				continue // committed after the cursor's event: not ingested
			}
			if err := storage.PutJSON(tx, "webhooks.events", []byte(ev.ID), map[string]any{"id": ev.ID, "type": ev.Type,
				"entity_id": ev.EntityID, "data": ev.Data, "created": ev.Created, "entities": []string{ev.EntityID}}); err != nil {
				return err
			}
			if err := tx.Put("webhooks.event_index", storage.Key(ev.EntityID, ev.ID), nil); err != nil {
				return err
			}
			if err := tx.Put("webhooks.event_types", storage.Key(ev.EntityID, ev.Type, ev.ID), nil); err != nil {
				return err
			}
			if err := storage.Schedule(tx, "webhooks.purge-event", ev.Created+1, ev.ID); err != nil {
				return err
			}
		}
		if err := tx.Put("ledger.meta", []byte("event_seq"), storage.AppendUint64(nil, 3)); err != nil {
			return err
		}
		if err := tx.Put("webhooks.meta", []byte("cursor"), storage.AppendUint64(nil, 2)); err != nil {
			return err
		}
		if err := tx.Scan("webhooks.deliveries", storage.ScanOptions{}, func(k, _ []byte) error {
			return storage.Schedule(tx, "webhooks.purge-delivery", 1, string(k))
		}); err != nil {
			return err
		}
		var sweep [][]byte
		if err := tx.Scan(storage.BucketDue, storage.ScanOptions{Prefix: []byte("webhooks.sweep/")}, func(k, _ []byte) error {
			sweep = append(sweep, append([]byte(nil), k...))
			return nil
		}); err != nil {
			return err
		}
		for _, k := range sweep {
			if err := tx.Delete(storage.BucketDue, k); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	ms := append(e.outbox.led.Migrations(), e.svc.Migrations()...)
	if n, err := storage.Migrate(ctx, e.db, ms...); err != nil || n != len(ms) {
		t.Fatalf("Migrate = %d, %v", n, err)
	}
	keys := liveKeys(t, e.db)
	for _, b := range []string{"webhooks.events", "webhooks.event_index", "webhooks.event_types"} {
		if keys[b] != 0 {
			t.Errorf("%s holds %d keys after migrating", b, keys[b])
		}
	}
	if got := keys[string(storage.BucketDue)]; got != 3 { // the sweep, the webhook's expiry, the ledger's fold
		t.Errorf("due items after migrating = %d, want 3", got)
	}
	e.mustDrain(t)
	var hits []string
	for _, h := range e.recv.Hits() {
		hits = append(hits, h.Header.Get(webhooks.HeaderEventID))
	}
	slices.Sort(hits[:2]) // the first two went out together
	if diff := cmp.Diff([]string{ev1.ID, ev2.ID, ev3.ID}, hits); diff != "" {
		t.Errorf("deliveries (-want +got):\n%s", diff)
	}
	page, err := e.svc.ListEvents(ctx, corebank.System(), webhooks.EventFilter{EntityID: entityA}, corebank.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]webhooks.Event{ev1, ev3, ev2}, page.Items); diff != "" {
		t.Errorf("events after migrating (-want +got):\n%s", diff)
	}
	e.clk.Add(30*24*time.Hour + time.Minute)
	if _, err := e.svc.RunDue(ctx, e.clk.Now()); err != nil {
		t.Fatal(err)
	}
	page, err = e.svc.ListEvents(ctx, corebank.System(), webhooks.EventFilter{EntityID: entityA}, corebank.ListOptions{})
	if err != nil || len(page.Items) != 0 {
		t.Errorf("events after retention = %v, %v", page, err)
	}
	if got := liveKeys(t, e.db)["webhooks.deliveries"]; got != 0 {
		t.Errorf("deliveries after retention = %d", got)
	}
}

// TestRetentionBacklog: more expired events than one sweep transaction
// purges are all purged by one RunDue, the sweep queueing itself again.
func TestRetentionBacklog(t *testing.T) {
	e := newEnv(t, nil, nil, nil)
	for i := range 2500 {
		e.outbox.Append(t, "accounts.created", entityA, map[string]int{"i": i})
	}
	e.mustDrain(t)
	e.clk.Add(30*24*time.Hour + time.Second)
	e.outbox.Append(t, "accounts.created", entityA, map[string]string{"id": "kept"})
	if _, err := e.svc.RunDue(ctx, e.clk.Now()); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"ledger.outbox": 1, string(storage.BucketDue): 1} // the new event and the sweep for it
	if diff := cmp.Diff(want, liveKeys(t, e.db)); diff != "" {
		t.Errorf("live keys (-want +got):\n%s", diff)
	}
}
