package entities

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/corebank/corebank"
)

// Entity types.
const (
	TypeIndividual = "individual"
	TypeBusiness   = "business"
)

// Entity statuses. A new entity is StatusIncomplete; Submit moves it to
// StatusPending; Review decides the rest (see Review for the allowed moves).
const (
	StatusIncomplete = "incomplete"
	StatusPending    = "pending"
	StatusApproved   = "approved"
	StatusRejected   = "rejected"
	StatusSuspended  = "suspended"
)

// Risk levels. Every entity starts at RiskMedium; the levels are ordered
// low < medium < high.
const (
	RiskLow    = "low"
	RiskMedium = "medium"
	RiskHigh   = "high"
)

// Creation contexts: ContextAPI for entities made through an API key (and
// the bootstrap root), ContextUser for ones a dashboard user made.
const (
	ContextAPI  = "api"
	ContextUser = "user"
)

// Entity is an onboarded party (SPEC "Entity"). Optional references that do
// not apply (parent_entity of a root, person_id of a business, business_id
// of an individual that is not a sole trader, user_id until a dashboard
// user is linked) are "" in Go and null in JSON.
type Entity struct {
	ID                 string     `json:"id"`
	Type               string     `json:"type"`
	Status             string     `json:"status"`
	Name               string     `json:"name"`
	IsRoot             bool       `json:"is_root"`
	ParentEntity       OptionalID `json:"parent_entity"`
	ParentRelationship string     `json:"parent_relationship,omitempty"`
	PersonID           OptionalID `json:"person_id"`
	BusinessID         OptionalID `json:"business_id"`
	UserID             OptionalID `json:"user_id"`
	CreationContext    string     `json:"creation_context"`
	RiskLevel          string     `json:"risk_level"`
	Meta               Meta       `json:"meta"`
	Created            int64      `json:"created"`
	Updated            int64      `json:"updated"`
}

// OptionalID is a reference that may not apply: "" when absent, which
// encodes as JSON null. A stored "" and a stored null both read as "", so
// records written before it read back as null too.
type OptionalID string

// MarshalJSON encodes id as a JSON string, or null when it is "".
func (id OptionalID) MarshalJSON() ([]byte, error) {
	if id == "" {
		return []byte("null"), nil
	}
	return json.Marshal(string(id))
}

// Meta is an entity's platform key-values: strings, as SPEC says of meta.
// Records written before values were checked may hold an array of strings
// under a key: it reads as its items joined by ", " (so ["a","b"] reads as
// "a, b" and [] as ""), and is stored that way at the next write. Any other
// non-string value reads as its JSON text. A business's meta is
// BusinessMetaValues.
type Meta map[string]string

// UnmarshalJSON reads a stored meta object, old array values included.
// (Request bodies decode into map[string]string, which refuses arrays.)
func (m *Meta) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	if raw == nil {
		*m = nil
		return nil
	}
	out := make(Meta, len(raw))
	for k, v := range raw {
		var s string
		var items []string
		switch {
		case json.Unmarshal(v, &s) == nil:
			out[k] = s
		case json.Unmarshal(v, &items) == nil:
			out[k] = strings.Join(items, ", ")
		default:
			out[k] = string(v)
		}
	}
	*m = out
	return nil
}

// Person is an individual, either an individual entity's subject or a
// business officer (SPEC composite "person"). Identity numbers are not
// here: they appear masked under Identification.IdentityNumbers.
type Person struct {
	ID          string `json:"id"`
	FirstName   string `json:"first_name"`
	LastName    string `json:"last_name"`
	MiddleName  string `json:"middle_name"`
	DateOfBirth string `json:"date_of_birth"`
	Email       string `json:"email"`
	Nationality string `json:"nationality"`
	// Gender is stored lower case: "m", "f" or "other".
	Gender string `json:"gender"`
	IsPEP  bool   `json:"is_pep"`
	Status string `json:"status"`
	// Phonenumber is stored in E.164 form, "+" then digits.
	Phonenumber string `json:"phonenumber"`
	Created     int64  `json:"created"`
	Updated     int64  `json:"updated"`
}

// Address is a postal address owned by a person or a business.
type Address struct {
	ID          string            `json:"id"`
	Line1       string            `json:"line_1"`
	Line2       string            `json:"line_2"`
	Line3       string            `json:"line_3"`
	City        string            `json:"city"`
	State       string            `json:"state"`
	PostalCode  string            `json:"postal_code"`
	CountryCode string            `json:"country_code"`
	OwnerID     string            `json:"owner_id"`
	OwnerType   string            `json:"owner_type"`
	Meta        map[string]string `json:"meta,omitempty"`
	Created     int64             `json:"created"`
	Updated     int64             `json:"updated"`
}

