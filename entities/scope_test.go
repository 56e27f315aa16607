package entities_test

import (
	"errors"
	"testing"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/entities"
)

// TestCallerScope checks every caller-taking method against the one rule:
// a foreign object answers its own not-found error exactly as a missing
// one, a foreign entity_id (within) answers ErrEntityNotFound whether the
// object exists or not, and a read-only caller may change nothing.
func TestCallerScope(t *testing.T) {
	e := newEnv(t)
	a, a1, _, b := tree(t, e)
	asA, asB := corebank.As(a), corebank.As(b)
	// a1 is submittable: identity and proof_of_address documents.
	var docID string
	for _, k := range []string{"identity", "proof_of_address"} {
		r, err := e.s.CreateDocument(ctx, asA, doc(a1, k))
		if err != nil {
			t.Fatal(err)
		}
		docID = r.Document.ID
	}
	sub, err := e.s.SubmitEntity(ctx, asA, a1)
	if err != nil {
		t.Fatal(err)
	}
	key, err := e.s.CreateAPIKey(ctx, asA, entities.NewAPIKey{EntityID: a1})
	if err != nil {
		t.Fatal(err)
	}
	const missing = "01HZZZZZZZZZZZZZZZZZZZZZZZ"

	// Each probe reads or changes object id for caller c within w.
	type probe func(c corebank.Caller, w, id string) error
	probes := []struct {
		name     string
		existing string
		notFound error
		run      probe
	}{
		{"GetEntity", a1, entities.ErrEntityNotFound, func(c corebank.Caller, w, id string) error {
			_, err := e.s.GetEntity(ctx, c, w, id)
			return err
		}},
		{"GetComposite", a1, entities.ErrEntityNotFound, func(c corebank.Caller, w, id string) error {
			_, err := e.s.GetComposite(ctx, c, w, id)
			return err
		}},
		{"UpdateIndividual", a1, entities.ErrEntityNotFound, func(c corebank.Caller, w, id string) error {
			name := "x"
			_, err := e.s.UpdateIndividual(ctx, c, w, id, entities.IndividualPatch{Name: &name})
			return err
		}},
		{"GetDocument", docID, entities.ErrDocumentNotFound, func(c corebank.Caller, w, id string) error {
			_, err := e.s.GetDocument(ctx, c, w, id)
			return err
		}},
		{"OpenDocument", docID, entities.ErrDocumentNotFound, func(c corebank.Caller, w, id string) error {
			_, err := e.s.OpenDocument(ctx, c, w, id)
			return err
		}},
		{"GetSubmission", sub.ID, entities.ErrSubmissionNotFound, func(c corebank.Caller, w, id string) error {
			_, err := e.s.GetSubmission(ctx, c, w, id)
			return err
		}},
	}
	for _, p := range probes {
		t.Run(p.name, func(t *testing.T) {
			if err := p.run(asA, "", p.existing); err != nil {
				t.Fatalf("own tree: %v", err)
			}
			if err := p.run(asA, a1, p.existing); err != nil {
				t.Fatalf("within a descendant: %v", err)
			}
			foreign, gone := p.run(asB, "", p.existing), p.run(asB, "", missing)
			if !errors.Is(foreign, p.notFound) || foreign.Error() != gone.Error() || !errors.Is(gone, p.notFound) {
				t.Errorf("foreign %v, missing %v, want both %v", foreign, gone, p.notFound)
			}
			foreign, gone = p.run(asB, a1, p.existing), p.run(asB, a1, missing)
			if !errors.Is(foreign, entities.ErrEntityNotFound) || !errors.Is(gone, entities.ErrEntityNotFound) {
				t.Errorf("foreign within: existing %v, missing %v, want both ErrEntityNotFound", foreign, gone)
			}
			// A within that excludes the object narrows the caller's scope.
			if err := p.run(corebank.As(e.root.EntityID), b, p.existing); !errors.Is(err, p.notFound) {
				t.Errorf("within a sibling tree: %v, want %v", err, p.notFound)
			}
			if err := p.run(corebank.Caller{}, "", p.existing); !errors.Is(err, p.notFound) {
				t.Errorf("zero caller: %v, want %v", err, p.notFound)
			}
		})
	}

	t.Run("APIKeys", func(t *testing.T) {
		if _, err := e.s.GetAPIKey(ctx, asA, "", key.Key.ID); err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{key.Key.ID, missing} {
			if _, err := e.s.GetAPIKey(ctx, asB, "", id); !errors.Is(err, entities.ErrAPIKeyNotFound) {
				t.Errorf("GetAPIKey(%s) = %v", id, err)
			}
			if _, err := e.s.RotateAPIKey(ctx, asB, "", id); !errors.Is(err, entities.ErrAPIKeyNotFound) {
				t.Errorf("RotateAPIKey(%s) = %v", id, err)
			}
			if _, err := e.s.DeleteAPIKey(ctx, asB, "", id); !errors.Is(err, entities.ErrAPIKeyNotFound) {
				t.Errorf("DeleteAPIKey(%s) = %v", id, err)
			}
		}
		for _, id := range []string{a1, missing} {
			if _, err := e.s.CreateAPIKey(ctx, asB, entities.NewAPIKey{EntityID: id}); !errors.Is(err, entities.ErrEntityNotFound) {
				t.Errorf("CreateAPIKey for %s = %v", id, err)
			}
			if _, err := e.s.ListAPIKeys(ctx, asB, entities.APIKeyFilter{EntityID: id}); !errors.Is(err, entities.ErrEntityNotFound) {
				t.Errorf("ListAPIKeys of %s = %v", id, err)
			}
		}
		if k, err := e.s.DeleteAPIKey(ctx, asA, "", key.Key.ID); err != nil || k.EntityID != a1 {
			t.Fatalf("DeleteAPIKey own = %+v, %v", k, err)
		}
	})

	t.Run("ForeignWhateverElse", func(t *testing.T) {
		// Scope is decided before the decision or the body is looked at.
		for _, d := range []string{"approved", "maybe", ""} {
			if _, err := e.s.ReviewEntity(ctx, asB, a1, d); !errors.Is(err, entities.ErrEntityNotFound) {
				t.Errorf("ReviewEntity(%q) of a foreign entity = %v", d, err)
			}
		}
		if _, err := e.s.SubmitEntity(ctx, asB, a1); !errors.Is(err, entities.ErrEntityNotFound) {
			t.Errorf("SubmitEntity of a foreign entity = %v", err)
		}
		if _, err := e.s.CreateDocument(ctx, asB, doc(a1, "identity")); !errors.Is(err, entities.ErrEntityNotFound) {
			t.Errorf("CreateDocument for a foreign entity = %v", err)
		}
		if _, err := e.s.ListEntities(ctx, asB, entities.EntityFilter{EntityID: a}, corebank.ListOptions{}); !errors.Is(err, entities.ErrEntityNotFound) {
			t.Errorf("ListEntities of a foreign tree = %v", err)
		}
	})

	t.Run("ErrForbidden", func(t *testing.T) {
		ro := corebank.Caller{EntityID: a, ReadOnly: true}
		name := "x"
		for what, err := range map[string]error{
			"CreateIndividual": second(e.s.CreateIndividual(ctx, ro, individual())),
			"CreateBusiness":   second(e.s.CreateBusiness(ctx, ro, business())),
			"UpdateIndividual": second(e.s.UpdateIndividual(ctx, ro, "", a1, entities.IndividualPatch{Name: &name})),
			"UpdateBusiness":   second(e.s.UpdateBusiness(ctx, ro, "", a1, entities.BusinessPatch{Name: &name})),
			"CreateDocument":   second(e.s.CreateDocument(ctx, ro, doc(a1, "identity"))),
			"Submit":           second(e.s.SubmitEntity(ctx, ro, a1)),
			"Review":           second(e.s.ReviewEntity(ctx, ro, a1, "approved")),
			"CreateAPIKey":     second(e.s.CreateAPIKey(ctx, ro, entities.NewAPIKey{})),
			"RotateAPIKey":     second(e.s.RotateAPIKey(ctx, ro, "", missing)),
			"DeleteAPIKey":     second(e.s.DeleteAPIKey(ctx, ro, "", missing)),
		} {
			if !errors.Is(err, corebank.ErrForbidden) {
				t.Errorf("%s as read-only = %v, want ErrForbidden", what, err)
			}
		}
		if _, err := e.s.GetComposite(ctx, ro, "", a1); err != nil {
			t.Errorf("read-only read: %v", err)
		}
	})

	t.Run("SentinelsDistinct", func(t *testing.T) {
		if entities.ErrEntityNotFound != corebank.ErrEntityNotFound {
			t.Error("ErrEntityNotFound is not corebank.ErrEntityNotFound")
		}
		all := []error{entities.ErrEntityNotFound, entities.ErrDocumentNotFound, entities.ErrSubmissionNotFound, entities.ErrAPIKeyNotFound}
		for i, x := range all {
			for j, y := range all {
				if errors.Is(x, y) != (i == j) {
					t.Errorf("errors.Is(%v, %v) = %v", x, y, i != j)
				}
			}
		}
	})
}

func second[T any](_ T, err error) error { return err }
