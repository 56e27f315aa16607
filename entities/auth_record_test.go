package entities_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank/entities"
	"github.com/corebank/corebank/service"
	"github.com/corebank/corebank/storage"
)

func TestAuthenticatePrincipal(t *testing.T) {
	e := newEnv(t)
	root := e.root.EntityID
	check := func(t *testing.T, s *entities.Service, secret string, want entities.Principal) {
		t.Helper()
		got, err := s.AuthenticatePrincipal(ctx, secret)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("AuthenticatePrincipal (-want +got):\n%s", diff)
		}
	}
	refused := func(t *testing.T, s *entities.Service, secret string) {
		t.Helper()
		if _, err := s.AuthenticatePrincipal(ctx, secret); !errors.Is(err, entities.ErrUnauthorized) {
			t.Fatalf("AuthenticatePrincipal = %v, want ErrUnauthorized", err)
		}
	}
	t.Run("OK", func(t *testing.T) {
		for _, ro := range []bool{false, true} {
			k, err := e.s.CreateAPIKey(ctx, sys, entities.NewAPIKey{EntityID: root, ReadOnly: ro})
			if err != nil {
				t.Fatal(err)
			}
			check(t, e.s, k.Secret, entities.Principal{KeyID: k.Key.ID, EntityID: root, ReadOnly: ro})
		}
	})
	t.Run("ErrUnauthorized", func(t *testing.T) {
		refused(t, e.s, "")
		refused(t, e.s, "sk_sandbox_nope")
	})
	// A second Service over the same store sees rotation and deletion on
	// its very next call: nothing is cached in a Service.
	other := entities.NewService(e.db, e.led, mustSealer(t), &entities.Options{Deps: service.Deps{Clock: e.clock}, GenerateKey: cachedKey})
	t.Run("RotatedKeyFailsOnNextRequest", func(t *testing.T) {
		k, err := e.s.CreateAPIKey(ctx, sys, entities.NewAPIKey{EntityID: root})
		if err != nil {
			t.Fatal(err)
		}
		check(t, other, k.Secret, entities.Principal{KeyID: k.Key.ID, EntityID: root})
		r, err := e.s.RotateAPIKey(ctx, sys, "", k.Key.ID)
		if err != nil {
			t.Fatal(err)
		}
		refused(t, other, k.Secret)
		refused(t, e.s, k.Secret)
		check(t, other, r.Secret, entities.Principal{KeyID: k.Key.ID, EntityID: root})
	})
	t.Run("DeletedKeyFailsOnNextRequest", func(t *testing.T) {
		k, err := e.s.CreateAPIKey(ctx, sys, entities.NewAPIKey{EntityID: root, ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		check(t, other, k.Secret, entities.Principal{KeyID: k.Key.ID, EntityID: root, ReadOnly: true})
		if _, err := other.DeleteAPIKey(ctx, sys, "", k.Key.ID); err != nil {
			t.Fatal(err)
		}
		refused(t, e.s, k.Secret)
		refused(t, other, k.Secret)
	})
}

// TestAuthRecordEqualsKeyRecord checks that the auth record answers as the
// plain path does: a store written before it existed (the bare key ID under
// api-keys/by-hash) authenticates, and deletes, the same way.
func TestAuthRecordEqualsKeyRecord(t *testing.T) {
	e := newEnv(t)
	a, _, _, _ := tree(t, e)
	k, err := e.s.CreateAPIKey(ctx, sys, entities.NewAPIKey{EntityID: a, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	type outcome struct {
		Auth      string
		Principal entities.Principal
	}
	observe := func() outcome {
		t.Helper()
		full, err := e.s.Authenticate(ctx, k.Secret)
		if err != nil {
			t.Fatal(err)
		}
		o := outcome{Auth: full.ID + "/" + full.EntityID}
		if o.Principal, err = e.s.AuthenticatePrincipal(ctx, k.Secret); err != nil {
			t.Fatal(err)
		}
		return o
	}
	want := observe()
	if want.Principal != (entities.Principal{KeyID: k.Key.ID, EntityID: a, ReadOnly: true}) {
		t.Fatalf("unexpected baseline %+v", want)
	}
	// Rewrite the index entry into the plain layout.
	h := sha256.Sum256([]byte(k.Secret))
	err = e.db.Update(ctx, func(tx storage.Tx) error {
		return tx.Put("entities.keys", storage.Key("api-keys", "by-hash", hex.EncodeToString(h[:])), []byte(k.Key.ID))
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, observe()); diff != "" {
		t.Errorf("plain layout (-record +plain):\n%s", diff)
	}
	// Deleting the key still works on the plain layout.
	if _, err := e.s.DeleteAPIKey(ctx, sys, "", k.Key.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.AuthenticatePrincipal(ctx, k.Secret); !errors.Is(err, entities.ErrUnauthorized) {
		t.Fatalf("deleted key on plain layout: %v", err)
	}
}
