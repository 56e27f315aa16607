package httpapi_test

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/corebank/corebank/httpapi"
)

// TestGarbage walks every route in the table with garbage: random bytes,
// empty and odd bodies, wrong methods, huge, negative and unicode values in
// paths, queries and known body fields. No request may produce a 5xx.
func TestGarbage(t *testing.T) {
	e := newEnv(t)
	tr := newTrees(e)
	det := e.must(201, "POST", "/account-details", e.key, map[string]any{"account_id": tr.acctRoot}).str("data", "id")
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 7))

	ids := []string{tr.acctRoot, tr.acctB, det, e.root, tr.b, "", "-1", "0", "99999999999999999999999",
		"ü🙂", "%00", "..", "a%2Fb", strings.Repeat("Z", 2000), "01HZZZZZZZZZZZZZZZZZZZZZZZ", "null", "%FF%FE"}
	values := []any{nil, true, false, 0, -1, 1, int64(-1) << 63, uint64(1) << 63, 1e308, -1e308, 0.5,
		"", " ", "🙂💸", "\u0000", strings.Repeat("x", 5000), "USD", "usd", "checking", "approved", "eth",
		[]any{}, []any{1, "a"}, map[string]any{}, map[string]any{"a": map[string]any{"b": []any{nil}}},
		tr.acctRoot, tr.acctB, e.root, tr.b, det}
	fields := []string{"account_id", "entity_id", "amount", "currency", "seconds", "decision", "display_name",
		"type", "chain", "terminate_after", "read_only", "settle", "narration", "meta", "provider_id", "bogus"}
	queries := []string{"", "limit=-1", "limit=1e9", "limit=", "limit=100", "year=-5&month=0", "year=2026&month=999999999999999999999",
		"year=2026&month=3&include_pending=%F0%9F%99%82", "cursor=%FF", "prev_cursor=AAAA&cursor=BBBB", "entity_id=" + tr.b,
		"entity_id=%00", "currency=" + url.QueryEscape("🙂"), "type=checking&type=debit", "account_id=" + tr.acctB, "%zz"}
	methods := []string{"GET", "POST", "PATCH", "PUT", "DELETE", "HEAD", "OPTIONS"}
	keys := []string{e.key, e.key, e.key, tr.keyA, e.roKey, "", "sk_sandbox_🙂"}

	bodies := garbageBodies{rng: rng, n: 8, maxBytes: 300, fields: fields, values: values, maxFields: 5,
		odd: []string{"", "{}", "[]", "null", "0", `"x"`, "{", `{"a":}`, "{}{}", `{"amount":1e400}`,
			strings.Repeat("[", 5000), `{"seconds":99999999999999999999}`, "\xff\xfe"}}

	patterns := httpapi.Patterns(e.h)
	if len(patterns) < 15 {
		t.Fatalf("route table has only %d routes", len(patterns))
	}
	n := 0
	for _, p := range patterns {
		method, path, _ := strings.Cut(p, " ")
		for i := 0; i < 150; i++ {
			m := method
			if rng.IntN(4) == 0 {
				m = methods[rng.IntN(len(methods))]
			}
			target := strings.ReplaceAll(path, "{id}", url.PathEscape(ids[rng.IntN(len(ids))]))
			if rng.IntN(3) == 0 {
				// Raw, unescaped garbage in the path.
				target = strings.ReplaceAll(path, "{id}", ids[rng.IntN(len(ids))])
			}
			if q := queries[rng.IntN(len(queries))]; q != "" {
				target += "?" + q
			}
			if strings.ContainsAny(target, " \x00") || !strings.HasPrefix(target, "/") {
				continue
			}
			if _, err := url.ParseRequestURI(target); err != nil {
				continue
			}
			key := keys[rng.IntN(len(keys))]
			body := bodies.next()
			var hdr []string
			if m == "POST" && rng.IntN(3) == 0 {
				hdr = []string{"Idempotency-Key", []string{"k", "🙂", strings.Repeat("k", 300)}[rng.IntN(3)]}
			}
			r := e.do(m, target, key, body, hdr...)
			n++
			if r.Status >= 500 {
				t.Fatalf("%s %s (key %q) body %q: %d %s", m, target, key, bodyText(body), r.Status, r.Raw)
			}
			if m != "HEAD" && r.Status >= 400 && r.Body == nil && !checkoutHTML(target, r) {
				t.Fatalf("%s %s: %d with a non-JSON body %q", m, target, r.Status, r.Raw)
			}
		}
	}
	// A body over each route's limit and deep nesting on every POST/PATCH route.
	mustRefuseBodies(t, e, patterns, tr.acctRoot, postOrPatch)
	t.Logf("%d garbage requests", n)
}

// garbageBodies draws request bodies for the garbage tests: out of n
// draws, one is nil, one random bytes (fewer than maxBytes), one a string
// from odd, and the rest a JSON object of up to maxFields+1 entries taken
// from fields and values.
type garbageBodies struct {
	rng       *rand.Rand
	n         int
	maxBytes  int
	odd       []string
	fields    []string
	values    []any
	maxFields int
}

func (g *garbageBodies) next() any {
	switch g.rng.IntN(g.n) {
	case 0:
		return nil
	case 1:
		b := make([]byte, g.rng.IntN(g.maxBytes))
		for i := range b {
			b[i] = byte(g.rng.UintN(256))
		}
		return b
	case 2:
		return g.odd[g.rng.IntN(len(g.odd))]
	default:
		m := map[string]any{}
		for n := g.rng.IntN(g.maxFields); n >= 0; n-- {
			m[g.fields[g.rng.IntN(len(g.fields))]] = g.values[g.rng.IntN(len(g.values))]
		}
		raw, _ := json.Marshal(m)
		return raw
	}
}

// mustRefuseBodies checks every route in patterns whose method takes
// reports true, with id in the path: a body 1 MiB over the route's limit
// (10 MiB, more where files travel in the body) answers 413
// request_too_large and deep nesting answers 422 (but on the workspace
// routes, which decode no body).
func mustRefuseBodies(t *testing.T, e *env, patterns []string, id string, takes func(method string) bool) {
	t.Helper()
	deep := strings.Repeat(`{"a":[`, 5000)
	for _, p := range patterns {
		method, path, _ := strings.Cut(p, " ")
		if !takes(method) {
			continue
		}
		target := strings.ReplaceAll(path, "{id}", id)
		huge := bytes.Repeat([]byte(" "), int(httpapi.BodyLimit(p))+1<<20)
		if r := e.do(method, target, e.key, huge); r.Status != 413 || r.code() != "request_too_large" {
			t.Fatalf("%s %s with %d bytes: %d %.200s", method, target, len(huge), r.Status, r.Raw)
		}
		if workspaceRoutes[p] {
			continue // httpapi decodes no body there: 404 (workspaces_test.go)
		}
		if r := e.do(method, target, e.key, deep); r.Status != 422 {
			t.Fatalf("%s %s deeply nested: %d %.200s", method, target, r.Status, r.Raw)
		}
	}
}

// postOrPatch is mustRefuseBodies' takes for the routes that create or
// change.
func postOrPatch(method string) bool { return method == "POST" || method == "PATCH" }

func bodyText(b any) string {
	switch x := b.(type) {
	case []byte:
		return string(x)
	case string:
		return x
	}
	return ""
}
