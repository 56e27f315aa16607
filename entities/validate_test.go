package entities_test

import (
	"github.com/corebank/corebank"
	"strings"
	"testing"

	"github.com/corebank/corebank/entities"
)

func TestCreateIndividualValidation(t *testing.T) {
	e := newEnv(t)
	root := e.root.EntityID
	str := strings.Repeat
	cases := []struct {
		rule   string
		mutate func(*entities.NewIndividual)
		field  string
	}{
		{"NameRequired", func(n *entities.NewIndividual) { n.Name = "" }, "name"},
		{"NameMax255", func(n *entities.NewIndividual) { n.Name = str("x", 256) }, "name"},
		{"NameNotBlank", func(n *entities.NewIndividual) { n.Name = "   " }, "name"},
		{"PersonRequired", func(n *entities.NewIndividual) { n.Person = nil }, "person"},
		{"FirstNameRequired", func(n *entities.NewIndividual) { n.Person.FirstName = "" }, "person.first_name"},
		{"FirstNameMax100", func(n *entities.NewIndividual) { n.Person.FirstName = str("a", 101) }, "person.first_name"},
		{"LastNameRequired", func(n *entities.NewIndividual) { n.Person.LastName = "" }, "person.last_name"},
		{"LastNameMax100", func(n *entities.NewIndividual) { n.Person.LastName = str("a", 101) }, "person.last_name"},
		{"MiddleNameMax100", func(n *entities.NewIndividual) { n.Person.MiddleName = str("a", 101) }, "person.middle_name"},
		{"DateOfBirthRequired", func(n *entities.NewIndividual) { n.Person.DateOfBirth = "" }, "person.date_of_birth"},
		{"DateOfBirthFormat", func(n *entities.NewIndividual) { n.Person.DateOfBirth = "17/05/1990" }, "person.date_of_birth"},
		{"DateOfBirthRealDate", func(n *entities.NewIndividual) { n.Person.DateOfBirth = "1990-02-30" }, "person.date_of_birth"},
		{"DateOfBirthNoLeapDay", func(n *entities.NewIndividual) { n.Person.DateOfBirth = "1991-02-29" }, "person.date_of_birth"},
		{"DateOfBirthUnpadded", func(n *entities.NewIndividual) { n.Person.DateOfBirth = "1990-5-17" }, "person.date_of_birth"},
		{"DateOfBirthInPast", func(n *entities.NewIndividual) { n.Person.DateOfBirth = "2026-11-22" }, "person.date_of_birth"},
		{"DateOfBirthNotFuture", func(n *entities.NewIndividual) { n.Person.DateOfBirth = "2030-01-01" }, "person.date_of_birth"},
		{"DateOfBirthWithin150Years", func(n *entities.NewIndividual) { n.Person.DateOfBirth = "1800-01-01" }, "person.date_of_birth"},
		{"EmailRequired", func(n *entities.NewIndividual) { n.Person.Email = "" }, "person.email"},
		{"EmailSyntax", func(n *entities.NewIndividual) { n.Person.Email = "ada-at-example.com" }, "person.email"},
		{"EmailNoDisplayName", func(n *entities.NewIndividual) { n.Person.Email = "Ada <ada@example.com>" }, "person.email"},
		{"EmailDomainHasDot", func(n *entities.NewIndividual) { n.Person.Email = "ada@localhost" }, "person.email"},
		{"NationalityRequired", func(n *entities.NewIndividual) { n.Person.Nationality = "" }, "person.nationality"},
		{"NationalityAlpha2", func(n *entities.NewIndividual) { n.Person.Nationality = "NGA" }, "person.nationality"},
		{"NationalityAssigned", func(n *entities.NewIndividual) { n.Person.Nationality = "XX" }, "person.nationality"},
		{"NationalityUpperCase", func(n *entities.NewIndividual) { n.Person.Nationality = "ng" }, "person.nationality"},
		{"GenderRequired", func(n *entities.NewIndividual) { n.Person.Gender = "" }, "person.gender"},
		{"GenderEnum", func(n *entities.NewIndividual) { n.Person.Gender = "x" }, "person.gender"},
		{"PhoneRequired", func(n *entities.NewIndividual) { n.Person.Phonenumber = "" }, "person.phonenumber"},
		{"PhoneMin10", func(n *entities.NewIndividual) { n.Person.Phonenumber = "+23480123" }, "person.phonenumber"},
		{"PhoneMax14", func(n *entities.NewIndividual) { n.Person.Phonenumber = "+2348012345678901" }, "person.phonenumber"},
		{"PhoneDigitsOnly", func(n *entities.NewIndividual) { n.Person.Phonenumber = "+234-801-2345" }, "person.phonenumber"},
		{"PhoneCountryCodeNotZero", func(n *entities.NewIndividual) { n.Person.Phonenumber = "08012345678" }, "person.phonenumber"},
		{"PhoneNoSuchCountryCode", func(n *entities.NewIndividual) { n.Person.Phonenumber = "+999123456789" }, "person.phonenumber"},
		{"PhoneNotInNumberingPlan", func(n *entities.NewIndividual) { n.Person.Phonenumber = "+15555555555" }, "person.phonenumber"},
		{"PhoneAllZeros", func(n *entities.NewIndividual) { n.Person.Phonenumber = "+10000000000" }, "person.phonenumber"},
		{"BVNOnlyForNG", func(n *entities.NewIndividual) { n.Person.Nationality = "GH"; n.Person.NIN = "" }, "person.bvn"},
		{"NINOnlyForNG", func(n *entities.NewIndividual) { n.Person.Nationality = "GH"; n.Person.BVN = "" }, "person.nin"},
		{"BVN11Digits", func(n *entities.NewIndividual) { n.Person.BVN = "2221234567" }, "person.bvn"},
		{"NIN11Digits", func(n *entities.NewIndividual) { n.Person.NIN = "7001234567X" }, "person.nin"},
		{"SSNOnlyForUS", func(n *entities.NewIndividual) { n.Person.SSN = "123456789" }, "person.ssn"},
		{"SSN9Digits", func(n *entities.NewIndividual) {
			n.Person.Nationality, n.Person.BVN, n.Person.NIN, n.Person.SSN = "US", "", "", "123-45-678"
		}, "person.ssn"},
		{"AddressLine1Required", func(n *entities.NewIndividual) { n.Address.Line1 = "" }, "address.line_1"},
		{"AddressLine1Max255", func(n *entities.NewIndividual) { n.Address.Line1 = str("a", 256) }, "address.line_1"},
		{"AddressLine2Max255", func(n *entities.NewIndividual) { n.Address.Line2 = str("a", 256) }, "address.line_2"},
		{"AddressLine3Max255", func(n *entities.NewIndividual) { n.Address.Line3 = str("a", 256) }, "address.line_3"},
		{"AddressCityRequired", func(n *entities.NewIndividual) { n.Address.City = "" }, "address.city"},
		{"AddressCityMax100", func(n *entities.NewIndividual) { n.Address.City = str("a", 101) }, "address.city"},
		{"AddressStateRequired", func(n *entities.NewIndividual) { n.Address.State = "" }, "address.state"},
		{"AddressStateMax100", func(n *entities.NewIndividual) { n.Address.State = str("a", 101) }, "address.state"},
		{"AddressPostalCodeRequired", func(n *entities.NewIndividual) { n.Address.PostalCode = "" }, "address.postal_code"},
		{"AddressPostalCodeMax20", func(n *entities.NewIndividual) { n.Address.PostalCode = str("1", 21) }, "address.postal_code"},
		{"AddressCountryRequired", func(n *entities.NewIndividual) { n.Address.CountryCode = "" }, "address.country_code"},
		{"AddressCountryAlpha2", func(n *entities.NewIndividual) { n.Address.CountryCode = "UK" }, "address.country_code"},
		{"AddressMetaValueMax255", func(n *entities.NewIndividual) { n.Address.Meta = map[string]string{"k": str("a", 256)} }, "address.meta.k"},
		{"DocumentTypeRequired", func(n *entities.NewIndividual) { n.Identification.Document.Type = "" }, "identification.document.type"},
		{"DocumentTypeEnum", func(n *entities.NewIndividual) { n.Identification.Document.Type = "library_card" }, "identification.document.type"},
		{"DocumentNumberRequired", func(n *entities.NewIndividual) { n.Identification.Document.Number = "" }, "identification.document.number"},
		{"DocumentNumberCharset", func(n *entities.NewIndividual) { n.Identification.Document.Number = "A1<script>" }, "identification.document.number"},
		{"DocumentNumberMax50", func(n *entities.NewIndividual) { n.Identification.Document.Number = str("1", 51) }, "identification.document.number"},
		{"DocumentIssueDateRealDate", func(n *entities.NewIndividual) { n.Identification.Document.IssueDate = "2020-13-01" }, "identification.document.issue_date"},
		{"DocumentIssueDateNotFuture", func(n *entities.NewIndividual) { n.Identification.Document.IssueDate = "2027-01-01" }, "identification.document.issue_date"},
		{"DocumentExpiryAfterIssue", func(n *entities.NewIndividual) { n.Identification.Document.ExpiryDate = "2019-01-01" }, "identification.document.expiry_date"},
		{"DocumentNotExpired", func(n *entities.NewIndividual) {
			n.Identification.Document.IssueDate, n.Identification.Document.ExpiryDate = "2010-01-01", "2020-01-01"
		}, "identification.document.expiry_date"},
		{"DocumentExpiryRealDate", func(n *entities.NewIndividual) { n.Identification.Document.ExpiryDate = "2030-02-31" }, "identification.document.expiry_date"},
		{"DocumentIssuingCountryAlpha2", func(n *entities.NewIndividual) { n.Identification.Document.IssuingCountry = "Nigeria" }, "identification.document.issuing_country"},
		{"DocumentIssuingAuthorityMax100", func(n *entities.NewIndividual) { n.Identification.Document.IssuingAuthority = str("a", 101) }, "identification.document.issuing_authority"},
		{"DocumentIDSubtypeEnum", func(n *entities.NewIndividual) {
			n.Identification.Document.TypeSpecific = &entities.TypeSpecificInput{IDSubtype: "TIN"}
		}, "identification.document.type_specific.id_subtype"},
		{"DocumentIDSubtypeSSNOnlyForUS", func(n *entities.NewIndividual) {
			n.Identification.Document.TypeSpecific = &entities.TypeSpecificInput{IDSubtype: "SSN"}
		}, "identification.document.type_specific.id_subtype"},
		{"DocumentIDSubtypeBVNNumber11Digits", func(n *entities.NewIndividual) {
			n.Identification.Document.TypeSpecific = &entities.TypeSpecificInput{IDSubtype: "BVN"}
		}, "identification.document.number"},
		{"ProofOfAddressTypeRequired", func(n *entities.NewIndividual) { n.Identification.ProofOfAddress.Type = "" }, "identification.proof_of_address.type"},
		{"ProofOfAddressTypeEnum", func(n *entities.NewIndividual) { n.Identification.ProofOfAddress.Type = "selfie" }, "identification.proof_of_address.type"},
		{"SoleTraderNameRequired", func(n *entities.NewIndividual) {
			n.Business = &entities.SoleTraderInput{Description: "d", CategoryCode: "c"}
		}, "business.name"},
		{"SoleTraderNameMax100", func(n *entities.NewIndividual) {
			n.Business = &entities.SoleTraderInput{Name: str("a", 101), Description: "d", CategoryCode: "c"}
		}, "business.name"},
		{"SoleTraderDescriptionRequired", func(n *entities.NewIndividual) {
			n.Business = &entities.SoleTraderInput{Name: "n", CategoryCode: "c"}
		}, "business.description"},
		{"SoleTraderDescriptionMax200", func(n *entities.NewIndividual) {
			n.Business = &entities.SoleTraderInput{Name: "n", Description: str("d", 201), CategoryCode: "c"}
		}, "business.description"},
		{"SoleTraderCategoryCodeRequired", func(n *entities.NewIndividual) {
			n.Business = &entities.SoleTraderInput{Name: "n", Description: "d"}
		}, "business.category_code"},
		{"SoleTraderWebsiteURL", func(n *entities.NewIndividual) {
			n.Business = &entities.SoleTraderInput{Name: "n", Description: "d", CategoryCode: "c", Website: "acme"}
		}, "business.website"},
		{"SoleTraderLivenessURL", func(n *entities.NewIndividual) {
			n.Business = &entities.SoleTraderInput{Name: "n", Description: "d", CategoryCode: "c", LivenessReportURL: "ftp://x"}
		}, "business.liveness_report_url"},
		{"MetaValuesAreText", func(n *entities.NewIndividual) { n.Meta = map[string]string{"annual_turnover": "5\x00"} }, "meta.annual_turnover"},
		{"MetaValueMax500", func(n *entities.NewIndividual) { n.Meta = map[string]string{"tax_id": str("a", 501)} }, "meta.tax_id"},
		{"ParentRelationshipMax100", func(n *entities.NewIndividual) { n.ParentRelationship = str("a", 101) }, "parent_relationship"},
	}
	for _, c := range cases {
		t.Run(c.rule, func(t *testing.T) {
			in := individual()
			c.mutate(&in)
			_, err := e.s.CreateIndividual(ctx, corebank.As(root), in)
			f := fieldsOf(t, err)
			if f[c.field] == "" || len(f) != 1 {
				t.Fatalf("fields = %v, want only %q", f, c.field)
			}
		})
	}
	t.Run("EveryFieldAtOnce", func(t *testing.T) {
		in := individual()
		in.Name, in.Person.Email, in.Address.CountryCode = "", "bad", "ZZ"
		_, err := e.s.CreateIndividual(ctx, corebank.As(root), in)
		f := fieldsOf(t, err)
		for _, k := range []string{"name", "person.email", "address.country_code"} {
			if f[k] == "" {
				t.Errorf("fields %v lack %q", f, k)
			}
		}
	})
	t.Run("Accepted", func(t *testing.T) {
		for name, mutate := range map[string]func(*entities.NewIndividual){
			"GenderUpperM":     func(n *entities.NewIndividual) { n.Person.Gender = "M" },
			"GenderOther":      func(n *entities.NewIndividual) { n.Person.Gender = "Other" },
			"PhoneWithoutPlus": func(n *entities.NewIndividual) { n.Person.Phonenumber = "2348012345678" },
			"PhoneTenChars":    func(n *entities.NewIndividual) { n.Person.Phonenumber = "+376712345" }, // Andorra
			"LeapDay":          func(n *entities.NewIndividual) { n.Person.DateOfBirth = "1992-02-29" },
			"NoAddress":        func(n *entities.NewIndividual) { n.Address = nil },
			"NoIdentification": func(n *entities.NewIndividual) { n.Identification = nil },
			"USWithSSN": func(n *entities.NewIndividual) {
				n.Person.Nationality, n.Person.BVN, n.Person.NIN, n.Person.SSN = "US", "", "", "123456789"
			},
			"BVNSubtype": func(n *entities.NewIndividual) {
				n.Identification.Document.Number, n.Identification.Document.TypeSpecific = "22212345678", &entities.TypeSpecificInput{IDSubtype: "BVN"}
			},
			"SoleTrader": func(n *entities.NewIndividual) {
				n.Business = &entities.SoleTraderInput{Name: "Ada's", Description: "Tailor", CategoryCode: "5651", Website: "https://ada.example"}
			},
			"MetaCustomerTypes": func(n *entities.NewIndividual) { n.Meta = map[string]string{"customer_types": "b2b"} },
		} {
			t.Run(name, func(t *testing.T) {
				in := individual()
				mutate(&in)
				if _, err := e.s.CreateIndividual(ctx, corebank.As(root), in); err != nil {
					t.Fatal(err)
				}
			})
		}
	})
}

