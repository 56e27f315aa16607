package httpapi_test

import (
	"net/url"
	"testing"
	"time"
)

func TestStatementPagination(t *testing.T) {
	e := newEnv(t)
	id := e.account(e.key, "", "USD")
	for i := 0; i < 12; i++ {
		e.must(201, "POST", "/sandbox/inflows", e.key, map[string]any{"account_id": id, "amount": 100 + i})
		e.clock.Add(time.Minute)
	}
	base := "/accounts/" + id + "/statements?year=2026&month=3&limit=5"
	var seen []string
	next := base
	for pages := 0; pages < 10; pages++ {
		r := e.must(200, "GET", next, e.key, nil)
		for _, tx := range r.data()["transactions"].([]any) {
			seen = append(seen, tx.(map[string]any)["id"].(string))
		}
		p := r.data()["pagination"].(map[string]any)
		if p["has_next"] != true {
			break
		}
		next = base + "&cursor=" + url.QueryEscape(p["next_cursor"].(string))
	}
	if len(seen) != 12 {
		t.Fatalf("statement walk saw %d transactions", len(seen))
	}
	uniq := map[string]bool{}
	for _, s := range seen {
		uniq[s] = true
	}
	if len(uniq) != 12 {
		t.Fatalf("duplicates in statement walk: %v", seen)
	}
}
