package entities_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank/entities"
	"github.com/corebank/corebank/ledger"
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
			k, err := e.s.CreateAPIKey(ctx, entities.NewAPIKey{EntityID: root, ReadOnly: ro})
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
	other := entities.NewService(e.db, e.led, mustSealer(t), &entities.Options{Clock: e.clock, GenerateKey: cachedKey})
	t.Run("RotatedKeyFailsOnNextRequest", func(t *testing.T) {
		k, err := e.s.CreateAPIKey(ctx, entities.NewAPIKey{EntityID: root})
		if err != nil {
			t.Fatal(err)
		}
		check(t, other, k.Secret, entities.Principal{KeyID: k.Key.ID, EntityID: root})
		r, err := e.s.RotateAPIKey(ctx, k.Key.ID)
		if err != nil {
			t.Fatal(err)
		}
		refused(t, other, k.Secret)
		refused(t, e.s, k.Secret)
		check(t, other, r.Secret, entities.Principal{KeyID: k.Key.ID, EntityID: root})
	})
	t.Run("DeletedKeyFailsOnNextRequest", func(t *testing.T) {
		k, err := e.s.CreateAPIKey(ctx, entities.NewAPIKey{EntityID: root, ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		check(t, other, k.Secret, entities.Principal{KeyID: k.Key.ID, EntityID: root, ReadOnly: true})
		if err := other.DeleteAPIKey(ctx, k.Key.ID); err != nil {
			t.Fatal(err)
		}
		refused(t, e.s, k.Secret)
		refused(t, other, k.Secret)
	})
}

// TestStoreWithoutCompactRecords checks that a store written before the
// compact gate and key-index records existed (no gate/<id>, the bare key
// ID under api-keys/by-hash) still authenticates and scopes the same way.
func TestStoreWithoutCompactRecords(t *testing.T) {
	e := newEnv(t)
	root := e.root.EntityID
	a, a1, a11, b := tree(t, e)
	k, err := e.s.CreateAPIKey(ctx, entities.NewAPIKey{EntityID: a, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	type outcome struct {
		Auth      string
		Principal entities.Principal
		InTree    map[string]bool
		Gate      map[string]string
	}
	observe := func() outcome {
		t.Helper()
		o := outcome{InTree: map[string]bool{}, Gate: map[string]string{}}
		full, err := e.s.Authenticate(ctx, k.Secret)
		if err != nil {
			t.Fatal(err)
		}
		o.Auth = full.ID + "/" + full.EntityID
		if o.Principal, err = e.s.AuthenticatePrincipal(ctx, k.Secret); err != nil {
			t.Fatal(err)
		}
		ids := []string{root, a, a1, a11, b, "01HZZZZZZZZZZZZZZZZZZZZZZZ"}
		for _, x := range ids {
			for _, y := range ids {
				in, err := e.s.InTree(ctx, x, y)
				if err != nil {
					t.Fatal(err)
				}
				o.InTree[x+">"+y] = in
			}
			err := e.db.View(ctx, func(tx storage.Tx) error {
				var g ledger.EntityGate = entities.Gate{}
				o.Gate[x] = errString(g.CanMoveMoney(tx, x)) + "|" + errString(g.CanOpenAccount(tx, x))
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		return o
	}
	want := observe()
	if !want.InTree[root+">"+a11] || want.InTree[b+">"+a] || want.Gate[root] != "|" {
		t.Fatalf("unexpected baseline %+v", want)
	}
	// Rewrite the store into the old layout.
	err = e.db.Update(ctx, func(tx storage.Tx) error {
		var gates [][]byte
		if err := tx.Scan("entities", storage.ScanOptions{Prefix: storage.Prefix("gate")}, func(k, _ []byte) error {
			gates = append(gates, append([]byte(nil), k...))
			return nil
		}); err != nil {
			return err
		}
		if len(gates) < 5 {
			t.Errorf("%d gate records, want one per entity", len(gates))
		}
		for _, g := range gates {
			if err := tx.Delete("entities", g); err != nil {
				return err
			}
		}
		h := sha256.Sum256([]byte(k.Secret))
		return tx.Put("entities.keys", storage.Key("api-keys", "by-hash", hex.EncodeToString(h[:])), []byte(k.Key.ID))
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, observe()); diff != "" {
		t.Errorf("old layout (-new +old):\n%s", diff)
	}
	// Deleting the key still works on the old layout.
	if err := e.s.DeleteAPIKey(ctx, k.Key.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.AuthenticatePrincipal(ctx, k.Secret); !errors.Is(err, entities.ErrUnauthorized) {
		t.Fatalf("deleted key on old layout: %v", err)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
