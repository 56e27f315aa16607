package entities_test

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/entities"
	"github.com/corebank/corebank/storage/memory"
)

func parsePub(t *testing.T, p string) *rsa.PublicKey {
	t.Helper()
	b, _ := pem.Decode([]byte(p))
	if b == nil || b.Type != "PUBLIC KEY" {
		t.Fatalf("not a PUBLIC KEY PEM: %q", p)
	}
	k, err := x509.ParsePKIXPublicKey(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	rk, ok := k.(*rsa.PublicKey)
	if !ok || rk.N.BitLen() < 2048 {
		t.Fatalf("public key is %T, want RSA >= 2048 bits", k)
	}
	return rk
}

func encrypt(t *testing.T, pubPEM string, msg []byte) string {
	t.Helper()
	ct, err := rsa.EncryptOAEP(sha256.New(), rand.Reader, parsePub(t, pubPEM), msg, nil)
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(ct)
}

func TestBootstrap(t *testing.T) {
	e := newEnv(t)
	t.Run("OK", func(t *testing.T) {
		r := e.root
		if !strings.HasPrefix(r.APIKey, "sk_sandbox_") || !strings.HasPrefix(r.ReadOnlyAPIKey, "sk_sandbox_") {
			t.Fatalf("keys %q %q lack the sandbox prefix", r.APIKey, r.ReadOnlyAPIKey)
		}
		if len(r.APIKey) != len("sk_sandbox_")+43 || r.APIKey == r.ReadOnlyAPIKey {
			t.Fatalf("bad secrets %q %q", r.APIKey, r.ReadOnlyAPIKey)
		}
		parsePub(t, r.EncryptionPublicKey)
		ent, err := e.s.GetEntity(ctx, sys, "", r.EntityID)
		if err != nil {
			t.Fatal(err)
		}
		want := entities.Entity{ID: r.EntityID, Type: "business", Status: "approved", Name: "Root", IsRoot: true,
			BusinessID: ent.BusinessID, CreationContext: "api", RiskLevel: "medium", Meta: entities.Meta{},
			Created: start.UnixMilli(), Updated: start.UnixMilli()}
		if diff := cmp.Diff(want, *ent); diff != "" {
			t.Errorf("root (-want +got):\n%s", diff)
		}
		full, err := e.s.Authenticate(ctx, r.APIKey)
		if err != nil || full.ReadOnly || full.EntityID != r.EntityID || full.PublicKeyPEM != r.EncryptionPublicKey {
			t.Fatalf("Authenticate(full) = %+v, %v", full, err)
		}
		ro, err := e.s.Authenticate(ctx, r.ReadOnlyAPIKey)
		if err != nil || !ro.ReadOnly || ro.EntityID != r.EntityID {
			t.Fatalf("Authenticate(read-only) = %+v, %v", ro, err)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(toJSON(t, r)), &m); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"entity_id", "api_key", "read_only_api_key", "encryption_public_key"} {
			if _, ok := m[k]; !ok {
				t.Errorf("bootstrap JSON lacks %q", k)
			}
		}
		evs := e.events()
		if len(evs) != 1 || evs[0].Type != entities.EventCreated || evs[0].EntityID != r.EntityID {
			t.Fatalf("events = %+v, want one entities.created", evs)
		}
	})
	t.Run("Idempotent", func(t *testing.T) {
		r, created, err := e.s.Bootstrap(ctx)
		if err != nil || created || r != nil {
			t.Fatalf("second Bootstrap = %+v, %v, %v; want nil, false, nil", r, created, err)
		}
		keys, err := e.s.ListAPIKeys(ctx, sys, entities.APIKeyFilter{EntityID: e.root.EntityID})
		if err != nil || len(keys) != 2 {
			t.Fatalf("ListAPIKeys = %d keys, %v; want 2", len(keys), err)
		}
		if _, err := e.s.Authenticate(ctx, e.root.APIKey); err != nil {
			t.Fatalf("first key stopped working: %v", err)
		}
	})
	t.Run("Production", func(t *testing.T) {
		p := newEnv(t, func(o *entities.Options) { o.Env = entities.EnvProduction })
		if !strings.HasPrefix(p.root.APIKey, "sk_live_") {
			t.Fatalf("production key %q lacks sk_live_", p.root.APIKey)
		}
		// A key of another environment is unknown here.
		if _, err := p.s.Authenticate(ctx, e.root.APIKey); !errors.Is(err, entities.ErrUnauthorized) {
			t.Fatalf("sandbox key in production: %v", err)
		}
	})
}

