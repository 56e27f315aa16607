package payments

import (
	"context"
	"errors"
	"strings"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/internal/scope"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/ledger/coordinates"
	"github.com/corebank/corebank/storage"
)

// PaymentDetail is where a counterparty receives money: bank coordinates,
// a mobile-money number, a wallet address or a corebank account (SPEC
// "Payment detail"). Rail fields a scheme does not use are empty and
// omitted from JSON. doc.go's corridor table lists the fields per scheme.
type PaymentDetail struct {
	ID                string            `json:"id"`
	EntityID          string            `json:"entity_id"`
	CounterpartyID    string            `json:"counterparty_id"`
	PaymentMethod     string            `json:"payment_method"`
	Currency          string            `json:"currency"`
	Country           string            `json:"country,omitempty"`
	Scheme            string            `json:"scheme"`
	AccountHolderName string            `json:"account_holder_name"`
	AccountNumber     string            `json:"account_number,omitempty"`
	IBAN              string            `json:"iban,omitempty"`
	SortCode          string            `json:"sort_code,omitempty"`
	RoutingNumber     string            `json:"routing_number,omitempty"`
	AccountType       string            `json:"account_type,omitempty"`
	InstitutionNumber string            `json:"institution_number,omitempty"`
	TransitNumber     string            `json:"transit_number,omitempty"`
	SwiftCode         string            `json:"swift_code,omitempty"`
	BankName          string            `json:"bank_name,omitempty"`
	BankAddress       *BankAddress      `json:"bank_address,omitempty"`
	PhoneNumber       string            `json:"phone_number,omitempty"`
	WalletAddress     string            `json:"wallet_address,omitempty"`
	BlockchainNetwork string            `json:"blockchain_network,omitempty"`
	Meta              map[string]string `json:"meta"`
	Created           int64             `json:"created"`
	Updated           int64             `json:"updated"`
}

// BankAddress is the address of the receiving bank.
type BankAddress struct {
	Line1      string `json:"line1"`
	City       string `json:"city"`
	State      string `json:"state,omitempty"`
	Country    string `json:"country"`
	PostalCode string `json:"postal_code,omitempty"`
}

// NewPaymentDetail is the body of POST /payment-details.
type NewPaymentDetail struct {
	// EntityID, when set, must lie in the caller's tree and the
	// counterparty in its tree; the detail belongs to the counterparty's
	// owner.
	EntityID          string            `json:"entity_id,omitempty"`
	CounterpartyID    string            `json:"counterparty_id"`
	PaymentMethod     string            `json:"payment_method"`
	Currency          string            `json:"currency"`
	Country           string            `json:"country,omitempty"`
	Scheme            string            `json:"scheme,omitempty"`
	AccountHolderName string            `json:"account_holder_name"`
	AccountNumber     string            `json:"account_number,omitempty"`
	IBAN              string            `json:"iban,omitempty"`
	SortCode          string            `json:"sort_code,omitempty"`
	RoutingNumber     string            `json:"routing_number,omitempty"`
	AccountType       string            `json:"account_type,omitempty"`
	InstitutionNumber string            `json:"institution_number,omitempty"`
	TransitNumber     string            `json:"transit_number,omitempty"`
	SwiftCode         string            `json:"swift_code,omitempty"`
	BankName          string            `json:"bank_name,omitempty"`
	BankAddress       *BankAddress      `json:"bank_address,omitempty"`
	PhoneNumber       string            `json:"phone_number,omitempty"`
	WalletAddress     string            `json:"wallet_address,omitempty"`
	BlockchainNetwork string            `json:"blockchain_network,omitempty"`
	Meta              map[string]string `json:"meta,omitempty"`
}

