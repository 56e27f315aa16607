package httpapi

// The helpers every resource file shares: the four adapters a route
// handler is built from, the one reader of entity_id, typed query
// parameters, and the guards of the routes whose service is optional.
//
// # Adapters
//
// A route handler is one call of an adapter, which reads the request,
// runs the service method as the caller and answers what it returned:
//
//   - created: a create. The body decoded strictly into the route's
//     request type, its entity_id read, create run.
//   - fetched: a read of the object the path's {id} names (or of the
//     entity's whole, such as its capital portfolio), within the query's
//     entity_id. fetchedWith reads query parameters of the route's own.
//   - moved: an update, a delete, a state move or a sandbox simulation of
//     the object the path's {id} names (or of none on a route without
//     one): the body decoded strictly, its entity_id read, run run.
//   - listed: one page of a list, in the list form (cursor.go): the
//     list's own filters, entity_id, limit and the cursor read, the page
//     read for the caller.
//
// Each answers in one of the forms of an answer: the success envelope
// with a message, the object bare (sandbox routes, POST /payment-details)
// or a stored file. The routes that are not built from them say why at
// their handler: the open routes (probes, the OpenAPI document and its
// reference, the sandbox checkout and challenge pages), which answer
// HTML, forms or fixed bytes and act for no entity, and GET
// /sandbox/clock, which reads nothing.
//
// # entity_id
//
// query.entityID is the one reader of the entity_id a request acts within
// (doc.go, "Authentication and scope"); the adapters call it, and nothing
// else reads entity_id. A read (fetched, listed) takes the query's. A
// route whose body has an entity_id names that field to the adapter
// (created's entity, moved's entity), which merges it with the query's:
// given in both, they must agree. A route that names none reads no
// entity_id of its own: its body, decoded whole, carries any entity_id to
// the service, and the query's is not read (POST /accounts,
// /account-details, /documents, /onboarding-submissions, /entity-webhooks
// and /sandbox/api-keys, and PATCH /accounts/{id}).

import (
	"cmp"
	"context"
	stdjson "encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/acquiring"
	"github.com/corebank/corebank/entities"
)

// An answer is how a route answers what its service returned.
type answer struct {
	status  int
	message string // the envelope's
	bare    bool   // the object alone, not in the envelope
	file    string // a stored file (*entities.DocumentFile) as an attachment of this name
}

// enveloped answers {status: success, message, data} with status.
func enveloped(status int, message string) answer {
	return answer{status: status, message: message}
}

// bare answers the object alone with status: CONTRACT.md's form for the
// sandbox routes ("All return the affected object"), and SPEC.md's for
// POST /payment-details.
func bare(status int) answer { return answer{status: status, bare: true} }

// attachment answers a stored file (*entities.DocumentFile) 200 with its stored
// media type, as an attachment named name (and the extension of its type)
// that the browser must not sniff or cache.
func attachment(name string) answer { return answer{status: http.StatusOK, file: name} }

// respond writes v as a says.
func respond[T any](x *exchange, r *http.Request, a answer, v T) error {
	switch {
	case a.file != "":
		writeFile(x, r, a.file, any(v).(*entities.DocumentFile))
		return nil
	case a.bare:
		writeJSON(x, a.status, v)
		return nil
	}
	return ok(x, a.status, a.message, v)
}

// ok writes the success envelope {status, message, data}.
// It is generic so the encoder sees data's static type and does not look
// its encoder up through an interface on every response.
func ok[T any](w http.ResponseWriter, status int, message string, data T) error {
	writeJSON(w, status, &envelope[T]{Status: "success", Message: message, Data: data})
	return nil
}

type envelope[T any] struct {
	Status  string `json:"status"`
	Message string `json:"message"`
	Data    T      `json:"data"`
}

// fileExt names downloads by media type.
var fileExt = map[string]string{"application/pdf": ".pdf", "image/png": ".png", "image/jpeg": ".jpg"}

// writeFile writes f's bytes with its media type, as an attachment named
// name and the extension of its type; a HEAD request gets the headers
// alone.
func writeFile(x *exchange, r *http.Request, name string, f *entities.DocumentFile) {
	hd := x.Header()
	hd.Set("Content-Type", f.ContentType)
	hd.Set("Content-Length", strconv.Itoa(len(f.Data)))
	hd.Set("Content-Disposition", `attachment; filename="`+name+fileExt[f.ContentType]+`"`)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Cache-Control", "private, no-store")
	x.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = x.Write(f.Data)
	}
}

