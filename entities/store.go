package entities

import (
	"errors"

	"github.com/corebank/corebank/storage"
)

// Buckets and keys.
//
//	entities          entities/<id>                     entityRecord (JSON)
//	                  by-parent/<parent>/<id>           child index
//	                  by-tree/<ancestor>/<id>           one key per ancestor and self
//	                  profiles/<id>                     profileRecord (JSON)
//	                  gate/<id>                         status, ancestry (binary, gate_record.go)
//	                  root                              the bootstrap root's ID
//	entities.keys     api-keys/<id>                     keyRecord (JSON)
//	                  api-keys/by-hash/<sha256 hex>     key ID, entity, read_only (binary, auth_record.go)
//	                  api-keys/by-entity/<entity>/<id>  key ID
//	entities.docs     documents/<id>                    docRecord (JSON)
//	                  documents/by-entity/<entity>/<id> document ID
//	                  documents/blob/<id>/<n>           file bytes, <= 1 MiB per value
//	                  documents/blob-back/<id>/<n>      back side bytes
//	entities.subs     submissions/<id>                  Submission (JSON)
//	                  submissions/by-entity/<entity>/<id>
const (
	bucketEntities    storage.Bucket = "entities"
	bucketKeys        storage.Bucket = "entities.keys"
	bucketDocs        storage.Bucket = "entities.docs"
	bucketSubmissions storage.Bucket = "entities.subs"
)

var keyRoot = []byte("root")

// entityRecord is the stored form of an entity: the API object plus its
// ancestry (root first, self excluded), so scope checks cost one read.
type entityRecord struct {
	Entity
	Ancestors []string `json:"ancestors"`
}

// Owner returns the entity's own ID: an entity is its own owner, so a
// caller may load it when it lies in the caller's tree (scope.Owned).
func (r *entityRecord) Owner() string { return r.ID }

// profileRecord is everything onboarding attaches to an entity. Numbers
// inside are stored masked next to their sealed originals.
type profileRecord struct {
	Person           *Person         `json:"person,omitempty"`
	Address          *Address        `json:"address,omitempty"`
	Ident            *identRecord    `json:"identification,omitempty"`
	Business         *Business       `json:"business,omitempty"`
	OperatingAddress *Address        `json:"operating_address,omitempty"`
	BusinessMeta     *BusinessMeta   `json:"business_meta,omitempty"`
	Officers         []officerRecord `json:"business_officers,omitempty"`
}

// identRecord is an Identification (masked) plus the sealed full numbers.
type identRecord struct {
	Identification
	SealedDocumentNumber []byte            `json:"sealed_document_number,omitempty"`
	SealedNumbers        map[string][]byte `json:"sealed_numbers,omitempty"`
}

type officerRecord struct {
	BusinessOfficer
	Ident *identRecord `json:"ident,omitempty"`
}

func entityKey(id string) []byte { return storage.Key("entities", id) }

func profileKey(id string) []byte { return storage.Key("profiles", id) }

func getEntity(tx storage.Tx, id string) (*entityRecord, error) {
	if id == "" {
		return nil, ErrEntityNotFound
	}
	return storage.LoadJSON[entityRecord](tx, bucketEntities, entityKey(id), ErrEntityNotFound)
}

// getProfile reads entity id's profile; none yet reads as empty.
func getProfile(tx storage.Tx, id string) (*profileRecord, error) {
	p, err := storage.LoadJSON[profileRecord](tx, bucketEntities, profileKey(id), storage.ErrNotFound)
	if errors.Is(err, storage.ErrNotFound) {
		return &profileRecord{}, nil
	}
	return p, err
}

// putEntity writes the record and, when isNew, its parent and tree indexes.
func putEntity(tx storage.Tx, rec *entityRecord, isNew bool) error {
	if err := storage.PutJSON(tx, bucketEntities, entityKey(rec.ID), rec); err != nil {
		return err
	}
	if err := tx.Put(bucketEntities, gateKey(rec.ID), encodeGate(rec)); err != nil {
		return err
	}
	if !isNew {
		return nil
	}
	id := []byte(rec.ID)
	if rec.ParentEntity != "" {
		if err := tx.Put(bucketEntities, storage.Key("by-parent", string(rec.ParentEntity), rec.ID), id); err != nil {
			return err
		}
	}
	for _, a := range rec.Ancestors {
		if err := tx.Put(bucketEntities, storage.Key("by-tree", a, rec.ID), id); err != nil {
			return err
		}
	}
	return tx.Put(bucketEntities, storage.Key("by-tree", rec.ID, rec.ID), id)
}

// composite assembles the API view of an entity. It copies nothing that is
// not already masked.
func composite(rec *entityRecord, p *profileRecord) *Composite {
	e := rec.Entity
	c := &Composite{
		Entity:           &e,
		Person:           p.Person,
		Address:          p.Address,
		Business:         p.Business,
		OperatingAddress: p.OperatingAddress,
		BusinessMeta:     p.BusinessMeta,
	}
	if p.Ident != nil {
		id := p.Ident.Identification
		c.Identification = &id
	}
	if e.Type == TypeBusiness {
		c.BusinessOfficers = make([]BusinessOfficer, 0, len(p.Officers))
		for _, o := range p.Officers {
			bo := o.BusinessOfficer
			if o.Ident != nil {
				id := o.Ident.Identification
				bo.Identification = &id
			}
			c.BusinessOfficers = append(c.BusinessOfficers, bo)
		}
	}
	return c
}