// Identification is a person's identity evidence. Every number in it is
// masked to its last four characters; the full values are stored sealed
// and never leave the package.
type Identification struct {
	ID                 string            `json:"id"`
	PersonID           string            `json:"person_id"`
	VerificationStatus string            `json:"verification_status"`
	Document           *IdentityDocument `json:"document"`
	ProofOfAddress     *ProofOfAddress   `json:"proof_of_address"`
	IdentityNumbers    []IdentityNumber  `json:"identity_numbers"`
	Created            int64             `json:"created"`
	Updated            int64             `json:"updated"`
}

// IdentityDocument describes an identity document; Number is masked.
type IdentityDocument struct {
	Type               string        `json:"type"`
	Number             string        `json:"number"`
	IssueDate          string        `json:"issue_date"`
	ExpiryDate         string        `json:"expiry_date"`
	IssuingCountry     string        `json:"issuing_country"`
	IssuingAuthority   string        `json:"issuing_authority"`
	DocumentID         string        `json:"document_id"`
	TypeSpecific       *TypeSpecific `json:"type_specific,omitempty"`
	VerificationStatus string        `json:"verification_status"`
}

// TypeSpecific carries a document's subtype: "BVN", "SSN" or "NIN".
type TypeSpecific struct {
	IDSubtype string `json:"id_subtype"`
}

// ProofOfAddress describes a proof-of-address document.
type ProofOfAddress struct {
	Type               string `json:"type"`
	DocumentID         string `json:"document_id"`
	VerificationStatus string `json:"verification_status"`
}

// IdentityNumber is a national identity number ("bvn", "nin" or "ssn");
// Value is masked to its last four characters.
type IdentityNumber struct {
	Type               string `json:"type"`
	Value              string `json:"value"`
	VerificationStatus string `json:"verification_status"`
}

// Business is a business entity's details, or a sole trader's business
// context on an individual entity.
type Business struct {
	ID                 string             `json:"id"`
	LegalName          string             `json:"legal_name"`
	TradeName          string             `json:"trade_name"`
	Email              string             `json:"email"`
	Phonenumber        string             `json:"phonenumber"`
	RegistrationNumber string             `json:"registration_number"`
	Industry           string             `json:"industry"`
	Website            string             `json:"website"`
	Type               string             `json:"type"`
	Description        string             `json:"description"`
	IncorporationMeta  *IncorporationMeta `json:"incorporation_meta"`
	CategoryCode       string             `json:"category_code,omitempty"`
	SubCategoryCode    string             `json:"sub_category_code,omitempty"`
	LivenessReportURL  string             `json:"liveness_report_url,omitempty"`
	Created            int64              `json:"created"`
	Updated            int64              `json:"updated"`
}

// IncorporationMeta says when and where a business was incorporated.
type IncorporationMeta struct {
	Year    int    `json:"year,omitempty"`
	Month   int    `json:"month,omitempty"`
	Country string `json:"country,omitempty"`
	State   string `json:"state,omitempty"`
}

// BusinessMeta holds a business's platform key-values (tax_id,
// annual_turnover, sales_channels, ...).
type BusinessMeta struct {
	ID         string             `json:"id"`
	BusinessID string             `json:"business_id"`
	Meta       BusinessMetaValues `json:"meta"`
	Created    int64              `json:"created"`
	Updated    int64              `json:"updated"`
}

// SalesChannels is the one business meta key whose value SPEC makes an
// array of strings.
const SalesChannels = "sales_channels"

// BusinessMetaValues is a business's meta as SPEC lists it: strings, except
// sales_channels, an array of strings. In JSON it is one object. Stored
// records follow Meta's rules for the strings; a sales_channels stored as a
// string reads as a one-item array.
type BusinessMetaValues struct {
	Strings       Meta
	SalesChannels []string // nil when not set
}

