package entities_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/entities"
)

var (
	pdf  = []byte("%PDF-1.7\n1 0 obj<<>>endobj\n%%EOF")
	png  = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	jpeg = []byte("\xff\xd8\xff\xe0\x00\x10JFIF")
)

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func doc(entity, key string) entities.NewDocument {
	return entities.NewDocument{EntityID: entity, Key: key, Description: "scan", File: b64(pdf),
		Meta: entities.DocumentMeta{FileType: "application/pdf"}}
}

func TestCreateDocument(t *testing.T) {
	e := newEnv(t)
	root := e.root.EntityID
	ind := e.individual(root, nil)
	t.Run("OK", func(t *testing.T) {
		d := doc(ind.Entity.ID, "identity")
		d.FileBack = b64(pdf)
		r, err := e.s.CreateDocument(ctx, corebank.As(root), d)
		if err != nil {
			t.Fatal(err)
		}
		got := r.Document
		ms := start.UnixMilli()
		if got.EntityID != ind.Entity.ID || got.Key != "identity" || got.Description != "scan" ||
			got.URLs.Main != "/documents/"+got.ID+"/file" || got.Meta.FileType != "application/pdf" ||
			got.VerificationStatus != "pending" || got.UploadedAt != ms || got.Created != ms || got.Updated != ms ||
			got.PersonID != ind.Person.ID {
			t.Errorf("document = %s", toJSON(t, got))
		}
		if r.EntityVerificationImpact.EntityID != ind.Entity.ID || r.EntityVerificationImpact.ReadyToSubmit {
			t.Errorf("impact = %+v", r.EntityVerificationImpact)
		}
		f, err := e.s.OpenDocument(ctx, sys, "", got.ID)
		if err != nil || f.ContentType != "application/pdf" || !bytes.Equal(f.Data, pdf) {
			t.Fatalf("OpenDocument = %+v, %v", f, err)
		}
		if back, err := e.s.OpenDocumentBack(ctx, sys, "", got.ID); err != nil || !bytes.Equal(back.Data, pdf) {
			t.Fatalf("OpenDocumentBack = %+v, %v", back, err)
		}
		// The identity document is linked to the person's identification.
		c, _ := e.s.GetComposite(ctx, sys, "", ind.Entity.ID)
		if c.Identification.Document.DocumentID != got.ID {
			t.Errorf("document_id = %q, want %q", c.Identification.Document.DocumentID, got.ID)
		}
		for _, k := range []string{`"document"`, `"entity_verification_impact"`, `"urls":{"main"`, `"uploaded_at"`, `"verification_status"`, `"meta":{"file_type"`} {
			if !strings.Contains(toJSON(t, r), k) {
				t.Errorf("JSON lacks %s: %s", k, toJSON(t, r))
			}
		}
	})
	t.Run("DefaultsToCaller", func(t *testing.T) {
		r, err := e.s.CreateDocument(ctx, corebank.As(ind.Entity.ID), doc("", "proof_of_address"))
		if err != nil || r.Document.EntityID != ind.Entity.ID {
			t.Fatalf("%v %v", r, err)
		}
		if !r.EntityVerificationImpact.ReadyToSubmit {
			t.Errorf("impact after both documents = %+v", r.EntityVerificationImpact)
		}
	})
	t.Run("ChunkedLargeFile", func(t *testing.T) {
		big := append(append([]byte(nil), png...), bytes.Repeat([]byte{7}, 3<<20+123)...)
		d := doc(ind.Entity.ID, "tax_verification")
		d.File, d.Meta.FileType = b64(big), "image/png"
		r, err := e.s.CreateDocument(ctx, corebank.As(root), d)
		if err != nil {
			t.Fatal(err)
		}
		f, err := e.s.OpenDocument(ctx, sys, "", r.Document.ID)
		if err != nil || !bytes.Equal(f.Data, big) {
			t.Fatalf("round trip of %d bytes: %v", len(big), err)
		}
	})
	t.Run("ErrFileTooLarge", func(t *testing.T) {
		d := doc(ind.Entity.ID, "identity")
		d.File = b64(append(append([]byte(nil), pdf...), make([]byte, 10<<20)...))
		_, err := e.s.CreateDocument(ctx, corebank.As(root), d)
		var ce *corebank.Error
		if !errors.As(err, &ce) || ce.Kind != corebank.KindTooLarge || ce.Fields["file"] == "" {
			t.Fatalf("err = %v, want too large naming file", err)
		}
	})
	t.Run("ErrEntityNotFound", func(t *testing.T) {
		other := e.individual(root, nil).Entity.ID
		if _, err := e.s.CreateDocument(ctx, corebank.As(ind.Entity.ID), doc(other, "identity")); !errors.Is(err, entities.ErrEntityNotFound) {
			t.Fatalf("sibling: %v", err)
		}
		if _, err := e.s.OpenDocument(ctx, sys, "", "01HZZZZZZZZZZZZZZZZZZZZZZZ"); !errors.Is(err, entities.ErrDocumentNotFound) {
			t.Fatalf("unknown document: %v", err)
		}
	})
	cases := []struct {
		rule   string
		mutate func(*entities.NewDocument)
		field  string
	}{
		{"KeyRequired", func(d *entities.NewDocument) { d.Key = "" }, "key"},
		{"KeyEnum", func(d *entities.NewDocument) { d.Key = "selfie" }, "key"},
		{"FileRequired", func(d *entities.NewDocument) { d.File = "" }, "file"},
		{"FileBase64", func(d *entities.NewDocument) { d.File = "%%%not base64%%%" }, "file"},
		{"FileTypeRequired", func(d *entities.NewDocument) { d.Meta.FileType = "" }, "meta.file_type"},
		{"FileTypeSupported", func(d *entities.NewDocument) { d.Meta.FileType = "text/plain" }, "meta.file_type"},
		{"FileMatchesTypePDF", func(d *entities.NewDocument) { d.File = b64(png) }, "file"},
		{"FileMatchesTypePNG", func(d *entities.NewDocument) { d.Meta.FileType = "image/png" }, "file"},
		{"FileMatchesTypeJPEG", func(d *entities.NewDocument) { d.Meta.FileType = "image/jpeg" }, "file"},
		{"FileBackMatchesType", func(d *entities.NewDocument) { d.FileBack = b64(jpeg) }, "file_back"},
		{"DescriptionMax255", func(d *entities.NewDocument) { d.Description = strings.Repeat("d", 256) }, "description"},
		{"LinkToIdentityPersonOfEntity", func(d *entities.NewDocument) {
			d.LinkToIdentity = &entities.LinkToIdentity{PersonID: "01HZZZZZZZZZZZZZZZZZZZZZZZ"}
		}, "link_to_identity.person_id"},
	}
	for _, c := range cases {
		t.Run(c.rule, func(t *testing.T) {
			d := doc(ind.Entity.ID, "identity")
			c.mutate(&d)
			_, err := e.s.CreateDocument(ctx, corebank.As(root), d)
			if f := fieldsOf(t, err); f[c.field] == "" || len(f) != 1 {
				t.Fatalf("fields = %v, want only %q", f, c.field)
			}
		})
	}
	t.Run("JPEGAndPNGAccepted", func(t *testing.T) {
		for ft, b := range map[string][]byte{"image/jpeg": jpeg, "image/jpg": jpeg, "image/png": png} {
			d := doc(ind.Entity.ID, "identity")
			d.File, d.Meta.FileType = base64.RawURLEncoding.EncodeToString(b), ft
			if _, err := e.s.CreateDocument(ctx, corebank.As(root), d); err != nil {
				t.Errorf("%s: %v", ft, err)
			}
		}
	})
}

