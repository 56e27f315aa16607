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

// MetaLimits bound a string-to-string meta map: how many keys, and how
// many characters a key and a value may have.
type MetaLimits struct {
	Keys, KeyLen, ValueLen int
}

// CheckMeta adds a problem to p for each way m breaks lim: on field when it
// has too many keys, on field.<key> for a key that is empty or too long or
// a value that is too long. Lengths count characters, not bytes.
func CheckMeta(p Problems, field string, m map[string]string, lim MetaLimits) {
	if len(m) > lim.Keys {
		p.Add(field, fmt.Sprintf("must have at most %d keys", lim.Keys))
		return
	}
	for k, v := range m {
		switch {
		case k == "" || utf8.RuneCountInString(k) > lim.KeyLen:
			p.Add(field+"."+k, fmt.Sprintf("keys must be 1-%d characters", lim.KeyLen))
		case utf8.RuneCountInString(v) > lim.ValueLen:
			p.Add(field+"."+k, fmt.Sprintf("must be at most %d characters", lim.ValueLen))
		}
	}
}