// created serves a create route: the body decoded strictly into a Req,
// its entity_id (the field entity points at; nil for a route that reads
// none of its own) merged with the query's and written back to it, create
// run as the caller, and its result answered as a says.
func created[Req, T any](x *exchange, r *http.Request, a answer, entity func(*Req) *string,
	create func(context.Context, corebank.Caller, Req) (T, error)) error {
	var req Req
	var e *string
	if entity != nil {
		e = entity(&req)
	}
	requested, err := readRequest(x, r, &req, e)
	if err != nil {
		return err
	}
	if e != nil {
		*e = requested
	}
	v, err := create(r.Context(), x.caller(), req)
	if err != nil {
		return err
	}
	return respond(x, r, a, v)
}

// fetched serves a read of the object the path's {id} names ("" on a
// route without one), for the caller, within the query's entity_id, and
// answers it as a says.
func fetched[T any](x *exchange, r *http.Request, a answer,
	get func(ctx context.Context, c corebank.Caller, entityID, id string) (T, error)) error {
	return fetchedWith(x, r, a, nil, get)
}

// fetchedWith is fetched for a route with query parameters of its own:
// params reads them from q (nil: none), and their problems are answered
// together with entity_id's before get runs.
func fetchedWith[T any](x *exchange, r *http.Request, a answer, params func(q *query),
	get func(ctx context.Context, c corebank.Caller, entityID, id string) (T, error)) error {
	q := newQuery(r.URL.RawQuery)
	if params != nil {
		params(q)
	}
	requested := q.entityID("")
	if err := q.err(); err != nil {
		return err
	}
	v, err := get(r.Context(), x.caller(), requested, r.PathValue("id"))
	if err != nil {
		return err
	}
	return respond(x, r, a, v)
}

// moved serves a route that acts on the object the path's {id} names ("" on
// a route without one): the body decoded strictly into req (nil: the route
// reads no body), its entity_id (*entity, a field of req; nil for a route
// that reads none of its own) merged with the query's, run run as the
// caller, and its result answered as a says. run gets the merged
// entity_id; req keeps the body's.
func moved[T any](x *exchange, r *http.Request, a answer, req any, entity *string,
	run func(ctx context.Context, c corebank.Caller, entityID, id string) (T, error)) error {
	requested, err := readRequest(x, r, req, entity)
	if err != nil {
		return err
	}
	v, err := run(r.Context(), x.caller(), requested, r.PathValue("id"))
	if err != nil {
		return err
	}
	return respond(x, r, a, v)
}

// A listing is what a list route gives listed.
type listing[T any] struct {
	name    string // the list's name: its cursors are bound to it and to the filters
	message string
	limit   int // the page size when the request gives none; 0 is corebank.DefaultLimit
	// filters reads the list's own filters from q into filters, by name
	// (nil: it has none); their problems are answered with the others.
	filters func(q *query, filters map[string]string)
	// scope records in filters the entity the list is of, requested
	// ("" when the request names none). nil records entity_id, the
	// caller's entity when absent.
	scope func(requested string, c corebank.Caller, filters map[string]string)
	// read lists the page for the caller and returns the entity it
	// listed, which filters_applied then names ("" keeps scope's).
	read func(ctx context.Context, c corebank.Caller, l listRequest) (*corebank.Page[T], string, error)
	// form is what the page answers (nil: the list form, 200).
	form func(page *corebank.Page[T], l *listResponse[T]) any
}

// A listRequest is a list request as listed read it.
type listRequest struct {
	entityID string            // entity_id as given ("" the caller's): the service decides scope
	filters  map[string]string // the filters in force, by name
	opts     corebank.ListOptions
}

// listed serves a list route: the list's own filters, entity_id, limit
// and the cursor read from the query; the page read for the caller; and
// the page answered in the list form (or l.form's). A bad cursor is
// reported only once the service has answered, so that an entity_id or
// object outside the caller's tree answers 404 first.
func listed[T any](x *exchange, r *http.Request, l listing[T]) error {
	h, c := x.h, x.caller()
	q := newQuery(r.URL.RawQuery)
	filters := map[string]string{}
	if l.filters != nil {
		l.filters(q, filters)
	}
	requested := q.entityID("")
	limit := q.limitOr(cmp.Or(l.limit, corebank.DefaultLimit))
	if err := q.err(); err != nil {
		return err
	}
	if l.scope != nil {
		l.scope(requested, c, filters)
	} else {
		filters["entity_id"] = cmp.Or(requested, c.EntityID)
	}
	fh, opts, cursorErr := h.listPage(q, l.name, filters, limit)
	page, entity, err := l.read(r.Context(), c, listRequest{entityID: requested, filters: filters, opts: opts})
	if err != nil {
		return err
	}
	if cursorErr != nil {
		return cursorErr
	}
	if entity != "" {
		filters["entity_id"] = entity
	}
	res := list(h, l.message, page, limit, fh, filters)
	if l.form != nil {
		writeJSON(x, http.StatusOK, l.form(page, res))
		return nil
	}
	writeJSON(x, http.StatusOK, res)
	return nil
}

