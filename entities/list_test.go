package entities_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/entities"
)

func ids(items []entities.Entity) []string {
	out := []string{}
	for _, e := range items {
		out = append(out, e.ID)
	}
	return out
}

func TestListEntities(t *testing.T) {
	e := newEnv(t)
	root := e.root.EntityID
	a, a1, a11, b := tree(t, e)
	list := func(caller string, f entities.EntityFilter, o corebank.ListOptions) *corebank.Page[entities.Entity] {
		t.Helper()
		p, err := e.s.ListEntities(ctx, corebank.As(caller), f, o)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	t.Run("OnlyCallersTree", func(t *testing.T) {
		if diff := cmp.Diff([]string{a, a1, a11}, ids(list(a, entities.EntityFilter{}, corebank.ListOptions{}).Items)); diff != "" {
			t.Errorf("a's tree (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{b}, ids(list(b, entities.EntityFilter{}, corebank.ListOptions{}).Items)); diff != "" {
			t.Errorf("b's tree (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{root, a, a1, a11, b}, ids(list(root, entities.EntityFilter{}, corebank.ListOptions{}).Items)); diff != "" {
			t.Errorf("root's tree (-want +got):\n%s", diff)
		}
	})
	t.Run("Filters", func(t *testing.T) {
		if diff := cmp.Diff([]string{root, b}, ids(list(root, entities.EntityFilter{Type: "business"}, corebank.ListOptions{}).Items)); diff != "" {
			t.Errorf("type (-want +got):\n%s", diff)
		}
		if _, err := e.s.ReviewEntity(ctx, sys, a1, "approved"); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{root, a1}, ids(list(root, entities.EntityFilter{Status: "approved"}, corebank.ListOptions{}).Items)); diff != "" {
			t.Errorf("status (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{a, b}, ids(list(root, entities.EntityFilter{ParentEntity: root}, corebank.ListOptions{}).Items)); diff != "" {
			t.Errorf("parent (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{a11}, ids(list(a, entities.EntityFilter{ParentEntity: a1}, corebank.ListOptions{}).Items)); diff != "" {
			t.Errorf("parent in a's tree (-want +got):\n%s", diff)
		}
	})
	t.Run("ErrEntityNotFound", func(t *testing.T) {
		_, err := e.s.ListEntities(ctx, corebank.As(a), entities.EntityFilter{ParentEntity: b}, corebank.ListOptions{})
		if !errors.Is(err, entities.ErrEntityNotFound) {
			t.Fatalf("parent outside tree: %v", err)
		}
	})
	t.Run("ErrValidation", func(t *testing.T) {
		for name, c := range map[string]struct {
			f     entities.EntityFilter
			o     corebank.ListOptions
			field string
		}{
			"TypeEnum":     {entities.EntityFilter{Type: "robot"}, corebank.ListOptions{}, "type"},
			"StatusEnum":   {entities.EntityFilter{Status: "done"}, corebank.ListOptions{}, "status"},
			"LimitMax100":  {entities.EntityFilter{}, corebank.ListOptions{Limit: 101}, "limit"},
			"LimitMin1":    {entities.EntityFilter{}, corebank.ListOptions{Limit: -1}, "limit"},
			"CursorFormat": {entities.EntityFilter{}, corebank.ListOptions{After: "not-a-cursor"}, "cursor"},
		} {
			t.Run(name, func(t *testing.T) {
				_, err := e.s.ListEntities(ctx, corebank.As(root), c.f, c.o)
				if f := fieldsOf(t, err); f[c.field] == "" {
					t.Fatalf("fields = %v, want %q", f, c.field)
				}
			})
		}
	})
	t.Run("Pages", func(t *testing.T) {
		var made []string
		for i := 0; i < 7; i++ {
			made = append(made, e.individual(b, nil).Entity.ID)
		}
		all := append([]string{b}, made...)
		p1 := list(b, entities.EntityFilter{}, corebank.ListOptions{Limit: 3})
		if diff := cmp.Diff(all[:3], ids(p1.Items)); diff != "" || !p1.HasNext || p1.HasPrevious || p1.Next != all[2] {
			t.Fatalf("page 1 %+v (-want +got):\n%s", p1, diff)
		}
		p2 := list(b, entities.EntityFilter{}, corebank.ListOptions{Limit: 3, After: p1.Next})
		if diff := cmp.Diff(all[3:6], ids(p2.Items)); diff != "" || !p2.HasNext || !p2.HasPrevious || p2.Previous != all[3] {
			t.Fatalf("page 2 %+v (-want +got):\n%s", p2, diff)
		}
		p3 := list(b, entities.EntityFilter{}, corebank.ListOptions{Limit: 3, After: p2.Next})
		if diff := cmp.Diff(all[6:], ids(p3.Items)); diff != "" || p3.HasNext || !p3.HasPrevious || p3.Next != "" {
			t.Fatalf("page 3 %+v (-want +got):\n%s", p3, diff)
		}
		back := list(b, entities.EntityFilter{}, corebank.ListOptions{Limit: 3, Before: p3.Previous})
		if diff := cmp.Diff(all[3:6], ids(back.Items)); diff != "" || !back.HasNext || !back.HasPrevious {
			t.Fatalf("back to page 2 %+v (-want +got):\n%s", back, diff)
		}
		first := list(b, entities.EntityFilter{}, corebank.ListOptions{Limit: 3, Before: back.Previous})
		if diff := cmp.Diff(all[:3], ids(first.Items)); diff != "" || !first.HasNext || first.HasPrevious {
			t.Fatalf("back to page 1 %+v (-want +got):\n%s", first, diff)
		}
	})
}
