package storage_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/memory"
)

const pageBucket = storage.Bucket("test.page")

// pageModel computes the page ReadPage must return from a sorted list of
// positions, the ones the filter keeps, and the query.
func pageModel(all []string, keep func(string) bool, q storage.PageQuery) *corebank.Page[string] {
	var in []string
	for _, p := range all {
		if keep(p) && (q.Lower == "" || p >= q.Lower) && (q.Upper == "" || p <= q.Upper) {
			in = append(in, p)
		}
	}
	page := &corebank.Page[string]{Items: []string{}, Total: -1}
	if q.Opts.Before != "" {
		var before, rest []string
		for _, p := range in {
			if p < q.Opts.Before {
				before = append(before, p)
			} else {
				rest = append(rest, p)
			}
		}
		start := max(0, len(before)-q.Limit)
		page.Items = append(page.Items, before[start:]...)
		page.HasPrevious = start > 0
		page.HasNext = len(rest) > 0
	} else {
		var after, rest []string
		for _, p := range in {
			if q.Opts.After == "" || p > q.Opts.After {
				after = append(after, p)
			} else {
				rest = append(rest, p)
			}
		}
		n := min(q.Limit, len(after))
		page.Items = append(page.Items, after[:n]...)
		page.HasNext = len(after) > n
		page.HasPrevious = q.Opts.After != "" && len(rest) > 0
	}
	if n := len(page.Items); n > 0 {
		if page.HasNext {
			page.Next = page.Items[n-1]
		}
		if page.HasPrevious {
			page.Previous = page.Items[0]
		}
	}
	return page
}