// readRequest reads what a request sends beside its path: the body,
// decoded strictly into req (nil: the route reads no body; a bodyDecoder
// decodes itself), and returns the entity_id it names: the body's
// (*entity, once decoded) merged with the query's by query.entityID.
// entity nil: the route reads no entity_id of its own, and the query is
// not read.
func readRequest(x *exchange, r *http.Request, req any, entity *string) (string, error) {
	if req != nil {
		var err error
		if d, ok := req.(bodyDecoder); ok {
			err = d.decodeBody(x.body)
		} else {
			err = decodeJSON(x.body, req)
		}
		if err != nil {
			return "", err
		}
	}
	if entity == nil {
		return "", nil
	}
	if r.URL.RawQuery == "" {
		return *entity, nil
	}
	q := newQuery(r.URL.RawQuery)
	requested := q.entityID(*entity)
	return requested, q.err()
}

// entityOnly is the body of routes that take nothing but entity_id.
type entityOnly struct {
	EntityID string `json:"entity_id"`
}

// bodyDecoder is a request body that decodes itself (withEntity).
type bodyDecoder interface {
	decodeBody(body []byte) error
}

// withEntity is the request of a route whose domain body (Body) does not
// declare entity_id: the optional top-level entity_id beside Body's own
// members. (Embedding Body beside an EntityID field would make the
// decoder name wrong-type fields after the embedded Go type.)
type withEntity[T any] struct {
	EntityID string
	Body     T
}

func (w *withEntity[T]) decodeBody(body []byte) (err error) {
	w.EntityID, err = decodeWithEntityID(body, &w.Body)
	return err
}

// decodeWithEntityID strictly decodes body into v, a domain body that does
// not declare entity_id, and returns the optional top-level entity_id.
// A body that is not an object with entity_id is decoded as it is, so
// that its errors are decodeJSON's.
func decodeWithEntityID(body []byte, v any) (string, error) {
	// encoding/json below would read invalid UTF-8 as U+FFFD: check the
	// text as sent.
	if err := checkText(body); err != nil {
		return "", err
	}
	entity, rest := "", body
	var top map[string]stdjson.RawMessage
	if stdjson.Unmarshal(body, &top) == nil && top != nil {
		if raw, found := top["entity_id"]; found {
			if err := stdjson.Unmarshal(raw, &entity); err != nil {
				return "", corebank.InvalidField("entity_id", "must be a string")
			}
			delete(top, "entity_id")
			if b, err := stdjson.Marshal(top); err == nil {
				rest = b
			} else {
				entity = ""
			}
		}
	}
	return entity, decodeJSON(rest, v)
}

// query reads typed query parameters, collecting every problem so that one
// response names each bad parameter.
type query struct {
	v        url.Values
	problems corebank.Problems
}

func newQuery(raw string) *query {
	q := &query{}
	if raw == "" {
		return q
	}
	v, err := url.ParseQuery(raw)
	q.v = v
	if err != nil {
		q.add("query", "malformed query string")
	}
	return q
}

// add records a problem with a parameter.
func (q *query) add(name, problem string) {
	if q.problems == nil {
		q.problems = corebank.Problems{}
	}
	q.problems.Add(name, problem)
}

// str returns the parameter's value, "" when absent.
func (q *query) str(name string) string {
	vs := q.v[name]
	if len(vs) == 0 {
		return ""
	}
	if len(vs) > 1 {
		q.add(name, "give this parameter once")
	}
	return strings.TrimSpace(vs[0])
}

// has reports whether the parameter is present.
func (q *query) has(name string) bool {
	_, ok := q.v[name]
	return ok
}

