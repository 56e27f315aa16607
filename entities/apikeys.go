package entities

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/internal/scope"
	"github.com/corebank/corebank/storage"
)

// Secret key prefixes by environment.
const (
	PrefixSandbox = "sk_sandbox_"
	PrefixLive    = "sk_live_"
)

// secretBytes is the entropy in a secret key; base62 makes it 43 characters.
const (
	secretBytes = 32
	secretChars = 43
	// prefixShown is how many secret characters after the environment
	// prefix APIKey.Prefix keeps for display.
	prefixShown = 4
)

// APIKey is a stored API key, without its secret (only a SHA-256 of it is
// kept) and without its private key (kept sealed).
type APIKey struct {
	ID       string `json:"id"`
	EntityID string `json:"entity_id"`
	ReadOnly bool   `json:"read_only"`
	// Prefix is the secret's first characters, for display:
	// "sk_sandbox_AbC1".
	Prefix string `json:"prefix"`
	// Created is when the key was made; LastRotated when its secret last
	// changed (Created until it is rotated).
	Created     int64 `json:"created"`
	LastRotated int64 `json:"last_rotated"`
	// PublicKeyPEM is the key's RSA public key ("PUBLIC KEY" PEM), which
	// clients use to encrypt card data (RSA-OAEP, SHA-256).
	PublicKeyPEM string `json:"encryption_public_key"`
}

// NewAPIKey asks for a key on EntityID (the caller's own entity when ""),
// full access unless ReadOnly.
type NewAPIKey struct {
	EntityID string
	ReadOnly bool
}

// IssuedKey is a key with its secret, returned only by CreateAPIKey and
// RotateAPIKey. Its JSON is {id, api_key, read_only, entity_id,
// encryption_public_key, prefix, created}.
type IssuedKey struct {
	Key                 APIKey
	Secret              string
	EncryptionPublicKey string
}

// issuedJSON is IssuedKey's JSON: the sandbox route's shape.
type issuedJSON struct {
	ID                  string `json:"id"`
	APIKey              string `json:"api_key"`
	ReadOnly            bool   `json:"read_only"`
	EntityID            string `json:"entity_id"`
	EncryptionPublicKey string `json:"encryption_public_key"`
	Prefix              string `json:"prefix"`
	Created             int64  `json:"created"`
}

// MarshalJSON writes the sandbox route's shape.
func (k IssuedKey) MarshalJSON() ([]byte, error) {
	return json.Marshal(issuedJSON{k.Key.ID, k.Secret, k.Key.ReadOnly, k.Key.EntityID, k.EncryptionPublicKey, k.Key.Prefix, k.Key.Created})
}

// UnmarshalJSON reads what MarshalJSON writes (an idempotent request's
// recorded result is read back this way); LastRotated, not in the shape,
// reads as Created.
func (k *IssuedKey) UnmarshalJSON(b []byte) error {
	var j issuedJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*k = IssuedKey{Key: APIKey{ID: j.ID, EntityID: j.EntityID, ReadOnly: j.ReadOnly, Prefix: j.Prefix,
		Created: j.Created, LastRotated: j.Created, PublicKeyPEM: j.EncryptionPublicKey},
		Secret: j.APIKey, EncryptionPublicKey: j.EncryptionPublicKey}
	return nil
}

// keyRecord is the stored form of an API key.
type keyRecord struct {
	APIKey
	Hash             string `json:"hash"`
	SealedPrivateKey []byte `json:"sealed_private_key"`
}

// Owner returns the entity the key acts for (scope.Owned).
func (k *APIKey) Owner() string { return k.EntityID }

func keyKey(id string) []byte               { return storage.Key("api-keys", id) }
func keyHashKey(hash string) []byte         { return storage.Key("api-keys", "by-hash", hash) }
func keyEntityKey(entity, id string) []byte { return storage.Key("api-keys", "by-entity", entity, id) }

