package httpapi_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/corebank/corebank/webhooks"
	"github.com/google/go-cmp/cmp"
)

// events returns the items of one GET /events answer.
func events(t *testing.T, r resp) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, it := range r.Body["data"].([]any) {
		out = append(out, it.(map[string]any))
	}
	return out
}

func TestEvents(t *testing.T) {
	e := newHookEnv(t, false)
	tr := newTrees(e.env)
	hook, _ := e.createHook(e.key, "")
	e.drain() // the dispatcher reads the outbox: events become listable
	t0 := e.clock.Now().UnixMilli()
	e.clock.Add(time.Minute)
	in := e.must(201, "POST", "/sandbox/inflows", e.key, map[string]any{"account_id": tr.acctRoot, "amount": 500}).str("id")
	e.clock.Add(time.Minute)
	t1 := e.clock.Now().UnixMilli()
	e.must(201, "POST", "/sandbox/inflows", tr.keyB, map[string]any{"account_id": tr.acctB, "amount": 700})
	e.drain()

	// The root sees every tree; A only its own (a, a1 and u).
	all := events(t, e.must(200, "GET", "/events?limit=100", e.key, nil))
	if len(all) < 6 {
		t.Fatalf("root sees %d events", len(all))
	}
	r := e.must(200, "GET", "/events?limit=100", tr.keyA, nil)
	checkListForm(t, r, map[string]any{"entity_id": tr.a})
	mine := events(t, r)
	if len(mine) == 0 {
		t.Fatal("A sees no events")
	}
	for _, ev := range mine {
		if id := ev["entity_id"]; id != tr.a && id != tr.a1 && id != tr.u {
			t.Errorf("A sees an event of %v: %v", id, ev)
		}
		for _, k := range []string{"id", "type", "entity_id", "data", "created"} {
			if _, ok := ev[k]; !ok {
				t.Errorf("event lacks %q: %v", k, ev)
			}
		}
	}

	// Filters.
	byType := events(t, e.must(200, "GET", "/events?type=inflows.completed", e.key, nil))
	if len(byType) != 2 || byType[0]["data"].(map[string]any)["id"] != in {
		t.Fatalf("type filter: %v", byType)
	}
	after := strconv.FormatInt(t0, 10)
	r = e.must(200, "GET", "/events?created_after="+after+"&created_before="+strconv.FormatInt(t1, 10), e.key, nil)
	checkListForm(t, r, map[string]any{"entity_id": e.root, "created_after": after, "created_before": strconv.FormatInt(t1, 10)})
	var types []string
	for _, ev := range events(t, r) {
		types = append(types, ev["type"].(string))
	}
	if diff := cmp.Diff([]string{"inflows.completed"}, types); diff != "" {
		t.Errorf("time window (-want +got):\n%s", diff)
	}
	if got := events(t, e.must(200, "GET", "/events?type=inflows.completed&entity_id="+tr.b, e.key, nil)); len(got) != 1 || got[0]["entity_id"] != tr.b {
		t.Errorf("entity filter: %v", got)
	}

	// Pagination walks both ways.
	fwd, back := walk(t, e.env, "/events", 2)
	var ids []string
	for _, ev := range all {
		ids = append(ids, ev["id"].(string))
	}
	if diff := cmp.Diff(ids, fwd); diff != "" {
		t.Errorf("forward (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(beforeLastPage(ids, 2), back); diff != "" {
		t.Errorf("backward (-want +got):\n%s", diff)
	}

	// Redelivery: a new delivery with the same event ID.
	evID := byType[0]["id"].(string)
	first := -1
	for i, h := range e.recv.Hits() {
		if h.Header.Get(webhooks.HeaderEventID) == evID {
			first = i
		}
	}
	if first < 0 {
		t.Fatalf("the inflow event was never delivered: %v", eventTypes(e.recv.Hits()))
	}
	n := len(e.recv.Hits())
	r = e.must(200, "POST", "/events/"+evID+"/redeliver", e.key, nil)
	ds, _ := r.data()["deliveries"].([]any)
	if r.str("data", "event_id") != evID || len(ds) != 1 || ds[0].(map[string]any)["webhook_id"] != hook {
		t.Fatalf("redeliver: %s", r.Raw)
	}
	e.drain()
	hits := e.recv.Hits()
	if len(hits) != n+1 || hits[n].Header.Get(webhooks.HeaderEventID) != evID {
		t.Fatalf("after redeliver: %d hits, last %v", len(hits), eventTypes(hits[n:]))
	}

	const missing = "01HZZZZZZZZZZZZZZZZZZZZZZZ"
	e.run(t, []call{
		{"ErrRedeliverForeign", "POST", "/events/" + evID + "/redeliver", nil, tr.keyB, 404, "not_found", ""},
		{"ErrRedeliverMissing", "POST", "/events/" + missing + "/redeliver", nil, e.key, 404, "not_found", ""},
		{"ErrRedeliverEntityOutside", "POST", "/events/" + evID + "/redeliver", map[string]any{"entity_id": tr.b}, tr.keyA, 404, "not_found", ""},
		{"ErrRedeliverUnknownField", "POST", "/events/" + evID + "/redeliver", map[string]any{"webhook": hook}, e.key, 422, "validation_error", "webhook"},
		{"ErrRedeliverReadOnly", "POST", "/events/" + evID + "/redeliver", nil, e.roKey, 403, "forbidden", ""},
		{"ErrRedeliverNoKey", "POST", "/events/" + evID + "/redeliver", nil, "", 401, "unauthorized", ""},
		{"OKListReadOnly", "GET", "/events", nil, e.roKey, 200, "", ""},
		{"ErrListNoKey", "GET", "/events", nil, "", 401, "unauthorized", ""},
		{"ErrListForeignEntity", "GET", "/events?entity_id=" + tr.b, nil, tr.keyA, 404, "not_found", ""},
		{"ErrCreatedAfter", "GET", "/events?created_after=yesterday", nil, e.key, 422, "validation_error", "created_after"},
		{"ErrCreatedBeforeNegative", "GET", "/events?created_before=-1", nil, e.key, 422, "validation_error", "created_before"},
		{"ErrWindow", "GET", "/events?created_after=20&created_before=10", nil, e.key, 422, "validation_error", "created_before"},
		{"ErrType", "GET", "/events?type=Inflows+Completed", nil, e.key, 422, "validation_error", "type"},
		{"ErrLimit", "GET", "/events?limit=101", nil, e.key, 422, "validation_error", "limit"},
		{"ErrCursor", "GET", "/events?cursor=zzz", nil, e.key, 422, "validation_error", "cursor"},
	})
	// A cursor is bound to its filters.
	r = e.must(200, "GET", "/events?limit=1", e.key, nil)
	next := r.Body["meta"].(map[string]any)["pagination"].(map[string]any)["next_cursor"].(string)
	e.must(422, "GET", "/events?limit=1&type=accounts.created&cursor="+next, e.key, nil)
}