// PaymentDetailPatch is the body of PATCH /payment-details/{id}: nil
// fields stay as they are, an empty string clears an optional field, and
// the result is validated as a whole. When the patch changes
// payment_method, currency or scheme, rail fields it does not carry are
// cleared first, so that a detail never mixes two rails' coordinates.
// BankAddress and Meta, when non-nil, replace the stored object.
type PaymentDetailPatch struct {
	// EntityID is accepted so that request bodies decode; the entityID
	// argument of UpdatePaymentDetail scopes the lookup.
	EntityID          string            `json:"entity_id,omitempty"`
	CounterpartyID    *string           `json:"counterparty_id,omitempty"`
	PaymentMethod     *string           `json:"payment_method,omitempty"`
	Currency          *string           `json:"currency,omitempty"`
	Country           *string           `json:"country,omitempty"`
	Scheme            *string           `json:"scheme,omitempty"`
	AccountHolderName *string           `json:"account_holder_name,omitempty"`
	AccountNumber     *string           `json:"account_number,omitempty"`
	IBAN              *string           `json:"iban,omitempty"`
	SortCode          *string           `json:"sort_code,omitempty"`
	RoutingNumber     *string           `json:"routing_number,omitempty"`
	AccountType       *string           `json:"account_type,omitempty"`
	InstitutionNumber *string           `json:"institution_number,omitempty"`
	TransitNumber     *string           `json:"transit_number,omitempty"`
	SwiftCode         *string           `json:"swift_code,omitempty"`
	BankName          *string           `json:"bank_name,omitempty"`
	BankAddress       *BankAddress      `json:"bank_address,omitempty"`
	PhoneNumber       *string           `json:"phone_number,omitempty"`
	WalletAddress     *string           `json:"wallet_address,omitempty"`
	BlockchainNetwork *string           `json:"blockchain_network,omitempty"`
	Meta              map[string]string `json:"meta,omitempty"`
}

// Schemes. Mobile-money schemes are network codes (see MomoNetworks).
const (
	SchemeACH        = "ach"
	SchemeWire       = "wire"
	SchemeRTP        = "rtp"
	SchemeFPS        = "fps"
	SchemeCHAPS      = "chaps"
	SchemeSEPA       = "sepa"
	SchemeEFT        = "eft"
	SchemeUAEFTS     = "uaefts"
	SchemeSPEI       = "mx_spei"
	SchemeNIP        = "nip"
	SchemePesalink   = "pesalink"
	SchemeSWIFT      = "swift"
	SchemeStablecoin = "stablecoin"
	SchemeBook       = "book"
)

// domesticRails lists each currency's domestic bank schemes. swift is
// accepted for every fiat currency besides these; scheme defaults to the
// only domestic rail (or swift when there is none) and is required when
// there are several.
var domesticRails = map[string][]string{
	"USD": {SchemeACH, SchemeWire, SchemeRTP},
	"GBP": {SchemeFPS, SchemeCHAPS},
	"EUR": {SchemeSEPA},
	"CAD": {SchemeEFT},
	"AED": {SchemeUAEFTS},
	"MXN": {SchemeSPEI},
	"NGN": {SchemeNIP},
	"KES": {SchemePesalink},
}

// railCountry is the country each domestic scheme pays into.
var railCountry = map[string]string{
	SchemeACH: "US", SchemeWire: "US", SchemeRTP: "US", SchemeFPS: "GB", SchemeCHAPS: "GB",
	SchemeEFT: "CA", SchemeUAEFTS: "AE", SchemeSPEI: "MX", SchemeNIP: "NG", SchemePesalink: "KE",
}

// sepaCountries are the countries whose IBANs SEPA reaches.
var sepaCountries = map[string]bool{
	"AT": true, "BE": true, "BG": true, "HR": true, "CY": true, "CZ": true, "DK": true, "EE": true,
	"FI": true, "FR": true, "DE": true, "GR": true, "HU": true, "IS": true, "IE": true, "IT": true,
	"LV": true, "LI": true, "LT": true, "LU": true, "MT": true, "MC": true, "NL": true, "NO": true,
	"PL": true, "PT": true, "RO": true, "SM": true, "SK": true, "SI": true, "ES": true, "SE": true,
	"CH": true, "GB": true, "AD": true, "VA": true,
}

// momoNetworks maps each mobile-money scheme (network code) to the
// countries it is accepted in.
var momoNetworks = map[string][]string{
	"mpesa":   {"KE", "TZ"},
	"mtn":     {"GH", "UG", "NG", "ZA"},
	"airtel":  {"KE", "UG", "TZ", "NG"},
	"vodacom": {"TZ", "ZA"},
	"tigo":    {"TZ", "GH"},
}

