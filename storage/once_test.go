package storage_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/memory"
)

// testJournal keeps its steps in the store, under one key each, as
// httpapi's idempotency records do.
type testJournal struct{}

const journalBucket storage.Bucket = "test.journal"

var errDiverged = errors.New("diverged")

func (j *testJournal) Replay(tx storage.Tx, step int, name string) ([]byte, bool, error) {
	v, err := tx.Get(journalBucket, fmt.Appendf(nil, "%d", step))
	if errors.Is(err, storage.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	n, res, _ := cutNUL(v)
	if n != name {
		return nil, false, errDiverged
	}
	return res, true, nil
}

func (j *testJournal) Record(tx storage.Tx, step int, name string, result []byte) error {
	return tx.Put(journalBucket, fmt.Appendf(nil, "%d", step), append(append([]byte(name), 0), result...))
}

func cutNUL(v []byte) (string, []byte, bool) {
	for i, c := range v {
		if c == 0 {
			return string(v[:i]), v[i+1:], true
		}
	}
	return string(v), nil, false
}

type counter struct{ N int }

// bump is one step: it adds one to the stored counter and returns it.
func bump(tx storage.Tx) (counter, error) {
	c, err := storage.LoadJSON[counter](tx, "test.count", []byte("n"), storage.ErrNotFound)
	if errors.Is(err, storage.ErrNotFound) {
		c, err = &counter{}, nil
	}
	if err != nil {
		return counter{}, err
	}
	c.N++
	return *c, storage.PutJSON(tx, "test.count", []byte("n"), c)
}

func stored(t *testing.T, db storage.Backend) int {
	t.Helper()
	c, err := storage.View(context.Background(), db, func(tx storage.Tx) (counter, error) {
		c, err := storage.LoadJSON[counter](tx, "test.count", []byte("n"), storage.ErrNotFound)
		if errors.Is(err, storage.ErrNotFound) {
			return counter{}, nil
		}
		if err != nil {
			return counter{}, err
		}
		return *c, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return c.N
}

// TestJournal: under a journal, each committed Update records its result
// with its effect; the same request run again (a retry after a crash)
// replays the steps that committed and runs the rest once; a failed Update
// takes no step; a step whose code differs is refused; a backend that
// re-runs functions records once.
func TestJournal(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		db   func() storage.Backend
	}{
		{"memory", func() storage.Backend { return memory.New() }},
		{"rerunning", func() storage.Backend { return rerunning{memory.New()} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := tc.db()
			j := &testJournal{}
			// The first run commits two steps, and a failing Update
			// between them, then "crashes".
			run := storage.WithJournal(ctx, j)
			var got []int
			for i := 0; i < 3; i++ {
				if i == 1 {
					_, err := storage.Update(run, db, func(storage.Tx) (counter, error) { return counter{}, errors.New("refused") })
					if err == nil {
						t.Fatal("failing step committed")
					}
					continue
				}
				c, err := storage.Update(run, db, bump)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, c.N)
			}
			// The retry runs the whole request again: two steps replay,
			// the third runs for the first time.
			retry := storage.WithJournal(ctx, j)
			for i := 0; i < 3; i++ {
				c, err := storage.Update(retry, db, bump)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, c.N)
			}
			if diff := cmp.Diff([]int{1, 2, 1, 2, 3}, got); diff != "" {
				t.Errorf("results (-want +got):\n%s", diff)
			}
			if n := stored(t, db); n != 3 {
				t.Errorf("counter %d, want 3: a replayed step ran again", n)
			}
			// Another function at a recorded step is refused.
			_, err := storage.Update(storage.WithJournal(ctx, j), db, func(storage.Tx) (counter, error) { return counter{N: 99}, nil })
			if !errors.Is(err, errDiverged) {
				t.Errorf("other code at step 0: %v, want the journal's refusal", err)
			}
		})
	}
}

type directCheck struct {
	storage.Backend
	direct int
}

func (d *directCheck) Update(ctx context.Context, fn func(storage.Tx) error) error {
	if storage.Unjournaled(ctx) {
		d.direct++
	}
	return d.Backend.Update(ctx, fn)
}

// TestJournalBypass: Unjournaled tells a direct Backend.Update under a
// journal from a journaled step and from WithoutJournal bookkeeping.
func TestJournalBypass(t *testing.T) {
	ctx := context.Background()
	db := &directCheck{Backend: memory.New()}
	run := storage.WithJournal(ctx, &testJournal{})
	if _, err := storage.Update(run, db, bump); err != nil {
		t.Fatal(err)
	}
	if _, err := storage.Update(storage.WithoutJournal(run), db, bump); err != nil {
		t.Fatal(err)
	}
	if err := db.Update(ctx, func(storage.Tx) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if db.direct != 0 {
		t.Fatalf("%d updates counted as bypassing before the direct one", db.direct)
	}
	if err := db.Update(run, func(storage.Tx) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if db.direct != 1 {
		t.Fatalf("direct update under a journal: counted %d, want 1", db.direct)
	}
}
