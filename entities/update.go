package entities

import (
	"context"
	"maps"
	"reflect"
	"time"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/storage"
)

func set[T any](dst *T, src *T) {
	if src != nil {
		*dst = *src
	}
}

// changed appends name to list when a and b differ.
func changed(list []string, name string, a, b any) []string {
	if !reflect.DeepEqual(a, b) {
		return append(list, name)
	}
	return list
}

func addressInput(a *Address) AddressInput {
	if a == nil {
		return AddressInput{}
	}
	return AddressInput{Line1: a.Line1, Line2: a.Line2, Line3: a.Line3, City: a.City, State: a.State,
		PostalCode: a.PostalCode, CountryCode: a.CountryCode, Meta: a.Meta}
}

func (p *AddressPatch) apply(a *AddressInput) {
	set(&a.Line1, p.Line1)
	set(&a.Line2, p.Line2)
	set(&a.Line3, p.Line3)
	set(&a.City, p.City)
	set(&a.State, p.State)
	set(&a.PostalCode, p.PostalCode)
	set(&a.CountryCode, p.CountryCode)
	if p.Meta != nil {
		a.Meta = p.Meta
	}
}

// patchAddress applies p to the stored address cur (nil when none),
// validating the result under path. It returns the new address and the
// fields that changed.
func (b *builder) patchAddress(v *validator, path string, cur *Address, p *AddressPatch, ownerID, ownerType string) (*Address, []string) {
	if p == nil {
		return cur, nil
	}
	in := addressInput(cur)
	p.apply(&in)
	v.checkAddress(path, &in)
	next := b.address(&in, ownerID, ownerType)
	if cur != nil {
		next.ID, next.Created = cur.ID, cur.Created
	}
	old := addressInput(cur)
	var fields []string
	fields = changed(fields, "line_1", old.Line1, in.Line1)
	fields = changed(fields, "line_2", old.Line2, in.Line2)
	fields = changed(fields, "line_3", old.Line3, in.Line3)
	fields = changed(fields, "city", old.City, in.City)
	fields = changed(fields, "state", old.State, in.State)
	fields = changed(fields, "postal_code", old.PostalCode, in.PostalCode)
	fields = changed(fields, "country_code", old.CountryCode, in.CountryCode)
	if len(old.Meta)+len(in.Meta) > 0 {
		fields = changed(fields, "meta", old.Meta, in.Meta)
	}
	if len(fields) == 0 {
		return cur, nil
	}
	return next, fields
}