// momoCountries gives each mobile-money country its currency and calling
// code.
var momoCountries = map[string]struct{ currency, callingCode string }{
	"KE": {"KES", "254"}, "TZ": {"TZS", "255"}, "UG": {"UGX", "256"},
	"GH": {"GHS", "233"}, "NG": {"NGN", "234"}, "ZA": {"ZAR", "27"},
}

// MomoNetworks returns the mobile-money network codes accepted as the
// scheme of a momo-transfer payment detail, with the countries of each.
func MomoNetworks() map[string][]string {
	out := make(map[string][]string, len(momoNetworks))
	for k, v := range momoNetworks {
		out[k] = append([]string(nil), v...)
	}
	return out
}

var accountTypes = []string{"checking", "savings"}

// railFields are the rail-specific fields, by JSON name, with accessors.
func (d *PaymentDetail) railFields() map[string]*string {
	return map[string]*string{
		"account_number": &d.AccountNumber, "iban": &d.IBAN, "sort_code": &d.SortCode,
		"routing_number": &d.RoutingNumber, "account_type": &d.AccountType,
		"institution_number": &d.InstitutionNumber, "transit_number": &d.TransitNumber,
		"swift_code": &d.SwiftCode, "bank_name": &d.BankName, "phone_number": &d.PhoneNumber,
		"wallet_address": &d.WalletAddress, "blockchain_network": &d.BlockchainNetwork,
	}
}

// schemeFields lists the rail fields each scheme uses (required or not).
func schemeFields(method, scheme string) []string {
	bank := []string{"bank_name"}
	switch method {
	case MomoTransfer:
		return []string{"phone_number"}
	case StablecoinTransfer:
		return []string{"wallet_address", "blockchain_network"}
	case BookTransfer:
		return []string{"account_number"}
	}
	switch scheme {
	case SchemeACH, SchemeWire, SchemeRTP:
		return append(bank, "routing_number", "account_number", "account_type", "swift_code")
	case SchemeFPS, SchemeCHAPS:
		return append(bank, "sort_code", "account_number", "swift_code")
	case SchemeEFT:
		return append(bank, "institution_number", "transit_number", "account_number", "swift_code")
	case SchemeSEPA, SchemeUAEFTS, SchemeSWIFT:
		return append(bank, "iban", "account_number", "swift_code")
	case SchemeSPEI, SchemeNIP, SchemePesalink:
		return append(bank, "account_number", "swift_code")
	}
	return bank
}

func digits(s string, min, max int) bool {
	if len(s) < min || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func alnum(s string, min, max int) bool {
	if len(s) < min || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z') {
			return false
		}
	}
	return true
}

func (d *PaymentDetail) normalize() {
	t := strings.TrimSpace
	d.PaymentMethod, d.Currency, d.Country, d.Scheme = t(d.PaymentMethod), t(d.Currency), t(d.Country), t(d.Scheme)
	d.AccountHolderName, d.CounterpartyID = t(d.AccountHolderName), t(d.CounterpartyID)
	for _, p := range d.railFields() {
		*p = t(*p)
	}
	if d.IBAN != "" {
		d.IBAN = coordinates.NormalizeIBAN(d.IBAN)
	}
	if d.SwiftCode != "" {
		d.SwiftCode = strings.ToUpper(d.SwiftCode)
	}
	if d.Meta == nil {
		d.Meta = map[string]string{}
	}
	if d.BankAddress != nil {
		b := *d.BankAddress
		b.Line1, b.City, b.State, b.Country, b.PostalCode = t(b.Line1), t(b.City), t(b.State), t(b.Country), t(b.PostalCode)
		d.BankAddress = &b
	}
}

