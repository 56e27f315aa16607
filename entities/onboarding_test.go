package entities_test

import (
	"encoding/json"
	"errors"
	"github.com/corebank/corebank"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank/entities"
)

func keysOf(t *testing.T, raw json.RawMessage) []string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestCreateIndividual(t *testing.T) {
	e := newEnv(t)
	root := e.root.EntityID
	c := e.individual(root, nil)
	ms := start.UnixMilli()
	t.Run("Entity", func(t *testing.T) {
		want := entities.Entity{ID: c.Entity.ID, Type: "individual", Status: "incomplete", Name: "Ada Obi",
			ParentEntity: entities.OptionalID(root), PersonID: entities.OptionalID(c.Person.ID), CreationContext: "api", RiskLevel: "medium",
			Meta: entities.Meta{"tax_id": "TIN-1"}, Created: ms, Updated: ms}
		if diff := cmp.Diff(want, *c.Entity); diff != "" {
			t.Errorf("entity (-want +got):\n%s", diff)
		}
	})
	t.Run("Person", func(t *testing.T) {
		want := entities.Person{ID: c.Person.ID, FirstName: "Ada", LastName: "Obi", DateOfBirth: "1990-05-17",
			Email: "ada@example.com", Nationality: "NG", Gender: "f", Status: "pending",
			Phonenumber: "+2348012345678", Created: ms, Updated: ms}
		if diff := cmp.Diff(want, *c.Person); diff != "" {
			t.Errorf("person (-want +got):\n%s", diff)
		}
	})
	t.Run("Identification", func(t *testing.T) {
		id := c.Identification
		if id.PersonID != c.Person.ID || id.VerificationStatus != "pending" {
			t.Errorf("identification = %+v", id)
		}
		wantDoc := entities.IdentityDocument{Type: "international_passport", Number: "*****5678", IssueDate: "2020-01-10",
			ExpiryDate: "2030-01-09", IssuingCountry: "NG", VerificationStatus: "pending"}
		if diff := cmp.Diff(wantDoc, *id.Document); diff != "" {
			t.Errorf("document (-want +got):\n%s", diff)
		}
		wantNums := []entities.IdentityNumber{{Type: "bvn", Value: "*******5678", VerificationStatus: "pending"},
			{Type: "nin", Value: "*******5678", VerificationStatus: "pending"}}
		if diff := cmp.Diff(wantNums, id.IdentityNumbers); diff != "" {
			t.Errorf("identity numbers (-want +got):\n%s", diff)
		}
		if id.ProofOfAddress.Type != "utility_bill" {
			t.Errorf("proof of address = %+v", id.ProofOfAddress)
		}
	})
	t.Run("Address", func(t *testing.T) {
		a := c.Address
		if a.OwnerID != c.Person.ID || a.OwnerType != "person" || a.CountryCode != "NG" || a.Line1 != "1 Marina" {
			t.Errorf("address = %+v", a)
		}
	})
	t.Run("JSONShape", func(t *testing.T) {
		raw := json.RawMessage(toJSON(t, c))
		want := []string{"address", "business", "business_meta", "business_officers", "entity", "identification",
			"operating_address", "person"}
		if diff := cmp.Diff(want, keysOf(t, raw)); diff != "" {
			t.Errorf("composite keys (-want +got):\n%s", diff)
		}
		var parts map[string]json.RawMessage
		json.Unmarshal(raw, &parts)
		wantEntity := []string{"business_id", "created", "creation_context", "id", "is_root", "meta", "name",
			"parent_entity", "person_id", "risk_level", "status", "type", "updated", "user_id"}
		if diff := cmp.Diff(wantEntity, keysOf(t, parts["entity"])); diff != "" {
			t.Errorf("entity keys (-want +got):\n%s", diff)
		}
		wantIdent := []string{"created", "document", "id", "identity_numbers", "person_id", "proof_of_address",
			"updated", "verification_status"}
		if diff := cmp.Diff(wantIdent, keysOf(t, parts["identification"])); diff != "" {
			t.Errorf("identification keys (-want +got):\n%s", diff)
		}
		wantPerson := []string{"created", "date_of_birth", "email", "first_name", "gender", "id", "is_pep",
			"last_name", "middle_name", "nationality", "phonenumber", "status", "updated"}
		if diff := cmp.Diff(wantPerson, keysOf(t, parts["person"])); diff != "" {
			t.Errorf("person keys (-want +got):\n%s", diff)
		}
	})
	t.Run("GetCompositeMatches", func(t *testing.T) {
		got, err := e.s.GetComposite(ctx, sys, "", c.Entity.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(toJSON(t, c), toJSON(t, got)); diff != "" {
			t.Errorf("GetComposite (-create +get):\n%s", diff)
		}
	})
	t.Run("Event", func(t *testing.T) {
		evs := e.events()
		last := evs[len(evs)-1]
		if last.Type != entities.EventCreated || last.EntityID != c.Entity.ID {
			t.Fatalf("last event = %s %s", last.Type, last.EntityID)
		}
		if diff := cmp.Diff(toJSON(t, c), string(last.Object)); diff != "" {
			t.Errorf("event object (-composite +event):\n%s", diff)
		}
	})
}

func TestCreateBusiness(t *testing.T) {
	e := newEnv(t)
	c := e.business(e.root.EntityID)
	if c.Entity.Type != "business" || c.Entity.Status != "incomplete" || string(c.Entity.BusinessID) != c.Business.ID {
		t.Fatalf("entity = %+v", c.Entity)
	}
	if c.Person != nil || c.Identification != nil {
		t.Errorf("business has person or identification: %s", toJSON(t, c))
	}
	if c.Address.OwnerType != "business" || c.Address.OwnerID != c.Business.ID {
		t.Errorf("address = %+v", c.Address)
	}
	if c.BusinessMeta.BusinessID != c.Business.ID || c.BusinessMeta.Meta.Strings["tax_id"] != "12-3456789" {
		t.Errorf("business_meta = %+v", c.BusinessMeta)
	}
	if len(c.BusinessOfficers) != 1 {
		t.Fatalf("officers = %d", len(c.BusinessOfficers))
	}
	o := c.BusinessOfficers[0]
	if o.BusinessID != c.Business.ID || o.PersonID != o.Person.ID || !o.IsControlPerson || o.OwnershipPercentage != 60 {
		t.Errorf("officer = %+v", o)
	}
	if o.Identification == nil || o.Identification.IdentityNumbers[0].Value != "*****6789" {
		t.Errorf("officer identification = %s", toJSON(t, o.Identification))
	}
	wantOfficer := []string{"business_id", "created", "id", "identification", "is_beneficial_owner",
		"is_control_person", "job_title", "ownership_percentage", "person", "person_id", "updated"}
	if diff := cmp.Diff(wantOfficer, keysOf(t, json.RawMessage(toJSON(t, o)))); diff != "" {
		t.Errorf("officer keys (-want +got):\n%s", diff)
	}
	wantBusiness := []string{"created", "description", "email", "id", "incorporation_meta", "industry", "legal_name",
		"phonenumber", "registration_number", "trade_name", "type", "updated", "website"}
	if diff := cmp.Diff(wantBusiness, keysOf(t, json.RawMessage(toJSON(t, c.Business)))); diff != "" {
		t.Errorf("business keys (-want +got):\n%s", diff)
	}
}

func TestUpdateIndividual(t *testing.T) {
	e := newEnv(t)
	root := e.root.EntityID
	c := e.individual(root, nil)
	id := c.Entity.ID
	s := func(v string) *string { return &v }
	t.Run("OK", func(t *testing.T) {
		e.clock.Add(time1m)
		before := len(e.events())
		r, err := e.s.UpdateIndividual(ctx, corebank.As(root), "", id, entities.IndividualPatch{
			Name:    s("Ada O."),
			Person:  &entities.PersonPatch{Email: s("ada@new.example"), Gender: s("F"), FirstName: s("Ada")},
			Address: &entities.AddressPatch{City: s("Abuja"), State: s("FCT")},
			Identification: &entities.IdentificationInput{Document: &entities.DocumentInput{Type: "national_id",
				Number: "NIN00998877", IssuingCountry: "NG"}},
		})
		if err != nil {
			t.Fatal(err)
		}
		want := entities.Changes{EntityFields: []string{"name"}, PersonFields: []string{"email"},
			AddressFields: []string{"city", "state"}, IdentificationFields: []string{"document"}}
		if diff := cmp.Diff(want, r.ChangesApplied); diff != "" {
			t.Errorf("changes (-want +got):\n%s", diff)
		}
		if r.Entity.Name != "Ada O." || r.Person.Email != "ada@new.example" || r.Address.City != "Abuja" ||
			r.Identification.Document.Number != "*******8877" || r.Entity.Updated != start.Add(time1m).UnixMilli() {
			t.Errorf("composite = %s", toJSON(t, r.Composite))
		}
		if r.Address.ID != c.Address.ID || r.Person.ID != c.Person.ID {
			t.Errorf("ids changed")
		}
		var m map[string]json.RawMessage
		json.Unmarshal([]byte(toJSON(t, r)), &m)
		if _, ok := m["changes_applied"]; !ok || m["entity"] == nil {
			t.Errorf("update JSON lacks changes_applied or entity: %v", keysOf(t, json.RawMessage(toJSON(t, r))))
		}
		evs := e.events()[before:]
		if len(evs) != 1 || evs[0].Type != entities.EventUpdated {
			t.Fatalf("events = %+v", evs)
		}
	})
	t.Run("NoChangeNoEvent", func(t *testing.T) {
		before := len(e.events())
		r, err := e.s.UpdateIndividual(ctx, corebank.As(root), "", id, entities.IndividualPatch{Name: s("Ada O.")})
		if err != nil || len(r.ChangesApplied.EntityFields) != 0 || len(e.events()) != before {
			t.Fatalf("r = %+v, %v, events %d", r, err, len(e.events())-before)
		}
	})
	t.Run("ErrValidation", func(t *testing.T) {
		cases := []struct {
			rule  string
			patch entities.IndividualPatch
			field string
		}{
			{"NameRequired", entities.IndividualPatch{Name: s("")}, "name"},
			{"EmailSyntax", entities.IndividualPatch{Person: &entities.PersonPatch{Email: s("x")}}, "person.email"},
			{"DateOfBirthRealDate", entities.IndividualPatch{Person: &entities.PersonPatch{DateOfBirth: s("2001-04-31")}}, "person.date_of_birth"},
			{"GenderEnum", entities.IndividualPatch{Person: &entities.PersonPatch{Gender: s("n")}}, "person.gender"},
			{"NationalityKeepsIdentityNumbers", entities.IndividualPatch{Person: &entities.PersonPatch{Nationality: s("GH")}}, "person.nationality"},
			{"AddressCountryAlpha2", entities.IndividualPatch{Address: &entities.AddressPatch{CountryCode: s("NGA")}}, "address.country_code"},
			{"AddressLine1Required", entities.IndividualPatch{Address: &entities.AddressPatch{Line1: s("")}}, "address.line_1"},
			{"DocumentNumberRequired", entities.IndividualPatch{Identification: &entities.IdentificationInput{Document: &entities.DocumentInput{Type: "national_id"}}}, "identification.document.number"},
			{"SoleTraderCategoryRequired", entities.IndividualPatch{Business: &entities.SoleTraderPatch{Name: s("Shop"), Description: s("d")}}, "business.category_code"},
		}
		for _, c := range cases {
			t.Run(c.rule, func(t *testing.T) {
				_, err := e.s.UpdateIndividual(ctx, corebank.As(root), "", id, c.patch)
				if f := fieldsOf(t, err); f[c.field] == "" {
					t.Fatalf("fields = %v, want %q", f, c.field)
				}
			})
		}
	})
	t.Run("ErrEntityNotFound", func(t *testing.T) {
		b := e.business(root).Entity.ID
		if _, err := e.s.UpdateIndividual(ctx, corebank.As(root), "", b, entities.IndividualPatch{Name: s("x")}); !errors.Is(err, entities.ErrEntityNotFound) {
			t.Errorf("business through individual update: %v", err)
		}
	})
}

func TestUpdateBusiness(t *testing.T) {
	e := newEnv(t)
	root := e.root.EntityID
	c, err := e.s.CreateBusiness(ctx, corebank.As(root), entities.NewBusiness{Name: "Tiny", Business: &entities.BusinessInput{LegalName: "Tiny Co", Type: "llc"}})
	if err != nil {
		t.Fatal(err)
	}
	s := func(v string) *string { return &v }
	r, err := e.s.UpdateBusiness(ctx, corebank.As(root), "", c.Entity.ID, entities.BusinessPatch{
		Business: &entities.BusinessFieldsPatch{Email: s("hi@tiny.example"), RegistrationNumber: s("RC1"),
			IncorporationMeta: &entities.IncorporationMetaInput{Year: 2020, Country: "GB"}},
		Address:          &entities.AddressPatch{Line1: s("1 High St"), City: s("London"), State: s("LDN"), PostalCode: s("EC1A 1BB"), CountryCode: s("GB")},
		BusinessOfficers: business().BusinessOfficers,
		Meta:             &entities.BusinessMetaInput{Strings: entities.Meta{"tax_id": "GB1"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	ch := r.ChangesApplied
	if diff := cmp.Diff([]string{"email", "registration_number", "incorporation_meta"}, ch.BusinessFields); diff != "" {
		t.Errorf("business fields (-want +got):\n%s", diff)
	}
	if len(ch.AddressFields) != 5 || len(ch.BusinessOfficersAdded) != 1 || len(r.BusinessOfficers) != 1 {
		t.Errorf("changes = %+v", ch)
	}
	t.Run("ErrOwnershipTotal", func(t *testing.T) {
		o := business().BusinessOfficers
		o[0].OwnershipPercentage = 41
		_, err := e.s.UpdateBusiness(ctx, corebank.As(root), "", c.Entity.ID, entities.BusinessPatch{BusinessOfficers: o})
		if f := fieldsOf(t, err); f["business_officers"] == "" {
			t.Fatalf("fields = %v", f)
		}
	})
}
