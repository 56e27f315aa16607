package coordinates

import (
	"fmt"
	"io"
	"strings"

	"github.com/corebank/corebank"
)

// ibanLengths is the total IBAN length per country from the SWIFT IBAN
// registry. Only countries whose length is long established are listed.
var ibanLengths = map[string]int{
	"AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16,
	"BG": 22, "BH": 22, "BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28,
	"CZ": 24, "DE": 22, "DK": 18, "DO": 28, "EE": 20, "EG": 29, "ES": 24,
	"FI": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23, "GL": 18,
	"GR": 27, "GT": 28, "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23,
	"IS": 26, "IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LC": 32,
	"LI": 21, "LT": 20, "LU": 20, "LV": 21, "LY": 25, "MC": 27, "MD": 24,
	"ME": 22, "MK": 19, "MR": 27, "MT": 31, "MU": 30, "NL": 18, "NO": 15,
	"PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22,
	"SA": 24, "SC": 31, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "ST": 25,
	"SV": 28, "TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24,
	"XK": 20,
}

// bbanFormats describes the BBAN (the part after the check digits) of the
// countries GenerateIBAN supports and whose structure ValidateIBAN checks,
// as runs of a count and a class: n digits, a upper-case letters, c upper-case
// letters or digits. Countries with a national check digit inside the BBAN
// (FR, ES, IT, BE, ...) are left out so that generated IBANs stay genuine.
var bbanFormats = map[string]string{
	"AE": "3n16n",  // bank code, account number
	"AT": "5n11n",  // bank code, account number
	"DE": "8n10n",  // Bankleitzahl, account number
	"GB": "4a6n8n", // bank (BIC prefix), sort code, account number
	"IE": "4a6n8n", // bank (BIC prefix), sort code, account number
	"LU": "3n13c",  // bank code, account number
	"NL": "4a10n",  // bank (BIC prefix), account number
	"CH": "5n12c",  // clearing number, account number
	"LT": "5n11n",  // bank code, account number
}

// IBANLength returns the IBAN length for a country and whether the country
// is in this package's IBAN table.
func IBANLength(country string) (int, bool) {
	n, ok := ibanLengths[country]
	return n, ok
}

// NormalizeIBAN returns s with spaces removed and letters upper-cased: the
// electronic form in which IBANs are stored and compared.
func NormalizeIBAN(s string) string {
	return strings.ToUpper(strings.Join(strings.Fields(s), ""))
}

// FormatIBAN returns the print form of an IBAN: the normalized IBAN in
// groups of four characters separated by spaces.
func FormatIBAN(s string) string {
	s = NormalizeIBAN(s)
	var b strings.Builder
	for i := 0; i < len(s); i += 4 {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(s[i:min(i+4, len(s))])
	}
	return b.String()
}

// ValidateIBAN reports whether s is a valid IBAN for any country in the
// table: after NormalizeIBAN (so spaces and lower case are tolerated) it
// must start with a country that uses IBANs and two check digits, have that
// country's length, contain only letters and digits, match the country's
// BBAN structure where this package knows it, and satisfy ISO 7064 MOD
// 97-10 (the rearranged number modulo 97 is 1).
func ValidateIBAN(s string) error {
	s = NormalizeIBAN(s)
	if s == "" {
		return invalid("is required")
	}
	if len(s) < 4 {
		return invalid("is too short")
	}
	if !isUpperAlnum(s) {
		return invalid("must contain only letters and digits")
	}
	country := s[:2]
	if !isUpperLetters(country) {
		return invalid("must start with a two-letter country code")
	}
	want, ok := ibanLengths[country]
	if !ok {
		return invalid(fmt.Sprintf("country %s does not use IBANs", country))
	}
	if !corebank.IsDigits(s[2:4]) {
		return invalid("check digits (characters 3-4) must be digits")
	}
	if len(s) != want {
		return invalid(fmt.Sprintf("must be %d characters for %s, not %d", want, country, len(s)))
	}
	if f, ok := bbanFormats[country]; ok && !matchFormat(s[4:], f) {
		return invalid(fmt.Sprintf("account part does not match the %s format", country))
	}
	if mod97(s[4:]+s[:4]) != 1 {
		return invalid("check digits do not match")
	}
	return nil
}

