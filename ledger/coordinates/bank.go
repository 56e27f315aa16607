package coordinates

import (
	"fmt"
	"io"
)

// ABA routing numbers (United States).

var abaWeights = []int{3, 7, 1}

// ValidateABA reports whether s is a valid ABA routing transit number: nine
// digits whose first two lie in a range the Federal Reserve assigns (00-12,
// 21-32, 61-72 or 80) and whose 3-7-1 weighted digit sum is a multiple of 10.
func ValidateABA(s string) error {
	if err := checkDigitString(s, 9, 9); err != nil {
		return err
	}
	p := int(s[0]-'0')*10 + int(s[1]-'0')
	if !(p <= 12 || p >= 21 && p <= 32 || p >= 61 && p <= 72 || p == 80) {
		return invalid("must start with a Federal Reserve prefix (00-12, 21-32, 61-72 or 80)")
	}
	if weightedSum(s, abaWeights)%10 != 0 {
		return invalid("check digit does not match")
	}
	return nil
}

// ABACheckDigit returns the ninth digit that makes the eight digits first8 a
// valid ABA routing number. It returns an error if first8 is not 8 digits.
func ABACheckDigit(first8 string) (byte, error) {
	if err := checkDigitString(first8, 8, 8); err != nil {
		return 0, err
	}
	return byte('0' + (10-weightedSum(first8, abaWeights)%10)%10), nil
}

// GenerateABA returns a random valid ABA routing number with a prefix in
// 01-12 (a Federal Reserve district). It fails only if r fails.
func GenerateABA(r io.Reader) (string, error) {
	district, err := randomIntn(r, 12)
	if err != nil {
		return "", err
	}
	rest, err := randomDigits(r, 6)
	if err != nil {
		return "", err
	}
	first8 := fmt.Sprintf("%02d%s", district+1, rest)
	c, _ := ABACheckDigit(first8)
	return first8 + string(c), nil
}

// ValidateUSAccountNumber reports whether s is a plausible US bank account
// number: 4 to 17 digits (the range NACHA allows). US banks use private
// check-digit schemes, so no checksum is tested.
func ValidateUSAccountNumber(s string) error { return checkDigitString(s, 4, 17) }

// GenerateUSAccountNumber returns a random 12-digit US account number that
// does not start with 0.
func GenerateUSAccountNumber(r io.Reader) (string, error) { return nonZeroLeading(r, 12) }

func nonZeroLeading(r io.Reader, n int) (string, error) {
	first, err := randomIntn(r, 9)
	if err != nil {
		return "", err
	}
	rest, err := randomDigits(r, n-1)
	if err != nil {
		return "", err
	}
	return string(rune('1'+first)) + rest, nil
}

// UK sort codes and account numbers.

// ValidateSortCode reports whether s is a UK sort code written as six digits
// without separators ("200000", not "20-00-00").
func ValidateSortCode(s string) error {
	if err := checkDigitString(s, 6, 6); err != nil {
		return invalid(Problem(err) + " (no dashes)")
	}
	return nil
}

// GenerateSortCode returns a random six-digit sort code.
func GenerateSortCode(r io.Reader) (string, error) { return randomDigits(r, 6) }

// ValidateUKAccountNumber reports whether s is a UK account number of eight
// digits. The Pay.UK modulus check needs the bank's published weight tables,
// so it is not applied; a payout provider performs it.
func ValidateUKAccountNumber(s string) error { return checkDigitString(s, 8, 8) }

// GenerateUKAccountNumber returns a random eight-digit UK account number.
func GenerateUKAccountNumber(r io.Reader) (string, error) { return randomDigits(r, 8) }

// Nigerian NUBAN account numbers.

var nubanWeights = []int{3, 7, 3, 3, 7, 3, 3, 7, 3, 3, 7, 3}

// ValidateNUBAN reports whether s has the form of a NUBAN: ten digits. The
// check digit depends on the bank's code; use ValidateNUBANForBank when the
// code is known.
func ValidateNUBAN(s string) error { return checkDigitString(s, 10, 10) }

// NUBANCheckDigit returns the CBN check digit for a nine-digit serial at the
// bank with the three-digit CBN code bankCode: the digits of bankCode+serial
// weighted 3,7,3,3,7,3,3,7,3,3,7,3, and the check digit is 10 minus the sum
// modulo 10 (10 becomes 0).
func NUBANCheckDigit(bankCode, serial string) (byte, error) {
	if err := checkDigitString(bankCode, 3, 3); err != nil {
		return 0, fmt.Errorf("bank code %w", err)
	}
	if err := checkDigitString(serial, 9, 9); err != nil {
		return 0, fmt.Errorf("serial %w", err)
	}
	return byte('0' + (10-weightedSum(bankCode+serial, nubanWeights)%10)%10), nil
}

