package entities

// The request bodies of entity create and update, field for field as SPEC
// "Entities and onboarding" lists them. httpapi decodes them with unknown
// fields rejected.

// NewIndividual is the body of POST /individual-entities.
type NewIndividual struct {
	Name               string               `json:"name"`
	Person             *PersonInput         `json:"person"`
	Address            *AddressInput        `json:"address"`
	Identification     *IdentificationInput `json:"identification"`
	Business           *SoleTraderInput     `json:"business"`
	Meta               map[string]string    `json:"meta"`
	ParentEntity       string               `json:"parent_entity"`
	ParentRelationship string               `json:"parent_relationship"`
}

// PersonInput is a person as create bodies give it. BVN and NIN are
// accepted for nationality NG only (11 digits), SSN for US only (9
// digits); they are stored sealed and shown masked.
type PersonInput struct {
	FirstName   string `json:"first_name"`
	LastName    string `json:"last_name"`
	MiddleName  string `json:"middle_name"`
	DateOfBirth string `json:"date_of_birth"`
	Email       string `json:"email"`
	Nationality string `json:"nationality"`
	Gender      string `json:"gender"`
	Phonenumber string `json:"phonenumber"`
	IsPEP       bool   `json:"is_pep"`
	BVN         string `json:"bvn"`
	NIN         string `json:"nin"`
	SSN         string `json:"ssn"`
}

// OfficerPersonInput is a business officer's person, who carries their own
// identification and address.
type OfficerPersonInput struct {
	PersonInput
	Identification *IdentificationInput `json:"identification"`
	Address        *AddressInput        `json:"address"`
}

// AddressInput is a postal address.
type AddressInput struct {
	Line1       string            `json:"line_1"`
	Line2       string            `json:"line_2"`
	Line3       string            `json:"line_3"`
	City        string            `json:"city"`
	State       string            `json:"state"`
	PostalCode  string            `json:"postal_code"`
	CountryCode string            `json:"country_code"`
	Meta        map[string]string `json:"meta"`
}

// IdentificationInput is identity evidence; either part may be given.
type IdentificationInput struct {
	Document       *DocumentInput       `json:"document"`
	ProofOfAddress *ProofOfAddressInput `json:"proof_of_address"`
}

// DocumentInput describes an identity document. Number is stored sealed
// and shown masked to its last 4 characters.
type DocumentInput struct {
	Type             string             `json:"type"`
	Number           string             `json:"number"`
	IssueDate        string             `json:"issue_date"`
	ExpiryDate       string             `json:"expiry_date"`
	IssuingCountry   string             `json:"issuing_country"`
	IssuingAuthority string             `json:"issuing_authority"`
	DocumentID       string             `json:"document_id"`
	TypeSpecific     *TypeSpecificInput `json:"type_specific"`
}

// TypeSpecificInput carries a document's subtype.
type TypeSpecificInput struct {
	IDSubtype string `json:"id_subtype"`
}

// ProofOfAddressInput describes a proof-of-address document.
type ProofOfAddressInput struct {
	Type       string `json:"type"`
	DocumentID string `json:"document_id"`
}

// SoleTraderInput is an individual's business context.
type SoleTraderInput struct {
	Name              string `json:"name"`
	Description       string `json:"description"`
	CategoryCode      string `json:"category_code"`
	SubCategoryCode   string `json:"sub_category_code"`
	Website           string `json:"website"`
	LivenessReportURL string `json:"liveness_report_url"`
}

// NewBusiness is the body of POST /business-entities. Only name,
// business.legal_name and business.type are required at creation; Submit
// requires the rest of the details (see Requirement).
type NewBusiness struct {
	Name               string            `json:"name"`
	Business           *BusinessInput    `json:"business"`
	Address            *AddressInput     `json:"address"`
	OperatingAddress   *AddressInput     `json:"operating_address"`
	BusinessOfficers   []OfficerInput    `json:"business_officers"`
	Meta               BusinessMetaInput `json:"meta"`
	ParentEntity       string            `json:"parent_entity"`
	ParentRelationship string            `json:"parent_relationship"`
}

// BusinessInput is a business's details.
type BusinessInput struct {
	LegalName          string                  `json:"legal_name"`
	TradeName          string                  `json:"trade_name"`
	Industry           string                  `json:"industry"`
	Email              string                  `json:"email"`
	Website            string                  `json:"website"`
	Type               string                  `json:"type"`
	Description        string                  `json:"description"`
	RegistrationNumber string                  `json:"registration_number"`
	Phonenumber        string                  `json:"phonenumber"`
	IncorporationMeta  *IncorporationMetaInput `json:"incorporation_meta"`
}

