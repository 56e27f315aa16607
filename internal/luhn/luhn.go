// Package luhn is the Luhn (mod 10) check digit, the one implementation
// behind issued card numbers (cards), accepted card numbers (acquiring),
// service BANs (ledger) and the test card numbers corebanktest makes.
//
// Both functions take a string or a byte slice, so that acquiring checks a
// card number in the buffer it clears afterwards instead of copying it
// into a string it cannot clear. Input holds ASCII digits only; callers
// check that first.
package luhn

// Valid reports whether number, check digit last, passes the Luhn check.
// An empty number passes (its sum is 0); callers check the length first.
func Valid[S ~string | ~[]byte](number S) bool {
	return sum(number, false)%10 == 0
}

// CheckDigit returns the ASCII digit that makes payload followed by it
// pass Valid.
func CheckDigit[S ~string | ~[]byte](payload S) byte {
	return byte('0' + (10-sum(payload, true)%10)%10)
}

// sum adds the digits of s from the right, doubling every second one
// (casting out nines); doubleLast doubles the rightmost, as for a payload
// whose check digit is still to come.
func sum[S ~string | ~[]byte](s S, doubleLast bool) int {
	total := 0
	double := doubleLast
	for i := len(s) - 1; i >= 0; i-- {
		d := int(s[i] - '0')
		if double {
			if d *= 2; d > 9 {
				d -= 9
			}
		}
		total += d
		double = !double
	}
	return total
}