// envPrefix is what every secret starts with: the environment's prefix,
// then the key namespace and "_" when there is one.
func (s *Service) envPrefix() string {
	p := PrefixSandbox
	if s.env == EnvProduction {
		p = PrefixLive
	}
	if s.keyNS != "" {
		p += s.keyNS + "_"
	}
	return p
}

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// newSecret returns prefix + 43 base62 characters of 32 random bytes.
func (s *Service) newSecret() string {
	var b [secretBytes]byte
	rand.Read(b[:])
	n := new(big.Int).SetBytes(b[:])
	out := make([]byte, secretChars)
	base, mod := big.NewInt(62), new(big.Int)
	for i := secretChars - 1; i >= 0; i-- {
		n.DivMod(n, base, mod)
		out[i] = base62[mod.Int64()]
	}
	return s.envPrefix() + string(out)
}

func hashSecret(secret string) string {
	h := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(h[:])
}

func keyAD(id string) []byte { return []byte("api-keys/" + id + "/rsa") }

// prepareKey does a key's slow and random work outside any transaction:
// the secret, its hash, the RSA pair and the sealed private key.
func (s *Service) prepareKey(now time.Time, entityID string, readOnly bool) (*keyRecord, string, error) {
	ms := corebank.Millis(now)
	rec := &keyRecord{APIKey: APIKey{ID: s.ids.New(now), EntityID: entityID, ReadOnly: readOnly,
		Created: ms, LastRotated: ms}}
	secret, err := s.refreshKey(rec)
	return rec, secret, err
}

// refreshKey gives rec a new secret and RSA pair and returns the secret.
func (s *Service) refreshKey(rec *keyRecord) (string, error) {
	priv, err := s.genKey()
	if err != nil {
		return "", fmt.Errorf("entities: generate RSA key: %w", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return "", fmt.Errorf("entities: encode RSA key: %w", err)
	}
	pub, err := x509.MarshalPKIXPublicKey(&priv.PublicKey)
	if err != nil {
		return "", fmt.Errorf("entities: encode RSA public key: %w", err)
	}
	secret := s.newSecret()
	rec.Hash = hashSecret(secret)
	rec.Prefix = secret[:len(s.envPrefix())+prefixShown]
	rec.PublicKeyPEM = string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}))
	rec.SealedPrivateKey = s.sealer.Seal(der, keyAD(rec.ID))
	return secret, nil
}

func putKey(tx storage.Tx, rec *keyRecord, isNew bool) error {
	if err := storage.PutJSON(tx, bucketKeys, keyKey(rec.ID), rec); err != nil {
		return err
	}
	if err := tx.Put(bucketKeys, keyHashKey(rec.Hash), encodeKeyIndex(rec)); err != nil {
		return err
	}
	if !isNew {
		return nil
	}
	return tx.Put(bucketKeys, keyEntityKey(rec.EntityID, rec.ID), []byte(rec.ID))
}

func getKey(tx storage.Tx, id string) (*keyRecord, error) {
	if id == "" {
		return nil, ErrAPIKeyNotFound
	}
	return storage.LoadJSON[keyRecord](tx, bucketKeys, keyKey(id), ErrAPIKeyNotFound)
}

func issued(rec *keyRecord, secret string) *IssuedKey {
	return &IssuedKey{Key: rec.APIKey, Secret: secret, EncryptionPublicKey: rec.PublicKeyPEM}
}

