package payments

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/internal/scope"
	"github.com/corebank/corebank/ledger/coordinates"
	"github.com/corebank/corebank/storage"
)

// Counterparty types, relationships and statuses (SPEC "Counterparty").
const (
	CounterpartyIndividual = "individual"
	CounterpartyBusiness   = "business"

	CounterpartyActive   = "active"
	CounterpartyInactive = "inactive"
)

var relationships = []string{"vendor", "supplier", "customer", "employee"}

var phoneTypes = []string{"mobile", "work", "home", "other"}

// Counterparty is a payout recipient of an entity. It is the API
// representation (SPEC "Counterparty").
type Counterparty struct {
	ID       string            `json:"id"`
	EntityID string            `json:"entity_id"`
	Type     string            `json:"type"`
	Nickname string            `json:"nickname"`
	Status   string            `json:"status"`
	Profile  Profile           `json:"profile"`
	Meta     map[string]string `json:"meta"`
	// Deleted is 0 while the counterparty is active and the time (Unix ms)
	// it was deactivated afterwards.
	Deleted int64 `json:"deleted"`
	Created int64 `json:"created"`
	Updated int64 `json:"updated"`
}

// Profile is a counterparty's profile. Individuals use FirstName,
// LastName and Address; businesses use LegalName, TradingName and
// RegisteredAddress; the other fields are shared.
type Profile struct {
	FirstName         string           `json:"first_name,omitempty"`
	LastName          string           `json:"last_name,omitempty"`
	LegalName         string           `json:"legal_name,omitempty"`
	TradingName       string           `json:"trading_name,omitempty"`
	Relationship      string           `json:"relationship"`
	Email             string           `json:"email"`
	Address           *Address         `json:"address,omitempty"`
	RegisteredAddress *Address         `json:"registered_address,omitempty"`
	Identification    []Identification `json:"identification"`
	Phone             *Phone           `json:"phone"`
}

// Address is a postal address; Country is ISO 3166-1 alpha-2.
type Address struct {
	Line1           string `json:"line1"`
	Line2           string `json:"line2,omitempty"`
	City            string `json:"city"`
	StateOrProvince string `json:"state_or_province,omitempty"`
	PostalCode      string `json:"postal_code,omitempty"`
	Country         string `json:"country"`
}

// Identification is an identity document: Type is P (passport), D
// (driving licence) or N (national ID) for individuals and L (business
// registration number) for businesses.
type Identification struct {
	Type           string `json:"type"`
	Number         string `json:"number"`
	IssuingCountry string `json:"issuing_country"`
}

// Phone is a phone number in E.164 form with its type (mobile, work, home,
// other) and country (alpha-2).
type Phone struct {
	Number  string `json:"number"`
	Type    string `json:"type"`
	Country string `json:"country"`
}

// NewCounterparty is the body of POST /counterparties.
type NewCounterparty struct {
	// EntityID is the entity the counterparty is for; "" is the caller's.
	EntityID string            `json:"entity_id,omitempty"`
	Type     string            `json:"type"`
	Nickname string            `json:"nickname,omitempty"`
	Profile  Profile           `json:"profile"`
	Meta     map[string]string `json:"meta,omitempty"`
}

// CounterpartyPatch is the body of PATCH /counterparties/{id}: nil fields
// are left unchanged. Within Profile the same holds field by field,
// including inside addresses and the phone; Identification, when given,
// replaces the whole list. An empty string clears an optional field. Meta,
// when non-nil, replaces the meta object.
type CounterpartyPatch struct {
	// EntityID is accepted so that request bodies decode; the entityID
	// argument of UpdateCounterparty scopes the lookup.
	EntityID string            `json:"entity_id,omitempty"`
	Nickname *string           `json:"nickname,omitempty"`
	Profile  *ProfilePatch     `json:"profile,omitempty"`
	Meta     map[string]string `json:"meta,omitempty"`
}

