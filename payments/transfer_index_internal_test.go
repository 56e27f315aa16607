package payments

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/memory"
)

// TestReadMergedEqualsOneIndex: a page of the union of several indexes is
// exactly the page ReadPage reads from one index holding them all, items,
// flags and cursors, from every cursor (present or not) in both directions.
func TestReadMergedEqualsOneIndex(t *testing.T) {
	db := memory.New()
	defer db.Close()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(7, 11))
	ids := corebank.NewIDs(nil)
	var prefixes [][]byte
	for _, st := range transferStatuses {
		prefixes = append(prefixes, storage.Prefix("tr", "ent", "s:"+st))
	}
	union := storage.Prefix("tr", "ent", "union")
	var all []string
	if err := db.Update(ctx, func(tx storage.Tx) error {
		for range 40 {
			id := ids.New(time.UnixMilli(rng.Int64N(1 << 40)))
			all = append(all, id)
			// Skewed, as statuses are: most in one index, some empty.
			p := prefixes[[]int{0, 2, 2, 2, 2, 3}[rng.IntN(6)]]
			for _, k := range [][]byte{append(slices.Clip(p), id...), append(slices.Clip(union), id...)} {
				if err := tx.Put(bucketIndex, k, []byte{}); err != nil {
					return err
				}
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	slices.Sort(all)
	cursors := []string{""}
	for _, id := range all {
		cursors = append(cursors, id, id[:25]+"0", id[:25]+"Z") // present, just before, just after
	}
	load := func(id string) (string, error) { return id, nil }
	if err := db.View(ctx, func(tx storage.Tx) error {
		for _, limit := range []int{1, 2, 3, 7, 40, 100} {
			for _, c := range cursors {
				for _, back := range []bool{false, true} {
					opts := corebank.ListOptions{Limit: limit, After: c}
					if back {
						if c == "" {
							continue
						}
						opts = corebank.ListOptions{Limit: limit, Before: c}
					}
					want, err := listPage(tx, union, opts, load)
					if err != nil {
						return err
					}
					got, err := readMerged(tx, prefixes, opts, load)
					if err != nil {
						return err
					}
					if diff := cmp.Diff(want, got); diff != "" {
						return fmt.Errorf("limit %d, cursor %q, back %v (-one index +merged):\n%s", limit, c, back, diff)
					}
				}
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestMigrateTransferIndexes: the status-free transfer indexes an earlier
// release wrote are gone after migrating, and the status indexes stay.
func TestMigrateTransferIndexes(t *testing.T) {
	db := memory.New()
	defer db.Close()
	ctx := context.Background()
	tr := &Transfer{ID: "01JTRANSFER000000000000000", EntityID: "01JENTITY00000000000000000", AccountID: "01JACCOUNT0000000000000000", Status: StatusSuccessful}
	keep := []string{
		"tr/" + tr.EntityID + "/s:successful/" + tr.ID,
		"tr/" + tr.EntityID + "/as:" + tr.AccountID + ":successful/" + tr.ID,
		"cp/" + tr.EntityID + "/all/01JCOUNTERPARTY00000000000", // not a transfer index
	}
	old := []string{"tr/" + tr.EntityID + "/all/" + tr.ID, "tr/" + tr.EntityID + "/a:" + tr.AccountID + "/" + tr.ID}
	if err := db.Update(ctx, func(tx storage.Tx) error {
		for _, k := range append(slices.Clone(keep), old...) {
			if err := tx.Put(bucketIndex, []byte(k), []byte{}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	s := &Service{}
	if _, err := storage.Migrate(ctx, db, s.Migrations()...); err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := db.View(ctx, func(tx storage.Tx) error {
		return tx.Scan(bucketIndex, storage.ScanOptions{}, func(k, _ []byte) error {
			got = append(got, string(k))
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
	slices.Sort(keep)
	if diff := cmp.Diff(keep, got); diff != "" {
		t.Errorf("index keys after migrating (-want +got):\n%s", diff)
	}
	// The lists read what is left.
	if err := db.View(ctx, func(tx storage.Tx) error {
		var prefixes [][]byte
		for _, st := range transferStatuses {
			prefixes = append(prefixes, appendTransferIndexPrefix(nil, tr.EntityID, tr.AccountID, st, 1))
		}
		p, err := readMerged(tx, prefixes, corebank.ListOptions{}, func(id string) (string, error) { return id, nil })
		if err == nil && !cmp.Equal(p.Items, []string{tr.ID}) {
			err = fmt.Errorf("account list %v, want [%s]", p.Items, tr.ID)
		}
		return err
	}); err != nil {
		t.Error(err)
	}
}
