package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/memory"
)

// writeCounter counts the keys written and deleted by committed updates,
// so a test can see that a refused request changed nothing.
type writeCounter struct {
	storage.Backend
	writes atomic.Int64
}

func (c *writeCounter) Update(ctx context.Context, fn func(storage.Tx) error) error {
	return recordUpdate(ctx, c.Backend, fn, func(ws []write) { c.writes.Add(int64(len(ws))) })
}

// badText are the raw JSON string literals no text field accepts, each
// with the problem the API names.
var badText = []struct{ name, literal, problem string }{
	{"NUL", `"a\u0000b"`, "must not contain the control character U+0000"},
	{"ESC", `"\u001b[31mred"`, "must not contain the control character U+001B"},
	{"RLO", "\"abc\u202etxt\"", "must not contain the bidirectional control character U+202E"},
	{"LoneSurrogate", `"a\ud800b"`, "must be valid UTF-8"},
	{"RawInvalidByte", "\"a\xffb\"", "must be valid UTF-8"},
}

// textField is one text field of one route, in a body that is valid
// without the change the test makes.
type textField struct {
	route     string // "POST /path"
	body      map[string]any
	field     string // dotted path
	multiline bool   // free text: a newline is accepted
}

// placeholder marks where a test puts its raw JSON literal.
const placeholder = "\u0001placeholder\u0001"

// rawBody is body with field set to the raw JSON literal lit.
func rawBody(t *testing.T, body map[string]any, field, lit string) []byte {
	t.Helper()
	raw, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	// Set field, which may index arrays ("tags.0"), in the copy.
	parts := strings.Split(field, ".")
	cur := v
	for i, p := range parts {
		last := i == len(parts)-1
		switch c := cur.(type) {
		case map[string]any:
			if last {
				c[p] = placeholder
			} else if c[p] == nil {
				c[p] = map[string]any{}
			}
			cur = c[p]
		case []any:
			n, err := strconv.Atoi(p)
			if err != nil || n >= len(c) {
				t.Fatalf("%s: no element %s", field, p)
			}
			if last {
				c[n] = placeholder
			}
			cur = c[n]
		default:
			t.Fatalf("%s: %s is not an object or array", field, p)
		}
	}
	if raw, err = json.Marshal(v); err != nil {
		t.Fatal(err)
	}
	q, _ := json.Marshal(placeholder)
	if bytes.Count(raw, q) != 1 {
		t.Fatalf("placeholder not set once in %s", raw)
	}
	return bytes.Replace(raw, q, []byte(lit), 1)
}