// UpdateIndividual applies patch to the individual entity id, which must
// lie in callerEntity's tree, validates the result as a whole and writes
// entities.updated when anything changed. It works in every status.
// Errors: ErrEntityNotFound (outside the tree, unknown, or not an
// individual); a validation error naming every bad field.
func (s *Service) UpdateIndividual(ctx context.Context, callerEntity, id string, patch IndividualPatch) (*UpdateResult, error) {
	now := s.clock.Now()
	b := s.builder(now)
	var out *UpdateResult
	err := s.db.Update(ctx, func(tx storage.Tx) error {
		rec, prof, err := s.scoped(tx, callerEntity, id, TypeIndividual)
		if err != nil {
			return err
		}
		ch := Changes{EntityFields: []string{}, PersonFields: []string{}, AddressFields: []string{}, IdentificationFields: []string{}}
		v := newValidator(now)
		if patch.Name != nil {
			v.text("name", *patch.Name, true, 1, 255)
			ch.EntityFields = changed(ch.EntityFields, "name", rec.Name, *patch.Name)
			rec.Name = *patch.Name
		}
		if patch.Meta != nil {
			v.meta("meta", patch.Meta)
			ch.EntityFields = changed(ch.EntityFields, "meta", rec.Meta, patch.Meta)
			rec.Meta = patch.Meta
		}
		person := *prof.Person
		if pp := patch.Person; pp != nil {
			in := PersonInput{FirstName: person.FirstName, LastName: person.LastName, MiddleName: person.MiddleName,
				DateOfBirth: person.DateOfBirth, Email: person.Email, Nationality: person.Nationality,
				Gender: person.Gender, Phonenumber: person.Phonenumber, IsPEP: person.IsPEP}
			set(&in.FirstName, pp.FirstName)
			set(&in.LastName, pp.LastName)
			set(&in.MiddleName, pp.MiddleName)
			set(&in.DateOfBirth, pp.DateOfBirth)
			set(&in.Email, pp.Email)
			set(&in.Nationality, pp.Nationality)
			set(&in.Gender, pp.Gender)
			set(&in.Phonenumber, pp.Phonenumber)
			set(&in.IsPEP, pp.IsPEP)
			gender, phone := v.checkPerson("person", &in, false)
			if prof.Ident != nil {
				for _, n := range prof.Ident.IdentityNumbers {
					want := map[string]string{"bvn": "NG", "nin": "NG", "ssn": "US"}[n.Type]
					if in.Nationality != want {
						v.add("person.nationality", "must stay "+want+" while a "+n.Type+" is on file")
					}
				}
			}
			next := b.person(&in, gender, phone)
			next.ID, next.Created, next.Status = person.ID, person.Created, person.Status
			f := ch.PersonFields
			f = changed(f, "first_name", person.FirstName, next.FirstName)
			f = changed(f, "last_name", person.LastName, next.LastName)
			f = changed(f, "middle_name", person.MiddleName, next.MiddleName)
			f = changed(f, "date_of_birth", person.DateOfBirth, next.DateOfBirth)
			f = changed(f, "email", person.Email, next.Email)
			f = changed(f, "nationality", person.Nationality, next.Nationality)
			f = changed(f, "gender", person.Gender, next.Gender)
			f = changed(f, "phonenumber", person.Phonenumber, next.Phonenumber)
			f = changed(f, "is_pep", person.IsPEP, next.IsPEP)
			ch.PersonFields = f
			if len(f) > 0 {
				person = *next
			}
		}
		addr, af := b.patchAddress(v, "address", prof.Address, patch.Address, person.ID, "person")
		ch.AddressFields = append(ch.AddressFields, af...)
		if id := patch.Identification; id != nil {
			v.checkIdentification("identification", id, person.Nationality)
		}
		var bus *Business
		if bp := patch.Business; bp != nil {
			in := SoleTraderInput{}
			if cur := prof.Business; cur != nil {
				in = SoleTraderInput{Name: cur.LegalName, Description: cur.Description, CategoryCode: cur.CategoryCode,
					SubCategoryCode: cur.SubCategoryCode, Website: cur.Website, LivenessReportURL: cur.LivenessReportURL}
			}
			old := in
			set(&in.Name, bp.Name)
			set(&in.Description, bp.Description)
			set(&in.CategoryCode, bp.CategoryCode)
			set(&in.SubCategoryCode, bp.SubCategoryCode)
			set(&in.Website, bp.Website)
			set(&in.LivenessReportURL, bp.LivenessReportURL)
			v.checkSoleTrader("business", &in)
			var f []string
			f = changed(f, "name", old.Name, in.Name)
			f = changed(f, "description", old.Description, in.Description)
			f = changed(f, "category_code", old.CategoryCode, in.CategoryCode)
			f = changed(f, "sub_category_code", old.SubCategoryCode, in.SubCategoryCode)
			f = changed(f, "website", old.Website, in.Website)
			f = changed(f, "liveness_report_url", old.LivenessReportURL, in.LivenessReportURL)
			ch.BusinessFields = f
			if len(f) > 0 {
				bus = &Business{ID: b.id(), LegalName: in.Name, TradeName: in.Name, Type: "sole_proprietorship",
					Description: in.Description, Website: in.Website, CategoryCode: in.CategoryCode,
					SubCategoryCode: in.SubCategoryCode, LivenessReportURL: in.LivenessReportURL, Created: b.ms, Updated: b.ms}
				if cur := prof.Business; cur != nil {
					bus.ID, bus.Created = cur.ID, cur.Created
				}
			}
		}
		if err := v.err(); err != nil {
			return err
		}
		if id := patch.Identification; id != nil {
			if prof.Ident == nil {
				prof.Ident = b.ident(person.ID, nil, id)
			} else {
				b.setIdentification(prof.Ident, id)
			}
			if id.Document != nil {
				ch.IdentificationFields = append(ch.IdentificationFields, "document")
			}
			if id.ProofOfAddress != nil {
				ch.IdentificationFields = append(ch.IdentificationFields, "proof_of_address")
			}
		}
		prof.Person, prof.Address = &person, addr
		if bus != nil {
			prof.Business = bus
			rec.BusinessID = bus.ID
		}
		out, err = s.saveUpdate(tx, now, rec, prof, ch)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// saveUpdate writes an updated entity and its event when ch lists any
// change, and returns the answer.
func (s *Service) saveUpdate(tx storage.Tx, now time.Time, rec *entityRecord, prof *profileRecord, ch Changes) (*UpdateResult, error) {
	n := len(ch.EntityFields) + len(ch.PersonFields) + len(ch.AddressFields) + len(ch.IdentificationFields) +
		len(ch.BusinessFields) + len(ch.OperatingAddressFields) + len(ch.BusinessOfficersAdded)
	if n > 0 {
		rec.Updated = corebank.Millis(now)
		if err := putEntity(tx, rec, false); err != nil {
			return nil, err
		}
		if err := storage.PutJSON(tx, bucketEntities, profileKey(rec.ID), prof); err != nil {
			return nil, err
		}
		if err := s.event(tx, now, EventUpdated, composite(rec, prof)); err != nil {
			return nil, err
		}
	}
	return &UpdateResult{Composite: composite(rec, prof), ChangesApplied: ch}, nil
}

// scoped loads entity id for an action by callerEntity: it must lie in the
// caller's tree and have type typ ("" for any), else ErrEntityNotFound.
func (s *Service) scoped(tx storage.Tx, callerEntity, id, typ string) (*entityRecord, *profileRecord, error) {
	in, err := inTree(tx, callerEntity, id)
	if err != nil {
		return nil, nil, err
	}
	if !in {
		return nil, nil, ErrEntityNotFound
	}
	rec, err := getEntity(tx, id)
	if err != nil {
		return nil, nil, err
	}
	if typ != "" && rec.Type != typ {
		return nil, nil, ErrEntityNotFound.With(typ + " entity not found")
	}
	prof, err := getProfile(tx, id)
	if err != nil {
		return nil, nil, err
	}
	if typ == TypeIndividual && prof.Person == nil {
		prof.Person = &Person{}
	}
	return rec, prof, nil
}

// UpdateBusiness applies patch to the business entity id, which must lie in
// callerEntity's tree, validates the result and writes entities.updated
// when anything changed. New officers are added; the ownership total over
// all officers stays at most 100. Errors as UpdateIndividual.
func (s *Service) UpdateBusiness(ctx context.Context, callerEntity, id string, patch BusinessPatch) (*UpdateResult, error) {
	now := s.clock.Now()
	b := s.builder(now)
	var out *UpdateResult
	err := s.db.Update(ctx, func(tx storage.Tx) error {
		rec, prof, err := s.scoped(tx, callerEntity, id, TypeBusiness)
		if err != nil {
			return err
		}
		ch := Changes{EntityFields: []string{}, PersonFields: []string{}, AddressFields: []string{},
			IdentificationFields: []string{}, BusinessFields: []string{}}
		v := newValidator(now)
		if patch.Name != nil {
			v.text("name", *patch.Name, true, 1, 255)
			ch.EntityFields = changed(ch.EntityFields, "name", rec.Name, *patch.Name)
			rec.Name = *patch.Name
		}
		bus := prof.Business
		if bus == nil {
			bus = &Business{ID: b.id(), Created: b.ms}
		}
		if bp := patch.Business; bp != nil {
			in := BusinessInput{LegalName: bus.LegalName, TradeName: bus.TradeName, Industry: bus.Industry,
				Email: bus.Email, Website: bus.Website, Type: bus.Type, Description: bus.Description,
				RegistrationNumber: bus.RegistrationNumber, Phonenumber: bus.Phonenumber}
			if im := bus.IncorporationMeta; im != nil {
				in.IncorporationMeta = &IncorporationMetaInput{Year: im.Year, Month: im.Month, Country: im.Country, State: im.State}
			}
			set(&in.LegalName, bp.LegalName)
			set(&in.TradeName, bp.TradeName)
			set(&in.Industry, bp.Industry)
			set(&in.Email, bp.Email)
			set(&in.Website, bp.Website)
			set(&in.Type, bp.Type)
			set(&in.Description, bp.Description)
			set(&in.RegistrationNumber, bp.RegistrationNumber)
			set(&in.Phonenumber, bp.Phonenumber)
			if bp.IncorporationMeta != nil {
				in.IncorporationMeta = bp.IncorporationMeta
			}
			phone := v.checkBusiness("business", &in)
			next := newBusiness(b, &in, phone)
			next.ID, next.Created = bus.ID, bus.Created
			f := ch.BusinessFields
			f = changed(f, "legal_name", bus.LegalName, next.LegalName)
			f = changed(f, "trade_name", bus.TradeName, next.TradeName)
			f = changed(f, "industry", bus.Industry, next.Industry)
			f = changed(f, "email", bus.Email, next.Email)
			f = changed(f, "website", bus.Website, next.Website)
			f = changed(f, "type", bus.Type, next.Type)
			f = changed(f, "description", bus.Description, next.Description)
			f = changed(f, "registration_number", bus.RegistrationNumber, next.RegistrationNumber)
			f = changed(f, "phonenumber", bus.Phonenumber, next.Phonenumber)
			f = changed(f, "incorporation_meta", bus.IncorporationMeta, next.IncorporationMeta)
			ch.BusinessFields = f
			if len(f) > 0 {
				bus = next
			}
		}
		addr, af := b.patchAddress(v, "address", prof.Address, patch.Address, bus.ID, "business")
		ch.AddressFields = append(ch.AddressFields, af...)
		op, of := b.patchAddress(v, "operating_address", prof.OperatingAddress, patch.OperatingAddress, bus.ID, "business")
		ch.OperatingAddressFields = of
		if patch.Meta != nil {
			v.meta("meta", patch.Meta)
		}
		held := 0.0
		for _, o := range prof.Officers {
			held += o.OwnershipPercentage
		}
		v.checkOfficers("business_officers", patch.BusinessOfficers, held)
		if err := v.err(); err != nil {
			return err
		}
		if patch.Meta != nil {
			bm := prof.BusinessMeta
			if bm == nil {
				bm = &BusinessMeta{ID: b.id(), BusinessID: bus.ID, Meta: map[string]any{}, Created: b.ms}
			}
			if !reflect.DeepEqual(bm.Meta, patch.Meta) {
				bm.Meta, bm.Updated = maps.Clone(patch.Meta), b.ms
				ch.EntityFields = append(ch.EntityFields, "meta")
			}
			prof.BusinessMeta = bm
		}
		added := b.officers(bus.ID, patch.BusinessOfficers)
		for _, o := range added {
			ch.BusinessOfficersAdded = append(ch.BusinessOfficersAdded, o.ID)
		}
		prof.Officers = append(prof.Officers, added...)
		prof.Business, prof.Address, prof.OperatingAddress = bus, addr, op
		rec.BusinessID = bus.ID
		out, err = s.saveUpdate(tx, now, rec, prof, ch)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
