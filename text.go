package corebank

import (
	"fmt"
	"unicode/utf8"
)

// IsDigits reports whether s is one or more ASCII decimal digits. Identity
// numbers, phone numbers and account coordinates are checked with it.
func IsDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// TextRule says what one text field may hold. Every text field refuses
// invalid UTF-8, control characters (C0, DEL and C1) and the
// bidirectional embedding, override and isolate controls U+202A-U+202E
// and U+2066-U+2069, which can make a name or a statement line read
// differently from what it holds. Multiline fields (free text such as a
// narration or a description) accept a newline ("\n", or "\r\n" as
// Windows and MIME write it) and a tab; a carriage return on its own is a
// control character everywhere.
type TextRule struct {
	// Min and Max bound the length in characters (Unicode code points);
	// Max 0 means no upper bound. Min above 0 makes the field required:
	// "" is reported as "is required".
	Min, Max int
	// Multiline allows '\n', "\r\n" and '\t'.
	Multiline bool
}

// Line is a TextRule for a single-line field of at most max characters,
// required when min is above 0.
func Line(min, max int) TextRule { return TextRule{Min: min, Max: max} }

// FreeText is a TextRule for a multiline field of at most max characters,
// required when min is above 0.
func FreeText(min, max int) TextRule { return TextRule{Min: min, Max: max, Multiline: true} }

// CheckText adds to p, on field, the first way s breaks rule: missing,
// then a character it may not hold (TextProblem), then its length. It adds
// nothing when s is "" and rule.Min is 0.
func CheckText(p Problems, field, s string, rule TextRule) {
	if problem := rule.Problem(s); problem != "" {
		p.Add(field, problem)
	}
}

// Problem returns the first way s breaks rule, as CheckText reports it, or
// "" when s keeps it. It allocates only to describe a problem, so a hot
// path can check text without building Problems.
func (rule TextRule) Problem(s string) string {
	if s == "" {
		if rule.Min > 0 {
			return "is required"
		}
		return ""
	}
	if problem := TextProblem(s, rule.Multiline); problem != "" {
		return problem
	}
	n := utf8.RuneCountInString(s)
	switch {
	case rule.Max > 0 && n > rule.Max && rule.Min > 1:
		return fmt.Sprintf("must be %d-%d characters", rule.Min, rule.Max)
	case rule.Max > 0 && n > rule.Max:
		return fmt.Sprintf("must be at most %d characters", rule.Max)
	case n < rule.Min && rule.Max > 0:
		return fmt.Sprintf("must be %d-%d characters", rule.Min, rule.Max)
	case n < rule.Min:
		return fmt.Sprintf("must be at least %d characters", rule.Min)
	}
	return ""
}

// TextProblem describes the first character of s that no text field may
// hold (see TextRule), or returns "" when there is none. With multiline,
// '\n', "\r\n" and '\t' are allowed. It costs one pass over s and no allocation
// when s is clean.
func TextProblem(s string, multiline bool) string {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c >= 0x20 && c != 0x7f:
			case c == '\n' || c == '\t' || c == '\r' && i+1 < len(s) && s[i+1] == '\n':
				if !multiline {
					return "must be a single line: no line breaks or tabs"
				}
			default:
				return "must not contain the control character " + codePoint(rune(c))
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			return "must be valid UTF-8"
		case r >= 0x80 && r <= 0x9f:
			return "must not contain the control character " + codePoint(r)
		case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			return "must not contain the bidirectional control character " + codePoint(r)
		}
		i += size
	}
	return ""
}

// codePoint is r in U+XXXX form.
func codePoint(r rune) string { return fmt.Sprintf("U+%04X", r) }

// MetaLimits bound a string-to-string meta map: how many keys, and how
// many characters a key and a value may have.
type MetaLimits struct {
	Keys, KeyLen, ValueLen int
}

// CheckMeta adds a problem to p for each way m breaks lim: on field when it
// has too many keys, on field.<key> for a key that is empty or too long or
// a value that is too long. Keys and values are text (CheckText): a key is
// a single line, a value may hold line breaks. Lengths count characters,
// not bytes.
func CheckMeta(p Problems, field string, m map[string]string, lim MetaLimits) {
	if len(m) > lim.Keys {
		p.Add(field, fmt.Sprintf("must have at most %d keys", lim.Keys))
		return
	}
	for k, v := range m {
		f := field + "." + k
		switch {
		case k == "" || utf8.RuneCountInString(k) > lim.KeyLen:
			p.Add(f, fmt.Sprintf("keys must be 1-%d characters", lim.KeyLen))
			continue
		}
		if problem := TextProblem(k, false); problem != "" {
			p.Add(f, "keys "+problem)
			continue
		}
		CheckText(p, f, v, FreeText(0, lim.ValueLen))
	}
}

// PlausibleEmail reports whether s looks like an email address: one '@'
// with text on both sides, no whitespace, at most 254 bytes. It does not
// try to be RFC 5322: the mailbox is proved by mail, not by syntax.
func PlausibleEmail(s string) bool {
	at := -1
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '@':
			if at >= 0 {
				return false
			}
			at = i
		case ' ', '\t', '\n', '\r':
			return false
		}
	}
	return at > 0 && at < len(s)-1 && len(s) <= 254
}
