package httpapi_test

import (
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/corebank/corebank/httpapi"
)

// TestPaymentsGarbage is TestGarbage aimed at the payment routes: real
// counterparty, payment detail, quote and transfer IDs (own and another
// tree's) in paths and bodies, and the payment request fields. No request
// may produce a 5xx.
func TestPaymentsGarbage(t *testing.T) {
	e := newEnv(t)
	f := newPayFixture(e)
	tr := f.tr
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 11))

	ids := []string{f.cp, f.cpB, f.pd, f.pdB, f.quote, f.quoteB, f.transfer, f.transfer2, tr.acctRoot, tr.acctB,
		e.root, tr.b, "", "-1", "0", "ü🙂", "%00", "..", "a%2Fb", strings.Repeat("Z", 2000),
		"01HZZZZZZZZZZZZZZZZZZZZZZZ", "null", "%FF%FE"}
	values := []any{nil, true, false, 0, -1, 1, 99, 100, int64(-1) << 63, uint64(1) << 63, 1e308, 0.5, "", " ",
		"🙂💸", "\u0000", strings.Repeat("x", 5000), "USD", "EUR", "XYZ", "usd", "bank-transfer", "book-transfer",
		"momo-transfer", "stablecoin-transfer", "ach", "fps", "individual", "business", "processing", "successful",
		"failed", "reversed", "vendor", "GB", "US", "091000019", "123456789", "+447700900123",
		[]any{}, []any{map[string]any{"type": "P"}}, map[string]any{}, map[string]any{"line1": "x", "city": "y", "country": "GB"},
		map[string]any{"first_name": "A", "last_name": "B", "relationship": "vendor", "email": "a@b.co",
			"address": map[string]any{"line1": "x", "city": "y", "country": "GB"}},
		f.cp, f.cpB, f.pd, f.pdB, f.quote, f.quoteB, f.transfer, tr.acctRoot, tr.acctB, e.root, tr.b}
	fields := []string{"entity_id", "type", "nickname", "profile", "meta", "counterparty_id", "payment_method",
		"currency", "country", "scheme", "account_holder_name", "account_number", "routing_number", "account_type",
		"sort_code", "iban", "swift_code", "bank_address", "phone_number", "wallet_address", "blockchain_network",
		"from_currency", "to_currency", "amount_from", "amount_to", "account_id", "payment_detail_id", "amount",
		"payment_type", "narration", "unique_reference", "fx_quote_id", "outcome", "status_reason", "enabled", "bogus"}
	queries := []string{"", "limit=-1", "limit=1e9", "limit=", "limit=100", "cursor=%FF", "prev_cursor=AAAA&cursor=BBBB",
		"entity_id=" + tr.b, "entity_id=%00", "type=business&type=individual", "status=" + url.QueryEscape("🙂"),
		"status=pending", "account_id=" + tr.acctB, "account_id=" + tr.acctRoot, "%zz"}
	methods := []string{"GET", "POST", "PATCH", "PUT", "DELETE", "HEAD"}
	keys := []string{e.key, e.key, e.key, tr.keyA, tr.keyB, e.roKey, ""}

	bodies := garbageBodies{rng: rng, n: 8, maxBytes: 300, fields: fields, values: values, maxFields: 8,
		odd: []string{"", "{}", "[]", "null", "0", `"x"`, "{", `{"a":}`, "{}{}", `{"amount":1e400}`,
			strings.Repeat("[", 5000), `{"amount_from":99999999999999999999}`, "\xff\xfe"}}

	var patterns []string
	for _, p := range httpapi.Patterns(e.h) {
		for _, pre := range []string{"/counterparties", "/payment-details", "/fx-quotes", "/transfers", "/sandbox/transfers", "/sandbox/fx"} {
			if strings.HasPrefix(strings.SplitN(p, " ", 2)[1], pre) {
				patterns = append(patterns, p)
				break
			}
		}
	}
	if len(patterns) != 16 {
		t.Fatalf("%d payment routes: %v", len(patterns), patterns)
	}
	n := 0
	for _, p := range patterns {
		method, path, _ := strings.Cut(p, " ")
		for i := 0; i < 300; i++ {
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
			key := keys[rng.IntN(len(keys))]
			body := bodies.next()
			r := e.do(m, target, key, body)
			n++
			if r.Status >= 500 && r.code() != "fx_provider_unavailable" {
				t.Fatalf("%s %s (key %q) body %q: %d %s", m, target, key, bodyText(body), r.Status, r.Raw)
			}
			if m != "HEAD" && r.Status >= 400 && r.Body == nil {
				t.Fatalf("%s %s: %d with a non-JSON body %q", m, target, r.Status, r.Raw)
			}
		}
	}
	mustRefuseBodies(t, e, patterns, f.transfer, postOrPatch)
	t.Logf("%d garbage requests", n)
}
