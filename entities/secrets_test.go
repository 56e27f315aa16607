package entities_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/entities"
	"github.com/corebank/corebank/storage/bolt"
)

// scenario runs the whole onboarding surface once and returns the JSON of
// every response.
func scenario(t *testing.T, e *env) string {
	t.Helper()
	var out strings.Builder
	rec := func(v any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		out.WriteString(toJSON(t, v))
	}
	root := e.root.EntityID
	ind := e.individual(root, nil)
	rec(ind, nil)
	rec(e.s.UpdateIndividual(ctx, corebank.As(root), "", ind.Entity.ID, entities.IndividualPatch{
		Identification: &entities.IdentificationInput{Document: &entities.DocumentInput{Type: "national_id",
			Number: "NIN00998877", IssuingCountry: "NG"}}}))
	for _, k := range []string{"identity", "proof_of_address"} {
		rec(e.s.CreateDocument(ctx, corebank.As(root), doc(ind.Entity.ID, k)))
	}
	rec(e.s.SubmitEntity(ctx, sys, ind.Entity.ID))
	rec(e.s.ReviewEntity(ctx, sys, ind.Entity.ID, "approved"))
	b := business()
	b.BusinessOfficers[0].Person.Identification = &entities.IdentificationInput{
		Document: &entities.DocumentInput{Type: "international_passport", Number: "P99887766"}}
	biz, err := e.s.CreateBusiness(ctx, corebank.As(root), b)
	rec(biz, err)
	officer := business().BusinessOfficers[0]
	officer.OwnershipPercentage = 10
	officer.Person.SSN = "987654321"
	rec(e.s.UpdateBusiness(ctx, corebank.As(root), "", biz.Entity.ID, entities.BusinessPatch{BusinessOfficers: []entities.OfficerInput{officer}}))
	rec(e.s.CreateDocument(ctx, corebank.As(root), doc(biz.Entity.ID, "certificate_of_incorporation")))
	rec(e.s.SubmitEntity(ctx, sys, biz.Entity.ID))
	rec(e.s.ReviewEntity(ctx, sys, biz.Entity.ID, "suspended"))
	rec(e.s.GetComposite(ctx, sys, "", ind.Entity.ID))
	rec(e.s.GetComposite(ctx, sys, "", biz.Entity.ID))
	rec(e.s.ListEntities(ctx, corebank.As(root), entities.EntityFilter{}, corebank.ListOptions{}))
	rec(e.s.ListAPIKeys(ctx, sys, entities.APIKeyFilter{EntityID: root}))
	return out.String()
}

func TestNoUnmaskedNumbers(t *testing.T) {
	e := newEnv(t)
	responses := scenario(t, e)
	if !strings.Contains(responses, "*****6789") || !strings.Contains(responses, "*******8877") ||
		!strings.Contains(responses, "*****7766") || !strings.Contains(responses, "*****4321") {
		t.Fatalf("masked numbers missing from responses: %s", responses)
	}
	e.assertNoSecrets(t, responses)
	if !strings.Contains(e.logs.String(), "entity created") {
		t.Fatalf("no log lines recorded: %q", e.logs.String())
	}
}

// TestBolt runs the critical paths on the bbolt backend: bootstrap survives
// a reopen without new keys, keys authenticate, rotation and deletion take
// effect, chunked documents round-trip, and scoping holds.
func TestBolt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	db, err := bolt.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvOn(t, db)
	responses := scenario(t, e)
	e.assertNoSecrets(t, responses)
	big := append(append([]byte(nil), pdf...), bytes.Repeat([]byte{1}, 2<<20+5)...)
	d := doc("", "tax_verification")
	d.File = b64(big)
	r, err := e.s.CreateDocument(ctx, corebank.As(e.root.EntityID), d)
	if err != nil {
		t.Fatal(err)
	}
	k, err := e.s.CreateAPIKey(ctx, sys, entities.NewAPIKey{EntityID: e.root.EntityID})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db2, err := bolt.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db2.Close() })
	s := entities.NewService(db2, nil, mustSealer(t), &entities.Options{GenerateKey: cachedKey})
	if res, created, err := s.Bootstrap(ctx); err != nil || created || res != nil {
		t.Fatalf("Bootstrap after reopen = %v, %v, %v", res, created, err)
	}
	if got, err := s.Authenticate(ctx, e.root.APIKey); err != nil || got.EntityID != e.root.EntityID {
		t.Fatalf("root key after reopen: %v, %v", got, err)
	}
	if f, err := s.OpenDocument(ctx, sys, "", r.Document.ID); err != nil || !bytes.Equal(f.Data, big) {
		t.Fatalf("document after reopen: %v", err)
	}
	rot, err := s.RotateAPIKey(ctx, sys, "", k.Key.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Authenticate(ctx, k.Secret); err == nil {
		t.Fatal("rotated secret still authenticates")
	}
	if _, err := s.DeleteAPIKey(ctx, sys, "", k.Key.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Authenticate(ctx, rot.Secret); err == nil {
		t.Fatal("deleted key still authenticates")
	}
}
