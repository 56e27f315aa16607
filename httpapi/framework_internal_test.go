package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/corebank/corebank"
	"github.com/corebank/corebank/storage/memory"
)

// fw is the harness of the tests that drive the shared machinery through
// stub routes: errors (errors_internal_test.go), decoding and panics
// (handler_internal_test.go), cursors (cursor_internal_test.go) and
// idempotency (idempotency_internal_test.go); routes_test.go and the
// resource files' tests cover the real routes from outside the package.

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
