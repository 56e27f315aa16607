package entities

import (
	"fmt"
	"net/mail"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/ledger/coordinates"
)

// validator collects every problem of one request, each under its dotted
// JSON path.
type validator struct {
	p   corebank.Problems
	now time.Time
}

func newValidator(now time.Time) *validator {
	return &validator{p: corebank.Problems{}, now: now.UTC()}
}

func join(path, field string) string {
	if path == "" {
		return field
	}
	return path + "." + field
}

func (v *validator) add(path, problem string) { v.p.Add(path, problem) }

func (v *validator) err() error { return v.p.Err() }

// text checks a single-line text field (a name, an address line, an
// identifier) with corebank.CheckText: present when required, clean text,
// min-max characters. One of only spaces is refused as blank.
func (v *validator) text(path, s string, required bool, min, max int) {
	v.textRule(path, s, required, corebank.Line(min, max))
}

// freeText checks a multiline field (a description) as text does.
func (v *validator) freeText(path, s string, required bool, min, max int) {
	v.textRule(path, s, required, corebank.FreeText(min, max))
}

func (v *validator) textRule(path, s string, required bool, rule corebank.TextRule) {
	switch {
	case s == "" && required:
		v.add(path, "is required")
	case s == "":
	case strings.TrimSpace(s) == "":
		v.add(path, "must not be blank")
	default:
		if rule.Min == 0 {
			rule.Min = 1 // not blank, so "" is not reported
		}
		corebank.CheckText(v.p, path, s, rule)
	}
}

// date checks a YYYY-MM-DD calendar date and returns it (zero when absent
// or bad).
func (v *validator) date(path, s string, required bool) time.Time {
	if s == "" {
		if required {
			v.add(path, "is required")
		}
		return time.Time{}
	}
	t, err := time.Parse("2006-01-02", s)
	if err != nil || len(s) != 10 {
		v.add(path, "must be a real calendar date in the form YYYY-MM-DD")
		return time.Time{}
	}
	return t
}

