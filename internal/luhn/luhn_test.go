package luhn_test

import (
	"testing"

	"github.com/corebank/corebank/internal/luhn"
)

func TestCheckDigit(t *testing.T) {
	for payload, want := range map[string]byte{
		"424242424242424": '2', "400000000000512": '6', "000000000000000": '0', "7992739871": '3', "": '0',
	} {
		if got := luhn.CheckDigit(payload); got != want {
			t.Errorf("CheckDigit(%q) = %c, want %c", payload, got, want)
		}
		if got := luhn.CheckDigit([]byte(payload)); got != want {
			t.Errorf("CheckDigit([]byte(%q)) = %c, want %c", payload, got, want)
		}
	}
}

func TestValid(t *testing.T) {
	for number, want := range map[string]bool{
		"4242424242424242": true, "4000000000005126": true, "79927398713": true, "378282246310005": true,
		"4242424242424241": false, "79927398710": false, "1": false, "0": true,
	} {
		if got := luhn.Valid(number); got != want {
			t.Errorf("Valid(%q) = %v, want %v", number, got, want)
		}
		if got := luhn.Valid([]byte(number)); got != want {
			t.Errorf("Valid([]byte(%q)) = %v, want %v", number, got, want)
		}
	}
}

// TestAgree: every payload followed by its check digit is valid, and no
// other last digit is.
func TestAgree(t *testing.T) {
	for _, payload := range []string{"", "0", "9", "12345", "123456781111111", "999999999999999999"} {
		for d := byte('0'); d <= '9'; d++ {
			want := d == luhn.CheckDigit(payload)
			if got := luhn.Valid(payload + string(d)); got != want {
				t.Errorf("Valid(%q) = %v, want %v", payload+string(d), got, want)
			}
		}
	}
}
