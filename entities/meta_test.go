package entities_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/entities"
	"github.com/corebank/corebank/storage"
)

// TestMetaOldArrays: records written while meta values could be arrays
// read with each array's items joined by ", ", and are written back as
// strings at the next change.
func TestMetaOldArrays(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	sys := corebank.As(e.root.EntityID)
	c := e.business(e.root.EntityID)
	id := c.Entity.ID
	// Rewrite both records as the old validator let them be stored.
	rewrite := func(tx storage.Tx, key []byte, edit func(map[string]any)) error {
		p, err := storage.LoadJSON[map[string]any](tx, "entities", key, storage.ErrNotFound)
		if err != nil {
			return err
		}
		rec := *p
		edit(rec)
		raw, err := json.Marshal(rec)
		if err != nil {
			return err
		}
		return tx.Put("entities", key, raw)
	}
	err := e.db.Update(ctx, func(tx storage.Tx) error {
		err := rewrite(tx, storage.Key("entities", id), func(rec map[string]any) {
			rec["meta"] = map[string]any{"tax_id": []any{"12-3456789", "98-7654321"}, "none": []any{}, "plain": "x"}
		})
		if err != nil {
			return err
		}
		return rewrite(tx, storage.Key("profiles", id), func(rec map[string]any) {
			rec["business_meta"].(map[string]any)["meta"] = map[string]any{
				"registration_number": []any{"RC1"}, "sales_channels": []any{"online", "retail"}}
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.s.GetComposite(ctx, sys, "", id)
	if err != nil {
		t.Fatal(err)
	}
	want := entities.Meta{"tax_id": "12-3456789, 98-7654321", "none": "", "plain": "x"}
	if diff := cmp.Diff(want, got.Entity.Meta); diff != "" {
		t.Errorf("entity meta (-want +got):\n%s", diff)
	}
	// sales_channels keeps the array SPEC gives it; other keys join.
	wantBus := entities.BusinessMetaValues{Strings: entities.Meta{"registration_number": "RC1"}, SalesChannels: []string{"online", "retail"}}
	if diff := cmp.Diff(wantBus, got.BusinessMeta.Meta); diff != "" {
		t.Errorf("business meta (-want +got):\n%s", diff)
	}
	// A list reads the same records the same way.
	page, err := e.s.ListEntities(ctx, sys, entities.EntityFilter{}, corebank.ListOptions{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, ent := range page.Items {
		if ent.ID == id {
			if diff := cmp.Diff(want, ent.Meta); diff != "" {
				t.Errorf("listed entity meta (-want +got):\n%s", diff)
			}
		}
	}
}