// TestTextHygiene sends every text rule through representative text
// fields of every package's routes: each refusal is a 422 naming the
// field, and writes nothing.
func TestTextHygiene(t *testing.T) {
	wc := &writeCounter{Backend: memory.New()}
	e := newEnvDB(t, wc)
	tr := newTrees(e)
	cp := e.counterparty(e.key, "", "Ada", "Lovelace")
	pd := e.achDetail(e.key, cp)
	e.fund(e.key, tr.acctRoot, 100_000)
	ent := e.must(201, "POST", "/individual-entities", e.key, individual("Doc Owner")).str("data", "entity", "id")
	hook := map[string]any{"url": "https://example.com/hook", "expires_in": 86400,
		"enabled_events": map[string]any{"all": true}, "description": "main hook", "tags": []string{"ops"}}
	soleTrader := with(individual("Ada Obi"), "business", map[string]any{"name": "Ada Stores",
		"description": "groceries", "category_code": "5411"})
	transfer := transferBody(tr.acctRoot, pd, "t-1", 100)
	transfer["meta"] = map[string]any{"k": "v"}
	fields := []textField{
		// entities
		{"POST /individual-entities", individual("Ada Obi"), "name", false},
		{"POST /individual-entities", individual("Ada Obi"), "person.first_name", false},
		{"POST /individual-entities", individual("Ada Obi"), "address.line_1", false},
		{"POST /individual-entities", individual("Ada Obi"), "meta.tax_id", true},
		{"POST /individual-entities", soleTrader, "business.description", true},
		{"POST /business-entities", business("Acme"), "business.legal_name", false},
		{"POST /business-entities", business("Acme"), "business_officers.0.job_title", false},
		{"POST /documents", doc(ent, "identity", pngBytes, "image/png"), "description", true},
		// ledger
		{"POST /accounts", map[string]any{"type": "checking", "currency": "USD", "display_name": "Main"}, "display_name", false},
		{"POST /accounts", map[string]any{"type": "checking", "currency": "USD", "display_name": "Main", "meta": map[string]any{"k": "v"}}, "meta.k", true},
		{"POST /account-details", map[string]any{"account_id": tr.acctRoot, "account_holder_name": "Ada"}, "account_holder_name", false},
		// payments
		{"POST /counterparties", cpBody("Grace", "Hopper"), "profile.first_name", false},
		{"POST /counterparties", with(cpBody("Grace", "Hopper"), "nickname", "gh"), "nickname", false},
		{"POST /payment-details", achBody(cp), "account_holder_name", false},
		{"POST /transfers", transfer, "narration", true},
		{"POST /transfers", transfer, "unique_reference", false},
		{"POST /transfers", transfer, "meta.k", true},
		{"POST /fx-quotes", map[string]any{"from_currency": "USD", "to_currency": "EUR", "amount_from": 1000}, "to_currency", false},
		// webhooks
		{"POST /entity-webhooks", hook, "description", true},
		{"POST /entity-webhooks", hook, "tags.0", false},
		{"POST /entity-webhooks", hook, "url", false},
		// funding
		{"POST /sandbox/inflows", map[string]any{"account_id": tr.acctRoot, "amount": 100, "narration": "top-up"}, "narration", true},
	}
	refuse := func(t *testing.T, f textField, lit, problem string) {
		t.Helper()
		method, path, _ := strings.Cut(f.route, " ")
		before := wc.writes.Load()
		got := e.do(method, path, e.key, rawBody(t, f.body, f.field, lit))
		if got.Status != 422 || got.code() != "validation_error" {
			t.Fatalf("%s %s = %d %s, want 422 validation_error", f.route, f.field, got.Status, got.Raw)
		}
		msg, ok := got.details()[f.field].(string)
		if !ok {
			t.Fatalf("%s: details do not name %s: %s", f.route, f.field, got.Raw)
		}
		if problem != "" && msg != problem {
			t.Errorf("%s %s: problem %q, want %q", f.route, f.field, msg, problem)
		}
		if n := wc.writes.Load() - before; n != 0 {
			t.Errorf("%s: a refused request wrote %d keys", f.route, n)
		}
	}
	for _, rule := range badText {
		t.Run(rule.name, func(t *testing.T) {
			for _, f := range fields {
				refuse(t, f, rule.literal, rule.problem)
			}
		})
	}
	t.Run("NewlineOnlyInFreeText", func(t *testing.T) {
		for i, f := range fields {
			if f.multiline {
				continue
			}
			refuse(t, f, `"line one\nline two"`, "")
			if i == 0 {
				refuse(t, f, "\"tab\\there\"", "must be a single line: no line breaks or tabs")
			}
		}
		// Free text takes a newline (and CRLF): each of these succeeds.
		for _, f := range fields {
			if !f.multiline || strings.HasPrefix(f.field, "meta.") || f.route == "POST /documents" {
				continue
			}
			method, path, _ := strings.Cut(f.route, " ")
			body := f.body
			if f.route == "POST /transfers" {
				body = with(body, "unique_reference", "t-newline")
			}
			before := wc.writes.Load()
			got := e.do(method, path, e.key, rawBody(t, body, f.field, `"line one\r\nline two\n\tindented"`))
			if got.Status != 201 {
				t.Errorf("%s %s with a newline = %d %.300s, want 201", f.route, f.field, got.Status, got.Raw)
			}
			if wc.writes.Load() == before {
				t.Errorf("%s: an accepted request wrote nothing, so the count proves nothing", f.route)
			}
		}
	})
	t.Run("ArraysInMeta", func(t *testing.T) {
		for _, f := range []textField{
			{"POST /individual-entities", individual("Ada Obi"), "meta.tax_id", false},
			{"POST /business-entities", business("Acme"), "meta.registration_number", false},
			{"POST /accounts", map[string]any{"type": "checking", "currency": "USD", "display_name": "Main"}, "meta.k", false},
			{"POST /transfers", transfer, "meta.k", false},
		} {
			refuse(t, f, `["TIN-1","TIN-2"]`, "must be a string, not an array")
		}
	})
	// SPEC makes business meta.sales_channels the one array of strings.
	t.Run("SalesChannelsIsAnArray", func(t *testing.T) {
		f := textField{"POST /business-entities", business("Acme"), "meta.sales_channels", false}
		refuse(t, f, `"online, retail"`, "must be an array of strings, not a string")
		// An item that is not a string is named by its own path.
		got := e.do("POST", "/business-entities", e.key, rawBody(t, f.body, f.field, `["online", 7]`))
		if msg, _ := got.details()["meta.sales_channels.1"].(string); got.Status != 422 || msg != "must be a string, not a number" {
			t.Errorf(`sales_channels ["online", 7] = %d %.300s, want 422 naming meta.sales_channels.1: must be a string, not a number`, got.Status, got.Raw)
		}
		got = e.do("POST", "/business-entities", e.key, rawBody(t, f.body, f.field, `["online","retail"]`))
		if got.Status != 201 {
			t.Fatalf("sales_channels as an array = %d %.300s, want 201", got.Status, got.Raw)
		}
		if !strings.Contains(string(got.Raw), `"sales_channels":["online","retail"]`) {
			t.Errorf("response does not carry the array: %.600s", got.Raw)
		}
	})
}