// GenerateIBAN returns a random valid IBAN for country, which must be one
// of the countries with a known BBAN structure and no national check digit
// (AE, AT, CH, DE, GB, IE, LT, LU, NL).
// bankCode, when not "", fixes the BBAN's leading characters (for example a
// German Bankleitzahl or the "CORE" of an Irish BBAN) and must fit the
// format; the rest is random.
func GenerateIBAN(r io.Reader, country, bankCode string) (string, error) {
	f, ok := bbanFormats[country]
	if !ok {
		return "", invalid(fmt.Sprintf("cannot generate IBANs for %q", country))
	}
	var b strings.Builder
	for _, run := range parseFormat(f) {
		var part string
		var err error
		switch run.class {
		case 'n':
			part, err = randomDigits(r, run.n)
		case 'a':
			part, err = randomLetters(r, run.n)
		default: // 'c': use digits so account numbers look conventional
			part, err = randomDigits(r, run.n)
		}
		if err != nil {
			return "", err
		}
		b.WriteString(part)
	}
	bban := b.String()
	if bankCode != "" {
		if len(bankCode) > len(bban) || !matchFormat(bankCode+bban[len(bankCode):], f) {
			return "", invalid(fmt.Sprintf("bank code %q does not fit the %s format", bankCode, country))
		}
		bban = bankCode + bban[len(bankCode):]
	}
	check := 98 - mod97(bban+country+"00")
	return fmt.Sprintf("%s%02d%s", country, check, bban), nil
}

type formatRun struct {
	n     int
	class byte
}

func parseFormat(f string) []formatRun {
	var runs []formatRun
	n := 0
	for i := 0; i < len(f); i++ {
		c := f[i]
		if c >= '0' && c <= '9' {
			n = n*10 + int(c-'0')
			continue
		}
		runs = append(runs, formatRun{n: n, class: c})
		n = 0
	}
	return runs
}

func matchFormat(s, f string) bool {
	i := 0
	for _, run := range parseFormat(f) {
		if i+run.n > len(s) {
			return false
		}
		part := s[i : i+run.n]
		switch run.class {
		case 'n':
			if !corebank.IsDigits(part) {
				return false
			}
		case 'a':
			if !isUpperLetters(part) {
				return false
			}
		default:
			if !isUpperAlnum(part) {
				return false
			}
		}
		i += run.n
	}
	return i == len(s)
}

// mod97 returns the ISO 7064 MOD 97-10 remainder of s, an upper-case
// alphanumeric string in which letters count as 10 (A) to 35 (Z).
func mod97(s string) int {
	r := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			v := int(c-'A') + 10
			r = (r*100 + v) % 97
		} else {
			r = (r*10 + int(c-'0')) % 97
		}
	}
	return r
}

// BIC / SWIFT codes.

// ValidateBIC reports whether s is a BIC (SWIFT code) in ISO 9362 form:
// 8 or 11 upper-case characters, a four-letter institution code, an ISO
// 3166-1 country code (or XK, which SWIFT uses for Kosovo), a two-character
// location code and an optional three-character branch code.
func ValidateBIC(s string) error {
	switch {
	case s == "":
		return invalid("is required")
	case len(s) != 8 && len(s) != 11:
		return invalid("must be 8 or 11 characters")
	case !isUpperAlnum(s):
		return invalid("must contain only upper-case letters and digits")
	case !isUpperLetters(s[:4]):
		return invalid("institution code (characters 1-4) must be letters")
	case !ValidCountry(s[4:6]) && s[4:6] != "XK":
		return invalid(fmt.Sprintf("country code %q (characters 5-6) is not an ISO 3166-1 country", s[4:6]))
	}
	return nil
}
