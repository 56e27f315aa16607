package entities

import (
	"bytes"
	"context"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/internal/b64"
	"github.com/corebank/corebank/internal/scope"
	"github.com/corebank/corebank/storage"
)

// Document keys (what a document proves).
const (
	DocIdentity                   = "identity"
	DocProofOfAddress             = "proof_of_address"
	DocTaxVerification            = "tax_verification"
	DocCertificateOfIncorporation = "certificate_of_incorporation"
	DocMemorandumOfAssociation    = "memorandum_of_association"
)

// Verification statuses of persons, identifications and documents.
const (
	VerificationPending = "pending"
)

// MaxFileSize is the largest decoded document file, front or back: 10 MiB.
const MaxFileSize = 10 << 20

// chunkSize bounds each stored value of a document's bytes.
const chunkSize = 1 << 20

// Media types a document may have; the file's first bytes must match.
var fileMagic = map[string][][]byte{
	"application/pdf": {[]byte("%PDF-")},
	"image/png":       {[]byte("\x89PNG\r\n\x1a\n")},
	"image/jpeg":      {[]byte("\xff\xd8\xff")},
}

// NewDocument is the body of POST /documents. File and FileBack are base64
// (standard or URL alphabet); Meta.FileType is the media type both must be.
type NewDocument struct {
	EntityID       string          `json:"entity_id"`
	Key            string          `json:"key"`
	Description    string          `json:"description"`
	File           string          `json:"file"`
	FileBack       string          `json:"file_back"`
	Meta           DocumentMeta    `json:"meta"`
	LinkToIdentity *LinkToIdentity `json:"link_to_identity"`
}

// DocumentMeta describes a document's file.
type DocumentMeta struct {
	// FileType is "application/pdf", "image/png" or "image/jpeg"
	// ("image/jpg" is read as "image/jpeg").
	FileType string `json:"file_type"`
}

// LinkToIdentity names the person (the entity's own or a business
// officer) a document belongs to.
type LinkToIdentity struct {
	PersonID string `json:"person_id"`
}

// DocumentURLs are authenticated download paths relative to the API base.
type DocumentURLs struct {
	Main string `json:"main"`
	Back string `json:"back,omitempty"`
}

// Document is an uploaded onboarding document, without its bytes.
type Document struct {
	ID                 string       `json:"id"`
	EntityID           string       `json:"entity_id"`
	Key                string       `json:"key"`
	Description        string       `json:"description"`
	URLs               DocumentURLs `json:"urls"`
	Meta               DocumentMeta `json:"meta"`
	PersonID           string       `json:"person_id,omitempty"`
	Size               int          `json:"size"`
	VerificationStatus string       `json:"verification_status"`
	UploadedAt         int64        `json:"uploaded_at"`
	Created            int64        `json:"created"`
	Updated            int64        `json:"updated"`
}

// DocumentResult is CreateDocument's answer: the document and what it
// changed for its entity's onboarding.
type DocumentResult struct {
	Document                 *Document          `json:"document"`
	EntityVerificationImpact VerificationImpact `json:"entity_verification_impact"`
}

// VerificationImpact tells where an entity's onboarding stands after a
// change: its status, each submission requirement and whether Submit would
// now succeed.
type VerificationImpact struct {
	EntityID      string        `json:"entity_id"`
	EntityStatus  string        `json:"entity_status"`
	Requirements  []Requirement `json:"requirements"`
	ReadyToSubmit bool          `json:"ready_to_submit"`
}

type docRecord struct {
	Document
	BackSize int `json:"back_size,omitempty"`
}

// Owner returns the entity the document belongs to (scope.Owned).
func (d *Document) Owner() string { return d.EntityID }

func docKey(id string) []byte { return storage.Key("documents", id) }

func docEntityPrefix(entity string) []byte { return storage.Prefix("documents", "by-entity", entity) }

func blobPrefix(id string, back bool) []byte {
	if back {
		return storage.Prefix("documents", "blob-back", id)
	}
	return storage.Prefix("documents", "blob", id)
}

