package corebank

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
