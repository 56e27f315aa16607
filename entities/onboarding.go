package entities

import (
	"context"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/internal/scope"
	"github.com/corebank/corebank/ledger/coordinates"
	"github.com/corebank/corebank/storage"
)

// Enumerations of the onboarding bodies.
var (
	businessTypes        = []string{"llc", "corporation", "partnership", "sole_proprietorship"}
	identityDocTypes     = []string{"international_passport", "drivers_license", "national_id"}
	idSubtypes           = []string{"BVN", "SSN", "NIN"}
	proofOfAddressTypes  = []string{"utility_bill", "bank_statement"}
	identityNumberFields = []string{"bvn", "nin", "ssn"}
)

// checkPerson validates a person; officer persons need fewer fields. It
// returns the normalised gender and phone number.
func (v *validator) checkPerson(path string, in *PersonInput, officer bool) (gender, phone string) {
	v.text(join(path, "first_name"), in.FirstName, true, 1, 100)
	v.text(join(path, "last_name"), in.LastName, true, 1, 100)
	v.text(join(path, "middle_name"), in.MiddleName, false, 0, 100)
	v.birthDate(join(path, "date_of_birth"), in.DateOfBirth, true)
	v.email(join(path, "email"), in.Email, true)
	v.country(join(path, "nationality"), in.Nationality, true)
	gender = v.gender(join(path, "gender"), in.Gender, !officer)
	phone = v.phone(join(path, "phonenumber"), in.Phonenumber, !officer)
	v.identityNumber(join(path, "bvn"), "bvn", in.BVN, in.Nationality)
	v.identityNumber(join(path, "nin"), "nin", in.NIN, in.Nationality)
	v.identityNumber(join(path, "ssn"), "ssn", in.SSN, in.Nationality)
	return gender, phone
}

func (v *validator) checkAddress(path string, a *AddressInput) {
	v.text(join(path, "line_1"), a.Line1, true, 1, 255)
	v.text(join(path, "line_2"), a.Line2, false, 0, 255)
	v.text(join(path, "line_3"), a.Line3, false, 0, 255)
	v.text(join(path, "city"), a.City, true, 1, 100)
	v.text(join(path, "state"), a.State, true, 1, 100)
	v.text(join(path, "postal_code"), a.PostalCode, true, 1, 20)
	v.country(join(path, "country_code"), a.CountryCode, true)
	corebank.CheckMeta(v.p, join(path, "meta"), a.Meta, addressMeta)
}

func (v *validator) checkIdentification(path string, in *IdentificationInput, nationality string) {
	if d := in.Document; d != nil {
		dp := join(path, "document")
		v.oneOf(join(dp, "type"), d.Type, true, identityDocTypes...)
		v.docNumber(join(dp, "number"), d.Number)
		issued := v.date(join(dp, "issue_date"), d.IssueDate, false)
		expires := v.date(join(dp, "expiry_date"), d.ExpiryDate, false)
		switch {
		case !issued.IsZero() && issued.After(v.today()):
			v.add(join(dp, "issue_date"), "must not be in the future")
		case !expires.IsZero() && !issued.IsZero() && !expires.After(issued):
			v.add(join(dp, "expiry_date"), "must be after issue_date")
		case !expires.IsZero() && expires.Before(v.today()):
			v.add(join(dp, "expiry_date"), "the document has expired")
		}
		v.country(join(dp, "issuing_country"), d.IssuingCountry, false)
		v.text(join(dp, "issuing_authority"), d.IssuingAuthority, false, 0, 100)
		v.text(join(dp, "document_id"), d.DocumentID, false, 0, 100)
		if d.TypeSpecific != nil && d.TypeSpecific.IDSubtype != "" {
			sp := join(dp, "type_specific.id_subtype")
			want, digits := "NG", 11
			switch d.TypeSpecific.IDSubtype {
			case "BVN", "NIN":
			case "SSN":
				want, digits = "US", 9
			default:
				v.add(sp, "must be one of "+strings.Join(idSubtypes, ", "))
				want = ""
			}
			switch {
			case want == "":
			case nationality != want && coordinates.ValidCountry(nationality):
				v.add(sp, d.TypeSpecific.IDSubtype+" is only accepted for nationality "+want)
			case nationality != want:
			case d.Number != "" && (len(d.Number) != digits || !corebank.IsDigits(d.Number)):
				v.add(join(dp, "number"), "a "+d.TypeSpecific.IDSubtype+" must be "+strconv.Itoa(digits)+" digits")
			}
		}
	}
	if pa := in.ProofOfAddress; pa != nil {
		pp := join(path, "proof_of_address")
		v.oneOf(join(pp, "type"), pa.Type, true, proofOfAddressTypes...)
		v.text(join(pp, "document_id"), pa.DocumentID, false, 0, 100)
	}
}