func TestAPIKeys(t *testing.T) {
	e := newEnv(t)
	root := e.root.EntityID
	t.Run("OK", func(t *testing.T) {
		k, err := e.s.CreateAPIKey(ctx, sys, entities.NewAPIKey{EntityID: root, ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(k.Secret, k.Key.Prefix) || len(k.Key.Prefix) != len("sk_sandbox_")+4 {
			t.Errorf("prefix %q does not start secret", k.Key.Prefix)
		}
		got, err := e.s.Authenticate(ctx, k.Secret)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(k.Key, *got); diff != "" {
			t.Errorf("Authenticate (-want +got):\n%s", diff)
		}
		byID, err := e.s.GetAPIKey(ctx, sys, "", k.Key.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(k.Key, *byID); diff != "" {
			t.Errorf("GetAPIKey (-want +got):\n%s", diff)
		}
		if _, err := e.s.GetAPIKey(ctx, sys, "", "01HZZZZZZZZZZZZZZZZZZZZZZZ"); !errors.Is(err, entities.ErrAPIKeyNotFound) {
			t.Errorf("GetAPIKey(unknown) = %v", err)
		}
		var m map[string]any
		json.Unmarshal([]byte(toJSON(t, k)), &m)
		for _, f := range []string{"id", "api_key", "read_only", "entity_id", "encryption_public_key"} {
			if _, ok := m[f]; !ok {
				t.Errorf("issued key JSON lacks %q: %v", f, m)
			}
		}
		if m["api_key"] != k.Secret || m["read_only"] != true {
			t.Errorf("issued key JSON = %v", m)
		}
		// The listed key never carries the secret.
		keys, _ := e.s.ListAPIKeys(ctx, sys, entities.APIKeyFilter{EntityID: root})
		if strings.Contains(toJSON(t, keys), k.Secret) || len(keys) != 3 {
			t.Errorf("ListAPIKeys = %s", toJSON(t, keys))
		}
	})
	t.Run("ErrEntityNotFound", func(t *testing.T) {
		_, err := e.s.CreateAPIKey(ctx, sys, entities.NewAPIKey{EntityID: "01HZZZZZZZZZZZZZZZZZZZZZZZ"})
		if !errors.Is(err, entities.ErrEntityNotFound) || corebank.KindOf(err) != corebank.KindNotFound {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("ErrUnauthorized", func(t *testing.T) {
		for _, s := range []string{"", "sk_sandbox_", "sk_sandbox_nope", e.root.APIKey + "x", strings.ToUpper(e.root.APIKey)} {
			if _, err := e.s.Authenticate(ctx, s); !errors.Is(err, entities.ErrUnauthorized) || corebank.KindOf(err) != corebank.KindUnauthorized {
				t.Errorf("Authenticate(%q) = %v, want ErrUnauthorized", s, err)
			}
		}
	})
	t.Run("RotatedKeyFailsOnNextAuthenticate", func(t *testing.T) {
		k, err := e.s.CreateAPIKey(ctx, sys, entities.NewAPIKey{EntityID: root})
		if err != nil {
			t.Fatal(err)
		}
		e.clock.Add(time1m)
		r, err := e.s.RotateAPIKey(ctx, sys, "", k.Key.ID)
		if err != nil {
			t.Fatal(err)
		}
		if r.Secret == k.Secret || r.Key.ID != k.Key.ID || r.EncryptionPublicKey == k.EncryptionPublicKey {
			t.Fatalf("rotation kept secret or RSA key: %+v", r)
		}
		if r.Key.LastRotated != start.Add(time1m).UnixMilli() || r.Key.Created != k.Key.Created {
			t.Errorf("times: created %d last_rotated %d", r.Key.Created, r.Key.LastRotated)
		}
		if _, err := e.s.Authenticate(ctx, k.Secret); !errors.Is(err, entities.ErrUnauthorized) {
			t.Fatalf("old secret after rotation: %v", err)
		}
		if got, err := e.s.Authenticate(ctx, r.Secret); err != nil || got.ID != k.Key.ID {
			t.Fatalf("new secret: %v, %v", got, err)
		}
	})
	t.Run("DeletedKeyFailsOnNextAuthenticate", func(t *testing.T) {
		k, err := e.s.CreateAPIKey(ctx, sys, entities.NewAPIKey{EntityID: root})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.s.Authenticate(ctx, k.Secret); err != nil {
			t.Fatal(err)
		}
		if _, err := e.s.DeleteAPIKey(ctx, sys, "", k.Key.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := e.s.Authenticate(ctx, k.Secret); !errors.Is(err, entities.ErrUnauthorized) {
			t.Fatalf("deleted key: %v", err)
		}
		if _, err := e.s.DeleteAPIKey(ctx, sys, "", k.Key.ID); !errors.Is(err, entities.ErrAPIKeyNotFound) {
			t.Fatalf("second delete: %v", err)
		}
		if _, err := e.s.RotateAPIKey(ctx, sys, "", k.Key.ID); !errors.Is(err, entities.ErrAPIKeyNotFound) {
			t.Fatalf("rotate deleted: %v", err)
		}
		for _, l := range mustList(t, e, root) {
			if l.ID == k.Key.ID {
				t.Fatal("deleted key still listed")
			}
		}
	})
	t.Run("CardKey", func(t *testing.T) {
		// The key pair behind encryption_public_key: what its holder
		// encrypts, CardKey's key decrypts, until the key is rotated.
		k, err := e.s.CreateAPIKey(ctx, sys, entities.NewAPIKey{EntityID: root})
		if err != nil {
			t.Fatal(err)
		}
		ct := encrypt(t, k.EncryptionPublicKey, []byte(`{"number":"4242424242424242"}`))
		decrypt := func(id string) (string, error) {
			priv, err := e.s.CardKey(ctx, id)
			if err != nil {
				return "", err
			}
			raw, _ := base64.StdEncoding.DecodeString(ct)
			pt, err := rsa.DecryptOAEP(sha256.New(), nil, priv, raw, nil)
			return string(pt), err
		}
		if got, err := decrypt(k.Key.ID); err != nil || got != `{"number":"4242424242424242"}` {
			t.Fatalf("decrypt with CardKey = %q, %v", got, err)
		}
		if _, err := e.s.CardKey(ctx, "01HZZZZZZZZZZZZZZZZZZZZZZZ"); !errors.Is(err, entities.ErrAPIKeyNotFound) {
			t.Errorf("unknown key: %v", err)
		}
		if _, err := e.s.RotateAPIKey(ctx, sys, "", k.Key.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := decrypt(k.Key.ID); err == nil {
			t.Error("after rotation the old ciphertext still decrypts")
		}
	})
}

func mustList(t *testing.T, e *env, entity string) []entities.APIKey {
	t.Helper()
	keys, err := e.s.ListAPIKeys(ctx, sys, entities.APIKeyFilter{EntityID: entity})
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

func TestBootstrapConcurrent(t *testing.T) {
	db := memory.New()
	t.Cleanup(func() { db.Close() })
	s := entities.NewService(db, nil, mustSealer(t), &entities.Options{GenerateKey: cachedKey})
	var wg sync.WaitGroup
	var created atomic.Int32
	roots := make(chan string, 8)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, ok, err := s.Bootstrap(ctx)
			if err != nil {
				t.Error(err)
			}
			if ok {
				created.Add(1)
				roots <- r.EntityID
			}
		}()
	}
	wg.Wait()
	close(roots)
	if created.Load() != 1 {
		t.Fatalf("%d bootstraps created a root, want 1", created.Load())
	}
	p, err := s.ListEntities(ctx, corebank.As(<-roots), entities.EntityFilter{}, corebank.ListOptions{})
	if err != nil || len(p.Items) != 1 || !p.Items[0].IsRoot {
		t.Fatalf("root tree = %+v, %v", p, err)
	}
}

// TestKeyNamespace checks a namespaced bank's keys carry its namespace
// after the environment prefix, authenticate, and show it in Prefix; and
// that a namespace of other characters is refused at construction.
func TestKeyNamespace(t *testing.T) {
	e := newEnv(t, func(o *entities.Options) { o.KeyNamespace = "ws01ABC" })
	const prefix = "sk_sandbox_ws01ABC_"
	for _, k := range []string{e.root.APIKey, e.root.ReadOnlyAPIKey} {
		if !strings.HasPrefix(k, prefix) || len(k) != len(prefix)+43 {
			t.Fatalf("key %q: want %q and 43 characters", k, prefix)
		}
		got, err := e.s.Authenticate(t.Context(), k)
		if err != nil {
			t.Fatalf("Authenticate: %v", err)
		}
		if got.Prefix != k[:len(prefix)+4] {
			t.Errorf("Prefix %q, want %q", got.Prefix, k[:len(prefix)+4])
		}
	}
	for _, bad := range []string{"ws_1", "ws-1", "wé"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("KeyNamespace %q: no panic", bad)
				}
			}()
			entities.NewService(memory.New(), nil, nil, &entities.Options{KeyNamespace: bad})
		}()
	}
}