// ProfilePatch is a partial Profile; see CounterpartyPatch.
type ProfilePatch struct {
	FirstName         *string           `json:"first_name,omitempty"`
	LastName          *string           `json:"last_name,omitempty"`
	LegalName         *string           `json:"legal_name,omitempty"`
	TradingName       *string           `json:"trading_name,omitempty"`
	Relationship      *string           `json:"relationship,omitempty"`
	Email             *string           `json:"email,omitempty"`
	Address           *AddressPatch     `json:"address,omitempty"`
	RegisteredAddress *AddressPatch     `json:"registered_address,omitempty"`
	Identification    *[]Identification `json:"identification,omitempty"`
	Phone             *PhonePatch       `json:"phone,omitempty"`
}

// AddressPatch is a partial Address.
type AddressPatch struct {
	Line1           *string `json:"line1,omitempty"`
	Line2           *string `json:"line2,omitempty"`
	City            *string `json:"city,omitempty"`
	StateOrProvince *string `json:"state_or_province,omitempty"`
	PostalCode      *string `json:"postal_code,omitempty"`
	Country         *string `json:"country,omitempty"`
}

// PhonePatch is a partial Phone.
type PhonePatch struct {
	Number  *string `json:"number,omitempty"`
	Type    *string `json:"type,omitempty"`
	Country *string `json:"country,omitempty"`
}

// CounterpartyFilter selects counterparties in ListCounterparties; empty
// fields match everything.
type CounterpartyFilter struct {
	// EntityID is the entity whose counterparties are listed; "" is the
	// caller's own.
	EntityID string
	Type     string
	Status   string
}

func setStr(dst *string, p *string) {
	if p != nil {
		*dst = *p
	}
}

func (p *AddressPatch) apply(a *Address) *Address {
	if p == nil {
		return a
	}
	var out Address
	if a != nil {
		out = *a
	}
	setStr(&out.Line1, p.Line1)
	setStr(&out.Line2, p.Line2)
	setStr(&out.City, p.City)
	setStr(&out.StateOrProvince, p.StateOrProvince)
	setStr(&out.PostalCode, p.PostalCode)
	setStr(&out.Country, p.Country)
	return &out
}

func (p *ProfilePatch) apply(pr *Profile) {
	if p == nil {
		return
	}
	setStr(&pr.FirstName, p.FirstName)
	setStr(&pr.LastName, p.LastName)
	setStr(&pr.LegalName, p.LegalName)
	setStr(&pr.TradingName, p.TradingName)
	setStr(&pr.Relationship, p.Relationship)
	setStr(&pr.Email, p.Email)
	pr.Address = p.Address.apply(pr.Address)
	pr.RegisteredAddress = p.RegisteredAddress.apply(pr.RegisteredAddress)
	if p.Identification != nil {
		pr.Identification = append([]Identification(nil), (*p.Identification)...)
	}
	if p.Phone != nil {
		var ph Phone
		if pr.Phone != nil {
			ph = *pr.Phone
		}
		setStr(&ph.Number, p.Phone.Number)
		setStr(&ph.Type, p.Phone.Type)
		setStr(&ph.Country, p.Phone.Country)
		pr.Phone = &ph
	}
}

// normalize trims surrounding space from every text field and turns empty
// optional objects into nil.
func (c *Counterparty) normalize() {
	t := strings.TrimSpace
	c.Type, c.Nickname = t(c.Type), t(c.Nickname)
	p := &c.Profile
	p.FirstName, p.LastName, p.LegalName, p.TradingName = t(p.FirstName), t(p.LastName), t(p.LegalName), t(p.TradingName)
	p.Relationship, p.Email = t(p.Relationship), t(p.Email)
	for _, a := range []*Address{p.Address, p.RegisteredAddress} {
		if a != nil {
			a.Line1, a.Line2, a.City = t(a.Line1), t(a.Line2), t(a.City)
			a.StateOrProvince, a.PostalCode, a.Country = t(a.StateOrProvince), t(a.PostalCode), t(a.Country)
		}
	}
	for i := range p.Identification {
		id := &p.Identification[i]
		id.Type, id.Number, id.IssuingCountry = t(id.Type), t(id.Number), t(id.IssuingCountry)
	}
	if p.Identification == nil {
		p.Identification = []Identification{}
	}
	if ph := p.Phone; ph != nil {
		ph.Number, ph.Type, ph.Country = t(ph.Number), t(ph.Type), t(ph.Country)
		if *ph == (Phone{}) {
			p.Phone = nil
		}
	}
	if c.Meta == nil {
		c.Meta = map[string]string{}
	}
}