func (v *validator) checkSoleTrader(path string, b *SoleTraderInput) {
	v.text(join(path, "name"), b.Name, true, 1, 100)
	v.freeText(join(path, "description"), b.Description, true, 1, 200)
	v.text(join(path, "category_code"), b.CategoryCode, true, 1, 100)
	v.text(join(path, "sub_category_code"), b.SubCategoryCode, false, 0, 100)
	v.link(join(path, "website"), b.Website)
	v.link(join(path, "liveness_report_url"), b.LivenessReportURL)
}

func (v *validator) checkBusiness(path string, b *BusinessInput) (phone string) {
	v.text(join(path, "legal_name"), b.LegalName, true, 1, 255)
	v.text(join(path, "trade_name"), b.TradeName, false, 0, 255)
	v.text(join(path, "industry"), b.Industry, false, 0, 100)
	v.email(join(path, "email"), b.Email, false)
	v.link(join(path, "website"), b.Website)
	v.oneOf(join(path, "type"), b.Type, true, businessTypes...)
	v.freeText(join(path, "description"), b.Description, false, 0, 500)
	v.text(join(path, "registration_number"), b.RegistrationNumber, false, 0, 100)
	phone = v.phone(join(path, "phonenumber"), b.Phonenumber, false)
	if im := b.IncorporationMeta; im != nil {
		ip := join(path, "incorporation_meta")
		y := v.now.Year()
		if im.Year != 0 && (im.Year < 1800 || im.Year > y) {
			v.add(join(ip, "year"), "must be a year from 1800 to "+strconv.Itoa(y))
		}
		if im.Month != 0 && (im.Month < 1 || im.Month > 12) {
			v.add(join(ip, "month"), "must be 1-12")
		} else if im.Month != 0 && im.Year == y && im.Month > int(v.now.Month()) {
			v.add(join(ip, "month"), "must not be in the future")
		}
		if im.Month != 0 && im.Year == 0 {
			v.add(join(ip, "year"), "is required with month")
		}
		v.country(join(ip, "country"), im.Country, false)
		v.text(join(ip, "state"), im.State, false, 0, 100)
	}
	return phone
}

// checkOfficers validates officers; existing is the ownership already held
// by stored officers.
func (v *validator) checkOfficers(path string, officers []OfficerInput, existing float64) {
	if len(officers) > 25 {
		v.add(path, "must have at most 25 officers")
		return
	}
	total := existing
	for i := range officers {
		o := &officers[i]
		op := join(path, strconv.Itoa(i))
		v.text(join(op, "job_title"), o.JobTitle, true, 1, 100)
		pct := o.OwnershipPercentage
		if math.IsNaN(pct) || pct < 0 || pct > 100 {
			v.add(join(op, "ownership_percentage"), "must be between 0 and 100")
		} else {
			total += pct
		}
		if o.Person == nil {
			v.add(join(op, "person"), "is required")
			continue
		}
		pp := join(op, "person")
		v.checkPerson(pp, &o.Person.PersonInput, true)
		if o.Person.Address != nil {
			v.checkAddress(join(pp, "address"), o.Person.Address)
		}
		if o.Person.Identification != nil {
			v.checkIdentification(join(pp, "identification"), o.Person.Identification, o.Person.Nationality)
		}
	}
	if math.Round(total*1e6) > 100e6 {
		v.add(path, "ownership_percentage must total at most 100")
	}
}

