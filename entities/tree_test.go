package entities_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/entities"
	"github.com/corebank/corebank/internal/scope"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/storage"
)

// tree builds root -> a -> a1 -> a11 and root -> b.
func tree(t *testing.T, e *env) (a, a1, a11, b string) {
	t.Helper()
	root := e.root.EntityID
	a = e.individual(root, nil).Entity.ID
	a1 = e.individual(a, nil).Entity.ID
	a11 = e.individual(root, func(n *entities.NewIndividual) { n.ParentEntity = a1 }).Entity.ID
	b = e.business(root).Entity.ID
	return
}

func TestInTree(t *testing.T) {
	e := newEnv(t)
	root := e.root.EntityID
	a, a1, a11, b := tree(t, e)
	cases := []struct {
		name         string
		ancestor, id string
		want         bool
	}{
		{"Self", a, a, true},
		{"Child", a, a1, true},
		{"Grandchild", a, a11, true},
		{"RootSeesAll", root, a11, true},
		{"RootSeesB", root, b, true},
		{"SiblingA", b, a, false},
		{"SiblingB", a, b, false},
		{"ChildCannotSeeParent", a1, a, false},
		{"ChildCannotSeeRoot", a, root, false},
		{"Unknown", root, "01HZZZZZZZZZZZZZZZZZZZZZZZ", false},
		{"UnknownAncestor", "01HZZZZZZZZZZZZZZZZZZZZZZZ", a, false},
		{"Empty", root, "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := e.s.InTree(ctx, c.ancestor, c.id)
			if err != nil || got != c.want {
				t.Fatalf("InTree(%s, %s) = %v, %v; want %v", c.ancestor, c.id, got, err, c.want)
			}
		})
	}
	if got, _ := e.s.GetEntity(ctx, sys, "", a11); string(got.ParentEntity) != a1 || got.IsRoot {
		t.Errorf("a11 parent = %q is_root %v; want %q false", got.ParentEntity, got.IsRoot, a1)
	}
}

// TestAncestors: the gate lists an entity's ancestors, root first, for
// the webhooks' fan-out (webhooks.Ancestry); none for the root, an
// unknown entity or none at all.
func TestAncestors(t *testing.T) {
	e := newEnv(t)
	root := e.root.EntityID
	a, a1, a11, b := tree(t, e)
	for _, c := range []struct {
		id   string
		want []string
	}{
		{a11, []string{root, a, a1}},
		{a1, []string{root, a}},
		{b, []string{root}},
		{root, nil},
		{"01HZZZZZZZZZZZZZZZZZZZZZZZ", nil},
		{"", nil},
	} {
		got, err := storage.View(ctx, e.db, func(tx storage.Tx) ([]string, error) { return entities.Gate{}.AncestorsTx(tx, c.id) })
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("AncestorsTx(%q) = %q, %v; want %q", c.id, got, err, c.want)
		}
	}
}

// TestScopeEntity runs the one scope rule over the entities' own tree.
func TestScopeEntity(t *testing.T) {
	e := newEnv(t)
	a, a1, _, b := tree(t, e)
	resolve := func(caller, req string) (string, error) {
		return storage.View(ctx, e.db, func(tx storage.Tx) (string, error) {
			return scope.Entity(tx, e.s, corebank.As(caller), req)
		})
	}
	t.Run("OK", func(t *testing.T) {
		for _, c := range []struct{ caller, req, want string }{{a, "", a}, {a, a, a}, {a, a1, a1}} {
			got, err := resolve(c.caller, c.req)
			if err != nil || got != c.want {
				t.Errorf("scope.Entity(%s, %q) = %q, %v; want %q", c.caller, c.req, got, err, c.want)
			}
		}
	})
	t.Run("ErrEntityNotFound", func(t *testing.T) {
		// Outside the tree and unknown answer alike.
		for _, req := range []string{b, e.root.EntityID, "01HZZZZZZZZZZZZZZZZZZZZZZZ", "nonsense"} {
			_, err := resolve(a, req)
			if !errors.Is(err, entities.ErrEntityNotFound) || corebank.KindOf(err) != corebank.KindNotFound {
				t.Errorf("scope.Entity(a, %s) = %v, want not found", req, err)
			}
		}
	})
}

