package entities

import (
	"bytes"
	"errors"

	"github.com/corebank/corebank/storage"
)

// VerifyStore checks, in tx, what the entities package keeps, and
// reports each broken rule to v: every entity is under its parent and
// under each of its ancestors and itself in the tree index, its gate
// record (when the store has one) says its status and ancestry, and every
// key of those indexes names an entity that should be there; the root
// names an entity; every API key is under its entity and its secret's
// hash, whose auth record names it as it is; every document and
// submission is under its entity, and every file part names a document.
// It writes nothing.
func VerifyStore(tx storage.Tx, v *storage.Verifier) error {
	err := storage.VerifyIndexed(tx, v, storage.Indexed[*entityRecord]{
		Kind:    "entity",
		Records: storage.ScanJSON[entityRecord](bucketEntities, []byte("entities/"), v, "entity"),
		Load:    storage.Found(getEntity, ErrEntityNotFound),
		Keys: func(tx storage.Tx, rec *entityRecord) ([]storage.KV, error) {
			return storage.Writes(tx, func(tx storage.Tx) error { return putEntity(tx, rec, true) })
		},
		Ranges: []storage.IndexRange{
			{Bucket: bucketEntities, Prefix: []byte("by-parent/"), ID: storage.ValueID},
			{Bucket: bucketEntities, Prefix: []byte("by-tree/"), ID: storage.ValueID},
			{Bucket: bucketEntities, Prefix: []byte("gate/"), ID: storage.LastPart, Optional: true},
			// Profiles are records of their own, one per entity.
			{Bucket: bucketEntities, Prefix: []byte("profiles/"), ID: storage.LastPart, Loose: true},
		},
	})
	if err != nil {
		return err
	}
	if root, err := tx.Get(bucketEntities, keyRoot); err == nil {
		if ok, err := storage.Exists(tx, bucketEntities, entityKey(string(root))); err != nil {
			return err
		} else if !ok {
			v.Report(storage.FindIndexDangling, []string{string(root)}, "the root names an entity that does not exist")
		}
	} else if !errors.Is(err, storage.ErrNotFound) {
		return err
	}
	keys := storage.ScanJSON[keyRecord](bucketKeys, []byte("api-keys/"), v, "API key")
	err = storage.VerifyIndexed(tx, v, storage.Indexed[*keyRecord]{
		Kind: "API key",
		Records: func(tx storage.Tx, fn func(string, *keyRecord) error) error {
			return keys(tx, func(id string, rec *keyRecord) error {
				// The auth record, when the store has one (an earlier
				// release kept the bare ID), must say what the key is:
				// a read-only key must not authenticate as full access.
				raw, err := tx.Get(bucketKeys, keyHashKey(rec.Hash))
				if err == nil {
					if _, ok, _ := decodeKeyIndex(raw); ok && !bytes.Equal(raw, encodeKeyIndex(rec)) {
						v.Report(storage.FindIndexStale, []string{id}, "API key's auth record does not say its ID, entity and read_only")
					}
				}
				return fn(id, rec)
			})
		},
		Load: storage.Found(getKey, ErrAPIKeyNotFound),
		Keys: func(_ storage.Tx, rec *keyRecord) ([]storage.KV, error) {
			return []storage.KV{
				{Bucket: bucketKeys, Key: keyHashKey(rec.Hash)},
				{Bucket: bucketKeys, Key: keyEntityKey(rec.EntityID, rec.ID), Value: []byte(rec.ID)},
			}, nil
		},
		Ranges: []storage.IndexRange{
			{Bucket: bucketKeys, Prefix: []byte("api-keys/by-hash/"), ID: func(_, v []byte) string {
				id, _ := keyIDOf(v)
				return id
			}},
			{Bucket: bucketKeys, Prefix: []byte("api-keys/by-entity/"), ID: storage.ValueID},
		},
	})
	if err != nil {
		return err
	}
	err = storage.VerifyIndexed(tx, v, storage.Indexed[*docRecord]{
		Kind:    "document",
		Records: storage.ScanJSON[docRecord](bucketDocs, []byte("documents/"), v, "document"),
		Load:    storage.Found(getDoc, ErrDocumentNotFound),
		Keys: func(_ storage.Tx, d *docRecord) ([]storage.KV, error) {
			return []storage.KV{{Bucket: bucketDocs, Key: append(docEntityPrefix(d.EntityID), d.ID...)}}, nil
		},
		Ranges: []storage.IndexRange{
			{Bucket: bucketDocs, Prefix: []byte("documents/by-entity/"), ID: storage.LastPart},
			{Bucket: bucketDocs, Prefix: []byte("documents/blob/"), ID: partAt(2), Loose: true},
			{Bucket: bucketDocs, Prefix: []byte("documents/blob-back/"), ID: partAt(2), Loose: true},
		},
	})
	if err != nil {
		return err
	}
	return storage.VerifyIndexed(tx, v, storage.Indexed[*Submission]{
		Kind:    "submission",
		Records: storage.ScanJSON[Submission](bucketSubmissions, []byte("submissions/"), v, "submission"),
		Load:    storage.Found(getSubmission, ErrSubmissionNotFound),
		Keys: func(_ storage.Tx, sub *Submission) ([]storage.KV, error) {
			return []storage.KV{{Bucket: bucketSubmissions, Key: append(subEntityPrefix(sub.EntityID), sub.ID...), Value: []byte(sub.ID)}}, nil
		},
		Ranges: []storage.IndexRange{{Bucket: bucketSubmissions, Prefix: []byte("submissions/by-entity/"), ID: storage.ValueID}},
	})
}

// partAt returns an IndexRange.ID that reads the i-th '/'-separated part
// of a key ("documents/blob/<id>/<n>": 2).
func partAt(i int) func(k, _ []byte) string {
	return func(k, _ []byte) string {
		parts := bytes.Split(k, []byte{'/'})
		if len(parts) <= i {
			return ""
		}
		return string(parts[i])
	}
}