func TestCreateBusinessValidation(t *testing.T) {
	e := newEnv(t)
	root := e.root.EntityID
	officer := func(pct float64) entities.OfficerInput {
		return entities.OfficerInput{JobTitle: "Director", OwnershipPercentage: pct,
			Person: &entities.OfficerPersonInput{PersonInput: entities.PersonInput{FirstName: "Kim", LastName: "Ray",
				DateOfBirth: "1975-01-01", Email: "kim@acme.example", Nationality: "GB"}}}
	}
	cases := []struct {
		rule   string
		mutate func(*entities.NewBusiness)
		field  string
	}{
		{"NameRequired", func(n *entities.NewBusiness) { n.Name = "" }, "name"},
		{"BusinessRequired", func(n *entities.NewBusiness) { n.Business = nil }, "business"},
		{"LegalNameRequired", func(n *entities.NewBusiness) { n.Business.LegalName = "" }, "business.legal_name"},
		{"LegalNameMax255", func(n *entities.NewBusiness) { n.Business.LegalName = strings.Repeat("a", 256) }, "business.legal_name"},
		{"TypeRequired", func(n *entities.NewBusiness) { n.Business.Type = "" }, "business.type"},
		{"TypeEnum", func(n *entities.NewBusiness) { n.Business.Type = "cooperative" }, "business.type"},
		{"BusinessEmailSyntax", func(n *entities.NewBusiness) { n.Business.Email = "ops@" }, "business.email"},
		{"BusinessWebsiteURL", func(n *entities.NewBusiness) { n.Business.Website = "javascript:alert(1)" }, "business.website"},
		{"BusinessPhone", func(n *entities.NewBusiness) { n.Business.Phonenumber = "12345" }, "business.phonenumber"},
		{"RegistrationNumberMax100", func(n *entities.NewBusiness) { n.Business.RegistrationNumber = strings.Repeat("1", 101) }, "business.registration_number"},
		{"IncorporationYearRange", func(n *entities.NewBusiness) { n.Business.IncorporationMeta.Year = 2027 }, "business.incorporation_meta.year"},
		{"IncorporationMonthRange", func(n *entities.NewBusiness) { n.Business.IncorporationMeta.Month = 13 }, "business.incorporation_meta.month"},
		{"IncorporationMonthNotFuture", func(n *entities.NewBusiness) {
			n.Business.IncorporationMeta.Year, n.Business.IncorporationMeta.Month = 2026, 12
		}, "business.incorporation_meta.month"},
		{"IncorporationCountryAlpha2", func(n *entities.NewBusiness) { n.Business.IncorporationMeta.Country = "USA" }, "business.incorporation_meta.country"},
		{"AddressCountryAlpha2", func(n *entities.NewBusiness) { n.Address.CountryCode = "XK" }, "address.country_code"},
		{"OperatingAddressCityRequired", func(n *entities.NewBusiness) {
			n.OperatingAddress = &entities.AddressInput{Line1: "x", State: "s", PostalCode: "1", CountryCode: "US"}
		}, "operating_address.city"},
		{"OfficerJobTitleRequired", func(n *entities.NewBusiness) { n.BusinessOfficers[0].JobTitle = "" }, "business_officers.0.job_title"},
		{"OfficerPersonRequired", func(n *entities.NewBusiness) { n.BusinessOfficers[0].Person = nil }, "business_officers.0.person"},
		{"OfficerEmailSyntax", func(n *entities.NewBusiness) {
			n.BusinessOfficers = append(n.BusinessOfficers, officer(10))
			n.BusinessOfficers[1].Person.Email = "nope"
		}, "business_officers.1.person.email"},
		{"OfficerFirstNameRequired", func(n *entities.NewBusiness) { n.BusinessOfficers[0].Person.FirstName = "" }, "business_officers.0.person.first_name"},
		{"OfficerDateOfBirthInPast", func(n *entities.NewBusiness) { n.BusinessOfficers[0].Person.DateOfBirth = "2099-01-01" }, "business_officers.0.person.date_of_birth"},
		{"OfficerNationalityAlpha2", func(n *entities.NewBusiness) { n.BusinessOfficers[0].Person.Nationality = "us" }, "business_officers.0.person.nationality"},
		{"OfficerGenderEnum", func(n *entities.NewBusiness) { n.BusinessOfficers[0].Person.Gender = "q" }, "business_officers.0.person.gender"},
		{"OfficerSSNOnlyForUS", func(n *entities.NewBusiness) { n.BusinessOfficers[0].Person.Nationality = "CA" }, "business_officers.0.person.ssn"},
		{"OfficerBVNOnlyForNG", func(n *entities.NewBusiness) { n.BusinessOfficers[0].Person.BVN = "12345678901" }, "business_officers.0.person.bvn"},
		{"OfficerAddressCountry", func(n *entities.NewBusiness) {
			n.BusinessOfficers[0].Person.Address = &entities.AddressInput{Line1: "x", City: "c", State: "s", PostalCode: "1", CountryCode: "ZZ"}
		}, "business_officers.0.person.address.country_code"},
		{"OfficerIdentificationDocumentType", func(n *entities.NewBusiness) {
			n.BusinessOfficers[0].Person.Identification = &entities.IdentificationInput{Document: &entities.DocumentInput{Type: "x", Number: "1"}}
		}, "business_officers.0.person.identification.document.type"},
		{"OwnershipPercentageMin0", func(n *entities.NewBusiness) { n.BusinessOfficers[0].OwnershipPercentage = -1 }, "business_officers.0.ownership_percentage"},
		{"OwnershipPercentageMax100", func(n *entities.NewBusiness) { n.BusinessOfficers[0].OwnershipPercentage = 100.5 }, "business_officers.0.ownership_percentage"},
		{"OwnershipTotalMax100", func(n *entities.NewBusiness) {
			n.BusinessOfficers = append(n.BusinessOfficers, officer(40.01))
		}, "business_officers"},
		{"MetaSalesChannelsText", func(n *entities.NewBusiness) { n.Meta.SalesChannels = []string{"web", "shop\u202e"} }, "meta.sales_channels.1"},
		{"MetaTaxIDText", func(n *entities.NewBusiness) { n.Meta.Strings["tax_id"] = "12\x00" }, "meta.tax_id"},
	}
	for _, c := range cases {
		t.Run(c.rule, func(t *testing.T) {
			in := business()
			c.mutate(&in)
			_, err := e.s.CreateBusiness(ctx, corebank.As(root), in)
			f := fieldsOf(t, err)
			if f[c.field] == "" || len(f) != 1 {
				t.Fatalf("fields = %v, want only %q", f, c.field)
			}
		})
	}
	t.Run("OwnershipTotalExactly100", func(t *testing.T) {
		in := business()
		in.BusinessOfficers[0].OwnershipPercentage = 33.33
		in.BusinessOfficers = append(in.BusinessOfficers, officer(33.33), officer(33.34))
		if _, err := e.s.CreateBusiness(ctx, corebank.As(root), in); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("MinimalBusiness", func(t *testing.T) {
		c, err := e.s.CreateBusiness(ctx, corebank.As(root), entities.NewBusiness{Name: "Tiny", Business: &entities.BusinessInput{LegalName: "Tiny Co", Type: "partnership"}})
		if err != nil {
			t.Fatal(err)
		}
		if c.BusinessOfficers == nil || len(c.BusinessOfficers) != 0 || c.Entity.Status != "incomplete" {
			t.Fatalf("composite = %s", toJSON(t, c))
		}
	})
}