// CreateAPIKey makes a key for k.EntityID (the caller's own entity when
// ""), with its own RSA key pair, and returns it with its secret, which is
// shown only this once. Errors: corebank.ErrForbidden for a read-only
// caller; ErrEntityNotFound for an unknown entity and one outside the
// caller's tree alike; a validation error naming "entity_id" when a System
// caller names none.
func (s *Service) CreateAPIKey(ctx context.Context, caller corebank.Caller, k NewAPIKey) (*IssuedKey, error) {
	if err := caller.CheckWrite(); err != nil {
		return nil, err
	}
	now := s.clock.Now()
	// The slow RSA work happens outside the transaction; the entity is
	// filled in once scope has resolved it.
	rec, secret, err := s.prepareKey(now, "", k.ReadOnly)
	if err != nil {
		return nil, err
	}
	out, err := storage.Update(ctx, s.db, func(tx storage.Tx) (*IssuedKey, error) {
		entityID, err := scope.Entity(tx, s, caller, k.EntityID)
		if err != nil {
			return nil, err
		}
		if _, err := getEntity(tx, entityID); err != nil {
			return nil, err
		}
		r := *rec
		r.EntityID = entityID
		return issued(&r, secret), putKey(tx, &r, true)
	})
	if err != nil {
		return nil, err
	}
	s.log.Info("api key created", "api_key_id", out.Key.ID, "entity_id", out.Key.EntityID, "read_only", out.Key.ReadOnly)
	return out, nil
}

// GetAPIKey returns the key with id (no secret); entityID, when not "",
// narrows the caller to that entity's tree. Errors: ErrEntityNotFound for
// an entityID outside the caller's tree; ErrAPIKeyNotFound for a missing
// key and one outside the tree alike.
func (s *Service) GetAPIKey(ctx context.Context, caller corebank.Caller, entityID, id string) (*APIKey, error) {
	return storage.View(ctx, s.db, func(tx storage.Tx) (*APIKey, error) {
		rec, err := scope.Get(tx, s, caller, entityID, id, getKey, ErrAPIKeyNotFound)
		if err != nil {
			return nil, err
		}
		return &rec.APIKey, nil
	})
}

// RotateAPIKey gives the key with id a new secret and a new RSA key pair.
// The old secret stops authenticating as soon as this returns, and card
// data encrypted to the old public key no longer decrypts; entityID scopes
// the lookup as in GetAPIKey. Errors: corebank.ErrForbidden for a
// read-only caller; ErrEntityNotFound and ErrAPIKeyNotFound (as
// GetAPIKey).
func (s *Service) RotateAPIKey(ctx context.Context, caller corebank.Caller, entityID, id string) (*IssuedKey, error) {
	if err := caller.CheckWrite(); err != nil {
		return nil, err
	}
	now := s.clock.Now()
	fresh := &keyRecord{APIKey: APIKey{ID: id}}
	secret, err := s.refreshKey(fresh)
	if err != nil {
		return nil, err
	}
	out, err := storage.Update(ctx, s.db, func(tx storage.Tx) (*IssuedKey, error) {
		rec, err := scope.Get(tx, s, caller, entityID, id, getKey, ErrAPIKeyNotFound)
		if err != nil {
			return nil, err
		}
		if err := tx.Delete(bucketKeys, keyHashKey(rec.Hash)); err != nil {
			return nil, err
		}
		rec.Hash, rec.Prefix, rec.PublicKeyPEM, rec.SealedPrivateKey =
			fresh.Hash, fresh.Prefix, fresh.PublicKeyPEM, fresh.SealedPrivateKey
		rec.LastRotated = corebank.Millis(now)
		return issued(rec, secret), putKey(tx, rec, false)
	})
	if err != nil {
		return nil, err
	}
	s.log.Info("api key rotated", "api_key_id", id, "entity_id", out.Key.EntityID)
	return out, nil
}

// APIKeyFilter selects the keys ListAPIKeys returns.
type APIKeyFilter struct {
	// EntityID is the entity whose keys are listed; "" is the caller's own.
	EntityID string
}