// builder turns validated input into stored records.
type builder struct {
	s   *Service
	now time.Time
	ms  int64
}

func (s *Service) builder(now time.Time) *builder {
	return &builder{s: s, now: now, ms: corebank.Millis(now)}
}

func (b *builder) id() string { return b.s.ids.New(b.now) }

func (b *builder) person(in *PersonInput, gender, phone string) *Person {
	return &Person{ID: b.id(), FirstName: in.FirstName, LastName: in.LastName, MiddleName: in.MiddleName,
		DateOfBirth: in.DateOfBirth, Email: in.Email, Nationality: in.Nationality, Gender: gender,
		IsPEP: in.IsPEP, Status: VerificationPending, Phonenumber: phone, Created: b.ms, Updated: b.ms}
}

func (b *builder) address(a *AddressInput, ownerID, ownerType string) *Address {
	if a == nil {
		return nil
	}
	return &Address{ID: b.id(), Line1: a.Line1, Line2: a.Line2, Line3: a.Line3, City: a.City, State: a.State,
		PostalCode: a.PostalCode, CountryCode: a.CountryCode, OwnerID: ownerID, OwnerType: ownerType,
		Meta: a.Meta, Created: b.ms, Updated: b.ms}
}

func numberAD(personID, what string) []byte { return []byte("persons/" + personID + "/" + what) }

// ident builds a person's identification from the person's identity
// numbers and an optional identification input. It returns nil when there
// is nothing to record.
func (b *builder) ident(personID string, in *PersonInput, id *IdentificationInput) *identRecord {
	rec := &identRecord{Identification: Identification{ID: b.id(), PersonID: personID,
		VerificationStatus: VerificationPending, IdentityNumbers: []IdentityNumber{}, Created: b.ms, Updated: b.ms}}
	if in != nil {
		for i, val := range []string{in.BVN, in.NIN, in.SSN} {
			if val == "" {
				continue
			}
			typ := identityNumberFields[i]
			if rec.SealedNumbers == nil {
				rec.SealedNumbers = map[string][]byte{}
			}
			rec.SealedNumbers[typ] = b.s.sealer.Seal([]byte(val), numberAD(personID, typ))
			rec.IdentityNumbers = append(rec.IdentityNumbers, IdentityNumber{Type: typ,
				Value: corebank.MaskTail(val, 4), VerificationStatus: VerificationPending})
		}
	}
	if id != nil {
		b.setIdentification(rec, id)
	}
	if len(rec.IdentityNumbers) == 0 && rec.Document == nil && rec.ProofOfAddress == nil {
		return nil
	}
	return rec
}

// setIdentification replaces the parts of rec that id gives.
func (b *builder) setIdentification(rec *identRecord, id *IdentificationInput) {
	if d := id.Document; d != nil {
		doc := &IdentityDocument{Type: d.Type, Number: corebank.MaskTail(d.Number, 4), IssueDate: d.IssueDate,
			ExpiryDate: d.ExpiryDate, IssuingCountry: d.IssuingCountry, IssuingAuthority: d.IssuingAuthority,
			DocumentID: d.DocumentID, VerificationStatus: VerificationPending}
		if d.TypeSpecific != nil && d.TypeSpecific.IDSubtype != "" {
			doc.TypeSpecific = &TypeSpecific{IDSubtype: d.TypeSpecific.IDSubtype}
		}
		rec.Document = doc
		rec.SealedDocumentNumber = b.s.sealer.Seal([]byte(d.Number), numberAD(rec.PersonID, "document"))
	}
	if pa := id.ProofOfAddress; pa != nil {
		rec.ProofOfAddress = &ProofOfAddress{Type: pa.Type, DocumentID: pa.DocumentID,
			VerificationStatus: VerificationPending}
	}
	rec.Updated = b.ms
}