// IncorporationMetaInput says when and where a business was incorporated.
type IncorporationMetaInput struct {
	Year    int    `json:"year"`
	Month   int    `json:"month"`
	Country string `json:"country"`
	State   string `json:"state"`
}

// OfficerInput is one business officer. OwnershipPercentage is 0-100 and
// the officers' total at most 100.
type OfficerInput struct {
	JobTitle            string              `json:"job_title"`
	IsControlPerson     bool                `json:"is_control_person"`
	IsBeneficialOwner   bool                `json:"is_beneficial_owner"`
	OwnershipPercentage float64             `json:"ownership_percentage"`
	Person              *OfficerPersonInput `json:"person"`
}

// IndividualPatch is the body of PATCH /individual-entities/{id}; absent
// fields keep their values. An identification part given replaces the
// stored one whole (its number must be given again).
type IndividualPatch struct {
	Name           *string              `json:"name"`
	Person         *PersonPatch         `json:"person"`
	Address        *AddressPatch        `json:"address"`
	Business       *SoleTraderPatch     `json:"business"`
	Identification *IdentificationInput `json:"identification"`
	Meta           map[string]string    `json:"meta"`
}

// PersonPatch changes a person's fields. Identity numbers cannot be
// changed.
type PersonPatch struct {
	FirstName   *string `json:"first_name"`
	LastName    *string `json:"last_name"`
	MiddleName  *string `json:"middle_name"`
	Email       *string `json:"email"`
	DateOfBirth *string `json:"date_of_birth"`
	Nationality *string `json:"nationality"`
	Gender      *string `json:"gender"`
	Phonenumber *string `json:"phonenumber"`
	IsPEP       *bool   `json:"is_pep"`
}

// AddressPatch changes an address's fields; Meta, when given, replaces the
// stored meta. Patching an entity without an address must give every
// required address field.
type AddressPatch struct {
	Line1       *string           `json:"line_1"`
	Line2       *string           `json:"line_2"`
	Line3       *string           `json:"line_3"`
	City        *string           `json:"city"`
	State       *string           `json:"state"`
	PostalCode  *string           `json:"postal_code"`
	CountryCode *string           `json:"country_code"`
	Meta        map[string]string `json:"meta"`
}

// SoleTraderPatch changes an individual's business context.
type SoleTraderPatch struct {
	Name              *string `json:"name"`
	Description       *string `json:"description"`
	CategoryCode      *string `json:"category_code"`
	SubCategoryCode   *string `json:"sub_category_code"`
	Website           *string `json:"website"`
	LivenessReportURL *string `json:"liveness_report_url"`
}

// BusinessPatch is the body of PATCH /business-entities/{id}. Meta, when
// given, replaces the stored business meta; BusinessOfficers are added to
// the existing officers.
type BusinessPatch struct {
	Name             *string              `json:"name"`
	Business         *BusinessFieldsPatch `json:"business"`
	Address          *AddressPatch        `json:"address"`
	OperatingAddress *AddressPatch        `json:"operating_address"`
	BusinessOfficers []OfficerInput       `json:"business_officers"`
	Meta             *BusinessMetaInput   `json:"meta"`
}

// BusinessFieldsPatch changes a business's details; IncorporationMeta,
// when given, replaces the stored one.
type BusinessFieldsPatch struct {
	LegalName          *string                 `json:"legal_name"`
	TradeName          *string                 `json:"trade_name"`
	Industry           *string                 `json:"industry"`
	Email              *string                 `json:"email"`
	Website            *string                 `json:"website"`
	Type               *string                 `json:"type"`
	Description        *string                 `json:"description"`
	RegistrationNumber *string                 `json:"registration_number"`
	Phonenumber        *string                 `json:"phonenumber"`
	IncorporationMeta  *IncorporationMetaInput `json:"incorporation_meta"`
}

// Changes lists, per part, the JSON names of the fields an update changed.
type Changes struct {
	EntityFields           []string `json:"entity_fields"`
	PersonFields           []string `json:"person_fields"`
	AddressFields          []string `json:"address_fields"`
	IdentificationFields   []string `json:"identification_fields"`
	BusinessFields         []string `json:"business_fields,omitempty"`
	OperatingAddressFields []string `json:"operating_address_fields,omitempty"`
	BusinessOfficersAdded  []string `json:"business_officers_added,omitempty"`
}

// UpdateResult is an update's answer: the composite and changes_applied.
type UpdateResult struct {
	*Composite
	ChangesApplied Changes `json:"changes_applied"`
}