func TestCreateScoping(t *testing.T) {
	e := newEnv(t)
	a, a1, _, b := tree(t, e)
	t.Run("ParentOutsideTree", func(t *testing.T) {
		_, err := e.s.CreateIndividual(ctx, corebank.As(a), func() entities.NewIndividual {
			n := individual()
			n.ParentEntity = b
			return n
		}())
		if !errors.Is(err, entities.ErrEntityNotFound) {
			t.Fatalf("err = %v, want not found", err)
		}
	})
	t.Run("ParentInsideTree", func(t *testing.T) {
		c := e.individual(a, func(n *entities.NewIndividual) { n.ParentEntity = a1 })
		if string(c.Entity.ParentEntity) != a1 {
			t.Fatalf("parent = %s, want %s", c.Entity.ParentEntity, a1)
		}
	})
	t.Run("ParentCanActOnChild", func(t *testing.T) {
		name := "Renamed"
		if _, err := e.s.UpdateIndividual(ctx, corebank.As(a), "", a1, entities.IndividualPatch{Name: &name}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("ACannotActOnB", func(t *testing.T) {
		name := "Hijack"
		_, err := e.s.UpdateBusiness(ctx, corebank.As(a), "", b, entities.BusinessPatch{Name: &name})
		if !errors.Is(err, entities.ErrEntityNotFound) {
			t.Fatalf("err = %v, want not found", err)
		}
		_, err = e.s.UpdateIndividual(ctx, corebank.As(a1), "", a, entities.IndividualPatch{Name: &name})
		if !errors.Is(err, entities.ErrEntityNotFound) {
			t.Fatalf("child on parent: %v, want not found", err)
		}
	})
}

func TestReview(t *testing.T) {
	e := newEnv(t)
	root := e.root.EntityID
	t.Run("ErrDecision", func(t *testing.T) {
		id := e.individual(root, nil).Entity.ID
		for _, d := range []string{"", "pending", "incomplete", "APPROVED", "ok"} {
			_, err := e.s.ReviewEntity(ctx, sys, id, d)
			if f := fieldsOf(t, err); f["decision"] == "" {
				t.Errorf("ReviewEntity(%q) fields = %v, want decision", d, f)
			}
		}
	})
	t.Run("ErrEntityNotFound", func(t *testing.T) {
		if _, err := e.s.ReviewEntity(ctx, sys, "01HZZZZZZZZZZZZZZZZZZZZZZZ", "approved"); !errors.Is(err, entities.ErrEntityNotFound) {
			t.Fatal(err)
		}
	})
	// Every (from, decision) pair: from is reached by a path of allowed moves.
	paths := map[string][]string{
		"incomplete": nil,
		"approved":   {"approved"},
		"suspended":  {"suspended"},
		"rejected":   {"rejected"},
	}
	allowed := map[string]map[string]bool{
		"incomplete": {"approved": true, "rejected": true, "suspended": true},
		"approved":   {"approved": true, "suspended": true},
		"suspended":  {"suspended": true, "approved": true, "rejected": true},
		"rejected":   {"rejected": true},
	}
	for from, path := range paths {
		for _, d := range []string{"approved", "rejected", "suspended"} {
			t.Run(from+"To"+d, func(t *testing.T) {
				id := e.individual(root, nil).Entity.ID
				for _, p := range path {
					if _, err := e.s.ReviewEntity(ctx, sys, id, p); err != nil {
						t.Fatal(err)
					}
				}
				got, err := e.s.ReviewEntity(ctx, sys, id, d)
				if allowed[from][d] {
					if err != nil || got.Status != d {
						t.Fatalf("ReviewEntity = %v, %v; want %s", got, err, d)
					}
				} else if !errors.Is(err, entities.ErrInvalidTransition) || corebank.KindOf(err) != corebank.KindConflict {
					t.Fatalf("ReviewEntity = %v, %v; want ErrInvalidTransition", got, err)
				}
			})
		}
	}
	t.Run("Event", func(t *testing.T) {
		id := e.individual(root, nil).Entity.ID
		before := len(e.events())
		if _, err := e.s.ReviewEntity(ctx, sys, id, "approved"); err != nil {
			t.Fatal(err)
		}
		evs := e.events()[before:]
		if len(evs) != 1 || evs[0].Type != entities.EventUpdated || evs[0].EntityID != id {
			t.Fatalf("events = %+v", evs)
		}
		c, _ := e.s.GetComposite(ctx, sys, "", id)
		if c.Person.Status != "approved" || c.Identification.VerificationStatus != "approved" {
			t.Errorf("person %s identification %s, want approved", c.Person.Status, c.Identification.VerificationStatus)
		}
		// Deciding the current status again is a no-op without an event.
		if _, err := e.s.ReviewEntity(ctx, sys, id, "approved"); err != nil || len(e.events()) != before+1 {
			t.Fatalf("repeat review: %v, %d events", err, len(e.events())-before)
		}
	})
}

func TestGate(t *testing.T) {
	e := newEnv(t)
	root := e.root.EntityID
	id := e.individual(root, nil).Entity.ID
	open := func() error {
		_, err := e.led.CreateAccount(ctx, corebank.System(), ledger.NewAccount{EntityID: id, Type: "checking", Currency: "USD", DisplayName: "Main"})
		return err
	}
	t.Run("ErrEntityNotApproved", func(t *testing.T) {
		err := open()
		if !errors.Is(err, entities.ErrEntityNotApproved) || corebank.KindOf(err) != corebank.KindRejected {
			t.Fatalf("open incomplete = %v", err)
		}
		if err := e.canMove(id); !errors.Is(err, entities.ErrEntityNotApproved) {
			t.Fatalf("CanMoveMoney incomplete = %v", err)
		}
	})
	t.Run("OK", func(t *testing.T) {
		if _, err := e.s.ReviewEntity(ctx, sys, id, "approved"); err != nil {
			t.Fatal(err)
		}
		if err := open(); err != nil {
			t.Fatalf("open approved = %v", err)
		}
		if err := e.canMove(id); err != nil {
			t.Fatalf("CanMoveMoney approved = %v", err)
		}
	})
	t.Run("ErrEntitySuspended", func(t *testing.T) {
		if _, err := e.s.ReviewEntity(ctx, sys, id, "suspended"); err != nil {
			t.Fatal(err)
		}
		if err := open(); !errors.Is(err, entities.ErrEntitySuspended) {
			t.Fatalf("open suspended = %v", err)
		}
		if err := e.canMove(id); !errors.Is(err, entities.ErrEntitySuspended) || corebank.KindOf(err) != corebank.KindRejected {
			t.Fatalf("CanMoveMoney suspended = %v", err)
		}
		// A suspended entity still reads.
		if _, err := e.s.GetComposite(ctx, sys, "", id); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("ErrEntityNotFound", func(t *testing.T) {
		_, err := e.led.CreateAccount(ctx, corebank.System(), ledger.NewAccount{EntityID: "01HZZZZZZZZZZZZZZZZZZZZZZZ", Type: "checking", Currency: "USD", DisplayName: "Main"})
		if !errors.Is(err, entities.ErrEntityNotFound) {
			t.Fatalf("open unknown = %v", err)
		}
	})
}

func (e *env) canMove(id string) error {
	return e.db.View(ctx, func(tx storage.Tx) error { return e.s.CanMoveMoney(tx, id) })
}