// entityID is the one reader of entity_id: the query's, else body (the
// body's entity_id, "" when it names none). Given in both, they must
// agree.
func (q *query) entityID(body string) string {
	e := q.str("entity_id")
	if e == "" {
		return body
	}
	if body != "" && body != e {
		q.add("entity_id", "differs between the query and the body")
	}
	return e
}

// pick reads the parameters names into filters, those given, by name
// (the service checks their values).
func (q *query) pick(filters map[string]string, names ...string) {
	for _, name := range names {
		if v := q.str(name); v != "" {
			filters[name] = v
		}
	}
}

// integer parses an integer parameter within [min, max]; ok is false when
// it is absent or bad (bad ones are recorded).
func (q *query) integer(name string, required bool, min, max int64) (int64, bool) {
	s := q.str(name)
	if s == "" {
		if required {
			q.add(name, "is required")
		}
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		q.add(name, "must be an integer")
		return 0, false
	}
	if n < min || n > max {
		q.add(name, "must be between "+strconv.FormatInt(min, 10)+" and "+strconv.FormatInt(max, 10))
		return 0, false
	}
	return n, true
}

// boolean parses true/false (also 1/0); absent gives def.
func (q *query) boolean(name string, def bool) bool {
	s := q.str(name)
	switch strings.ToLower(s) {
	case "":
		return def
	case "true", "1":
		return true
	case "false", "0":
		return false
	}
	q.add(name, "must be true or false")
	return def
}

// limit reads `limit` (1-100, default corebank.DefaultLimit).
func (q *query) limit() int { return q.limitOr(corebank.DefaultLimit) }

// limitOr reads `limit` (1-100, default def: SPEC.md gives capital lists
// 25).
func (q *query) limitOr(def int) int {
	if !q.has("limit") {
		return def
	}
	n, ok := q.integer("limit", true, 1, corebank.MaxLimit)
	if !ok {
		return def
	}
	return int(n)
}

// maxTime is the largest time in milliseconds a filter accepts: the last
// millisecond an ID (a ULID, 48-bit time) can hold.
const maxTime = 1<<48 - 1

// createdRange reads created_after and created_before (Unix ms, 0 to
// maxTime, exclusive bounds; 0 when absent) into filters, checking that
// the range is not empty.
func (q *query) createdRange(filters map[string]string) (after, before int64) {
	if n, ok := q.integer("created_after", false, 0, maxTime); ok {
		after = n
		filters["created_after"] = strconv.FormatInt(n, 10)
	}
	if n, ok := q.integer("created_before", false, 0, maxTime); ok {
		before = n
		filters["created_before"] = strconv.FormatInt(n, 10)
	}
	if after > 0 && before > 0 && before <= after {
		q.add("created_before", "must be later than created_after")
	}
	return after, before
}

// dateParam reads an ISO 8601 time (RFC 3339, or a date meaning its
// midnight UTC) or Unix ms, recording it in filters as ms; 0 when absent.
func (q *query) dateParam(name string, filters map[string]string) int64 {
	v := q.str(name)
	if v == "" {
		return 0
	}
	var ms int64
	if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 && n <= maxTime {
		ms = n
	} else if t, err := time.Parse(time.RFC3339Nano, v); err == nil && t.UnixMilli() >= 0 {
		ms = t.UnixMilli()
	} else if t, err := time.Parse(time.DateOnly, v); err == nil && !strings.HasPrefix(v, "-") && t.UnixMilli() >= 0 {
		ms = t.UnixMilli()
	} else {
		q.add(name, "must be an ISO 8601 time (2026-03-15T12:00:00Z or 2026-03-15) or Unix milliseconds")
		return 0
	}
	filters[name] = strconv.FormatInt(ms, 10)
	return ms
}

// err returns the collected problems as one validation error, or nil.
func (q *query) err() error { return q.problems.Err() }

// acqList is the listing of an acquiring list (payment intents, intent
// actions, disputes, refunds), oldest first: the filters readAcqFilter
// reads, and extra, and the page at data.items with its meta at data.meta
// (SPEC.md "Page at data.items").
func acqList[T any](name, message string,
	read func(context.Context, corebank.Caller, acquiring.Filter, corebank.ListOptions) (*acquiring.Page[T], error),
	extra ...string) listing[T] {
	var f acquiring.Filter
	return listing[T]{name: name, message: message,
		filters: func(q *query, filters map[string]string) { f = readAcqFilter(q, filters, extra...) },
		read: func(ctx context.Context, c corebank.Caller, l listRequest) (*corebank.Page[T], string, error) {
			f.EntityID = l.entityID
			p, err := read(ctx, c, f, l.opts)
			if err != nil {
				return nil, "", err
			}
			return p.Page, p.EntityID, nil
		},
		form: func(page *corebank.Page[T], l *listResponse[T]) any {
			return &envelope[*itemsList[T]]{Status: "success", Message: l.Message,
				Data: &itemsList[T]{Items: page.Items, Meta: l.Meta}}
		},
	}
}

