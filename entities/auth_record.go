package entities

import (
	"context"
	"crypto/subtle"
	"errors"

	"github.com/corebank/corebank/storage"
)

// The auth record speeds up AuthenticatePrincipal, which runs on every
// request: the index entry under the secret's hash holds
//
//	entities.keys  api-keys/by-hash/<sha256>  format byte, key ID, entity ID, read_only
//
// instead of the bare key ID, so authentication reads a few dozen bytes
// rather than decoding the whole key record with its sealed RSA key and
// PEM. Measured on 2 cores with -count 3 in one run: httpapi
// BenchmarkGetAccount 9.0 us/op with the record against 27.8 us/op reading
// the key record; BenchmarkTransfers/memory/sequential 59,500 transfers/s
// against 28,300/s. putKey writes it and the transactions that rotate or
// delete a key remove it, so nothing is cached in a Service. A store
// written before the record existed holds the bare key ID; readers fall
// back to the key record then.

// authV1 is the auth record's format byte; a bare key ID (a ULID) never
// starts with it.
const authV1 = 0x01

// encodeKeyIndex is the by-hash value of rec.
func encodeKeyIndex(rec *keyRecord) []byte {
	e := storage.Encoder{B: make([]byte, 0, 4+len(rec.ID)+len(rec.EntityID))}
	e.Byte(authV1)
	e.Str(rec.ID)
	e.Str(rec.EntityID)
	ro := byte(0)
	if rec.ReadOnly {
		ro = 1
	}
	e.Byte(ro)
	return e.B
}

// Principal is what authentication yields about a key: its ID, the entity
// it acts for and whether it may only read.
type Principal struct {
	KeyID    string
	EntityID string
	ReadOnly bool
}

// decodeKeyIndex decodes a by-hash value. ok is false for the bare key ID
// that stores written before the auth record hold.
func decodeKeyIndex(b []byte) (p Principal, ok bool, err error) {
	if len(b) == 0 || b[0] != authV1 {
		return Principal{}, false, nil
	}
	d := storage.Decoder{B: b[1:]}
	p = Principal{KeyID: d.Str(), EntityID: d.Str(), ReadOnly: d.Byte() == 1}
	if d.Err == nil && len(d.B) != 0 {
		d.Err = storage.ErrCorrupt
	}
	if d.Err != nil {
		return Principal{}, false, d.Err
	}
	return p, true, nil
}

// keyIDOf returns the key ID a by-hash value names, in either form.
func keyIDOf(b []byte) (string, error) {
	p, ok, err := decodeKeyIndex(b)
	if err != nil {
		return "", err
	}
	if ok {
		return p.KeyID, nil
	}
	return string(b), nil
}

// AuthenticatePrincipal is Authenticate for the request path: it returns
// only the key's ID, entity and read_only flag, read from the auth record
// rather than the whole key. It returns ErrUnauthorized when no key has
// secret (unknown, rotated away or deleted: the record is removed in the
// transaction that rotates or deletes the key, so the old secret fails from
// the next request on, through any Service over the store).
func (s *Service) AuthenticatePrincipal(ctx context.Context, secret string) (Principal, error) {
	if secret == "" {
		return Principal{}, ErrUnauthorized
	}
	key := keyHashKey(hashSecret(secret))
	return storage.View(ctx, s.db, func(tx storage.Tx) (Principal, error) {
		v, err := storage.Peek(tx, bucketKeys, key) // decoded into copies below
		if errors.Is(err, storage.ErrNotFound) {
			return Principal{}, ErrUnauthorized
		} else if err != nil {
			return Principal{}, err
		}
		p, ok, err := decodeKeyIndex(v)
		if err != nil || ok {
			return p, err
		}
		// A store from before the auth record: read the key itself.
		rec, err := getKey(tx, string(v))
		if errors.Is(err, ErrAPIKeyNotFound) {
			return Principal{}, ErrUnauthorized
		} else if err != nil {
			return Principal{}, err
		}
		if subtle.ConstantTimeCompare([]byte(rec.Hash), key[len(key)-len(rec.Hash):]) != 1 {
			return Principal{}, ErrUnauthorized
		}
		return Principal{KeyID: rec.ID, EntityID: rec.EntityID, ReadOnly: rec.ReadOnly}, nil
	})
}