// fullName is the name a nickname defaults to.
func (c *Counterparty) fullName() string {
	if c.Type == CounterpartyBusiness {
		return c.Profile.LegalName
	}
	return strings.TrimSpace(c.Profile.FirstName + " " + c.Profile.LastName)
}

func oneOf(v string, allowed []string) bool {
	for _, a := range allowed {
		if v == a {
			return true
		}
	}
	return false
}

// validEmail checks the addr-spec form local@domain: no spaces or angle
// brackets, a dotted domain of letters, digits and hyphens.
func validEmail(s string) bool {
	if len(s) > 254 || strings.ContainsAny(s, " \t\r\n<>()[],;:\"\\") || corebank.TextProblem(s, false) != "" {
		return false
	}
	local, domain, ok := strings.Cut(s, "@")
	if !ok || local == "" || len(local) > 64 || strings.Contains(domain, "@") {
		return false
	}
	if strings.HasPrefix(local, ".") || strings.HasSuffix(local, ".") || strings.Contains(local, "..") {
		return false
	}
	labels := strings.Split(domain, ".")
	if len(labels) < 2 {
		return false
	}
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for _, r := range l {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r > 127) {
				return false
			}
		}
	}
	return true
}

func checkCountry(p corebank.Problems, field, v string) {
	if v == "" {
		p.Add(field, "is required")
	} else if !coordinates.ValidCountry(v) {
		p.Add(field, "must be an ISO 3166-1 alpha-2 country code in upper case")
	}
}

func checkAddress(p corebank.Problems, field string, a *Address) {
	if a == nil {
		p.Add(field, "is required")
		return
	}
	corebank.CheckText(p, field+".line1", a.Line1, corebank.Line(1, 255))
	corebank.CheckText(p, field+".line2", a.Line2, corebank.Line(0, 255))
	corebank.CheckText(p, field+".city", a.City, corebank.Line(1, 100))
	corebank.CheckText(p, field+".state_or_province", a.StateOrProvince, corebank.Line(0, 100))
	corebank.CheckText(p, field+".postal_code", a.PostalCode, corebank.Line(0, 20))
	checkCountry(p, field+".country", a.Country)
}

// objectMeta bounds the meta of counterparties, payment details and transfers.
var objectMeta = corebank.MetaLimits{Keys: 50, KeyLen: 40, ValueLen: 500}

// validate returns every problem with c, named by JSON path.
func (c *Counterparty) validate() error {
	p := corebank.Problems{}
	pr := &c.Profile
	notFor := func(field, typ string) { p.Add("profile."+field, "is not used by "+typ+" counterparties") }
	var idTypes []string
	switch c.Type {
	case "":
		p.Add("type", "is required")
	case CounterpartyIndividual:
		corebank.CheckText(p, "profile.first_name", pr.FirstName, corebank.Line(1, 100))
		corebank.CheckText(p, "profile.last_name", pr.LastName, corebank.Line(1, 100))
		checkAddress(p, "profile.address", pr.Address)
		if pr.LegalName != "" {
			notFor("legal_name", c.Type)
		}
		if pr.TradingName != "" {
			notFor("trading_name", c.Type)
		}
		if pr.RegisteredAddress != nil {
			notFor("registered_address", c.Type)
		}
		idTypes = []string{"P", "D", "N"}
	case CounterpartyBusiness:
		corebank.CheckText(p, "profile.legal_name", pr.LegalName, corebank.Line(1, 255))
		corebank.CheckText(p, "profile.trading_name", pr.TradingName, corebank.Line(0, 255))
		checkAddress(p, "profile.registered_address", pr.RegisteredAddress)
		if pr.FirstName != "" {
			notFor("first_name", c.Type)
		}
		if pr.LastName != "" {
			notFor("last_name", c.Type)
		}
		if pr.Address != nil {
			notFor("address", c.Type)
		}
		idTypes = []string{"L"}
	default:
		p.Add("type", "must be individual or business")
	}
	switch {
	case pr.Relationship == "":
		p.Add("profile.relationship", "is required")
	case !oneOf(pr.Relationship, relationships):
		p.Add("profile.relationship", "must be one of vendor, supplier, customer, employee")
	}
	switch {
	case pr.Email == "":
		p.Add("profile.email", "is required")
	case !validEmail(pr.Email):
		p.Add("profile.email", "is not a valid email address")
	}
	if len(pr.Identification) > 10 {
		p.Add("profile.identification", "may hold at most 10 documents")
	}
	for i, id := range pr.Identification {
		f := "profile.identification." + strconv.Itoa(i)
		switch {
		case id.Type == "":
			p.Add(f+".type", "is required")
		case idTypes != nil && !oneOf(id.Type, idTypes):
			if c.Type == CounterpartyBusiness {
				p.Add(f+".type", "must be L (business registration number) for a business")
			} else {
				p.Add(f+".type", "must be P (passport), D (driving licence) or N (national ID) for an individual")
			}
		}
		corebank.CheckText(p, f+".number", id.Number, corebank.Line(1, 64))
		checkCountry(p, f+".issuing_country", id.IssuingCountry)
	}
	if ph := pr.Phone; ph != nil {
		if ph.Number == "" {
			p.Add("profile.phone.number", "is required")
		} else if err := coordinates.ValidateE164(ph.Number); err != nil {
			p.Add("profile.phone.number", coordinates.Problem(err))
		}
		switch {
		case ph.Type == "":
			p.Add("profile.phone.type", "is required")
		case !oneOf(ph.Type, phoneTypes):
			p.Add("profile.phone.type", "must be one of mobile, work, home, other")
		}
		checkCountry(p, "profile.phone.country", ph.Country)
	}
	corebank.CheckText(p, "nickname", c.Nickname, corebank.Line(0, 100))
	corebank.CheckMeta(p, "meta", c.Meta, objectMeta)
	return p.Err()
}

