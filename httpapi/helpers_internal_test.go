package httpapi

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/entities"
	"github.com/corebank/corebank/storage/memory"
)

func TestQueryEntityID(t *testing.T) {
	for _, tc := range []struct {
		name, raw, body, want string
		problem               string // the parameter a problem is reported on
	}{
		{"OKNone", "", "", "", ""},
		{"OKQuery", "entity_id=E", "", "E", ""},
		{"OKBody", "", "B", "B", ""},
		{"OKBodyOtherParams", "limit=5", "B", "B", ""},
		{"OKBoth", "entity_id=E", "E", "E", ""},
		{"OKTrimmed", "entity_id=+E+", "", "E", ""},
		{"OKEmptyQuery", "entity_id=", "B", "B", ""},
		{"ErrDiffer", "entity_id=E", "B", "E", "entity_id"},
		{"ErrTwice", "entity_id=E&entity_id=F", "", "E", "entity_id"},
		{"ErrMalformed", "%zz", "B", "B", "query"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := newQuery(tc.raw)
			got := q.entityID(tc.body)
			if got != tc.want {
				t.Errorf("entityID = %q, want %q", got, tc.want)
			}
			want := []string{}
			if tc.problem != "" {
				want = []string{tc.problem}
			}
			got = strings.Join(slices.Sorted(maps.Keys(q.problems)), ",")
			if got != strings.Join(want, ",") {
				t.Errorf("problems on %q, want %q", got, want)
			}
		})
	}
}

func TestDecodeWithEntityID(t *testing.T) {
	type patch struct {
		Name *string `json:"name"`
	}
	for _, tc := range []struct {
		name, body, entity, field string // field: the detail an error names
		wantName                  string
	}{
		{"OKEmpty", ``, "", "", ""},
		{"OKNoEntity", `{"name":"n"}`, "", "", "n"},
		{"OKEntity", `{"name":"n","entity_id":"E"}`, "E", "", "n"},
		{"OKEntityOnly", `{"entity_id":"E"}`, "E", "", ""},
		{"ErrEntityType", `{"entity_id":5}`, "", "entity_id", ""},
		{"ErrUnknown", `{"entity_id":"E","nick":"n"}`, "", "nick", ""},
		{"ErrEntityCase", `{"Entity_ID":"E"}`, "", "Entity_ID", ""},
		{"ErrMalformed", `{"name":`, "", "name", ""},
		{"ErrNotObject", `[1]`, "", "body", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p patch
			entity, err := decodeWithEntityID([]byte(tc.body), &p)
			if tc.field != "" {
				var e *corebank.Error
				if !errors.As(err, &e) || e.Fields[tc.field] == "" {
					t.Fatalf("err = %v, want one naming %s", err, tc.field)
				}
				return
			}
			if err != nil || entity != tc.entity {
				t.Fatalf("entity %q, err %v; want %q", entity, err, tc.entity)
			}
			if got := cmp.Or(p.Name, new(string)); *got != tc.wantName {
				t.Errorf("name %q, want %q", *got, tc.wantName)
			}
		})
	}
}

// echoed is what the adapter stubs answer: the entity_id their service
// got, the path's id, and the body's entity_id as the service saw it.
type echoed struct {
	Entity     string `json:"entity"`
	ID         string `json:"id"`
	BodyEntity string `json:"body_entity"`
}

type echoBody struct {
	EntityID string `json:"entity_id"`
	Name     string `json:"name"`
}

