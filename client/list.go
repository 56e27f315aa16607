package client

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"maps"
)

// Page is one page of a list.
type Page[T any] struct {
	// Items are the page's objects, in the list's order.
	Items []T
	// HasNext says whether NextCursor leads to more; HasPrevious the same
	// of PreviousCursor.
	HasNext, HasPrevious bool
	// NextCursor and PreviousCursor are passed back as the Params' Cursor
	// and PrevCursor; empty when there is no such page.
	NextCursor, PreviousCursor string
	// Limit is the page size the server used.
	Limit int
	// TotalCount is the list's length, when the endpoint reports it.
	TotalCount *int
}

// listMeta is the pagination every list shape carries, at the top level
// or inside data.
type listMeta struct {
	Pagination struct {
		Limit          int     `json:"limit"`
		TotalCount     *int    `json:"total_count"`
		HasNext        bool    `json:"has_next"`
		HasPrevious    bool    `json:"has_previous"`
		NextCursor     *string `json:"next_cursor"`
		PreviousCursor *string `json:"previous_cursor"`
	} `json:"pagination"`
}

// page fetches one page of the list k describes, whatever its shape: the
// array as data with meta beside it, or inside data (data.items,
// data.cards, data.transactions) with meta beside it there.
func page[T any](ctx context.Context, c *Client, k *call) (*Page[T], error) {
	resp, err := c.send(ctx, k)
	if err != nil {
		return nil, err
	}
	var env struct {
		Data json.RawMessage `json:"data"`
		Meta *listMeta       `json:"meta"`
	}
	if err := json.Unmarshal(resp.Body, &env); err != nil {
		return nil, fmt.Errorf("client: %s %s: decode the answer: %w", k.method, k.path, err)
	}
	items, meta := env.Data, env.Meta
	if k.list != "" {
		var inner map[string]json.RawMessage
		if err := json.Unmarshal(env.Data, &inner); err != nil {
			return nil, fmt.Errorf("client: %s %s: decode the answer's data: %w", k.method, k.path, err)
		}
		items = inner[k.list]
		if m, ok := inner["meta"]; ok {
			meta = new(listMeta)
			if err := json.Unmarshal(m, meta); err != nil {
				return nil, fmt.Errorf("client: %s %s: decode the answer's meta: %w", k.method, k.path, err)
			}
		}
	}
	p := &Page[T]{}
	if err := json.Unmarshal(items, &p.Items); err != nil {
		return nil, fmt.Errorf("client: %s %s: decode the answer's items: %w", k.method, k.path, err)
	}
	if meta != nil {
		pg := meta.Pagination
		p.Limit, p.TotalCount, p.HasNext, p.HasPrevious = pg.Limit, pg.TotalCount, pg.HasNext, pg.HasPrevious
		if pg.NextCursor != nil {
			p.NextCursor = *pg.NextCursor
		}
		if pg.PreviousCursor != nil {
			p.PreviousCursor = *pg.PreviousCursor
		}
	}
	return p, nil
}

// all yields every item of the list k describes, page after page, from
// where its parameters start it. paged says whether the operation takes
// a cursor; one that does not answers in one page.
func all[T any](ctx context.Context, c *Client, k *call, paged bool) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		next := *k
		for {
			p, err := page[T](ctx, c, &next)
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, it := range p.Items {
				if !yield(it, nil) {
					return
				}
			}
			if !paged || !p.HasNext || p.NextCursor == "" {
				return
			}
			// The next page starts from its cursor and nothing else: the
			// aliases and the backward cursors the first page may have
			// been given would contradict it.
			next.query = maps.Clone(k.query)
			if next.query == nil {
				next.query = map[string][]string{}
			}
			next.query["cursor"] = []string{p.NextCursor}
			for _, alias := range []string{"next_cursor", "prev_cursor", "pre_cursor"} {
				next.query[alias] = nil
			}
		}
	}
}