// today is the current UTC date at midnight.
func (v *validator) today() time.Time {
	y, m, d := v.now.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// birthDate checks a date of birth: a real date, in the past, at most 150
// years ago.
func (v *validator) birthDate(path, s string, required bool) {
	t := v.date(path, s, required)
	switch {
	case t.IsZero():
	case !t.Before(v.today()):
		v.add(path, "must be in the past")
	case t.Before(v.today().AddDate(-150, 0, 0)):
		v.add(path, "must be within the last 150 years")
	}
}

// country checks an upper-case ISO 3166-1 alpha-2 code.
func (v *validator) country(path, s string, required bool) {
	switch {
	case s == "":
		if required {
			v.add(path, "is required")
		}
	case !coordinates.ValidCountry(s):
		v.add(path, "must be an upper-case ISO 3166-1 alpha-2 country code such as NG or US")
	}
}

// email checks a bare address (no display name) of at most 254 characters.
func (v *validator) email(path, s string, required bool) {
	if s == "" {
		if required {
			v.add(path, "is required")
		}
		return
	}
	if problem := corebank.TextProblem(s, false); problem != "" {
		v.add(path, problem)
		return
	}
	a, err := mail.ParseAddress(s)
	if err != nil || a.Address != s || len(s) > 254 || !strings.Contains(s[strings.LastIndexByte(s, '@'):], ".") {
		v.add(path, "must be an email address such as name@example.com")
	}
}

// phone checks a phone number with its country code: an optional "+"
// then digits, 10-14 characters in all, not starting with 0 after the "+",
// and a number its country's numbering plan allocates
// (coordinates.ValidateE164). It returns the number in E.164 form ("+"
// then digits).
func (v *validator) phone(path, s string, required bool) string {
	if s == "" {
		if required {
			v.add(path, "is required")
		}
		return ""
	}
	digits := strings.TrimPrefix(s, "+")
	if len(s) < 10 || len(s) > 14 || !corebank.IsDigits(digits) || digits[0] == '0' {
		v.add(path, "must be 10-14 characters: an optional + then the country code and number, digits only")
		return ""
	}
	e164 := normPhone(s)
	if err := coordinates.ValidateE164(e164); err != nil {
		v.add(path, coordinates.Problem(err))
		return ""
	}
	return e164
}

// normPhone is a valid phone number's stored form: "+" then digits.
func normPhone(s string) string {
	if s == "" {
		return ""
	}
	return "+" + strings.TrimPrefix(s, "+")
}

// normGender is a valid gender's stored form: lower case.
func normGender(s string) string { return strings.ToLower(s) }

// gender accepts m, f and other in any case (so M, F and Other too) and
// returns the lower-case form.
func (v *validator) gender(path, s string, required bool) string {
	switch g := strings.ToLower(s); {
	case s == "":
		if required {
			v.add(path, "is required")
		}
		return ""
	case g == "m" || g == "f" || g == "other":
		return normGender(s)
	}
	v.add(path, "must be m, f or other (M, F and Other are accepted)")
	return ""
}

// oneOf checks an enum.
func (v *validator) oneOf(path, s string, required bool, allowed ...string) {
	if s == "" {
		if required {
			v.add(path, "is required")
		}
		return
	}
	for _, a := range allowed {
		if s == a {
			return
		}
	}
	v.add(path, "must be one of "+strings.Join(allowed, ", "))
}

// link checks an http(s) URL of at most 255 characters.
func (v *validator) link(path, s string) {
	if s == "" {
		return
	}
	if problem := corebank.TextProblem(s, false); problem != "" {
		v.add(path, problem)
		return
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || len(s) > 255 {
		v.add(path, "must be an http or https URL of at most 255 characters")
	}
}

// businessMeta checks business meta: entityMeta's bounds over all its keys,
// sales_channels counted, and each channel a single line of 1-500
// characters, at most 50 of them.
func (v *validator) businessMeta(path string, m BusinessMetaInput) {
	keys := len(m.Strings)
	if m.SalesChannels != nil {
		keys++
	}
	if keys > entityMeta.Keys {
		v.add(path, fmt.Sprintf("must have at most %d keys", entityMeta.Keys))
		return
	}
	corebank.CheckMeta(v.p, path, m.Strings, entityMeta)
	sc := join(path, SalesChannels)
	if len(m.SalesChannels) > maxSalesChannels {
		v.add(sc, fmt.Sprintf("must have at most %d items", maxSalesChannels))
	}
	for i, c := range m.SalesChannels {
		v.text(sc+"."+strconv.Itoa(i), c, true, 1, entityMeta.ValueLen)
	}
}

// maxSalesChannels bounds business meta's sales_channels array.
const maxSalesChannels = 50

// entityMeta bounds an entity's and a business's meta.
var entityMeta = corebank.MetaLimits{Keys: 50, KeyLen: 64, ValueLen: 500}

// addressMeta bounds an address's meta.
var addressMeta = corebank.MetaLimits{Keys: 20, KeyLen: 64, ValueLen: 255}

// identityNumber checks a BVN, NIN (11 digits, Nigerian nationals) or SSN
// (9 digits, US nationals) against the person's nationality.
func (v *validator) identityNumber(path, typ, value, nationality string) {
	if value == "" {
		return
	}
	want, digits, who := "NG", 11, "Nigerian nationals (nationality NG)"
	if typ == "ssn" {
		want, digits, who = "US", 9, "US nationals (nationality US)"
	}
	switch {
	case nationality != want && coordinates.ValidCountry(nationality):
		// An invalid nationality is reported on its own field only.
		v.add(path, "is only accepted for "+who)
	case len(value) != digits || !corebank.IsDigits(value):
		v.add(path, "must be "+strconv.Itoa(digits)+" digits")
	}
}

// docNumber checks an identity document number: 1-50 letters, digits,
// spaces, hyphens or slashes.
func (v *validator) docNumber(path, s string) {
	if s == "" {
		v.add(path, "is required")
		return
	}
	if len(s) > 50 {
		v.add(path, "must be at most 50 characters")
		return
	}
	for _, r := range s {
		if !(r >= '0' && r <= '9' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r == ' ' || r == '-' || r == '/') {
			v.add(path, "may contain only letters, digits, spaces, hyphens and slashes")
			return
		}
	}
}