// resolveScheme fills in a default scheme and checks the method, currency
// and scheme agree. It reports false when later rail checks cannot run.
func (d *PaymentDetail) resolveScheme(p corebank.Problems) bool {
	cur, ok := CurrencyInfo(d.Currency)
	if d.Currency == "" {
		p.Add("currency", "is required")
	} else if !ok {
		p.Add("currency", "is not a supported currency")
	}
	if d.PaymentMethod == "" {
		p.Add("payment_method", "is required")
		return false
	}
	if !validPaymentType(d.PaymentMethod) {
		p.Add("payment_method", "must be one of bank-transfer, momo-transfer, stablecoin-transfer, book-transfer")
		return false
	}
	if !ok {
		return false
	}
	switch d.PaymentMethod {
	case BankTransfer:
		if cur.Kind != ledger.KindFiat {
			p.Add("currency", "bank-transfer pays fiat currencies; use stablecoin-transfer for "+d.Currency)
			return false
		}
		dom := domesticRails[d.Currency]
		allowed := append(append([]string(nil), dom...), SchemeSWIFT)
		switch {
		case d.Scheme == "" && len(dom) > 1:
			p.Add("scheme", "is required for "+d.Currency+" bank transfers: one of "+strings.Join(allowed, ", "))
			return false
		case d.Scheme == "" && len(dom) == 1:
			d.Scheme = dom[0]
		case d.Scheme == "":
			d.Scheme = SchemeSWIFT
		case !oneOf(d.Scheme, allowed):
			p.Add("scheme", "must be one of "+strings.Join(allowed, ", ")+" for "+d.Currency+" bank transfers")
			return false
		}
	case MomoTransfer:
		if d.Scheme == "" {
			p.Add("scheme", "is required: the mobile-money network code (mpesa, mtn, airtel, vodacom, tigo)")
			return false
		}
		if _, ok := momoNetworks[d.Scheme]; !ok {
			p.Add("scheme", "must be a mobile-money network code: mpesa, mtn, airtel, vodacom, tigo")
			return false
		}
	case StablecoinTransfer:
		if cur.Kind != ledger.KindStablecoin {
			p.Add("currency", "stablecoin-transfer pays stablecoins (USC, UST, RLD)")
			return false
		}
		if d.Scheme == "" {
			d.Scheme = SchemeStablecoin
		} else if d.Scheme != SchemeStablecoin {
			p.Add("scheme", "must be stablecoin for stablecoin-transfer")
			return false
		}
	case BookTransfer:
		if !heldInLedger(d.Currency) {
			p.Add("currency", "book transfers move currencies corebank holds accounts in")
			return false
		}
		if d.Scheme == "" {
			d.Scheme = SchemeBook
		} else if d.Scheme != SchemeBook {
			p.Add("scheme", "must be book for book-transfer")
			return false
		}
	}
	return true
}

// checkIBAN validates an IBAN given in iban or in account_number and
// returns it normalised ("" when absent or invalid).
func (d *PaymentDetail) checkIBAN(p corebank.Problems) string {
	field, v := "iban", d.IBAN
	if v == "" && d.AccountNumber != "" {
		field, v = "account_number", coordinates.NormalizeIBAN(d.AccountNumber)
	}
	if v == "" {
		p.Add("iban", "is required (or give the IBAN in account_number)")
		return ""
	}
	if d.IBAN != "" && d.AccountNumber != "" && coordinates.NormalizeIBAN(d.AccountNumber) != d.IBAN {
		p.Add("account_number", "must equal iban when both are given")
	}
	if err := coordinates.ValidateIBAN(v); err != nil {
		p.Add(field, coordinates.Problem(err))
		return ""
	}
	if field == "account_number" {
		d.AccountNumber = v
	}
	if d.Country != "" && v[:2] != d.Country {
		p.Add(field, "is an IBAN of "+v[:2]+" but country is "+d.Country)
	}
	return v
}

func (d *PaymentDetail) checkBIC(p corebank.Problems, required bool) {
	if d.SwiftCode == "" {
		if required {
			p.Add("swift_code", "is required")
		}
		return
	}
	if err := coordinates.ValidateBIC(d.SwiftCode); err != nil {
		p.Add("swift_code", coordinates.Problem(err))
		return
	}
	if d.Country != "" && d.SwiftCode[4:6] != d.Country && d.SwiftCode[4:6] != "XK" {
		p.Add("swift_code", "is a BIC of "+d.SwiftCode[4:6]+" but country is "+d.Country)
	}
}

func check(p corebank.Problems, field, v string, fn func(string) error) {
	if v == "" {
		p.Add(field, "is required")
	} else if err := fn(v); err != nil {
		p.Add(field, coordinates.Problem(err))
	}
}