// newAdapterHandler is a handler whose routes are stubs built from the
// adapters; its one key acts for entity E1.
func newAdapterHandler(t *testing.T) *handler {
	t.Helper()
	db := memory.New()
	t.Cleanup(func() { db.Close() })
	h := newHandler(db, &Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	h.auth = func(ctx context.Context, secret string) (corebank.Caller, error) {
		if secret != "full" {
			return corebank.Caller{}, errUnauthorized
		}
		return corebank.Caller{KeyID: "k1", EntityID: "E1"}, nil
	}
	notYours := corebank.NotFound("entity")
	h.register([]route{
		{"POST /both", func(h *handler, x *exchange, r *http.Request) error {
			return created(x, r, enveloped(http.StatusCreated, "made"), func(q *echoBody) *string { return &q.EntityID },
				func(_ context.Context, _ corebank.Caller, req echoBody) (echoed, error) {
					return echoed{Entity: req.EntityID, BodyEntity: req.EntityID}, nil
				})
		}},
		{"POST /bodyonly", func(h *handler, x *exchange, r *http.Request) error {
			return created(x, r, bare(http.StatusCreated), nil,
				func(_ context.Context, _ corebank.Caller, req echoBody) (echoed, error) {
					return echoed{BodyEntity: req.EntityID}, nil
				})
		}},
		{"GET /one/{id}", func(h *handler, x *exchange, r *http.Request) error {
			return fetched(x, r, enveloped(http.StatusOK, "got"), func(_ context.Context, _ corebank.Caller, entity, id string) (echoed, error) {
				return echoed{Entity: entity, ID: id}, nil
			})
		}},
		{"POST /one/{id}/move", func(h *handler, x *exchange, r *http.Request) error {
			var req echoBody
			return moved(x, r, enveloped(http.StatusOK, "moved"), &req, &req.EntityID,
				func(_ context.Context, _ corebank.Caller, entity, id string) (echoed, error) {
					return echoed{Entity: entity, ID: id, BodyEntity: req.EntityID}, nil
				})
		}},
		{"PATCH /one/{id}", func(h *handler, x *exchange, r *http.Request) error {
			var req withEntity[struct {
				Name string `json:"name"`
			}]
			return moved(x, r, enveloped(http.StatusOK, "patched"), &req, &req.EntityID,
				func(_ context.Context, _ corebank.Caller, entity, id string) (echoed, error) {
					return echoed{Entity: entity, ID: id, BodyEntity: req.Body.Name}, nil
				})
		}},
		{"GET /one/{id}/file", func(h *handler, x *exchange, r *http.Request) error {
			return fetched(x, r, attachment(r.PathValue("id")), func(context.Context, corebank.Caller, string, string) (*entities.DocumentFile, error) {
				return &entities.DocumentFile{ContentType: "image/png", Data: []byte("png")}, nil
			})
		}},
		{"GET /list", func(h *handler, x *exchange, r *http.Request) error {
			return listed(x, r, listing[string]{name: "stub", message: "listed",
				filters: func(q *query, filters map[string]string) { q.pick(filters, "prefix") },
				read: func(_ context.Context, _ corebank.Caller, l listRequest) (*corebank.Page[string], string, error) {
					if l.entityID == "foreign" {
						return nil, "", notYours
					}
					return stubPage(l.opts), "", nil
				}})
		}},
	})
	return h
}

func TestAdapters(t *testing.T) {
	h := newAdapterHandler(t)
	do := func(method, target, body string) (int, map[string]any, http.Header) {
		t.Helper()
		r := httptest.NewRequest(method, target, strings.NewReader(body))
		r.Header.Set("Authorization", "Bearer full")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		var out map[string]any
		_ = json.Unmarshal(w.Body.Bytes(), &out)
		return w.Code, out, w.Header()
	}
	data := func(b map[string]any) map[string]any {
		if d, ok := b["data"].(map[string]any); ok {
			return d
		}
		return b
	}
	for _, tc := range []struct {
		name, method, target, body string
		status                     int
		entity, bodyEntity, field  string
	}{
		{"OKCreatedBody", "POST", "/both", `{"entity_id":"B"}`, 201, "B", "B", ""},
		{"OKCreatedQuery", "POST", "/both?entity_id=Q", `{}`, 201, "Q", "Q", ""},
		{"OKCreatedAgree", "POST", "/both?entity_id=Q", `{"entity_id":"Q"}`, 201, "Q", "Q", ""},
		{"ErrCreatedDiffer", "POST", "/both?entity_id=Q", `{"entity_id":"B"}`, 422, "", "", "entity_id"},
		{"ErrCreatedUnknownField", "POST", "/both", `{"nick":"n"}`, 422, "", "", "nick"},
		// A route that reads no entity_id of its own leaves the query alone.
		{"OKBodyOnlyIgnoresQuery", "POST", "/bodyonly?entity_id=Q", `{"entity_id":"B"}`, 201, "", "B", ""},
		{"OKBodyOnlyIgnoresBadQuery", "POST", "/bodyonly?entity_id=Q&entity_id=R", `{}`, 201, "", "", ""},
		{"OKFetched", "GET", "/one/7?entity_id=Q", ``, 200, "Q", "", ""},
		{"OKFetchedNone", "GET", "/one/7", ``, 200, "", "", ""},
		{"ErrFetchedTwice", "GET", "/one/7?entity_id=Q&entity_id=R", ``, 422, "", "", "entity_id"},
		// moved gives run the merged entity_id and leaves the body's in req.
		{"OKMovedQuery", "POST", "/one/7/move?entity_id=Q", `{"name":"n"}`, 200, "Q", "", ""},
		{"OKMovedBody", "POST", "/one/7/move", `{"entity_id":"B"}`, 200, "B", "B", ""},
		{"ErrMovedDiffer", "POST", "/one/7/move?entity_id=Q", `{"entity_id":"B"}`, 422, "", "", "entity_id"},
		{"OKWithEntity", "PATCH", "/one/7?entity_id=Q", `{"name":"n","entity_id":"Q"}`, 200, "Q", "n", ""},
		{"ErrWithEntityDiffer", "PATCH", "/one/7?entity_id=Q", `{"entity_id":"B"}`, 422, "", "", "entity_id"},
		{"ErrWithEntityType", "PATCH", "/one/7", `{"entity_id":1}`, 422, "", "", "entity_id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body, _ := do(tc.method, tc.target, tc.body)
			if status != tc.status {
				t.Fatalf("%d, want %d: %v", status, tc.status, body)
			}
			if tc.field != "" {
				if d, _ := body["details"].(map[string]any); d[tc.field] == nil {
					t.Fatalf("details do not name %s: %v", tc.field, body)
				}
				return
			}
			d := data(body)
			if d["entity"] != tc.entity || d["body_entity"] != tc.bodyEntity {
				t.Errorf("entity %v, body entity %v; want %q, %q", d["entity"], d["body_entity"], tc.entity, tc.bodyEntity)
			}
		})
	}

	t.Run("OKForms", func(t *testing.T) {
		if _, b, _ := do("POST", "/both", `{}`); b["status"] != "success" || b["message"] != "made" {
			t.Errorf("enveloped: %v", b)
		}
		if _, b, _ := do("POST", "/bodyonly", `{}`); b["status"] != nil || b["data"] != nil {
			t.Errorf("bare: %v", b)
		}
		status, _, hd := do("GET", "/one/7/file", ``)
		if status != 200 || hd.Get("Content-Type") != "image/png" || hd.Get("Content-Disposition") != `attachment; filename="7.png"` ||
			hd.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("attachment: %d %v", status, hd)
		}
	})

	t.Run("OKListed", func(t *testing.T) {
		status, b, _ := do("GET", "/list?limit=5&prefix=x", ``)
		meta, _ := b["meta"].(map[string]any)
		applied, _ := meta["filters_applied"].(map[string]any)
		if status != 200 || len(b["data"].([]any)) != 5 || applied["entity_id"] != "E1" || applied["prefix"] != "x" {
			t.Fatalf("%d %v", status, b)
		}
	})
	t.Run("ErrListedForeignBeforeCursor", func(t *testing.T) {
		// A bad cursor is reported only once the service has answered, so
		// that a foreign entity is 404 first.
		if status, b, _ := do("GET", "/list?entity_id=foreign&cursor=bogus", ``); status != 404 {
			t.Errorf("%d %v", status, b)
		}
		if status, b, _ := do("GET", "/list?cursor=bogus", ``); status != 422 {
			t.Errorf("%d %v", status, b)
		}
	})
	t.Run("ErrListedProblemsTogether", func(t *testing.T) {
		status, b, _ := do("GET", "/list?limit=0&entity_id=a&entity_id=b&prefix=1&prefix=2", ``)
		d, _ := b["details"].(map[string]any)
		if status != 422 || d["limit"] == nil || d["entity_id"] == nil || d["prefix"] == nil {
			t.Errorf("%d %v", status, b)
		}
	})
}