// CreateDocument stores a document for EntityID, which the caller must be
// able to act on (the caller's own entity when ""). The files are decoded,
// checked against Meta.FileType by their first bytes, and stored in
// chunks. An identity or proof_of_address document is linked to the person
// named by LinkToIdentity (by default an individual's own person) when that
// person's identification has no document_id yet. Errors:
// corebank.ErrForbidden for a read-only caller; ErrEntityNotFound for an
// entity outside the tree; ErrFileTooLarge (Fields names the file) over
// MaxFileSize; a validation error naming each bad field (key, file,
// file_back, meta.file_type, description, link_to_identity.person_id, and
// entity_id when a System caller names none).
func (s *Service) CreateDocument(ctx context.Context, caller corebank.Caller, d NewDocument) (*DocumentResult, error) {
	if err := caller.CheckWrite(); err != nil {
		return nil, err
	}
	p := corebank.Problems{}
	switch d.Key {
	case DocIdentity, DocProofOfAddress, DocTaxVerification, DocCertificateOfIncorporation, DocMemorandumOfAssociation:
	case "":
		p.Add("key", "is required")
	default:
		p.Add("key", "must be one of identity, proof_of_address, tax_verification, certificate_of_incorporation, memorandum_of_association")
	}
	corebank.CheckText(p, "description", d.Description, corebank.FreeText(0, 255))
	fileType := d.Meta.FileType
	if fileType == "image/jpg" {
		fileType = "image/jpeg"
	}
	if fileType == "" {
		p.Add("meta.file_type", "is required")
	} else if fileMagic[fileType] == nil {
		p.Add("meta.file_type", "must be application/pdf, image/png or image/jpeg")
	}
	front, err := decodeFile(p, "file", d.File, fileType, true)
	if err != nil {
		return nil, err
	}
	back, err := decodeFile(p, "file_back", d.FileBack, fileType, false)
	if err != nil {
		return nil, err
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	now := s.clock.Now()
	ms := corebank.Millis(now)
	id := s.ids.New(now)
	rec := &docRecord{Document: Document{ID: id, Key: d.Key, Description: d.Description,
		URLs: DocumentURLs{Main: "/documents/" + id + "/file"}, Meta: DocumentMeta{FileType: fileType},
		Size: len(front), VerificationStatus: VerificationPending, UploadedAt: ms, Created: ms, Updated: ms}}
	if back != nil {
		rec.URLs.Back = "/documents/" + id + "/file_back"
		rec.BackSize = len(back)
	}
	out, err := storage.Update(ctx, s.db, func(tx storage.Tx) (*DocumentResult, error) {
		entityID, err := scope.Entity(tx, s, caller, d.EntityID)
		if err != nil {
			return nil, err
		}
		ent, err := getEntity(tx, entityID)
		if err != nil {
			return nil, err
		}
		prof, err := getProfile(tx, entityID)
		if err != nil {
			return nil, err
		}
		r := *rec
		r.EntityID = entityID
		if d.LinkToIdentity != nil && d.LinkToIdentity.PersonID != "" {
			if identOf(prof, d.LinkToIdentity.PersonID) == nil && !hasPerson(prof, d.LinkToIdentity.PersonID) {
				return nil, corebank.InvalidField("link_to_identity.person_id", "is not a person of this entity")
			}
			r.PersonID = d.LinkToIdentity.PersonID
		} else if prof.Person != nil {
			r.PersonID = prof.Person.ID
		}
		if err := storage.PutJSON(tx, bucketDocs, docKey(id), &r); err != nil {
			return nil, err
		}
		if err := tx.Put(bucketDocs, append(docEntityPrefix(entityID), id...), []byte(d.Key)); err != nil {
			return nil, err
		}
		if err := putBlob(tx, id, false, front); err != nil {
			return nil, err
		}
		if err := putBlob(tx, id, true, back); err != nil {
			return nil, err
		}
		if linkDocument(prof, r.PersonID, d.Key, id, ms) {
			ent.Updated = ms
			if err := putEntity(tx, ent, false); err != nil {
				return nil, err
			}
			if err := storage.PutJSON(tx, bucketEntities, profileKey(entityID), prof); err != nil {
				return nil, err
			}
			if err := s.event(tx, now, EventUpdated, composite(ent, prof)); err != nil {
				return nil, err
			}
		}
		reqs, err := requirements(tx, ent, prof)
		if err != nil {
			return nil, err
		}
		return &DocumentResult{Document: &r.Document, EntityVerificationImpact: impact(ent, reqs)}, nil
	})
	if err != nil {
		return nil, err
	}
	s.log.Info("document uploaded", "document_id", id, "entity_id", out.Document.EntityID, "key", d.Key, "size", len(front))
	return out, nil
}

func impact(ent *entityRecord, reqs []Requirement) VerificationImpact {
	ready := true
	for _, r := range reqs {
		ready = ready && r.Status == RequirementSatisfied
	}
	return VerificationImpact{EntityID: ent.ID, EntityStatus: ent.Status, Requirements: reqs,
		ReadyToSubmit: ready && (ent.Status == StatusIncomplete || ent.Status == StatusRejected)}
}

// decodeFile decodes and checks one file; problems go to p, an oversize
// file is returned as an error at once.
func decodeFile(p corebank.Problems, field, encoded, fileType string, required bool) ([]byte, error) {
	if encoded == "" {
		if required {
			p.Add(field, "is required")
		}
		return nil, nil
	}
	// Base64 is 4 characters per 3 bytes; refuse before decoding anything
	// that cannot fit.
	if len(encoded) > (MaxFileSize/3+1)*4+len(encoded)/76*2+8 {
		return nil, fileTooLarge(field)
	}
	data, err := b64.Decode(encoded)
	if err != nil {
		p.Add(field, "must be base64")
		return nil, nil
	}
	if len(data) > MaxFileSize {
		return nil, fileTooLarge(field)
	}
	if len(data) == 0 {
		p.Add(field, "is empty")
		return nil, nil
	}
	if magic := fileMagic[fileType]; magic != nil {
		ok := false
		for _, m := range magic {
			ok = ok || bytes.HasPrefix(data, m)
		}
		if !ok {
			p.Add(field, "content is not "+fileType+" as meta.file_type says")
		}
	}
	return data, nil
}

func fileTooLarge(field string) error {
	e := ErrFileTooLarge.With(field + " is larger than 10 MiB once decoded")
	e.Fields = map[string]string{field: "must be at most 10 MiB once decoded"}
	return e
}

func putBlob(tx storage.Tx, id string, back bool, data []byte) error {
	prefix := blobPrefix(id, back)
	for n := 0; len(data) > 0; n++ {
		c := data
		if len(c) > chunkSize {
			c = c[:chunkSize]
		}
		if err := tx.Put(bucketDocs, storage.AppendUint64(append([]byte(nil), prefix...), uint64(n)), c); err != nil {
			return err
		}
		data = data[len(c):]
	}
	return nil
}

func getDoc(tx storage.Tx, id string) (*docRecord, error) {
	if id == "" {
		return nil, ErrDocumentNotFound
	}
	return storage.LoadJSON[docRecord](tx, bucketDocs, docKey(id), ErrDocumentNotFound)
}

// GetDocument returns the document with id (no bytes) when its entity
// lies in the caller's tree (and in entityID's, the request's entity_id,
// when not ""). Errors: ErrEntityNotFound for an entityID outside the
// tree, whether the document exists or not; ErrDocumentNotFound for a
// missing document and for one outside the tree alike.
func (s *Service) GetDocument(ctx context.Context, caller corebank.Caller, entityID, id string) (*Document, error) {
	return storage.View(ctx, s.db, func(tx storage.Tx) (*Document, error) {
		rec, err := scope.Get(tx, s, caller, entityID, id, getDoc, ErrDocumentNotFound)
		if err != nil {
			return nil, err
		}
		return &rec.Document, nil
	})
}

// DocumentFile is a document's stored file: its media type and bytes.
type DocumentFile struct {
	ContentType string
	Data        []byte
}

// OpenDocument returns the main file of document id, scoped as
// GetDocument. Errors as GetDocument.
func (s *Service) OpenDocument(ctx context.Context, caller corebank.Caller, entityID, id string) (*DocumentFile, error) {
	return s.openDocument(ctx, caller, entityID, id, false)
}

// OpenDocumentBack is OpenDocument for the back side; a document uploaded
// without file_back gives ErrDocumentNotFound.
func (s *Service) OpenDocumentBack(ctx context.Context, caller corebank.Caller, entityID, id string) (*DocumentFile, error) {
	return s.openDocument(ctx, caller, entityID, id, true)
}

func (s *Service) openDocument(ctx context.Context, caller corebank.Caller, entityID, id string, back bool) (*DocumentFile, error) {
	return storage.View(ctx, s.db, func(tx storage.Tx) (*DocumentFile, error) {
		rec, err := scope.Get(tx, s, caller, entityID, id, getDoc, ErrDocumentNotFound)
		if err != nil {
			return nil, err
		}
		size := rec.Size
		if back {
			if rec.URLs.Back == "" {
				return nil, ErrDocumentNotFound
			}
			size = rec.BackSize
		}
		f := &DocumentFile{ContentType: rec.Meta.FileType, Data: make([]byte, 0, size)}
		err = tx.Scan(bucketDocs, storage.ScanOptions{Prefix: blobPrefix(id, back)}, func(_, v []byte) error {
			f.Data = append(f.Data, v...)
			return nil
		})
		if err != nil {
			return nil, err
		}
		return f, nil
	})
}

// documentKeys returns the keys (identity, ...) of an entity's documents.
func documentKeys(tx storage.Tx, entityID string) (map[string]bool, error) {
	out := map[string]bool{}
	err := tx.Scan(bucketDocs, storage.ScanOptions{Prefix: docEntityPrefix(entityID)}, func(_, v []byte) error {
		out[string(v)] = true
		return nil
	})
	return out, err
}

// setDocumentsStatus gives every document of the entity a review's status.
func setDocumentsStatus(tx storage.Tx, entityID, status string, ms int64) error {
	var ids []string
	err := tx.Scan(bucketDocs, storage.ScanOptions{Prefix: docEntityPrefix(entityID)}, func(k, _ []byte) error {
		ids = append(ids, string(k[len(docEntityPrefix(entityID)):]))
		return nil
	})
	if err != nil {
		return err
	}
	for _, id := range ids {
		rec, err := getDoc(tx, id)
		if err != nil {
			return err
		}
		rec.VerificationStatus, rec.Updated = status, ms
		if err := storage.PutJSON(tx, bucketDocs, docKey(id), rec); err != nil {
			return err
		}
	}
	return nil
}

func hasPerson(p *profileRecord, personID string) bool {
	if p.Person != nil && p.Person.ID == personID {
		return true
	}
	for _, o := range p.Officers {
		if o.PersonID == personID {
			return true
		}
	}
	return false
}

// identOf returns the identification record of personID, nil when none.
func identOf(p *profileRecord, personID string) *identRecord {
	if p.Person != nil && p.Person.ID == personID {
		return p.Ident
	}
	for i := range p.Officers {
		if p.Officers[i].PersonID == personID {
			return p.Officers[i].Ident
		}
	}
	return nil
}

// linkDocument records docID as the person's identity or proof of address
// document where that part exists and names none yet. It reports whether
// the profile changed.
func linkDocument(p *profileRecord, personID, key, docID string, ms int64) bool {
	id := identOf(p, personID)
	if id == nil {
		return false
	}
	switch {
	case key == DocIdentity && id.Document != nil && id.Document.DocumentID == "":
		id.Document.DocumentID = docID
	case key == DocProofOfAddress && id.ProofOfAddress != nil && id.ProofOfAddress.DocumentID == "":
		id.ProofOfAddress.DocumentID = docID
	default:
		return false
	}
	id.Updated = ms
	return true
}
