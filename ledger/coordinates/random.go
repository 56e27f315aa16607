package coordinates

import (
	"fmt"
	"io"

	"github.com/corebank/corebank"
)

// randomDigits returns n uniformly random decimal digits read from r, using
// rejection sampling so that no digit is more likely than another.
func randomDigits(r io.Reader, n int) (string, error) {
	out := make([]byte, 0, n)
	buf := make([]byte, n+8)
	for len(out) < n {
		if _, err := io.ReadFull(r, buf); err != nil {
			return "", fmt.Errorf("coordinates: read randomness: %w", err)
		}
		for _, b := range buf {
			if b >= 250 {
				continue
			}
			out = append(out, '0'+b%10)
			if len(out) == n {
				break
			}
		}
	}
	return string(out), nil
}

// randomIntn returns a uniform integer in [0, n) for 0 < n <= 65536.
func randomIntn(r io.Reader, n int) (int, error) {
	if n <= 0 || n > 1<<16 {
		panic("coordinates: randomIntn range")
	}
	limit := (1 << 16) - (1<<16)%n
	var b [2]byte
	for {
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return 0, fmt.Errorf("coordinates: read randomness: %w", err)
		}
		v := int(b[0])<<8 | int(b[1])
		if v < limit {
			return v % n, nil
		}
	}
}

// randomLetters returns n uniformly random upper-case ASCII letters.
func randomLetters(r io.Reader, n int) (string, error) {
	out := make([]byte, n)
	for i := range out {
		v, err := randomIntn(r, 26)
		if err != nil {
			return "", err
		}
		out[i] = 'A' + byte(v)
	}
	return string(out), nil
}

func isUpperLetters(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 'A' || s[i] > 'Z' {
			return false
		}
	}
	return true
}

func isUpperAlnum(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// checkDigitString validates that s is between min and max digits long,
// naming the expected length in the problem.
func checkDigitString(s string, min, max int) error {
	if s == "" {
		return invalid("is required")
	}
	if !corebank.IsDigits(s) {
		return invalid("must contain only digits")
	}
	if len(s) < min || len(s) > max {
		if min == max {
			return invalid(fmt.Sprintf("must be %d digits", min))
		}
		return invalid(fmt.Sprintf("must be %d to %d digits", min, max))
	}
	return nil
}

// weightedSum returns the sum of the digits of s, digit i multiplied by
// weights[i%len(weights)]. s must be all digits.
func weightedSum(s string, weights []int) int {
	sum := 0
	for i := 0; i < len(s); i++ {
		sum += int(s[i]-'0') * weights[i%len(weights)]
	}
	return sum
}
