package httpapi

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"sort"

	"github.com/corebank/corebank"
)

// Cursors are opaque to callers: base64url of the JSON {p: position, d:
// direction, f: filter hash} followed by the first macLen bytes of an
// HMAC-SHA256 over it. The filter hash binds a cursor to its list and the
// filters it was issued under, so a cursor replayed against another list or
// with other filters, or altered in any byte, is refused.
const macLen = 16

type cursorPayload struct {
	P string `json:"p"`
	D string `json:"d"` // "n" next page, "p" previous page
	F string `json:"f"`
}

type cursors struct {
	key []byte
}

// filterHash names a list and its filters; values are sorted by key.
func filterHash(list string, filters map[string]string) string {
	h := sha256.New()
	h.Write([]byte(list))
	keys := make([]string, 0, len(filters))
	for k := range filters {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		h.Write([]byte{0})
		h.Write([]byte(k))
		h.Write([]byte{1})
		h.Write([]byte(filters[k]))
	}
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:12])
}

func (c *cursors) encode(pos, dir, fh string) string {
	raw, _ := json.Marshal(cursorPayload{P: pos, D: dir, F: fh})
	m := hmac.New(sha256.New, c.key)
	m.Write(raw)
	raw = m.Sum(raw)[:len(raw)+macLen]
	return base64.RawURLEncoding.EncodeToString(raw)
}

var errCursor = corebank.InvalidField("cursor", "is not a cursor this list issued")

// decode checks a cursor's MAC and filter hash and returns its position
// and direction.
func (c *cursors) decode(s, fh string) (pos, dir string, err error) {
	raw, derr := base64.RawURLEncoding.DecodeString(s)
	if derr != nil || len(raw) <= macLen {
		return "", "", errCursor
	}
	body, sum := raw[:len(raw)-macLen], raw[len(raw)-macLen:]
	m := hmac.New(sha256.New, c.key)
	m.Write(body)
	if subtle.ConstantTimeCompare(m.Sum(nil)[:macLen], sum) != 1 {
		return "", "", errCursor
	}
	var p cursorPayload
	if json.Unmarshal(body, &p) != nil || p.F != fh || (p.D != "n" && p.D != "p") {
		return "", "", errCursor
	}
	return p.P, p.D, nil
}

// listPage finishes reading a list's query once its filters are known: it
// returns the filter hash the page's cursors carry and the page options,
// limit and a cursor that must have been issued for this list name and
// these filters.
func (h *handler) listPage(q *query, name string, filters map[string]string, limit int) (string, corebank.ListOptions, error) {
	fh := filterHash(name, filters)
	opts := h.pageParams(q, fh)
	opts.Limit = limit
	return fh, opts, q.err()
}

// cursorAlias reads the query parameter name as cursor, for the lists
// whose documents (or clients following meta.pagination.next_cursor)
// spell it so; giving both is 422 on name.
func (q *query) cursorAlias(name string) {
	n := q.str(name)
	if n == "" {
		return
	}
	if q.str("cursor") != "" {
		q.add(name, "give either cursor or "+name+", not both")
		return
	}
	q.v.Set("cursor", n)
}

// pageParams reads limit, cursor and prev_cursor (alias pre_cursor) into
// ListOptions, checking cursors against the list's filter hash.
func (h *handler) pageParams(q *query, fh string) corebank.ListOptions {
	opts := corebank.ListOptions{Limit: q.limit()}
	next := q.str("cursor")
	prev := q.str("prev_cursor")
	if p := q.str("pre_cursor"); p != "" && prev == "" {
		prev = p
	}
	if next != "" && prev != "" {
		q.add("cursor", "give either cursor or prev_cursor, not both")
		return opts
	}
	s := next
	if s == "" {
		s = prev
	}
	if s == "" {
		return opts
	}
	pos, dir, err := h.cursors.decode(s, fh)
	if err != nil {
		q.add("cursor", "is not a cursor this list issued")
		return opts
	}
	if dir == "n" {
		opts.After = pos
	} else {
		opts.Before = pos
	}
	return opts
}

// pagination is SPEC's meta.pagination.
type pagination struct {
	Limit          int     `json:"limit"`
	TotalCount     *int64  `json:"total_count,omitempty"`
	HasNext        bool    `json:"has_next"`
	HasPrevious    bool    `json:"has_previous"`
	NextCursor     *string `json:"next_cursor"`
	PreviousCursor *string `json:"previous_cursor"`
}

type listMeta struct {
	Pagination     pagination        `json:"pagination"`
	FiltersApplied map[string]string `json:"filters_applied"`
}

// listResponse is the form every list answers with.
type listResponse[T any] struct {
	Status  string   `json:"status"`
	Message string   `json:"message"`
	Data    []T      `json:"data"`
	Meta    listMeta `json:"meta"`
}

// list builds the list response for a page.
func list[T any](h *handler, message string, page *corebank.Page[T], limit int, fh string, filters map[string]string) *listResponse[T] {
	items := page.Items
	if items == nil {
		items = []T{}
	}
	p := pagination{Limit: limit, HasNext: page.HasNext, HasPrevious: page.HasPrevious}
	if page.Total >= 0 {
		t := page.Total
		p.TotalCount = &t
	}
	if page.HasNext && page.Next != "" {
		s := h.cursors.encode(page.Next, "n", fh)
		p.NextCursor = &s
	}
	if page.HasPrevious && page.Previous != "" {
		s := h.cursors.encode(page.Previous, "p", fh)
		p.PreviousCursor = &s
	}
	if filters == nil {
		filters = map[string]string{}
	}
	return &listResponse[T]{Status: "success", Message: message, Data: items,
		Meta: listMeta{Pagination: p, FiltersApplied: filters}}
}