// ListAPIKeys returns the keys of f.EntityID (the caller's own entity when
// ""), oldest first, without secrets; an entity without keys gives an
// empty list. Errors: ErrEntityNotFound for an unknown entity and one
// outside the caller's tree alike.
func (s *Service) ListAPIKeys(ctx context.Context, caller corebank.Caller, f APIKeyFilter) ([]APIKey, error) {
	return storage.View(ctx, s.db, func(tx storage.Tx) ([]APIKey, error) {
		entityID, err := scope.Entity(tx, s, caller, f.EntityID)
		if err != nil {
			return nil, err
		}
		out := []APIKey{}
		err = tx.Scan(bucketKeys, storage.ScanOptions{Prefix: storage.Prefix("api-keys", "by-entity", entityID)},
			func(_, v []byte) error {
				rec, err := getKey(tx, string(v))
				if err != nil {
					return err
				}
				out = append(out, rec.APIKey)
				return nil
			})
		return out, err
	})
}

// DeleteAPIKey removes the key with id and returns it; its secret fails
// from the next request on; entityID scopes the lookup as in GetAPIKey.
// Errors: corebank.ErrForbidden for a read-only caller; ErrEntityNotFound
// and ErrAPIKeyNotFound (as GetAPIKey).
func (s *Service) DeleteAPIKey(ctx context.Context, caller corebank.Caller, entityID, id string) (*APIKey, error) {
	if err := caller.CheckWrite(); err != nil {
		return nil, err
	}
	out, err := storage.Update(ctx, s.db, func(tx storage.Tx) (*APIKey, error) {
		rec, err := scope.Get(tx, s, caller, entityID, id, getKey, ErrAPIKeyNotFound)
		if err != nil {
			return nil, err
		}
		for _, k := range [][]byte{keyHashKey(rec.Hash), keyEntityKey(rec.EntityID, id), keyKey(id)} {
			if err := tx.Delete(bucketKeys, k); err != nil {
				return nil, err
			}
		}
		return &rec.APIKey, nil
	})
	if err != nil {
		return nil, err
	}
	s.log.Info("api key deleted", "api_key_id", id, "entity_id", out.EntityID)
	return out, nil
}

// Authenticate returns the key whose secret is secret, or ErrUnauthorized
// when none is (unknown, rotated away or deleted). The secret is never
// logged or stored.
func (s *Service) Authenticate(ctx context.Context, secret string) (*APIKey, error) {
	if secret == "" {
		return nil, ErrUnauthorized
	}
	hash := hashSecret(secret)
	return storage.View(ctx, s.db, func(tx storage.Tx) (*APIKey, error) {
		v, err := tx.Get(bucketKeys, keyHashKey(hash))
		if errors.Is(err, storage.ErrNotFound) {
			return nil, ErrUnauthorized
		} else if err != nil {
			return nil, err
		}
		id, err := keyIDOf(v)
		if err != nil {
			return nil, err
		}
		rec, err := getKey(tx, id)
		if errors.Is(err, ErrAPIKeyNotFound) {
			return nil, ErrUnauthorized
		} else if err != nil {
			return nil, err
		}
		if subtle.ConstantTimeCompare([]byte(rec.Hash), []byte(hash)) != 1 {
			return nil, ErrUnauthorized
		}
		return &rec.APIKey, nil
	})
}

// CardKey returns the RSA private key of API key keyID, unsealed, for
// decrypting the card data its holder encrypted with its
// encryption_public_key (acquiring.CardKeys). Errors: ErrAPIKeyNotFound.
func (s *Service) CardKey(ctx context.Context, keyID string) (*rsa.PrivateKey, error) {
	sealed, err := storage.View(ctx, s.db, func(tx storage.Tx) ([]byte, error) {
		rec, err := getKey(tx, keyID)
		if err != nil {
			return nil, err
		}
		return rec.SealedPrivateKey, nil
	})
	if err != nil {
		return nil, err
	}
	der, err := s.sealer.Open(sealed, keyAD(keyID))
	if err != nil {
		return nil, fmt.Errorf("entities: open private key of api key %s: %w", keyID, err)
	}
	k, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, fmt.Errorf("entities: parse private key of api key %s: %w", keyID, err)
	}
	priv, ok := k.(*rsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("entities: api key %s holds a %T, not an RSA key", keyID, k)
	}
	return priv, nil
}
