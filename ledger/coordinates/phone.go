package coordinates

import (
	"github.com/nyaruka/phonenumbers"

	"github.com/corebank/corebank"
)

// ValidateE164 reports whether s is a phone number in E.164 form ("+",
// the country code, then the national number, digits only: no spaces,
// dashes or brackets) that the country's numbering plan allocates. The
// plan comes from github.com/nyaruka/phonenumbers, Google's
// libphonenumber metadata: a table written here would be wrong for some
// country within a year. +999123456789 (no such country code),
// +15555555555 and +10000000000 (no such North American area or
// exchange) are refused.
func ValidateE164(s string) error {
	switch {
	case s == "":
		return invalid("is required")
	case s[0] != '+':
		return invalid("must start with + and the country code (E.164)")
	case !corebank.IsDigits(s[1:]):
		return invalid("must be + followed by digits only (E.164)")
	case len(s)-1 < 8 || len(s)-1 > 15:
		return invalid("must have 8 to 15 digits after + (E.164)")
	case s[1] == '0':
		return invalid("country code cannot start with 0 (E.164)")
	}
	n, err := phonenumbers.Parse(s, "")
	if err != nil {
		return invalid("has no country code in use (E.164)")
	}
	if !phonenumbers.IsValidNumber(n) {
		return invalid("is not a number in its country's numbering plan")
	}
	return nil
}
