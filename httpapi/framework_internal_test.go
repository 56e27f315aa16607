package httpapi

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/corebank/corebank"
	"github.com/corebank/corebank/storage/memory"
)

// These tests drive the shared machinery (errors, decoding, cursors,
// idempotency, panics) through stub routes; routes_test.go covers the real
// routes from outside the package.

type echoReq struct {
	Name   string `json:"name"`
	Amount int64  `json:"amount"`
	Nested struct {
		Inner string `json:"inner"`
	} `json:"nested"`
	Items []struct {
		X int `json:"x"`
	} `json:"items"`
}

type fw struct {
	h       *handler
	clock   *clock.Mock
	calls   atomic.Int64
	gate    chan struct{}
	entered chan struct{}
}

var stubItems = func() []string {
	out := make([]string, 53)
	for i := range out {
		out[i] = "item" + strconv.Itoa(100+i)
	}
	return out
}()

func newFW(t testing.TB) *fw {
	t.Helper()
	f := &fw{clock: clock.NewMock(), gate: make(chan struct{}), entered: make(chan struct{}, 4)}
	f.clock.Set(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	db := memory.New()
	t.Cleanup(func() { db.Close() })
	h := newHandler(db, &Options{Clock: f.clock, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	h.auth = func(ctx context.Context, secret string) (corebank.Caller, error) {
		switch secret {
		case "full":
			return corebank.Caller{KeyID: "k1", EntityID: "E1"}, nil
		case "other":
			return corebank.Caller{KeyID: "k2", EntityID: "E2"}, nil
		case "ro":
			return corebank.Caller{KeyID: "k3", EntityID: "E1", ReadOnly: true}, nil
		}
		return corebank.Caller{}, corebank.E(corebank.KindUnauthorized, "unauthorized", "unknown key")
	}
	h.register([]route{
		{"POST /echo", func(h *handler, x *exchange, r *http.Request) error {
			var req echoReq
			if err := decodeJSON(x.body, &req); err != nil {
				return err
			}
			if req.Name == "" {
				return corebank.InvalidField("name", "is required")
			}
			f.calls.Add(1)
			return ok(x, http.StatusCreated, "echoed", req)
		}},
		{"POST /slow", func(h *handler, x *exchange, r *http.Request) error {
			f.calls.Add(1)
			f.entered <- struct{}{}
			<-f.gate
			return ok(x, http.StatusCreated, "slow", map[string]int64{"n": f.calls.Load()})
		}},
		{"POST /card", func(h *handler, x *exchange, r *http.Request) error {
			f.calls.Add(1)
			return ok(x, http.StatusCreated, "card", map[string]any{"id": "c1", "number": "4111111111111111", "cvv": "123", "expiry_month": 12})
		}},
		{"POST /panic-late", func(h *handler, x *exchange, r *http.Request) error {
			_ = ok[any](x, http.StatusCreated, "half", nil)
			panic("boom after writing")
		}},
		{"GET /panic", func(h *handler, x *exchange, r *http.Request) error { panic("boom") }},
		{"POST /panic", func(h *handler, x *exchange, r *http.Request) error { panic("boom") }},
		{"GET /plain", func(h *handler, x *exchange, r *http.Request) error { return io.ErrUnexpectedEOF }},
		{"GET /kind/{k}", func(h *handler, x *exchange, r *http.Request) error {
			k, _ := strconv.Atoi(r.PathValue("k"))
			e := corebank.E(corebank.Kind(k), "", "")
			if corebank.Kind(k) == corebank.KindRateLimited {
				e = e.WithData(map[string]any{"retry_after": 30, "limit_type": "card_create", "current_count": 21, "limit": 20})
			}
			return e
		}},
		{"GET /list", func(h *handler, x *exchange, r *http.Request) error {
			q := newQuery(r.URL.RawQuery)
			filters := map[string]string{}
			if v := q.str("prefix"); v != "" {
				filters["prefix"] = v
			}
			fh := filterHash("stub", filters)
			opts := h.pageParams(q, fh)
			if err := q.err(); err != nil {
				return err
			}
			return ok2(x, list(h, "items", stubPage(opts), opts.Limit, fh, filters))
		}},
	})
	f.h = h
	return f
}

func ok2(w http.ResponseWriter, v any) error { writeJSON(w, 200, v); return nil }

func stubPage(o corebank.ListOptions) *corebank.Page[string] {
	items := stubItems
	var lo, hi int
	if o.After != "" {
		lo = sort.SearchStrings(items, o.After) + 1
		hi = min(lo+o.Limit, len(items))
	} else if o.Before != "" {
		hi = sort.SearchStrings(items, o.Before)
		lo = max(hi-o.Limit, 0)
	} else {
		hi = min(o.Limit, len(items))
	}
	p := &corebank.Page[string]{Items: items[lo:hi], HasPrevious: lo > 0, HasNext: hi < len(items), Total: int64(len(items))}
	if lo < hi {
		p.Previous, p.Next = items[lo], items[hi-1]
	}
	return p
}

type resp struct {
	status int
	header http.Header
	body   map[string]any
	raw    string
}

func (f *fw) do(t testing.TB, method, path, key string, body []byte, hdr ...string) resp {
	t.Helper()
	r := httptest.NewRequest(method, path, bytes.NewReader(body))
	if key != "" {
		r.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	f.h.ServeHTTP(w, r)
	out := resp{status: w.Code, header: w.Header(), raw: w.Body.String()}
	_ = json.Unmarshal(w.Body.Bytes(), &out.body)
	return out
}

func (r resp) code() string {
	if e, ok := r.body["error"].(map[string]any); ok {
		s, _ := e["code"].(string)
		return s
	}
	s, _ := r.body["code"].(string)
	return s
}

func (r resp) detail(field string) string {
	d, _ := r.body["details"].(map[string]any)
	s, _ := d[field].(string)
	return s
}

func TestFramework(t *testing.T) {
	f := newFW(t)
	deep := strings.Repeat("[", 100000) + strings.Repeat("]", 100000)
	huge := append([]byte(`{"name":"`), bytes.Repeat([]byte("a"), 11<<20)...)
	huge = append(huge, `"}`...)
	tests := []struct {
		name, method, path, key, body string
		status                        int
		code, field                   string
	}{
		{"OK", "POST", "/echo", "full", `{"name":"a","amount":5}`, 201, "", ""},
		{"OKEmptyBodyValidated", "POST", "/echo", "full", ``, 422, "validation_error", "name"},
		{"ErrNoKey", "POST", "/echo", "", `{}`, 401, "unauthorized", ""},
		{"ErrBadKey", "GET", "/list", "nope", ``, 401, "unauthorized", ""},
		{"ErrReadOnly", "POST", "/echo", "ro", `{"name":"a"}`, 403, "forbidden", ""},
		{"OKReadOnlyGet", "GET", "/list", "ro", ``, 200, "", ""},
		{"ErrUnknownField", "POST", "/echo", "full", `{"name":"a","entity_idd":"x"}`, 422, "validation_error", "entity_idd"},
		{"ErrUnknownNestedField", "POST", "/echo", "full", `{"name":"a","nested":{"inner":"x","outer":1}}`, 422, "validation_error", "nested.outer"},
		{"ErrUnknownInArray", "POST", "/echo", "full", `{"name":"a","items":[{"x":1},{"y":2}]}`, 422, "validation_error", "items.1.y"},
		{"ErrWrongType", "POST", "/echo", "full", `{"name":5}`, 422, "validation_error", "name"},
		{"ErrWrongNestedType", "POST", "/echo", "full", `{"name":"a","nested":{"inner":true}}`, 422, "validation_error", "nested.inner"},
		{"ErrHugeNumber", "POST", "/echo", "full", `{"name":"a","amount":1e40}`, 422, "validation_error", "amount"},
		{"ErrFraction", "POST", "/echo", "full", `{"name":"a","amount":1.5}`, 422, "validation_error", "amount"},
		{"ErrNotObject", "POST", "/echo", "full", `[1,2]`, 422, "validation_error", "body"},
		{"ErrMalformed", "POST", "/echo", "full", `{"name":`, 422, "validation_error", "name"},
		{"ErrMalformedValue", "POST", "/echo", "full", `{"name": tru}`, 422, "validation_error", "name"},
		{"ErrMalformedBetweenMembers", "POST", "/echo", "full", `{"name":"a",`, 422, "validation_error", "body"},
		{"ErrMalformed2", "POST", "/echo", "full", `{name:"a"}`, 422, "validation_error", "body"},
		{"ErrTrailing", "POST", "/echo", "full", `{"name":"a"} {}`, 422, "validation_error", "body"},
		{"ErrTrailingGarbage", "POST", "/echo", "full", `{"name":"a"}x`, 422, "validation_error", "body"},
		{"ErrDeep", "POST", "/echo", "full", deep, 422, "validation_error", "body"},
		{"ErrTooLarge", "POST", "/echo", "full", string(huge), 413, "request_too_large", ""},
		{"ErrNoRoute", "GET", "/nowhere", "full", ``, 404, "not_found", ""},
		{"ErrMethod", "DELETE", "/echo", "full", ``, 405, "method_not_allowed", ""},
		{"ErrPanic", "GET", "/panic", "full", ``, 500, "internal_error", ""},
		{"ErrPlain", "GET", "/plain", "full", ``, 500, "internal_error", ""},
		{"ErrLimit0", "GET", "/list?limit=0", "full", ``, 422, "validation_error", "limit"},
		{"ErrLimit101", "GET", "/list?limit=101", "full", ``, 422, "validation_error", "limit"},
		{"ErrLimitText", "GET", "/list?limit=ten", "full", ``, 422, "validation_error", "limit"},
		{"ErrCursor", "GET", "/list?cursor=abc", "full", ``, 422, "validation_error", "cursor"},
		{"ErrIdemKeyLong", "POST", "/echo", "full", `{"name":"a"}`, 422, "validation_error", "Idempotency-Key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var hdr []string
			if tt.name == "ErrIdemKeyLong" {
				hdr = []string{"Idempotency-Key", strings.Repeat("k", 300)}
			}
			got := f.do(t, tt.method, tt.path, tt.key, []byte(tt.body), hdr...)
			if got.status != tt.status || got.code() != tt.code {
				t.Fatalf("got %d %q, want %d %q: %.300s", got.status, got.code(), tt.status, tt.code, got.raw)
			}
			if tt.field != "" && got.detail(tt.field) == "" {
				t.Fatalf("details do not name %q: %.300s", tt.field, got.raw)
			}
			if got.status == 500 && strings.Contains(got.raw, "boom") {
				t.Fatalf("500 leaks the cause: %s", got.raw)
			}
			if got.status == 401 || got.status == 403 {
				if _, ok := got.body["error"].(map[string]any); !ok {
					t.Fatalf("auth error not in {error:{}} form: %s", got.raw)
				}
			} else if got.status >= 400 && got.body["status"] != "error" {
				t.Fatalf("error body lacks status: error: %s", got.raw)
			}
		})
	}
}

func TestKindStatus(t *testing.T) {
	f := newFW(t)
	want := map[corebank.Kind]int{
		corebank.KindInternal: 500, corebank.KindInvalid: 422, corebank.KindNotFound: 404,
		corebank.KindConflict: 409, corebank.KindRejected: 422, corebank.KindUnavailable: 503,
		corebank.KindForbidden: 403, corebank.KindUnauthorized: 401, corebank.KindRateLimited: 429,
		corebank.KindTooLarge: 413, corebank.KindBadRequest: 400,
	}
	for k, status := range want {
		got := f.do(t, "GET", "/kind/"+strconv.Itoa(int(k)), "full", nil)
		if got.status != status {
			t.Errorf("%v: got %d, want %d", k, got.status, status)
		}
		if k == corebank.KindRateLimited {
			for _, field := range []string{"retry_after", "limit_type", "current_count", "limit"} {
				if _, ok := got.body[field]; !ok {
					t.Errorf("429 body lacks %s: %s", field, got.raw)
				}
			}
			if got.header.Get("Retry-After") != "30" {
				t.Errorf("Retry-After = %q", got.header.Get("Retry-After"))
			}
		}
	}
}

func TestCursorWalk(t *testing.T) {
	f := newFW(t)
	for _, limit := range []int{1, 7, 20, 53, 100} {
		var seen []string
		path := "/list?limit=" + strconv.Itoa(limit)
		var last map[string]any
		for pages := 0; ; pages++ {
			if pages > 100 {
				t.Fatal("walk does not end")
			}
			got := f.do(t, "GET", path, "full", nil)
			if got.status != 200 {
				t.Fatalf("%d %s", got.status, got.raw)
			}
			for _, it := range got.body["data"].([]any) {
				seen = append(seen, it.(string))
			}
			last = got.body["meta"].(map[string]any)["pagination"].(map[string]any)
			if last["has_next"] != true {
				if last["next_cursor"] != nil {
					t.Fatalf("next_cursor without has_next: %v", last)
				}
				break
			}
			path = "/list?limit=" + strconv.Itoa(limit) + "&cursor=" + last["next_cursor"].(string)
		}
		if strings.Join(seen, ",") != strings.Join(stubItems, ",") {
			t.Fatalf("limit %d forward walk: %v", limit, seen)
		}
		// And back from the last page.
		var back []string
		pag := last
		for pages := 0; pag["has_previous"] == true; pages++ {
			if pages > 100 {
				t.Fatal("walk does not end")
			}
			got := f.do(t, "GET", "/list?limit="+strconv.Itoa(limit)+"&prev_cursor="+pag["previous_cursor"].(string), "full", nil)
			if got.status != 200 {
				t.Fatalf("%d %s", got.status, got.raw)
			}
			var page []string
			for _, it := range got.body["data"].([]any) {
				page = append(page, it.(string))
			}
			back = append(page, back...)
			pag = got.body["meta"].(map[string]any)["pagination"].(map[string]any)
		}
		lastPageLen := len(stubItems) % limit
		if lastPageLen == 0 {
			lastPageLen = limit
		}
		if want := stubItems[:len(stubItems)-lastPageLen]; strings.Join(back, ",") != strings.Join(want, ",") {
			t.Fatalf("limit %d backward walk:\n got %v\nwant %v", limit, back, want)
		}
	}
}

func TestCursorTamper(t *testing.T) {
	f := newFW(t)
	got := f.do(t, "GET", "/list?limit=5", "full", nil)
	cur := got.body["meta"].(map[string]any)["pagination"].(map[string]any)["next_cursor"].(string)
	for i := 0; i < len(cur); i++ {
		b := []byte(cur)
		if b[i] == 'A' {
			b[i] = 'B'
		} else {
			b[i] = 'A'
		}
		got := f.do(t, "GET", "/list?limit=5&cursor="+string(b), "full", nil)
		if got.status == 200 {
			// Changing the last character's unused low bits can decode to
			// the same bytes; only a different byte string must fail.
			if string(b) != cur && !sameBytes(cur, string(b)) {
				t.Fatalf("tampered cursor %q accepted", b)
			}
			continue
		}
		if got.status != 422 || got.detail("cursor") == "" {
			t.Fatalf("tampered cursor: %d %s", got.status, got.raw)
		}
	}
	// A cursor issued under other filters is foreign.
	got = f.do(t, "GET", "/list?limit=5&cursor="+cur+"&prefix=x", "full", nil)
	if got.status != 422 || got.detail("cursor") == "" {
		t.Fatalf("foreign cursor: %d %s", got.status, got.raw)
	}
	// Another key's cursor.
	other := cursors{key: []byte("other key")}
	got = f.do(t, "GET", "/list?cursor="+other.encode("item105", "n", filterHash("stub", map[string]string{})), "full", nil)
	if got.status != 422 {
		t.Fatalf("cursor signed with another key: %d %s", got.status, got.raw)
	}
}

func sameBytes(a, b string) bool {
	x, err1 := decodeB64(a)
	y, err2 := decodeB64(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

func TestIdempotency(t *testing.T) {
	t.Run("OKReplay", func(t *testing.T) {
		f := newFW(t)
		body := []byte(`{"name":"a","amount":1}`)
		first := f.do(t, "POST", "/echo", "full", body, "Idempotency-Key", "k1")
		second := f.do(t, "POST", "/echo", "full", body, "Idempotency-Key", "k1")
		if first.status != 201 || second.status != 201 || first.raw != second.raw {
			t.Fatalf("first %d %s, second %d %s", first.status, first.raw, second.status, second.raw)
		}
		if first.header.Get("Idempotent-Replayed") != "" || second.header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("replay headers: %q %q", first.header.Get("Idempotent-Replayed"), second.header.Get("Idempotent-Replayed"))
		}
		if n := f.calls.Load(); n != 1 {
			t.Fatalf("ran %d times", n)
		}
		// Another entity's same key is its own.
		third := f.do(t, "POST", "/echo", "other", body, "Idempotency-Key", "k1")
		if third.status != 201 || third.header.Get("Idempotent-Replayed") != "" || f.calls.Load() != 2 {
			t.Fatalf("other entity: %d %v", third.status, third.header)
		}
	})
	t.Run("ErrMismatch", func(t *testing.T) {
		f := newFW(t)
		f.do(t, "POST", "/echo", "full", []byte(`{"name":"a"}`), "Idempotency-Key", "k1")
		got := f.do(t, "POST", "/echo", "full", []byte(`{"name":"b"}`), "Idempotency-Key", "k1")
		if got.status != 422 || got.code() != "idempotency_key_mismatch" {
			t.Fatalf("%d %s", got.status, got.raw)
		}
	})
	t.Run("OKValidationNotStored", func(t *testing.T) {
		f := newFW(t)
		got := f.do(t, "POST", "/echo", "full", []byte(`{"name":""}`), "Idempotency-Key", "k1")
		if got.status != 422 {
			t.Fatalf("%d %s", got.status, got.raw)
		}
		got = f.do(t, "POST", "/echo", "full", []byte(`{"name":"fixed"}`), "Idempotency-Key", "k1")
		if got.status != 201 || got.header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("corrected retry: %d %s", got.status, got.raw)
		}
	})
	t.Run("OKExpiry", func(t *testing.T) {
		f := newFW(t)
		f.do(t, "POST", "/echo", "full", []byte(`{"name":"a"}`), "Idempotency-Key", "k1")
		f.clock.Add(23 * time.Hour)
		if got := f.do(t, "POST", "/echo", "full", []byte(`{"name":"a"}`), "Idempotency-Key", "k1"); got.header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("not replayed within 24h: %d", got.status)
		}
		f.clock.Add(time.Hour + time.Second)
		got := f.do(t, "POST", "/echo", "full", []byte(`{"name":"b"}`), "Idempotency-Key", "k1")
		if got.status != 201 || got.header.Get("Idempotent-Replayed") != "" || f.calls.Load() != 2 {
			t.Fatalf("after expiry: %d %s", got.status, got.raw)
		}
		f.clock.Add(25 * time.Hour)
		n, err := PurgeIdempotency(context.Background(), f.h.db, f.clock.Now())
		if err != nil || n != 1 {
			t.Fatalf("purge: %d %v", n, err)
		}
	})
	t.Run("OKConcurrentRunsOnce", func(t *testing.T) {
		f := newFW(t)
		var wg sync.WaitGroup
		results := make([]resp, 5)
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[0] = f.do(t, "POST", "/slow", "full", []byte(`{}`), "Idempotency-Key", "k1")
		}()
		<-f.entered
		for i := 1; i < 5; i++ {
			results[i] = f.do(t, "POST", "/slow", "full", []byte(`{}`), "Idempotency-Key", "k1")
		}
		close(f.gate)
		wg.Wait()
		if results[0].status != 201 {
			t.Fatalf("first: %d %s", results[0].status, results[0].raw)
		}
		for _, r := range results[1:] {
			if r.status != 409 || r.code() != "conflict" {
				t.Fatalf("duplicate in flight: %d %s", r.status, r.raw)
			}
		}
		if got := f.do(t, "POST", "/slow", "full", []byte(`{}`), "Idempotency-Key", "k1"); got.header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("after completion: %d %s", got.status, got.raw)
		}
		// Once it completed, a retry meeting another retry of it in flight
		// replays too, rather than 409 (found by the simulator: two
		// retries of one request in one concurrent step).
		k := idemKey("E1", "k1") // the "full" key's entity
		if !f.h.inflight.claim(k) {
			t.Fatal("the key is still claimed")
		}
		got := f.do(t, "POST", "/slow", "full", []byte(`{}`), "Idempotency-Key", "k1")
		f.h.inflight.release(k)
		if got.status != 201 || got.header.Get("Idempotent-Replayed") != "true" || got.raw != results[0].raw {
			t.Fatalf("retry beside a retry in flight: %d %s", got.status, got.raw)
		}
		if n := f.calls.Load(); n != 1 {
			t.Fatalf("ran %d times", n)
		}
	})
	t.Run("OKPanicReleases", func(t *testing.T) {
		f := newFW(t)
		if got := f.do(t, "POST", "/panic", "full", nil, "Idempotency-Key", "k1"); got.status != 500 {
			t.Fatalf("%d", got.status)
		}
		if got := f.do(t, "POST", "/panic", "full", nil, "Idempotency-Key", "k1"); got.status != 500 || got.code() != "internal_error" {
			t.Fatalf("key not released after panic: %d %s", got.status, got.raw)
		}
	})
	t.Run("OKPanicAfterCapturedWrite", func(t *testing.T) {
		f := newFW(t)
		for i := 0; i < 2; i++ {
			got := f.do(t, "POST", "/panic-late", "full", nil, "Idempotency-Key", "k1")
			if got.status != 500 || got.code() != "internal_error" || got.header.Get("Idempotent-Replayed") != "" {
				t.Fatalf("try %d: %d %s", i, got.status, got.raw)
			}
		}
	})
	t.Run("OKCardRedacted", func(t *testing.T) {
		f := newFW(t)
		first := f.do(t, "POST", "/card", "full", nil, "Idempotency-Key", "k1")
		if !strings.Contains(first.raw, "4111111111111111") {
			t.Fatalf("first response lacks the number: %s", first.raw)
		}
		second := f.do(t, "POST", "/card", "full", nil, "Idempotency-Key", "k1")
		if second.header.Get("Idempotent-Replayed") != "true" || strings.Contains(second.raw, "4111") || strings.Contains(second.raw, `"123"`) {
			t.Fatalf("replay: %s", second.raw)
		}
	})
}

func decodeB64(s string) ([]byte, error) { return base64.RawURLEncoding.DecodeString(s) }
