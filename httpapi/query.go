package httpapi

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/corebank/corebank"
)

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

// createdRange reads created_after and created_before (Unix ms, 0-max,
// exclusive bounds; 0 when absent) into filters, checking that the range
// is not empty.
func (q *query) createdRange(filters map[string]string, max int64) (after, before int64) {
	if n, ok := q.integer("created_after", false, 0, max); ok {
		after = n
		filters["created_after"] = strconv.FormatInt(n, 10)
	}
	if n, ok := q.integer("created_before", false, 0, max); ok {
		before = n
		filters["created_before"] = strconv.FormatInt(n, 10)
	}
	if after > 0 && before > 0 && before <= after {
		q.add("created_before", "must be later than created_after")
	}
	return after, before
}

// err returns the collected problems as one validation error, or nil.
func (q *query) err() error { return q.problems.Err() }

// queryEntityID reads the optional entity_id query parameter alone.
func queryEntityID(r *http.Request) (string, error) {
	q := newQuery(r.URL.RawQuery)
	entity := q.str("entity_id")
	return entity, q.err()
}

// entityParam merges the entity_id of the query with the body's; given in
// both, they must agree.
func entityParam(r *http.Request, body string) (string, error) {
	if r.URL.RawQuery == "" {
		return body, nil
	}
	q := newQuery(r.URL.RawQuery)
	if e := q.str("entity_id"); e != "" {
		if body != "" && body != e {
			q.add("entity_id", "differs between the query and the body")
		}
		body = e
	}
	return body, q.err()
}

// entityOnly is the body of routes that take nothing but entity_id.
type entityOnly struct {
	EntityID string `json:"entity_id"`
}

// bodyEntityID reads the optional body {"entity_id"} of a by-id route
// that takes no other fields; an empty body is fine.
func bodyEntityID(x *exchange) (string, error) {
	var req entityOnly
	err := decodeJSON(x.body, &req)
	return req.EntityID, err
}

// bodyEntityParam is entityParam for a route whose body takes nothing but
// entity_id (see bodyEntityID).
func bodyEntityParam(x *exchange, r *http.Request) (string, error) {
	body, err := bodyEntityID(x)
	if err != nil {
		return "", err
	}
	return entityParam(r, body)
}
