package entities

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/internal/scope"
	"github.com/corebank/corebank/storage"
)

func addressInput(a *Address) AddressInput {
	if a == nil {
		return AddressInput{}
	}
	return AddressInput{Line1: a.Line1, Line2: a.Line2, Line3: a.Line3, City: a.City, State: a.State,
		PostalCode: a.PostalCode, CountryCode: a.CountryCode, Meta: a.Meta}
}

func personInput(p *Person) PersonInput {
	return PersonInput{FirstName: p.FirstName, LastName: p.LastName, MiddleName: p.MiddleName,
		DateOfBirth: p.DateOfBirth, Email: p.Email, Nationality: p.Nationality,
		Gender: p.Gender, Phonenumber: p.Phonenumber, IsPEP: p.IsPEP}
}

func soleTraderInput(b *Business) SoleTraderInput {
	if b == nil {
		return SoleTraderInput{}
	}
	return SoleTraderInput{Name: b.LegalName, Description: b.Description, CategoryCode: b.CategoryCode,
		SubCategoryCode: b.SubCategoryCode, Website: b.Website, LivenessReportURL: b.LivenessReportURL}
}

func businessInput(b *Business) BusinessInput {
	in := BusinessInput{LegalName: b.LegalName, TradeName: b.TradeName, Industry: b.Industry,
		Email: b.Email, Website: b.Website, Type: b.Type, Description: b.Description,
		RegistrationNumber: b.RegistrationNumber, Phonenumber: b.Phonenumber}
	if im := b.IncorporationMeta; im != nil {
		in.IncorporationMeta = &IncorporationMetaInput{Year: im.Year, Month: im.Month, Country: im.Country, State: im.State}
	}
	return in
}

// patchAddress applies p to the stored address cur (nil when none),
// validating the result under path. It returns the new address and the
// fields that changed.
func (b *builder) patchAddress(v *validator, path string, cur *Address, p *AddressPatch, ownerID, ownerType string) (*Address, []string) {
	if p == nil {
		return cur, nil
	}
	old := addressInput(cur)
	in := old
	applyPatch(&in, p)
	v.checkAddress(path, &in)
	fields := changedFields(old, in)
	if len(fields) == 0 {
		return cur, nil
	}
	next := b.address(&in, ownerID, ownerType)
	if cur != nil {
		next.ID, next.Created = cur.ID, cur.Created
	}
	return next, fields
}

// patchName applies a patch's entity name to rec.
func patchName(v *validator, ch *Changes, rec *entityRecord, name *string) {
	if name == nil {
		return
	}
	v.text("name", *name, true, 1, 255)
	if rec.Name != *name {
		ch.EntityFields = append(ch.EntityFields, "name")
	}
	rec.Name = *name
}

