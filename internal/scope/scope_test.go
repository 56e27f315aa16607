package scope_test

import (
	"context"
	"errors"
	"testing"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/internal/scope"
	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/memory"
)

// tree is root > a > a1, and root > b; parents maps a child to its parent.
type tree map[string]string

func (t tree) InTreeTx(_ storage.Tx, ancestor, id string) (bool, error) {
	if _, ok := t[id]; !ok && id != "root" {
		return false, nil // unknown
	}
	for cur := id; cur != ""; cur = t[cur] {
		if cur == ancestor {
			return true, nil
		}
	}
	return false, nil
}

var family = tree{"a": "root", "a1": "a", "b": "root"}

var errThingNotFound = corebank.NotFound("thing")

func TestCheck(t *testing.T) {
	tests := []struct {
		name   string
		caller corebank.Caller
		tree   scope.Tree
		owner  string
		want   error
	}{
		{"OK own", corebank.As("a"), family, "a", nil},
		{"OK descendant", corebank.As("a"), family, "a1", nil},
		{"OK root reaches all", corebank.As("root"), family, "b", nil},
		{"OK read-only reads", corebank.Caller{EntityID: "a", ReadOnly: true}, family, "a1", nil},
		{"OK system", corebank.System(), nil, "b", nil},
		{"OK own without tree", corebank.As("a"), nil, "a", nil},
		{"ErrSibling", corebank.As("a"), family, "b", errThingNotFound},
		{"ErrAncestor", corebank.As("a1"), family, "a", errThingNotFound},
		{"ErrUnknownOwner", corebank.As("a"), family, "zz", errThingNotFound},
		{"ErrZeroCaller", corebank.Caller{}, family, "a", errThingNotFound},
		{"ErrZeroCallerEmptyOwner", corebank.Caller{}, family, "", errThingNotFound},
		{"ErrEmptyOwner", corebank.As("a"), family, "", errThingNotFound},
		{"ErrDescendantWithoutTree", corebank.As("a"), nil, "a1", errThingNotFound},
	}
	db := memory.New()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := db.View(context.Background(), func(tx storage.Tx) error {
				return scope.Check(tx, tt.tree, tt.caller, tt.owner, errThingNotFound)
			})
			if err != tt.want {
				t.Fatalf("Check = %v; want %v", err, tt.want)
			}
		})
	}
}

func TestEntity(t *testing.T) {
	tests := []struct {
		name      string
		caller    corebank.Caller
		requested string
		want      string
		err       error
	}{
		{"OK default", corebank.As("a"), "", "a", nil},
		{"OK descendant", corebank.As("a"), "a1", "a1", nil},
		{"OK system names one", corebank.System(), "b", "b", nil},
		{"ErrForeign", corebank.As("a"), "b", "", corebank.ErrEntityNotFound},
		{"ErrUnknown", corebank.As("a"), "nope", "", corebank.ErrEntityNotFound},
		{"ErrSystemUnknown", corebank.System(), "nope", "", corebank.ErrEntityNotFound},
		{"ErrZeroCaller", corebank.Caller{}, "", "", corebank.ErrEntityNotFound},
	}
	db := memory.New()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got string
			err := db.View(context.Background(), func(tx storage.Tx) error {
				var err error
				got, err = scope.Entity(tx, family, tt.caller, tt.requested)
				return err
			})
			if got != tt.want || !errors.Is(err, tt.err) || (tt.err == nil) != (err == nil) {
				t.Fatalf("Entity = %q, %v; want %q, %v", got, err, tt.want, tt.err)
			}
		})
	}
	// System must name an entity.
	err := db.View(context.Background(), func(tx storage.Tx) error {
		_, err := scope.Entity(tx, family, corebank.System(), "")
		return err
	})
	if corebank.KindOf(err) != corebank.KindInvalid {
		t.Fatalf("System without entity: %v; want a validation error", err)
	}
}

// thing is a record kept as JSON, owned by an entity.
type thing struct {
	ID     string `json:"id"`
	Entity string `json:"entity"`
}

func (t *thing) Owner() string { return t.Entity }

// TestGet loads records through the one authorized loader: a caller sees
// its tree's records, narrowing to an entity it may act on; a record
// outside, a missing one and an entity outside answer alike.
func TestGet(t *testing.T) {
	ctx := context.Background()
	db := memory.New()
	defer db.Close()
	const b storage.Bucket = "things"
	if err := db.Update(ctx, func(tx storage.Tx) error {
		for _, th := range []thing{{"t-a1", "a1"}, {"t-b", "b"}} {
			if err := storage.PutJSON(tx, b, []byte(th.ID), th); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	read := func(tx storage.Tx, id string) (*thing, error) {
		return storage.LoadJSON[thing](tx, b, []byte(id), errThingNotFound)
	}
	tests := []struct {
		name       string
		caller     corebank.Caller
		entity, id string
		want       string
		err        error
	}{
		{"OwnTree", corebank.As("a"), "", "t-a1", "a1", nil},
		{"Narrowed", corebank.As("root"), "a", "t-a1", "a1", nil},
		{"NarrowedAway", corebank.As("root"), "b", "t-a1", "", errThingNotFound},
		{"Foreign", corebank.As("a"), "", "t-b", "", errThingNotFound},
		{"Missing", corebank.As("a"), "", "t-x", "", errThingNotFound},
		{"EntityOutside", corebank.As("a"), "b", "t-b", "", corebank.ErrEntityNotFound},
		{"System", corebank.System(), "", "t-b", "b", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := db.View(ctx, func(tx storage.Tx) error {
				got, err := scope.Get(tx, family, tt.caller, tt.entity, tt.id, read, errThingNotFound)
				if err != nil {
					return err
				}
				if got.Entity != tt.want {
					t.Errorf("owner %q, want %q", got.Entity, tt.want)
				}
				return nil
			})
			if !errors.Is(err, tt.err) {
				t.Errorf("error %v, want %v", err, tt.err)
			}
		})
	}
}
