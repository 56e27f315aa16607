package httpapi_test

import (
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/corebank/corebank/httpapi"
)

// TestWebhookGarbage is TestGarbage aimed at the webhook and event routes
// with IDs that exist (own, foreign, deleted, events) and the fields their
// bodies take: no request may produce a 5xx or a non-JSON error, and no
// answer but create and rotate_secret may carry a secret.
func TestWebhookGarbage(t *testing.T) {
	e := newHookEnv(t, false)
	tr := newTrees(e.env)
	own, _ := e.createHook(e.key, "")
	foreign, _ := e.createHook(tr.keyB, "")
	gone, _ := e.createHook(e.key, "")
	e.must(200, "DELETE", "/entity-webhooks/"+gone, e.key, nil)
	e.must(201, "POST", "/sandbox/inflows", e.key, map[string]any{"account_id": tr.acctRoot, "amount": 5})
	e.drain()
	ev := events(t, e.must(200, "GET", "/events?type=inflows.completed", e.key, nil))[0]["id"].(string)

	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 11))
	ids := []string{own, foreign, gone, ev, e.root, tr.b, "", "-1", "ü🙂", "%00", "..", "a%2Fb",
		strings.Repeat("Z", 2000), "01HZZZZZZZZZZZZZZZZZZZZZZZ", "%FF%FE"}
	values := []any{nil, true, false, 0, -1, 1, int64(-1) << 63, uint64(1) << 63, 1e308, 0.5, "", " ", "🙂",
		"\u0000", strings.Repeat("x", 5000), "https://", "http://x", "https://169.254.169.254/", e.recv.url(),
		"active", "inactive", []any{}, []any{1, "a"}, []any{strings.Repeat("t", 200)}, map[string]any{},
		map[string]any{"all": true}, map[string]any{"all": "yes"}, map[string]any{"outflows": map[string]any{"completed": true}},
		map[string]any{"outflows": []any{true}}, map[string]any{"x": map[string]any{"y": nil}}, own, e.root, tr.b}
	fields := []string{"url", "expires_in", "enabled_events", "entity_id", "description", "tags", "status", "secret", "bogus"}
	queries := []string{"", "limit=-1", "limit=1e9", "limit=100", "cursor=%FF", "prev_cursor=AAAA&cursor=BBBB",
		"entity_id=" + tr.b, "entity_id=%00", "type=inflows.completed", "type=%F0%9F%99%82", "type=a..b",
		"created_after=-5", "created_after=99999999999999999999", "created_before=1&created_after=2",
		"created_after=281474976710655", "entity_id=" + tr.b + "&entity_id=" + e.root, "%zz"}
	methods := []string{"GET", "POST", "PATCH", "PUT", "DELETE"}
	keys := []string{e.key, e.key, e.key, tr.keyA, tr.keyB, e.roKey, ""}

	bodies := garbageBodies{rng: rng, n: 6, maxBytes: 200, fields: fields, values: values, maxFields: 6,
		odd: []string{"", "{}", "[]", "null", "0", "{", `{"expires_in":1e400}`, "{}{}",
			`{"enabled_events":{"all":true,"all":false}}`}}

	var mine []string
	for _, p := range httpapi.Patterns(e.h) {
		if strings.Contains(p, " /entity-webhooks") || strings.Contains(p, " /events") {
			mine = append(mine, p)
		}
	}
	if len(mine) != 10 {
		t.Fatalf("webhook and event routes: %v", mine)
	}
	n := 0
	for _, p := range mine {
		method, path, _ := strings.Cut(p, " ")
		for i := 0; i < 200; i++ {
			m := method
			if rng.IntN(5) == 0 {
				m = methods[rng.IntN(len(methods))]
			}
			target := strings.ReplaceAll(path, "{id}", url.PathEscape(ids[rng.IntN(len(ids))]))
			if q := queries[rng.IntN(len(queries))]; q != "" {
				target += "?" + q
			}
			if _, err := url.ParseRequestURI(target); err != nil {
				continue
			}
			var hdr []string
			if m == "POST" && rng.IntN(3) == 0 {
				hdr = []string{"Idempotency-Key", []string{"k", "k2", strings.Repeat("k", 300)}[rng.IntN(3)]}
			}
			body := bodies.next()
			r := e.do(m, target, keys[rng.IntN(len(keys))], body, hdr...)
			n++
			if r.Status >= 500 {
				t.Fatalf("%s %s body %q: %d %s", m, target, bodyText(body), r.Status, r.Raw)
			}
			if r.Status >= 400 && r.Body == nil {
				t.Fatalf("%s %s: %d with a non-JSON body %q", m, target, r.Status, r.Raw)
			}
			shows := strings.Contains(r.Raw, "whsec_")
			mayShow := r.Status < 300 && m == "POST" && r.Header.Get("Idempotent-Replayed") == "" &&
				(strings.HasSuffix(p, "/rotate_secret") || p == "POST /entity-webhooks")
			if shows && !mayShow {
				t.Fatalf("%s %s shows a secret: %s", m, target, r.Raw)
			}
		}
	}
	// Oversized and deeply nested bodies on every route that takes one.
	mustRefuseBodies(t, e.env, mine, own, func(method string) bool { return method != "GET" })
	t.Logf("%d garbage requests", n)
}