func (b *builder) officers(businessID string, in []OfficerInput) []officerRecord {
	out := make([]officerRecord, 0, len(in))
	for i := range in {
		o := &in[i]
		p := b.person(&o.Person.PersonInput, normGender(o.Person.Gender), normPhone(o.Person.Phonenumber))
		out = append(out, officerRecord{
			BusinessOfficer: BusinessOfficer{ID: b.id(), PersonID: p.ID, JobTitle: o.JobTitle,
				IsControlPerson: o.IsControlPerson, IsBeneficialOwner: o.IsBeneficialOwner,
				OwnershipPercentage: o.OwnershipPercentage, BusinessID: businessID, Person: p,
				Address: b.address(o.Person.Address, p.ID, "person"), Created: b.ms, Updated: b.ms},
			Ident: b.ident(p.ID, &o.Person.PersonInput, o.Person.Identification),
		})
	}
	return out
}

// newEntity makes the entity record under parent (already scope-checked).
func newEntityRecord(parent *entityRecord, id, typ, name, relationship string, ms int64) *entityRecord {
	return &entityRecord{
		Entity: Entity{ID: id, Type: typ, Status: StatusIncomplete, Name: name, ParentEntity: OptionalID(parent.ID),
			ParentRelationship: relationship, CreationContext: ContextAPI, RiskLevel: RiskMedium,
			Meta: Meta{}, Created: ms, Updated: ms},
		Ancestors: append(slices.Clone(parent.Ancestors), parent.ID),
	}
}

// parentOf returns the parent a new entity goes under: the caller's
// entity, or requested when the caller may act on it (else
// ErrEntityNotFound). A System caller must name one.
func (s *Service) parentOf(tx storage.Tx, caller corebank.Caller, requested string) (*entityRecord, error) {
	if requested == "" && caller.IsSystem() {
		return nil, corebank.InvalidField("parent_entity", "is required")
	}
	id, err := scope.Entity(tx, s, caller, requested)
	if err != nil {
		return nil, err
	}
	return getEntity(tx, id)
}

