package entities_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank/entities"
	"github.com/corebank/corebank/storage"
)

// references is what an entity's JSON says of its optional references.
func references(tb testing.TB, ent *entities.Entity) map[string]any {
	tb.Helper()
	raw, err := json.Marshal(ent)
	if err != nil {
		tb.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		tb.Fatal(err)
	}
	out := map[string]any{}
	for _, k := range []string{"parent_entity", "person_id", "business_id", "user_id"} {
		v, ok := m[k]
		if !ok {
			tb.Fatalf("%s missing from %s", k, raw)
		}
		out[k] = v
	}
	return out
}

// TestEntityReferencesNull: a reference that does not apply is null, not
// "" (SPEC "Entity"): the root has no parent, a business no person, an
// individual that is no sole trader no business, and no entity a user.
func TestEntityReferencesNull(t *testing.T) {
	e := newEnv(t)
	root := e.root.EntityID
	ind := e.individual(root, nil)
	rootEnt, err := e.s.GetEntity(ctx, sys, "", root)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		ent  *entities.Entity
		want map[string]any
	}{
		{"OKRoot", rootEnt, map[string]any{"parent_entity": nil, "person_id": nil,
			"business_id": string(rootEnt.BusinessID), "user_id": nil}},
		{"OKIndividual", ind.Entity, map[string]any{"parent_entity": root, "person_id": ind.Person.ID,
			"business_id": nil, "user_id": nil}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.want["business_id"] == "" {
				t.Fatal("the root has no business")
			}
			if diff := cmp.Diff(c.want, references(t, c.ent)); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}

	// A record stored with "" for each (as earlier releases wrote them)
	// reads back as null too.
	key := storage.Key("entities", root)
	err = e.db.Update(ctx, func(tx storage.Tx) error {
		p, err := storage.LoadJSON[map[string]any](tx, "entities", key, storage.ErrNotFound)
		if err != nil {
			return err
		}
		rec := *p
		for _, k := range []string{"parent_entity", "person_id", "user_id"} {
			rec[k] = ""
		}
		return storage.PutJSON(tx, "entities", key, rec)
	})
	if err != nil {
		t.Fatal(err)
	}
	old, err := e.s.GetEntity(ctx, sys, "", root)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(references(t, rootEnt), references(t, old)); diff != "" {
		t.Errorf("an old record reads differently (-want +got)\n%s", diff)
	}
}