// UpdateIndividual applies patch to the individual entity id, which must
// lie in the caller's tree (and in entityID's, the request's entity_id, when
// not ""), validates the result as a whole and writes entities.updated when
// anything changed. It works in every status. Errors:
// corebank.ErrForbidden for a read-only caller; ErrEntityNotFound (outside
// the tree, unknown, or not an individual, or a foreign entityID); a
// validation error naming every bad field.
func (s *Service) UpdateIndividual(ctx context.Context, caller corebank.Caller, entityID, id string, patch IndividualPatch) (*UpdateResult, error) {
	if err := caller.CheckWrite(); err != nil {
		return nil, err
	}
	now := s.clock.Now()
	b := s.builder(now)
	return storage.Update(ctx, s.db, func(tx storage.Tx) (*UpdateResult, error) {
		rec, prof, err := s.updatable(tx, caller, entityID, id, TypeIndividual)
		if err != nil {
			return nil, err
		}
		ch := Changes{EntityFields: []string{}, PersonFields: []string{}, AddressFields: []string{}, IdentificationFields: []string{}}
		v := newValidator(now)
		patchName(v, &ch, rec, patch.Name)
		if patch.Meta != nil {
			corebank.CheckMeta(v.p, "meta", patch.Meta, entityMeta)
			if !maps.Equal(rec.Meta, patch.Meta) {
				ch.EntityFields = append(ch.EntityFields, "meta")
			}
			rec.Meta = Meta(patch.Meta)
		}
		person := *prof.Person
		if pp := patch.Person; pp != nil {
			in := personInput(&person)
			applyPatch(&in, pp)
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
			ch.PersonFields = append(ch.PersonFields, changedFields(personInput(&person), personInput(next))...)
			if len(ch.PersonFields) > 0 {
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
			old := soleTraderInput(prof.Business)
			in := old
			applyPatch(&in, bp)
			v.checkSoleTrader("business", &in)
			ch.BusinessFields = changedFields(old, in)
			if len(ch.BusinessFields) > 0 {
				bus = &Business{ID: b.id(), LegalName: in.Name, TradeName: in.Name, Type: "sole_proprietorship",
					Description: in.Description, Website: in.Website, CategoryCode: in.CategoryCode,
					SubCategoryCode: in.SubCategoryCode, LivenessReportURL: in.LivenessReportURL, Created: b.ms, Updated: b.ms}
				if cur := prof.Business; cur != nil {
					bus.ID, bus.Created = cur.ID, cur.Created
				}
			}
		}
		if err := v.err(); err != nil {
			return nil, err
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
			rec.BusinessID = OptionalID(bus.ID)
		}
		return s.saveUpdate(tx, now, rec, prof, ch)
	})
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

// updatable loads entity id for caller narrowed to entityID (scope.Get)
// with its profile: it must have type typ ("" for any), else
// ErrEntityNotFound.
func (s *Service) updatable(tx storage.Tx, caller corebank.Caller, entityID, id, typ string) (*entityRecord, *profileRecord, error) {
	rec, err := scope.Get(tx, s, caller, entityID, id, getEntity, ErrEntityNotFound)
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

// UpdateBusiness applies patch to the business entity id, scoped as
// UpdateIndividual, validates the result and writes entities.updated when
// anything changed. New officers are added; the ownership total over all
// officers stays at most 100. Errors as UpdateIndividual.
func (s *Service) UpdateBusiness(ctx context.Context, caller corebank.Caller, entityID, id string, patch BusinessPatch) (*UpdateResult, error) {
	if err := caller.CheckWrite(); err != nil {
		return nil, err
	}
	now := s.clock.Now()
	b := s.builder(now)
	return storage.Update(ctx, s.db, func(tx storage.Tx) (*UpdateResult, error) {
		rec, prof, err := s.updatable(tx, caller, entityID, id, TypeBusiness)
		if err != nil {
			return nil, err
		}
		ch := Changes{EntityFields: []string{}, PersonFields: []string{}, AddressFields: []string{},
			IdentificationFields: []string{}, BusinessFields: []string{}}
		v := newValidator(now)
		patchName(v, &ch, rec, patch.Name)
		bus := prof.Business
		if bus == nil {
			bus = &Business{ID: b.id(), Created: b.ms}
		}
		if bp := patch.Business; bp != nil {
			in := businessInput(bus)
			applyPatch(&in, bp)
			phone := v.checkBusiness("business", &in)
			next := newBusiness(b, &in, phone)
			next.ID, next.Created = bus.ID, bus.Created
			ch.BusinessFields = append(ch.BusinessFields, changedFields(businessInput(bus), businessInput(next))...)
			if len(ch.BusinessFields) > 0 {
				bus = next
			}
		}
		addr, af := b.patchAddress(v, "address", prof.Address, patch.Address, bus.ID, "business")
		ch.AddressFields = append(ch.AddressFields, af...)
		op, of := b.patchAddress(v, "operating_address", prof.OperatingAddress, patch.OperatingAddress, bus.ID, "business")
		ch.OperatingAddressFields = of
		if patch.Meta != nil {
			v.businessMeta("meta", *patch.Meta)
		}
		held := 0.0
		for _, o := range prof.Officers {
			held += o.OwnershipPercentage
		}
		v.checkOfficers("business_officers", patch.BusinessOfficers, held)
		if err := v.err(); err != nil {
			return nil, err
		}
		if patch.Meta != nil {
			bm := prof.BusinessMeta
			if bm == nil {
				bm = &BusinessMeta{ID: b.id(), BusinessID: bus.ID, Meta: BusinessMetaValues{Strings: Meta{}}, Created: b.ms}
			}
			next := BusinessMetaValues{Strings: maps.Clone(patch.Meta.Strings), SalesChannels: slices.Clone(patch.Meta.SalesChannels)}
			if next.Strings == nil {
				next.Strings = Meta{}
			}
			if !bm.Meta.equal(next) {
				bm.Meta, bm.Updated = next, b.ms
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
		rec.BusinessID = OptionalID(bus.ID)
		return s.saveUpdate(tx, now, rec, prof, ch)
	})
}