func checkDigits(p corebank.Problems, field, v string, min, max int) {
	switch {
	case v == "":
		p.Add(field, "is required")
	case !digits(v, min, max) && min == max:
		p.Add(field, "must be "+itoa(min)+" digits")
	case !digits(v, min, max):
		p.Add(field, "must be "+itoa(min)+" to "+itoa(max)+" digits")
	}
}

// validate checks d as a whole; book transfers also look up the receiving
// account in tx.
func (s *Service) validateDetail(tx storage.Tx, d *PaymentDetail) error {
	p := corebank.Problems{}
	corebank.CheckText(p, "account_holder_name", d.AccountHolderName, corebank.Line(1, 140))
	if d.CounterpartyID == "" {
		p.Add("counterparty_id", "is required")
	}
	corebank.CheckMeta(p, "meta", d.Meta, objectMeta)
	if !d.resolveScheme(p) {
		return p.Err()
	}
	// Fields another rail uses.
	used := schemeFields(d.PaymentMethod, d.Scheme)
	for name, ptr := range d.railFields() {
		if *ptr != "" && !oneOf(name, used) {
			p.Add(name, "is not used by "+d.PaymentMethod+" scheme "+d.Scheme)
		}
	}
	if d.BankAddress != nil {
		if d.PaymentMethod != BankTransfer {
			p.Add("bank_address", "is used only by bank-transfer")
		} else {
			corebank.CheckText(p, "bank_address.line1", d.BankAddress.Line1, corebank.Line(1, 255))
			corebank.CheckText(p, "bank_address.city", d.BankAddress.City, corebank.Line(1, 100))
			corebank.CheckText(p, "bank_address.state", d.BankAddress.State, corebank.Line(0, 100))
			corebank.CheckText(p, "bank_address.postal_code", d.BankAddress.PostalCode, corebank.Line(0, 20))
			checkCountry(p, "bank_address.country", d.BankAddress.Country)
		}
	}
	corebank.CheckText(p, "bank_name", d.BankName, corebank.Line(0, 140))
	// Country.
	if d.Country != "" && !coordinates.ValidCountry(d.Country) {
		p.Add("country", "must be an ISO 3166-1 alpha-2 country code in upper case")
	} else if d.Country == "" && (d.PaymentMethod == BankTransfer || d.PaymentMethod == MomoTransfer) {
		p.Add("country", "is required for "+d.PaymentMethod)
	} else if want := railCountry[d.Scheme]; want != "" && d.Country != want {
		p.Add("country", "must be "+want+" for scheme "+d.Scheme)
	}
	switch d.Scheme {
	case SchemeACH, SchemeWire, SchemeRTP:
		check(p, "routing_number", d.RoutingNumber, coordinates.ValidateABA)
		check(p, "account_number", d.AccountNumber, coordinates.ValidateUSAccountNumber)
		if d.AccountType == "" {
			p.Add("account_type", "is required")
		} else if !oneOf(d.AccountType, accountTypes) {
			p.Add("account_type", "must be checking or savings")
		}
		d.checkBIC(p, false)
	case SchemeFPS, SchemeCHAPS:
		checkDigits(p, "sort_code", d.SortCode, 6, 6)
		checkDigits(p, "account_number", d.AccountNumber, 8, 8)
		d.checkBIC(p, false)
	case SchemeEFT:
		checkDigits(p, "institution_number", d.InstitutionNumber, 3, 3)
		checkDigits(p, "transit_number", d.TransitNumber, 5, 5)
		check(p, "account_number", d.AccountNumber, coordinates.ValidateCAAccountNumber)
		d.checkBIC(p, false)
	case SchemeSEPA:
		if iban := d.checkIBAN(p); iban != "" && !sepaCountries[iban[:2]] {
			p.Add("iban", "is not in a SEPA country")
		}
		if d.Country != "" && !sepaCountries[d.Country] {
			p.Add("country", "is not a SEPA country")
		}
		d.checkBIC(p, false)
	case SchemeUAEFTS:
		d.checkIBAN(p)
		d.checkBIC(p, false)
	case SchemeSPEI:
		check(p, "account_number", d.AccountNumber, coordinates.ValidateCLABE)
		d.checkBIC(p, false)
	case SchemeNIP:
		check(p, "account_number", d.AccountNumber, coordinates.ValidateNUBAN)
		corebank.CheckText(p, "bank_name", d.BankName, corebank.Line(1, 140))
		d.checkBIC(p, false)
	case SchemePesalink:
		checkDigits(p, "account_number", d.AccountNumber, 6, 20)
		corebank.CheckText(p, "bank_name", d.BankName, corebank.Line(1, 140))
		d.checkBIC(p, false)
	case SchemeSWIFT:
		d.checkBIC(p, true)
		if _, usesIBAN := coordinates.IBANLength(d.Country); usesIBAN && d.Country != "" {
			d.checkIBAN(p)
		} else if d.IBAN != "" {
			p.Add("iban", "is not used for "+d.Country+"; give account_number")
		} else if d.AccountNumber == "" {
			p.Add("account_number", "is required")
		} else if !alnum(d.AccountNumber, 1, 34) {
			p.Add("account_number", "must be 1 to 34 letters and digits")
		}
	case SchemeStablecoin:
		chain, ok := coordinates.ChainForNetwork(d.BlockchainNetwork)
		switch {
		case d.BlockchainNetwork == "":
			p.Add("blockchain_network", "is required")
		case !ok:
			p.Add("blockchain_network", "must be one of ETH_MAINNET, BASE_MAINNET, POLYGON_MAINNET, SOLANA_MAINNET")
		}
		if d.WalletAddress == "" {
			p.Add("wallet_address", "is required")
		} else if ok {
			if err := coordinates.ValidateWalletAddress(chain, d.WalletAddress); err != nil {
				p.Add("wallet_address", coordinates.Problem(err)+" for "+d.BlockchainNetwork)
			}
		}
	case SchemeBook:
		if d.AccountNumber == "" {
			p.Add("account_number", "is required: the service_ban of the receiving corebank account")
		} else if acct, err := s.led.AccountByServiceBANTx(tx, d.AccountNumber); err != nil {
			if corebank.KindOf(err) != corebank.KindNotFound {
				return err
			}
			p.Add("account_number", "no corebank account has this service_ban")
		} else if acct.Deleted != 0 {
			p.Add("account_number", "the account with this service_ban is deleted")
		} else if acct.Currency != d.Currency {
			p.Add("currency", "must be "+acct.Currency+", the currency of the receiving account")
		}
	default: // mobile money
		if nets := momoNetworks[d.Scheme]; d.Country != "" && !oneOf(d.Country, nets) {
			p.Add("country", d.Scheme+" is accepted in "+strings.Join(nets, ", "))
		} else if mc, ok := momoCountries[d.Country]; ok {
			if d.Currency != mc.currency {
				p.Add("currency", "must be "+mc.currency+" for mobile money in "+d.Country)
			}
			if d.PhoneNumber != "" && coordinates.ValidateE164(d.PhoneNumber) == nil && !strings.HasPrefix(d.PhoneNumber, "+"+mc.callingCode) {
				p.Add("phone_number", "must be a "+d.Country+" number (+"+mc.callingCode+")")
			}
		}
		check(p, "phone_number", d.PhoneNumber, coordinates.ValidateE164)
	}
	return p.Err()
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// checkDetailCounterparty checks the detail's counterparty belongs to the
// detail's entity itself and is active.
func checkDetailCounterparty(tx storage.Tx, d *PaymentDetail) error {
	if d.CounterpartyID == "" {
		return nil
	}
	// A nil tree: the detail's entity itself must own the counterparty.
	c, err := scope.Get(tx, nil, corebank.As(d.EntityID), "", d.CounterpartyID, getCounterparty, ErrCounterpartyNotFound)
	if errors.Is(err, ErrCounterpartyNotFound) {
		return ErrCounterpartyNotFound.With("counterparty " + d.CounterpartyID + " not found")
	}
	if err != nil {
		return err
	}
	if c.Status != CounterpartyActive {
		return corebank.InvalidField("counterparty_id", "the counterparty is inactive")
	}
	return nil
}

// CreatePaymentDetail validates and stores a payment detail of the
// counterparty in.CounterpartyID, for the counterparty's owner, which must
// lie in the tree of in.EntityID (the caller's own entity when ""). It
// returns corebank.ErrForbidden for a read-only caller,
// corebank.ErrEntityNotFound for an entity_id outside the caller's tree
// (checked first), ErrCounterpartyNotFound for a counterparty missing or
// outside that tree alike, and a validation error naming every bad field
// (an inactive counterparty is reported on counterparty_id).
func (s *Service) CreatePaymentDetail(ctx context.Context, caller corebank.Caller, in NewPaymentDetail) (*PaymentDetail, error) {
	if err := caller.CheckWrite(); err != nil {
		return nil, err
	}
	now := s.clock.Now()
	id := s.ids.New(now)
	return storage.Update(ctx, s.db, func(tx storage.Tx) (*PaymentDetail, error) {
		// The owner of the counterparty, which must lie in the tree of
		// entity_id; with none, entity_id (validation then reports
		// counterparty_id).
		entity, err := actsFor(s, tx, caller, in.EntityID, in.CounterpartyID, getCounterparty, ErrCounterpartyNotFound)
		if err != nil {
			return nil, err
		}
		d := &PaymentDetail{
			ID: id, EntityID: entity, CounterpartyID: in.CounterpartyID,
			PaymentMethod: in.PaymentMethod, Currency: in.Currency, Country: in.Country, Scheme: in.Scheme,
			AccountHolderName: in.AccountHolderName, AccountNumber: in.AccountNumber, IBAN: in.IBAN,
			SortCode: in.SortCode, RoutingNumber: in.RoutingNumber, AccountType: in.AccountType,
			InstitutionNumber: in.InstitutionNumber, TransitNumber: in.TransitNumber, SwiftCode: in.SwiftCode,
			BankName: in.BankName, BankAddress: in.BankAddress, PhoneNumber: in.PhoneNumber,
			WalletAddress: in.WalletAddress, BlockchainNetwork: in.BlockchainNetwork, Meta: cloneMeta(in.Meta),
			Created: corebank.Millis(now), Updated: corebank.Millis(now),
		}
		d.normalize()
		if err := s.validateDetail(tx, d); err != nil {
			return nil, err
		}
		if err := checkDetailCounterparty(tx, d); err != nil {
			return nil, err
		}
		if err := setIndex(tx, true, d.ID, "pd", d.CounterpartyID); err != nil {
			return nil, err
		}
		return d, putDetail(tx, d)
	})
}

// Owner returns the entity whose payment detail it is (scope.Owned).
func (d *PaymentDetail) Owner() string { return d.EntityID }

// getDetail reads payment detail id, or ErrPaymentDetailNotFound.
func getDetail(tx storage.Tx, id string) (*PaymentDetail, error) {
	return getRecord[PaymentDetail](tx, bucketDetails, id, ErrPaymentDetailNotFound)
}

// GetPaymentDetail returns payment detail id when it lies in the tree of
// entityID (the caller's own entity when ""). It returns
// corebank.ErrEntityNotFound for an entityID outside the caller's tree and
// ErrPaymentDetailNotFound for a missing detail or one outside the
// entity's tree alike.
func (s *Service) GetPaymentDetail(ctx context.Context, caller corebank.Caller, entityID, id string) (*PaymentDetail, error) {
	return storage.View(ctx, s.db, func(tx storage.Tx) (*PaymentDetail, error) {
		return scope.Get(tx, s.tree, caller, entityID, id, getDetail, ErrPaymentDetailNotFound)
	})
}

// UpdatePaymentDetail applies patch (see PaymentDetailPatch) to payment
// detail id and re-validates the whole detail; entityID scopes the lookup
// as in GetPaymentDetail, and the detail stays its owner's. It returns corebank.ErrForbidden, corebank.ErrEntityNotFound,
// ErrPaymentDetailNotFound, ErrCounterpartyNotFound when the patch moves it
// to a counterparty that is not its owner's, or a validation error naming
// every bad field.
func (s *Service) UpdatePaymentDetail(ctx context.Context, caller corebank.Caller, entityID, id string, patch PaymentDetailPatch) (*PaymentDetail, error) {
	if err := caller.CheckWrite(); err != nil {
		return nil, err
	}
	now := s.clock.Now()
	return storage.Update(ctx, s.db, func(tx storage.Tx) (*PaymentDetail, error) {
		old, err := scope.Get(tx, s.tree, caller, entityID, id, getDetail, ErrPaymentDetailNotFound)
		if err != nil {
			return nil, err
		}
		d := *old
		d.Meta = cloneMeta(old.Meta)
		changes := func(p *string, cur string) bool { return p != nil && strings.TrimSpace(*p) != cur }
		if changes(patch.PaymentMethod, d.PaymentMethod) || changes(patch.Currency, d.Currency) ||
			changes(patch.Scheme, d.Scheme) {
			for _, f := range d.railFields() {
				*f = ""
			}
			d.BankAddress = nil
			if patch.Scheme == nil {
				d.Scheme = "" // let the new method or currency pick its default
			}
		}
		setStr(&d.CounterpartyID, patch.CounterpartyID)
		setStr(&d.PaymentMethod, patch.PaymentMethod)
		setStr(&d.Currency, patch.Currency)
		setStr(&d.Country, patch.Country)
		setStr(&d.Scheme, patch.Scheme)
		setStr(&d.AccountHolderName, patch.AccountHolderName)
		setStr(&d.AccountNumber, patch.AccountNumber)
		setStr(&d.IBAN, patch.IBAN)
		setStr(&d.SortCode, patch.SortCode)
		setStr(&d.RoutingNumber, patch.RoutingNumber)
		setStr(&d.AccountType, patch.AccountType)
		setStr(&d.InstitutionNumber, patch.InstitutionNumber)
		setStr(&d.TransitNumber, patch.TransitNumber)
		setStr(&d.SwiftCode, patch.SwiftCode)
		setStr(&d.BankName, patch.BankName)
		setStr(&d.PhoneNumber, patch.PhoneNumber)
		setStr(&d.WalletAddress, patch.WalletAddress)
		setStr(&d.BlockchainNetwork, patch.BlockchainNetwork)
		if patch.BankAddress != nil {
			b := *patch.BankAddress
			d.BankAddress = &b
		}
		if patch.Meta != nil {
			d.Meta = cloneMeta(patch.Meta)
		}
		d.normalize()
		if err := s.validateDetail(tx, &d); err != nil {
			return nil, err
		}
		if d.CounterpartyID != old.CounterpartyID {
			if err := checkDetailCounterparty(tx, &d); err != nil {
				return nil, err
			}
			if err := setIndex(tx, false, d.ID, "pd", old.CounterpartyID); err != nil {
				return nil, err
			}
			if err := setIndex(tx, true, d.ID, "pd", d.CounterpartyID); err != nil {
				return nil, err
			}
		}
		d.Updated = corebank.Millis(now)
		return &d, putDetail(tx, &d)
	})
}

// PaymentDetailFilter selects the payment details ListPaymentDetails
// returns.
type PaymentDetailFilter struct {
	// EntityID is the entity whose tree the counterparty must lie in; ""
	// is the caller's own.
	EntityID string
	// CounterpartyID is the counterparty whose details are listed.
	CounterpartyID string
}

// ListPaymentDetails returns one page of the payment details of
// f.CounterpartyID in creation order, with the counterparty's owner. The
// counterparty must lie in the tree of f.EntityID (the caller's own entity
// when ""). It returns corebank.ErrEntityNotFound for an f.EntityID
// outside the caller's tree, ErrCounterpartyNotFound for a counterparty
// missing or outside that tree alike, or a validation error on limit or
// cursor.
func (s *Service) ListPaymentDetails(ctx context.Context, caller corebank.Caller, f PaymentDetailFilter, opts corebank.ListOptions) (EntityPage[PaymentDetail], error) {
	return storage.View(ctx, s.db, func(tx storage.Tx) (EntityPage[PaymentDetail], error) {
		c, err := scope.Get(tx, s.tree, caller, f.EntityID, f.CounterpartyID, getCounterparty, ErrCounterpartyNotFound)
		if err != nil {
			return EntityPage[PaymentDetail]{}, err
		}
		page, err := listPage(tx, storage.Prefix("pd", c.ID), opts, func(id string) (PaymentDetail, error) {
			d, err := getDetail(tx, id)
			if err != nil {
				return PaymentDetail{}, err
			}
			return *d, nil
		})
		return EntityPage[PaymentDetail]{Page: page, EntityID: c.EntityID}, err
	})
}