// uniqueKeys are the keys that make two active counterparties of one
// entity duplicates (see doc.go), each with the field a clash names.
func (c *Counterparty) uniqueKeys() (keys [][]byte, fields []string) {
	name := strings.Join(strings.Fields(strings.ToLower(c.fullName())), " ")
	email := strings.ToLower(c.Profile.Email)
	h := sha256.Sum256([]byte(name + "\x00" + email))
	keys = append(keys, storage.Key("cp-name", c.EntityID, c.Type, hex.EncodeToString(h[:])))
	fields = append(fields, "profile.email")
	for i, id := range c.Profile.Identification {
		num := strings.Map(func(r rune) rune {
			if r == ' ' || r == '-' || r == '.' || r == '/' {
				return -1
			}
			return r
		}, strings.ToUpper(id.Number))
		keys = append(keys, storage.Key("cp-ident", c.EntityID, id.Type, id.IssuingCountry, hex.EncodeToString([]byte(num))))
		fields = append(fields, "profile.identification."+strconv.Itoa(i)+".number")
	}
	return keys, fields
}

// claimUnique checks and writes c's uniqueness keys; it returns a
// validation error naming the clashing field if another active
// counterparty holds one.
func claimUnique(tx storage.Tx, c *Counterparty) error {
	keys, fields := c.uniqueKeys()
	p := corebank.Problems{}
	for i, k := range keys {
		owner, err := tx.Get(bucketUnique, k)
		if errors.Is(err, storage.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		if string(owner) != c.ID {
			if i == 0 {
				p.Add(fields[i], "a counterparty with the same name and email already exists ("+string(owner)+")")
			} else {
				p.Add(fields[i], "a counterparty with the same identification already exists ("+string(owner)+")")
			}
		}
	}
	if err := p.Err(); err != nil {
		return err
	}
	for _, k := range keys {
		if err := tx.Put(bucketUnique, k, []byte(c.ID)); err != nil {
			return err
		}
	}
	return nil
}

func releaseUnique(tx storage.Tx, c *Counterparty) error {
	keys, _ := c.uniqueKeys()
	for _, k := range keys {
		owner, err := tx.Get(bucketUnique, k)
		if errors.Is(err, storage.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		if string(owner) == c.ID {
			if err := tx.Delete(bucketUnique, k); err != nil {
				return err
			}
		}
	}
	return nil
}

// counterpartyIndexes lists the index scopes a counterparty appears under.
func counterpartyIndexes(c *Counterparty) [][]string {
	return [][]string{
		{"cp", c.EntityID, "all"},
		{"cp", c.EntityID, "t:" + c.Type},
		{"cp", c.EntityID, "s:" + c.Status},
		{"cp", c.EntityID, "ts:" + c.Type + ":" + c.Status},
	}
}

func writeCounterpartyIndexes(tx storage.Tx, c *Counterparty, on bool) error {
	for _, parts := range counterpartyIndexes(c) {
		if err := setIndex(tx, on, c.ID, parts...); err != nil {
			return err
		}
	}
	return nil
}

// CreateCounterparty creates an active counterparty for in.EntityID (the
// caller's own entity when ""), which the caller must be allowed to act
// for. It returns corebank.ErrForbidden for a read-only caller,
// corebank.ErrEntityNotFound for an entity_id that is unknown or outside the
// caller's tree (checked first, whatever the body holds), and a validation
// error naming every bad field, including a duplicate of an active
// counterparty of the same entity (see doc.go, "Duplicates").
func (s *Service) CreateCounterparty(ctx context.Context, caller corebank.Caller, in NewCounterparty) (*Counterparty, error) {
	if err := caller.CheckWrite(); err != nil {
		return nil, err
	}
	now := s.clock.Now()
	id := s.ids.New(now)
	return storage.Update(ctx, s.db, func(tx storage.Tx) (*Counterparty, error) {
		entity, err := s.entity(tx, caller, in.EntityID)
		if err != nil {
			return nil, err
		}
		c := &Counterparty{
			ID: id, EntityID: entity, Type: in.Type, Nickname: in.Nickname,
			Status: CounterpartyActive, Profile: cloneProfile(in.Profile), Meta: cloneMeta(in.Meta),
			Created: corebank.Millis(now), Updated: corebank.Millis(now),
		}
		c.normalize()
		if c.Nickname == "" {
			c.Nickname = c.fullName()
		}
		if err := c.validate(); err != nil {
			return nil, err
		}
		if err := claimUnique(tx, c); err != nil {
			return nil, err
		}
		if err := writeCounterpartyIndexes(tx, c, true); err != nil {
			return nil, err
		}
		return c, putCounterparty(tx, c)
	})
}

// Owner returns the entity whose counterparty it is (scope.Owned).
func (c *Counterparty) Owner() string { return c.EntityID }

// getCounterparty reads counterparty id, or ErrCounterpartyNotFound.
func getCounterparty(tx storage.Tx, id string) (*Counterparty, error) {
	return getRecord[Counterparty](tx, bucketCounterparties, id, ErrCounterpartyNotFound)
}

// GetCounterparty returns counterparty id when it lies in the tree of
// entityID (the caller's own entity when ""). It returns
// corebank.ErrEntityNotFound for an entityID outside the caller's tree and
// ErrCounterpartyNotFound for a missing counterparty or one outside the
// entity's tree alike.
func (s *Service) GetCounterparty(ctx context.Context, caller corebank.Caller, entityID, id string) (*Counterparty, error) {
	return storage.View(ctx, s.db, func(tx storage.Tx) (*Counterparty, error) {
		return scope.Get(tx, s.tree, caller, entityID, id, getCounterparty, ErrCounterpartyNotFound)
	})
}

// UpdateCounterparty applies patch (only the fields it carries) to
// counterparty id and re-validates the whole counterparty, duplicates
// included; entityID scopes the lookup as in GetCounterparty. It returns corebank.ErrForbidden, corebank.ErrEntityNotFound,
// ErrCounterpartyNotFound or a validation error naming every bad field.
func (s *Service) UpdateCounterparty(ctx context.Context, caller corebank.Caller, entityID, id string, patch CounterpartyPatch) (*Counterparty, error) {
	if err := caller.CheckWrite(); err != nil {
		return nil, err
	}
	now := s.clock.Now()
	return storage.Update(ctx, s.db, func(tx storage.Tx) (*Counterparty, error) {
		old, err := scope.Get(tx, s.tree, caller, entityID, id, getCounterparty, ErrCounterpartyNotFound)
		if err != nil {
			return nil, err
		}
		c := *old
		c.Profile = cloneProfile(old.Profile)
		c.Meta = cloneMeta(old.Meta)
		nicknameWasDefault := old.Nickname == old.fullName()
		setStr(&c.Nickname, patch.Nickname)
		patch.Profile.apply(&c.Profile)
		if patch.Meta != nil {
			c.Meta = cloneMeta(patch.Meta)
		}
		c.normalize()
		if c.Nickname == "" || patch.Nickname == nil && nicknameWasDefault {
			// A defaulted nickname follows the name it defaulted to.
			c.Nickname = c.fullName()
		}
		if err := c.validate(); err != nil {
			return nil, err
		}
		c.Updated = corebank.Millis(now)
		if c.Status == CounterpartyActive {
			if err := releaseUnique(tx, old); err != nil {
				return nil, err
			}
			if err := claimUnique(tx, &c); err != nil {
				return nil, err
			}
		}
		return &c, putCounterparty(tx, &c)
	})
}

// DeactivateCounterparty sets counterparty id inactive (and Deleted to
// now); an inactive counterparty cannot receive transfers or new payment
// details and no longer counts for duplicates. Deactivating an inactive
// counterparty returns it unchanged. entityID scopes the lookup as in
// GetCounterparty. It returns corebank.ErrForbidden,
// corebank.ErrEntityNotFound or ErrCounterpartyNotFound.
func (s *Service) DeactivateCounterparty(ctx context.Context, caller corebank.Caller, entityID, id string) (*Counterparty, error) {
	if err := caller.CheckWrite(); err != nil {
		return nil, err
	}
	now := s.clock.Now()
	return storage.Update(ctx, s.db, func(tx storage.Tx) (*Counterparty, error) {
		c, err := scope.Get(tx, s.tree, caller, entityID, id, getCounterparty, ErrCounterpartyNotFound)
		if err != nil {
			return nil, err
		}
		if c.Status == CounterpartyInactive {
			return c, nil
		}
		if err := releaseUnique(tx, c); err != nil {
			return nil, err
		}
		if err := writeCounterpartyIndexes(tx, c, false); err != nil {
			return nil, err
		}
		c.Status, c.Deleted, c.Updated = CounterpartyInactive, corebank.Millis(now), corebank.Millis(now)
		if err := writeCounterpartyIndexes(tx, c, true); err != nil {
			return nil, err
		}
		return c, putCounterparty(tx, c)
	})
}

// ListCounterparties returns one page of the counterparties of f.EntityID
// (the caller's own entity when "") in creation order, filtered by f. It
// returns corebank.ErrEntityNotFound for an f.EntityID outside the
// caller's tree, or a validation error naming type, status, limit or
// cursor when one is malformed.
func (s *Service) ListCounterparties(ctx context.Context, caller corebank.Caller, f CounterpartyFilter, opts corebank.ListOptions) (*corebank.Page[Counterparty], error) {
	p := corebank.Problems{}
	if f.Type != "" && f.Type != CounterpartyIndividual && f.Type != CounterpartyBusiness {
		p.Add("type", "must be individual or business")
	}
	if f.Status != "" && f.Status != CounterpartyActive && f.Status != CounterpartyInactive {
		p.Add("status", "must be active or inactive")
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	index := "all"
	switch {
	case f.Type != "" && f.Status != "":
		index = "ts:" + f.Type + ":" + f.Status
	case f.Type != "":
		index = "t:" + f.Type
	case f.Status != "":
		index = "s:" + f.Status
	}
	return storage.View(ctx, s.db, func(tx storage.Tx) (*corebank.Page[Counterparty], error) {
		entity, err := s.entity(tx, caller, f.EntityID)
		if err != nil {
			return nil, err
		}
		return listPage(tx, storage.Prefix("cp", entity, index), opts, func(id string) (Counterparty, error) {
			c, err := getCounterparty(tx, id)
			if err != nil {
				return Counterparty{}, err
			}
			return *c, nil
		})
	})
}

func cloneMeta(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func cloneProfile(p Profile) Profile {
	out := p
	if p.Address != nil {
		a := *p.Address
		out.Address = &a
	}
	if p.RegisteredAddress != nil {
		a := *p.RegisteredAddress
		out.RegisteredAddress = &a
	}
	out.Identification = append([]Identification(nil), p.Identification...)
	if p.Phone != nil {
		ph := *p.Phone
		out.Phone = &ph
	}
	return out
}