// itemsList is the acquiring lists' data: the page at items, its meta
// beside it.
type itemsList[T any] struct {
	Items []T      `json:"items"`
	Meta  listMeta `json:"meta"`
}

// readAcqFilter reads the filters the acquiring lists share (CONTRACT.md):
// status, reference, currency, account_id, date_from and date_to (ISO
// 8601 or Unix ms, inclusive), the list's extra ones, and next_cursor as
// cursor.
func readAcqFilter(q *query, filters map[string]string, extra ...string) acquiring.Filter {
	q.pick(filters, "account_id", "status", "reference", "currency")
	q.pick(filters, extra...)
	f := acquiring.Filter{AccountID: filters["account_id"], Status: filters["status"], Reference: filters["reference"],
		Currency: filters["currency"], PaymentType: filters["payment_type"], PaymentIntentID: filters["payment_intent_id"],
		PaymentIntentActionID: filters["payment_intent_action_id"]}
	f.DateFrom = q.dateParam("date_from", filters)
	f.DateTo = q.dateParam("date_to", filters)
	q.cursorAlias("next_cursor")
	return f
}

// needs serves fn when has says the handler has the service it needs, and
// answers missing (503 unavailable) otherwise.
func needs(has func(*handler) bool, missing error, fn handlerFunc) handlerFunc {
	return func(h *handler, x *exchange, r *http.Request) error {
		if !has(h) {
			return missing
		}
		return fn(h, x, r)
	}
}

// The services a server may be built without, and the answer of their
// routes then: 503 unavailable (the routes stay mounted, so a client
// learns why).
var (
	errNoPayments  = corebank.E(corebank.KindUnavailable, codeUnavailable, "payments are not configured on this server")
	errNoSessions  = corebank.E(corebank.KindUnavailable, codeUnavailable, "funding sessions are not configured on this server")
	errNoAcquiring = corebank.E(corebank.KindUnavailable, codeUnavailable, "card acquiring is not configured on this server")
	errNoCards     = corebank.E(corebank.KindUnavailable, codeUnavailable, "card issuing is not configured on this server")
	errNoCapital   = corebank.E(corebank.KindUnavailable, codeUnavailable, "capital products are not configured on this server")
	errNoWebhooks  = corebank.E(corebank.KindUnavailable, codeUnavailable, "webhooks are not configured on this server")
	errNoFunding   = corebank.E(corebank.KindUnavailable, codeUnavailable, "sandbox inflows are not configured on this server")
)

// payRoute is a payments route: 503 unavailable without Services.Payments.
func payRoute(fn handlerFunc) handlerFunc {
	return needs(func(h *handler) bool { return h.pay != nil }, errNoPayments, fn)
}

// sessionRoute is a funding-session route: 503 unavailable without
// Services.FundingSessions.
func sessionRoute(fn handlerFunc) handlerFunc {
	return needs(func(h *handler) bool { return h.sessions != nil }, errNoSessions, fn)
}

// acqRoute is an acquiring route: 503 unavailable without
// Services.Acquiring.
func acqRoute(fn handlerFunc) handlerFunc {
	return needs(func(h *handler) bool { return h.acq != nil }, errNoAcquiring, fn)
}

// cardRoute is a card route: 503 unavailable without Services.Cards.
func cardRoute(fn handlerFunc) handlerFunc {
	return needs(func(h *handler) bool { return h.cards != nil }, errNoCards, fn)
}

// capitalRoute is a capital route: 503 unavailable without
// Services.Capital.
func capitalRoute(fn handlerFunc) handlerFunc {
	return needs(func(h *handler) bool { return h.capital != nil }, errNoCapital, fn)
}

// hookRoute is a webhook or event route: 503 unavailable without
// Services.Webhooks.
func hookRoute(fn handlerFunc) handlerFunc {
	return needs(func(h *handler) bool { return h.wh != nil }, errNoWebhooks, fn)
}

// notFound reports whether err is a KindNotFound error.
func notFound(err error) bool { return corebank.KindOf(err) == corebank.KindNotFound }