// TestReadPageModel checks random pages against pageModel: random
// positions, a filter, bounds, both directions and cursors on existing and
// deleted items.
func TestReadPageModel(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 7))
	ctx := context.Background()
	for round := 0; round < 40; round++ {
		db := memory.New()
		prefix := []byte("idx/" + fmt.Sprint(round) + "/")
		var all []string
		for i := 0; i < rng.IntN(40); i++ {
			all = append(all, fmt.Sprintf("%04d", rng.IntN(500)))
		}
		slices.Sort(all)
		all = slices.Compact(all)
		err := db.Update(ctx, func(tx storage.Tx) error {
			// A neighbouring index must never show through.
			if err := tx.Put(pageBucket, []byte("idx/"+fmt.Sprint(round)+"0/0001"), []byte("x")); err != nil {
				return err
			}
			for _, p := range all {
				if err := tx.Put(pageBucket, append(slices.Clone(prefix), p...), []byte(p)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		mod := rng.IntN(3) + 1
		keep := func(p string) bool { return p[3]%byte(mod) == 0 }
		load := func(pos string, v []byte) (string, bool, error) {
			if string(v) != pos {
				return "", false, fmt.Errorf("value %q under %q", v, pos)
			}
			return pos, keep(pos), nil
		}
		for probe := 0; probe < 30; probe++ {
			q := storage.PageQuery{Bucket: pageBucket, Prefix: prefix, Limit: rng.IntN(5) + 1}
			cursor := fmt.Sprintf("%04d", rng.IntN(520))
			if len(all) > 0 && rng.IntN(2) == 0 {
				cursor = all[rng.IntN(len(all))] // an existing item
			}
			switch rng.IntN(3) {
			case 1:
				q.Opts.After = cursor
			case 2:
				q.Opts.Before = cursor
			}
			if rng.IntN(4) == 0 {
				q.Lower = fmt.Sprintf("%04d", rng.IntN(250))
			}
			if rng.IntN(4) == 0 {
				q.Upper = fmt.Sprintf("%04d", 250+rng.IntN(250))
			}
			got, err := storage.View(ctx, db, func(tx storage.Tx) (*corebank.Page[string], error) {
				return storage.ReadPage(tx, q, load)
			})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(pageModel(all, keep, q), got); diff != "" {
				t.Fatalf("seed %d round %d: query %+v over %v (keep mod %d): (-want +got)\n%s", seed, round, q, all, mod, diff)
			}
		}
	}
}

// TestReadPageWalk pages through a whole index forward and back again with
// the positions each page returns, as a client following cursors does.
func TestReadPageWalk(t *testing.T) {
	ctx := context.Background()
	db := memory.New()
	var all []string
	err := db.Update(ctx, func(tx storage.Tx) error {
		for i := range 23 {
			p := fmt.Sprintf("%03d", i)
			all = append(all, p)
			if err := tx.Put(pageBucket, []byte("w/"+p), nil); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	read := func(opts corebank.ListOptions) *corebank.Page[string] {
		t.Helper()
		p, err := storage.View(ctx, db, func(tx storage.Tx) (*corebank.Page[string], error) {
			return storage.ReadPage(tx, storage.PageQuery{Bucket: pageBucket, Prefix: []byte("w/"), Opts: opts, Limit: 5},
				func(pos string, _ []byte) (string, bool, error) { return pos, true, nil })
		})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	var fwd []string
	p := read(corebank.ListOptions{})
	for {
		fwd = append(fwd, p.Items...)
		if !p.HasNext {
			break
		}
		p = read(corebank.ListOptions{After: p.Next})
	}
	if diff := cmp.Diff(all, fwd); diff != "" {
		t.Fatalf("forward walk (-want +got)\n%s", diff)
	}
	var back []string
	for p.HasPrevious {
		p = read(corebank.ListOptions{Before: p.Previous})
		back = append(slices.Clone(p.Items), back...)
	}
	if diff := cmp.Diff(all[:20], back); diff != "" {
		t.Fatalf("backward walk (-want +got)\n%s", diff)
	}
}

func TestReadPageMaxScan(t *testing.T) {
	ctx := context.Background()
	db := memory.New()
	err := db.Update(ctx, func(tx storage.Tx) error {
		for i := range 50 {
			if err := tx.Put(pageBucket, []byte(fmt.Sprintf("m/%03d", i)), nil); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Only 045 and above match; a page may examine 10 keys.
	load := func(pos string, _ []byte) (string, bool, error) { return pos, pos >= "045", nil }
	q := storage.PageQuery{Bucket: pageBucket, Prefix: []byte("m/"), Limit: 3, MaxScan: 10}
	var got []string
	pages := 0
	for {
		p, err := storage.View(ctx, db, func(tx storage.Tx) (*corebank.Page[string], error) { return storage.ReadPage(tx, q, load) })
		if err != nil {
			t.Fatal(err)
		}
		pages++
		got = append(got, p.Items...)
		if !p.HasNext {
			break
		}
		if p.Next == "" || pages > 20 {
			t.Fatalf("page %d: HasNext without progress: %+v", pages, p)
		}
		q.Opts.After = p.Next
	}
	if diff := cmp.Diff([]string{"045", "046", "047", "048", "049"}, got); diff != "" {
		t.Fatalf("(-want +got)\n%s", diff)
	}
	if pages < 5 {
		t.Fatalf("%d pages: MaxScan did not cut the scan", pages)
	}
}

func TestCheckList(t *testing.T) {
	const id = "01HZZZZZZZZZZZZZZZZZZZZZZZ"
	tests := []struct {
		name  string
		opts  corebank.ListOptions
		limit int
		field string
	}{
		{"OK default", corebank.ListOptions{}, 20, ""},
		{"OK after", corebank.ListOptions{Limit: 7, After: id}, 7, ""},
		{"OK before", corebank.ListOptions{Limit: 100, Before: id}, 100, ""},
		{"ErrLimit", corebank.ListOptions{Limit: 101}, 0, "limit"},
		{"ErrBoth", corebank.ListOptions{After: id, Before: id}, 0, "cursor"},
		{"ErrMalformed", corebank.ListOptions{After: "x/../y"}, 0, "cursor"},
		{"ErrLowerCase", corebank.ListOptions{Before: strings.ToLower(id)}, 0, "cursor"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			limit, err := storage.CheckList(tt.opts, corebank.DefaultLimit)
			if tt.field == "" {
				if err != nil || limit != tt.limit {
					t.Fatalf("CheckList = %d, %v; want %d, nil", limit, err, tt.limit)
				}
				return
			}
			var e *corebank.Error
			if !asError(err, &e) || e.Fields[tt.field] == "" {
				t.Fatalf("CheckList error = %v; want a validation error on %q", err, tt.field)
			}
		})
	}
}