// ValidateNUBANForBank reports whether s is a ten-digit NUBAN whose check
// digit matches the bank with the three-digit CBN code bankCode.
func ValidateNUBANForBank(bankCode, s string) error {
	if err := ValidateNUBAN(s); err != nil {
		return err
	}
	if err := checkDigitString(bankCode, 3, 3); err != nil {
		return invalid("bank code " + Problem(err))
	}
	c, _ := NUBANCheckDigit(bankCode, s[:9])
	if s[9] != c {
		return invalid("check digit does not match the bank code")
	}
	return nil
}

// GenerateNUBAN returns a random NUBAN for the bank with the three-digit CBN
// code bankCode. It returns an error if bankCode is not three digits.
func GenerateNUBAN(r io.Reader, bankCode string) (string, error) {
	if err := checkDigitString(bankCode, 3, 3); err != nil {
		return "", invalid("bank code " + Problem(err))
	}
	serial, err := randomDigits(r, 9)
	if err != nil {
		return "", err
	}
	c, _ := NUBANCheckDigit(bankCode, serial)
	return serial + string(c), nil
}

// Canadian institution, transit and account numbers.

// ValidateInstitutionNumber reports whether s is a Canadian financial
// institution number: three digits.
func ValidateInstitutionNumber(s string) error { return checkDigitString(s, 3, 3) }

// ValidateTransitNumber reports whether s is a Canadian branch transit
// number: five digits.
func ValidateTransitNumber(s string) error { return checkDigitString(s, 5, 5) }

// ValidateCAAccountNumber reports whether s is a Canadian account number: 7
// to 12 digits.
func ValidateCAAccountNumber(s string) error { return checkDigitString(s, 7, 12) }

// GenerateTransitNumber returns a random five-digit transit number.
func GenerateTransitNumber(r io.Reader) (string, error) { return randomDigits(r, 5) }

// GenerateCAAccountNumber returns a random seven-digit Canadian account
// number.
func GenerateCAAccountNumber(r io.Reader) (string, error) { return randomDigits(r, 7) }

// South African branch codes and account numbers.

// ValidateBranchCode reports whether s is a South African branch code: six
// digits (banks publish universal branch codes such as 250655).
func ValidateBranchCode(s string) error { return checkDigitString(s, 6, 6) }

// ValidateZAAccountNumber reports whether s is a South African account
// number: 7 to 11 digits. Bank-specific check digits are not applied.
func ValidateZAAccountNumber(s string) error { return checkDigitString(s, 7, 11) }

// GenerateZAAccountNumber returns a random ten-digit South African account
// number that does not start with 0.
func GenerateZAAccountNumber(r io.Reader) (string, error) { return nonZeroLeading(r, 10) }

// Mexican CLABE.

// CLABECheckDigit returns the check digit for the first 17 digits of a
// CLABE: each digit is weighted 3, 7, 1 in turn, the products are taken
// modulo 10 and summed, and the check digit is (10 - sum mod 10) mod 10.
func CLABECheckDigit(first17 string) (byte, error) {
	if err := checkDigitString(first17, 17, 17); err != nil {
		return 0, err
	}
	sum := 0
	for i := 0; i < 17; i++ {
		sum += int(first17[i]-'0') * abaWeights[i%3] % 10
	}
	return byte('0' + (10-sum%10)%10), nil
}

// ValidateCLABE reports whether s is an 18-digit CLABE (3-digit bank code,
// 3-digit plaza, 11-digit account, check digit) with a matching check digit.
func ValidateCLABE(s string) error {
	if err := checkDigitString(s, 18, 18); err != nil {
		return err
	}
	c, _ := CLABECheckDigit(s[:17])
	if s[17] != c {
		return invalid("check digit does not match")
	}
	return nil
}

// GenerateCLABE returns a random valid CLABE. bankCode is the three-digit
// bank code; "" picks one at random.
func GenerateCLABE(r io.Reader, bankCode string) (string, error) {
	if bankCode != "" {
		if err := checkDigitString(bankCode, 3, 3); err != nil {
			return "", invalid("bank code " + Problem(err))
		}
	}
	n := 17 - len(bankCode)
	rest, err := randomDigits(r, n)
	if err != nil {
		return "", err
	}
	c, _ := CLABECheckDigit(bankCode + rest)
	return bankCode + rest + string(c), nil
}
