package coordinates

import "github.com/corebank/corebank"

// ValidateE164 reports whether s is a phone number in E.164 form: "+"
// followed by 8 to 15 digits, the first of which (the country code's) is
// not 0. No spaces, dashes or brackets are allowed.
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
	return nil
}