func TestSubmit(t *testing.T) {
	e := newEnv(t)
	root := e.root.EntityID
	t.Run("IndividualMissingDocuments", func(t *testing.T) {
		id := e.individual(root, nil).Entity.ID
		_, err := e.s.SubmitEntity(ctx, sys, id)
		f := fieldsOf(t, err)
		if f["documents.identity"] == "" || f["documents.proof_of_address"] == "" || len(f) != 2 {
			t.Fatalf("fields = %v", f)
		}
		if _, err := e.s.CreateDocument(ctx, corebank.As(root), doc(id, "identity")); err != nil {
			t.Fatal(err)
		}
		_, err = e.s.SubmitEntity(ctx, sys, id)
		if f := fieldsOf(t, err); f["documents.proof_of_address"] == "" || len(f) != 1 {
			t.Fatalf("fields = %v", f)
		}
	})
	t.Run("IndividualOK", func(t *testing.T) {
		id := e.individual(root, nil).Entity.ID
		for _, k := range []string{"identity", "proof_of_address"} {
			if _, err := e.s.CreateDocument(ctx, corebank.As(root), doc(id, k)); err != nil {
				t.Fatal(err)
			}
		}
		before := len(e.events())
		sub, err := e.s.SubmitEntity(ctx, sys, id)
		if err != nil {
			t.Fatal(err)
		}
		if sub.EntityID != id || sub.Status != "pending" || sub.SubmittedAt != start.UnixMilli() || len(sub.Requirements) != 2 {
			t.Errorf("submission = %s", toJSON(t, sub))
		}
		for _, r := range sub.Requirements {
			if r.Status != "satisfied" {
				t.Errorf("requirement %+v", r)
			}
		}
		if ent, _ := e.s.GetEntity(ctx, sys, "", id); ent.Status != "pending" {
			t.Errorf("status = %s", ent.Status)
		}
		if evs := e.events()[before:]; len(evs) != 1 || evs[0].Type != entities.EventUpdated {
			t.Errorf("events = %+v", evs)
		}
		if _, err := e.s.SubmitEntity(ctx, sys, id); !errors.Is(err, entities.ErrInvalidTransition) {
			t.Errorf("second submit: %v", err)
		}
		if _, err := e.s.ReviewEntity(ctx, sys, id, "approved"); err != nil {
			t.Fatal(err)
		}
		got, err := e.s.GetSubmission(ctx, sys, "", sub.ID)
		if err != nil || got.Status != "approved" {
			t.Errorf("submission after review = %+v, %v", got, err)
		}
		d, _ := e.s.ListEntities(ctx, corebank.As(id), entities.EntityFilter{}, corebank.ListOptions{})
		if len(d.Items) != 1 || d.Items[0].Status != "approved" {
			t.Errorf("entity after review = %+v", d.Items)
		}
	})
	t.Run("BusinessRequirements", func(t *testing.T) {
		c, err := e.s.CreateBusiness(ctx, corebank.As(root), entities.NewBusiness{Name: "Tiny", Business: &entities.BusinessInput{LegalName: "Tiny Co", Type: "llc"}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = e.s.SubmitEntity(ctx, sys, c.Entity.ID)
		f := fieldsOf(t, err)
		for _, k := range []string{"business.email", "business.registration_number", "business.incorporation_meta.country",
			"address", "business_officers", "documents.certificate_of_incorporation"} {
			if f[k] == "" {
				t.Errorf("fields %v lack %q", f, k)
			}
		}
		if f["business.legal_name"] != "" || f["business.type"] != "" {
			t.Errorf("fields %v name satisfied requirements", f)
		}
	})
	t.Run("BusinessOK", func(t *testing.T) {
		id := e.business(root).Entity.ID
		_, err := e.s.SubmitEntity(ctx, sys, id)
		if f := fieldsOf(t, err); f["documents.certificate_of_incorporation"] == "" || len(f) != 1 {
			t.Fatalf("fields = %v", f)
		}
		if _, err := e.s.CreateDocument(ctx, corebank.As(root), doc(id, "certificate_of_incorporation")); err != nil {
			t.Fatal(err)
		}
		if sub, err := e.s.SubmitEntity(ctx, sys, id); err != nil || sub.Status != "pending" || len(sub.Requirements) != 8 {
			t.Fatalf("SubmitEntity = %+v, %v", sub, err)
		}
	})
	t.Run("Reviewer", func(t *testing.T) {
		auto := newEnv(t, func(o *entities.Options) { o.Reviewer = entities.SandboxReviewer{Decision: "approved"} })
		id := auto.individual(auto.root.EntityID, nil).Entity.ID
		for _, k := range []string{"identity", "proof_of_address"} {
			if _, err := auto.s.CreateDocument(ctx, corebank.As(auto.root.EntityID), doc(id, k)); err != nil {
				t.Fatal(err)
			}
		}
		sub, err := auto.s.SubmitEntity(ctx, sys, id)
		if err != nil || sub.Status != "approved" {
			t.Fatalf("SubmitEntity = %+v, %v", sub, err)
		}
		if ent, _ := auto.s.GetEntity(ctx, sys, "", id); ent.Status != "approved" {
			t.Errorf("status = %s", ent.Status)
		}
	})
	t.Run("ResubmitAfterRejection", func(t *testing.T) {
		id := e.individual(root, nil).Entity.ID
		for _, k := range []string{"identity", "proof_of_address"} {
			e.s.CreateDocument(ctx, corebank.As(root), doc(id, k))
		}
		if _, err := e.s.SubmitEntity(ctx, sys, id); err != nil {
			t.Fatal(err)
		}
		if _, err := e.s.ReviewEntity(ctx, sys, id, "rejected"); err != nil {
			t.Fatal(err)
		}
		if _, err := e.s.SubmitEntity(ctx, sys, id); err != nil {
			t.Fatalf("resubmit: %v", err)
		}
	})
}

func TestDocumentLinkToOfficer(t *testing.T) {
	e := newEnv(t)
	root := e.root.EntityID
	b := business()
	b.BusinessOfficers[0].Person.Identification = &entities.IdentificationInput{
		Document: &entities.DocumentInput{Type: "drivers_license", Number: "D1234567"}}
	c, err := e.s.CreateBusiness(ctx, corebank.As(root), b)
	if err != nil {
		t.Fatal(err)
	}
	person := c.BusinessOfficers[0].PersonID
	d := doc(c.Entity.ID, "identity")
	d.LinkToIdentity = &entities.LinkToIdentity{PersonID: person}
	r, err := e.s.CreateDocument(ctx, corebank.As(root), d)
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.s.GetDocument(ctx, sys, "", r.Document.ID)
	if err != nil || got.PersonID != person || got.EntityID != c.Entity.ID {
		t.Fatalf("GetDocument = %+v, %v", got, err)
	}
	after, _ := e.s.GetComposite(ctx, sys, "", c.Entity.ID)
	if after.BusinessOfficers[0].Identification.Document.DocumentID != r.Document.ID {
		t.Errorf("officer document_id = %q", after.BusinessOfficers[0].Identification.Document.DocumentID)
	}
	if _, err := e.s.GetDocument(ctx, sys, "", "01HZZZZZZZZZZZZZZZZZZZZZZZ"); !errors.Is(err, entities.ErrDocumentNotFound) {
		t.Errorf("unknown: %v", err)
	}
}