// CreateIndividual creates an individual entity (status incomplete, risk
// medium) as a child of the caller's entity, or of ParentEntity when the
// caller may act on it, and writes entities.created. Errors:
// corebank.ErrForbidden for a read-only caller; a validation error naming
// every bad field by its JSON path (and "parent_entity" when a System
// caller names none); ErrEntityNotFound for a parent_entity outside the
// tree (or an unknown caller entity).
func (s *Service) CreateIndividual(ctx context.Context, caller corebank.Caller, in NewIndividual) (*Composite, error) {
	if err := caller.CheckWrite(); err != nil {
		return nil, err
	}
	now := s.clock.Now()
	v := newValidator(now)
	v.text("name", in.Name, true, 1, 255)
	v.text("parent_relationship", in.ParentRelationship, false, 1, 100)
	corebank.CheckMeta(v.p, "meta", in.Meta, entityMeta)
	var gender, phone string
	if in.Person == nil {
		v.add("person", "is required")
	} else {
		gender, phone = v.checkPerson("person", in.Person, false)
	}
	if in.Address != nil {
		v.checkAddress("address", in.Address)
	}
	if in.Identification != nil {
		nat := ""
		if in.Person != nil {
			nat = in.Person.Nationality
		}
		v.checkIdentification("identification", in.Identification, nat)
	}
	if in.Business != nil {
		v.checkSoleTrader("business", in.Business)
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	b := s.builder(now)
	id := b.id()
	person := b.person(in.Person, gender, phone)
	prof := &profileRecord{
		Person:  person,
		Address: b.address(in.Address, person.ID, "person"),
		Ident:   b.ident(person.ID, in.Person, in.Identification),
	}
	if st := in.Business; st != nil {
		prof.Business = &Business{ID: b.id(), LegalName: st.Name, TradeName: st.Name, Type: "sole_proprietorship",
			Description: st.Description, Website: st.Website, CategoryCode: st.CategoryCode,
			SubCategoryCode: st.SubCategoryCode, LivenessReportURL: st.LivenessReportURL, Created: b.ms, Updated: b.ms}
	}
	return s.createEntity(ctx, caller, now, in.ParentEntity, prof, func(parent *entityRecord) *entityRecord {
		rec := newEntityRecord(parent, id, TypeIndividual, in.Name, in.ParentRelationship, b.ms)
		rec.PersonID = OptionalID(person.ID)
		if prof.Business != nil {
			rec.BusinessID = OptionalID(prof.Business.ID)
		}
		if in.Meta != nil {
			rec.Meta = Meta(in.Meta)
		}
		return rec
	})
}

// CreateBusiness creates a business entity (status incomplete, risk
// medium) as CreateIndividual does. Only name, business.legal_name and
// business.type are required now; Submit requires the rest. Errors as
// CreateIndividual, plus business_officers rules (ownership 0-100 each,
// at most 100 in total).
func (s *Service) CreateBusiness(ctx context.Context, caller corebank.Caller, in NewBusiness) (*Composite, error) {
	if err := caller.CheckWrite(); err != nil {
		return nil, err
	}
	now := s.clock.Now()
	v := newValidator(now)
	v.text("name", in.Name, true, 1, 255)
	v.text("parent_relationship", in.ParentRelationship, false, 1, 100)
	v.businessMeta("meta", in.Meta)
	var phone string
	if in.Business == nil {
		v.add("business", "is required")
	} else {
		phone = v.checkBusiness("business", in.Business)
	}
	if in.Address != nil {
		v.checkAddress("address", in.Address)
	}
	if in.OperatingAddress != nil {
		v.checkAddress("operating_address", in.OperatingAddress)
	}
	v.checkOfficers("business_officers", in.BusinessOfficers, 0)
	if err := v.err(); err != nil {
		return nil, err
	}
	b := s.builder(now)
	id := b.id()
	bus := newBusiness(b, in.Business, phone)
	meta := BusinessMetaValues(in.Meta)
	if meta.Strings == nil {
		meta.Strings = Meta{}
	}
	prof := &profileRecord{
		Business:         bus,
		Address:          b.address(in.Address, bus.ID, "business"),
		OperatingAddress: b.address(in.OperatingAddress, bus.ID, "business"),
		BusinessMeta:     &BusinessMeta{ID: b.id(), BusinessID: bus.ID, Meta: meta, Created: b.ms, Updated: b.ms},
		Officers:         b.officers(bus.ID, in.BusinessOfficers),
	}
	return s.createEntity(ctx, caller, now, in.ParentEntity, prof, func(parent *entityRecord) *entityRecord {
		rec := newEntityRecord(parent, id, TypeBusiness, in.Name, in.ParentRelationship, b.ms)
		rec.BusinessID = OptionalID(bus.ID)
		return rec
	})
}

// createEntity stores the entity newRec builds under the parent that
// parentEntity names (the caller's entity when ""), with its profile, in
// one transaction, and logs it. newRec runs inside the transaction and must
// build a fresh record on every run.
func (s *Service) createEntity(ctx context.Context, caller corebank.Caller, now time.Time, parentEntity string, prof *profileRecord, newRec func(parent *entityRecord) *entityRecord) (*Composite, error) {
	out, err := storage.Update(ctx, s.db, func(tx storage.Tx) (*Composite, error) {
		parent, err := s.parentOf(tx, caller, parentEntity)
		if err != nil {
			return nil, err
		}
		rec := newRec(parent)
		if err := s.insertEntity(tx, now, rec, prof); err != nil {
			return nil, err
		}
		return composite(rec, prof), nil
	})
	if err != nil {
		return nil, err
	}
	e := out.Entity
	s.log.Info("entity created", "entity_id", e.ID, "type", e.Type, "parent_entity", e.ParentEntity)
	return out, nil
}

func newBusiness(b *builder, in *BusinessInput, phone string) *Business {
	bus := &Business{ID: b.id(), LegalName: in.LegalName, TradeName: in.TradeName, Email: in.Email,
		Phonenumber: phone, RegistrationNumber: in.RegistrationNumber, Industry: in.Industry, Website: in.Website,
		Type: in.Type, Description: in.Description, Created: b.ms, Updated: b.ms}
	if im := in.IncorporationMeta; im != nil {
		bus.IncorporationMeta = &IncorporationMeta{Year: im.Year, Month: im.Month, Country: im.Country, State: im.State}
	}
	return bus
}