// MarshalJSON writes one object, keys in order.
func (m BusinessMetaValues) MarshalJSON() ([]byte, error) {
	out := make(map[string]any, len(m.Strings)+1)
	for k, v := range m.Strings {
		out[k] = v
	}
	if m.SalesChannels != nil {
		out[SalesChannels] = m.SalesChannels
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads a stored business meta object.
func (m *BusinessMetaValues) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*m = BusinessMetaValues{}
	if sc, ok := raw[SalesChannels]; ok {
		delete(raw, SalesChannels)
		var one string
		if json.Unmarshal(sc, &m.SalesChannels) != nil && json.Unmarshal(sc, &one) == nil {
			m.SalesChannels = []string{one}
		}
	}
	rest, err := json.Marshal(raw)
	if err != nil {
		return err
	}
	return json.Unmarshal(rest, &m.Strings)
}

// BusinessMetaInput is business meta as a request sends it: the same
// values as BusinessMetaValues, whose JSON form refuses, by key, any value
// of the wrong kind (a string where sales_channels wants an array, an array
// where any other key wants a string) instead of reading it leniently as a
// stored record does.
type BusinessMetaInput BusinessMetaValues

// UnmarshalJSON reads a request's business meta; a wrong kind of value is a
// validation error naming "meta.<key>" (business meta is always the member
// meta of its request), as httpapi reports a field's own UnmarshalJSON
// errors unchanged.
func (m *BusinessMetaInput) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*m = BusinessMetaInput{}
	p := corebank.Problems{}
	for k, v := range raw {
		if k == SalesChannels {
			if json.Unmarshal(v, &m.SalesChannels) != nil {
				p.Add(salesChannelsProblem(v))
			}
			continue
		}
		var s string
		if json.Unmarshal(v, &s) != nil {
			p.Add("meta."+k, "must be a string, not "+jsonKind(v))
			continue
		}
		if m.Strings == nil {
			m.Strings = Meta{}
		}
		m.Strings[k] = s
	}
	return p.Err()
}

// jsonKind names the kind of a JSON value for a message.
// salesChannelsProblem names what is wrong with a sales_channels value
// that is not an array of strings: the value, or in an array the first
// item that is not a string, by its JSON path as any decoding error is.
func salesChannelsProblem(v json.RawMessage) (field, problem string) {
	var items []json.RawMessage
	if json.Unmarshal(v, &items) != nil {
		return "meta." + SalesChannels, "must be an array of strings, not " + jsonKind(v)
	}
	for i, it := range items {
		var s string
		if json.Unmarshal(it, &s) != nil {
			return "meta." + SalesChannels + "." + strconv.Itoa(i), "must be a string, not " + jsonKind(it)
		}
	}
	return "meta." + SalesChannels, "must be an array of strings"
}

func jsonKind(v json.RawMessage) string {
	switch t := strings.TrimSpace(string(v)); {
	case t == "":
		return "empty"
	case t[0] == '[':
		return "an array"
	case t[0] == '{':
		return "an object"
	case t[0] == '"':
		return "a string"
	case t == "true" || t == "false":
		return "a boolean"
	case t == "null":
		return "null"
	}
	return "a number"
}

// equal reports whether m and o hold the same values.
func (m BusinessMetaValues) equal(o BusinessMetaValues) bool {
	return maps.Equal(m.Strings, o.Strings) && slices.Equal(m.SalesChannels, o.SalesChannels) &&
		(m.SalesChannels == nil) == (o.SalesChannels == nil)
}

// BusinessOfficer is a person's role in a business. Person, Address and
// Identification repeat the officer's details (numbers masked).
type BusinessOfficer struct {
	ID                  string          `json:"id"`
	PersonID            string          `json:"person_id"`
	JobTitle            string          `json:"job_title"`
	IsControlPerson     bool            `json:"is_control_person"`
	IsBeneficialOwner   bool            `json:"is_beneficial_owner"`
	OwnershipPercentage float64         `json:"ownership_percentage"`
	BusinessID          string          `json:"business_id"`
	Person              *Person         `json:"person,omitempty"`
	Address             *Address        `json:"address,omitempty"`
	Identification      *Identification `json:"identification,omitempty"`
	Created             int64           `json:"created"`
	Updated             int64           `json:"updated"`
}

// Composite is an entity with everything onboarding attached to it, the
// form create, update and GET /entities/{id} return and entity events carry.
// Person, Address and Identification are null for a business; the business
// parts are null for an individual (Business is set for a sole trader), and
// business_officers is an array, possibly empty, for a business.
type Composite struct {
	Entity           *Entity           `json:"entity"`
	Person           *Person           `json:"person"`
	Address          *Address          `json:"address"`
	Identification   *Identification   `json:"identification"`
	Business         *Business         `json:"business"`
	OperatingAddress *Address          `json:"operating_address"`
	BusinessMeta     *BusinessMeta     `json:"business_meta"`
	BusinessOfficers []BusinessOfficer `json:"business_officers"`
}
