package entities

import (
	"context"
	"crypto/subtle"
	"encoding/binary"
	"errors"

	"github.com/corebank/corebank/storage"
)

// Compact records for the hot paths. Authentication, the ledger's entity
// gate and scope checks run on every request; decoding the whole key or
// entity JSON for them (the key record carries a sealed RSA key) cost more
// than the rest of a read. So next to the JSON records the store keeps
// small binary records with only what those checks read, written in the
// same transaction as the record they summarise:
//
//	entities       gate/<id>                   status and ancestry
//	entities.keys  api-keys/by-hash/<sha256>   key ID, entity ID, read_only
//
// Both start with a format byte (compactV1). A store written before they
// existed has no gate record and holds the bare key ID under by-hash;
// readers fall back to the JSON record then, so old stores keep working.
const compactV1 = 0x01

func gateKey(id string) []byte { return storage.Key("gate", id) }

// appendStr appends s with a uvarint length.
func appendStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// readStr reads a string written by appendStr from b, returning the rest.
func readStr(b []byte) (string, []byte, bool) {
	n, k := binary.Uvarint(b)
	if k <= 0 || uint64(len(b)-k) < n {
		return "", nil, false
	}
	return string(b[k : k+int(n)]), b[k+int(n):], true
}

var errCompact = errors.New("entities: malformed compact record")

// encodeGate is the gate record of rec.
func encodeGate(rec *entityRecord) []byte {
	n := 2 + len(rec.Status) + 2
	for _, a := range rec.Ancestors {
		n += 1 + len(a)
	}
	b := make([]byte, 0, n)
	b = append(b, compactV1)
	b = appendStr(b, rec.Status)
	b = binary.AppendUvarint(b, uint64(len(rec.Ancestors)))
	for _, a := range rec.Ancestors {
		b = appendStr(b, a)
	}
	return b
}

// gateView is a decoded gate record. Its fields alias nothing the store
// owns once decoded: ancestors are only compared, so they stay as bytes of
// a copy.
type gateView struct {
	status    string
	ancestors []byte // uvarint count, then appendStr strings
}

func decodeGate(b []byte) (gateView, error) {
	if len(b) == 0 || b[0] != compactV1 {
		return gateView{}, errCompact
	}
	status, rest, ok := readStr(b[1:])
	if !ok {
		return gateView{}, errCompact
	}
	return gateView{status: status, ancestors: rest}, nil
}

// hasAncestor reports whether id is among the record's ancestors.
func (g gateView) hasAncestor(id string) (bool, error) {
	b := g.ancestors
	n, k := binary.Uvarint(b)
	if k <= 0 {
		return false, errCompact
	}
	b = b[k:]
	for ; n > 0; n-- {
		l, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < l {
			return false, errCompact
		}
		if string(b[k:k+int(l)]) == id { // no allocation: compared in place
			return true, nil
		}
		b = b[k+int(l):]
	}
	return false, nil
}

// getGate reads the gate record of entity id, falling back to the JSON
// record in a store that has none. It returns ErrEntityNotFound.
func getGate(tx storage.Tx, id string) (gateView, error) {
	if id == "" {
		return gateView{}, ErrEntityNotFound
	}
	raw, err := tx.Get(bucketEntities, gateKey(id))
	switch {
	case err == nil:
		return decodeGate(raw)
	case !errors.Is(err, storage.ErrNotFound):
		return gateView{}, err
	}
	rec, err := getEntity(tx, id)
	if err != nil {
		return gateView{}, err
	}
	g, err := decodeGate(encodeGate(rec))
	return g, err
}

// encodeKeyIndex is the by-hash value of rec.
func encodeKeyIndex(rec *keyRecord) []byte {
	b := make([]byte, 0, 4+len(rec.ID)+len(rec.EntityID))
	b = append(b, compactV1)
	b = appendStr(b, rec.ID)
	b = appendStr(b, rec.EntityID)
	if rec.ReadOnly {
		return append(b, 1)
	}
	return append(b, 0)
}

// Principal is what authentication yields about a key: its ID, the entity
// it acts for and whether it may only read.
type Principal struct {
	KeyID    string
	EntityID string
	ReadOnly bool
}

// decodeKeyIndex decodes a by-hash value. ok is false for the bare key ID
// that stores written before the compact form hold.
func decodeKeyIndex(b []byte) (p Principal, ok bool, err error) {
	if len(b) == 0 || b[0] != compactV1 {
		return Principal{}, false, nil
	}
	var rest []byte
	if p.KeyID, rest, ok = readStr(b[1:]); ok {
		p.EntityID, rest, ok = readStr(rest)
	}
	if !ok || len(rest) != 1 {
		return Principal{}, false, errCompact
	}
	p.ReadOnly = rest[0] == 1
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
// only the key's ID, entity and read_only flag, read from a record of a few
// dozen bytes rather than the whole key. It returns ErrUnauthorized when
// no key has secret (unknown, rotated away or deleted: the index entry is
// removed in the transaction that rotates or deletes the key, so the old
// secret fails from the next request on, through any Service over the
// store).
func (s *Service) AuthenticatePrincipal(ctx context.Context, secret string) (Principal, error) {
	if secret == "" {
		return Principal{}, ErrUnauthorized
	}
	key := keyHashKey(hashSecret(secret))
	var out Principal
	err := s.db.View(ctx, func(tx storage.Tx) error {
		v, err := tx.Get(bucketKeys, key)
		if errors.Is(err, storage.ErrNotFound) {
			return ErrUnauthorized
		} else if err != nil {
			return err
		}
		p, ok, err := decodeKeyIndex(v)
		if err != nil {
			return err
		}
		if ok {
			out = p
			return nil
		}
		// A store from before the compact index: read the key itself.
		rec, err := getKey(tx, string(v))
		if errors.Is(err, ErrAPIKeyNotFound) {
			return ErrUnauthorized
		} else if err != nil {
			return err
		}
		if subtle.ConstantTimeCompare([]byte(rec.Hash), key[len(key)-len(rec.Hash):]) != 1 {
			return ErrUnauthorized
		}
		out = Principal{KeyID: rec.ID, EntityID: rec.EntityID, ReadOnly: rec.ReadOnly}
		return nil
	})
	if err != nil {
		return Principal{}, err
	}
	return out, nil
}
