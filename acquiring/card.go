package acquiring

// This file is a stand-in: the card branch writes acquiring/card.go with
// these same declarations, and the integrator takes theirs. The bodies here
// do just enough for the payment flow to run.

import (
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/corebank/corebank"
)

// Card is what corebank keeps of a card: never its number or CVV.
type Card struct {
	Brand, Type, BINCountry, Last4 string
	ExpMonth, ExpYear              int
}

// DecryptCard decrypts b64, Base64 of RSA-OAEP ciphertext made with priv's
// public key, into a validated card; errors are validation errors naming
// field.
func DecryptCard(priv *rsa.PrivateKey, field, b64 string, now time.Time) (Card, error) {
	// replaced by the card branch
	bad := corebank.InvalidField(field, "is not card data encrypted with this API key's encryption_public_key")
	ct, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || priv == nil {
		return Card{}, bad
	}
	pt, err := rsa.DecryptOAEP(sha256.New(), nil, priv, ct, nil)
	if err != nil {
		return Card{}, bad
	}
	var in struct {
		Number string          `json:"card_number"`
		Month  json.RawMessage `json:"expiration_month"`
		Year   json.RawMessage `json:"expiration_year"`
		CVV    string          `json:"cvv"`
	}
	if json.Unmarshal(pt, &in) != nil {
		return Card{}, bad
	}
	num := strings.ReplaceAll(in.Number, " ", "")
	if len(num) < 13 || len(num) > 19 || !corebank.IsDigits(num) {
		return Card{}, corebank.InvalidField(field, "card_number must be 13-19 digits")
	}
	m, _ := strconv.Atoi(strings.Trim(string(in.Month), `"`))
	y, _ := strconv.Atoi(strings.Trim(string(in.Year), `"`))
	return Card{Brand: "visa", Type: "credit", BINCountry: "GB", Last4: num[len(num)-4:], ExpMonth: m, ExpYear: y}, nil
}

// TestCard is one row of the sandbox test-card table.
type TestCard struct{ Last4, Outcome, FailureCode, Description string }

// TestCardOutcome returns the sandbox behaviour of a card ending last4:
// Outcome is one of "success", "decline", "challenge",
// "challenge_decline", "frictionless", "refund_fails", "dispute".
func TestCardOutcome(last4 string) TestCard {
	// replaced by the card branch
	switch last4 {
	case "0002":
		return TestCard{last4, "decline", "card_declined", "declined"}
	case "9995":
		return TestCard{last4, "decline", "insufficient_funds", "insufficient funds"}
	case "0069":
		return TestCard{last4, "decline", "expired_card", "expired card"}
	case "0127":
		return TestCard{last4, "decline", "incorrect_cvc", "incorrect CVC"}
	case "0119":
		return TestCard{last4, "decline", "processing_error", "processing error"}
	case "3184":
		return TestCard{last4, "challenge", "", "always challenged"}
	case "3063":
		return TestCard{last4, "challenge_decline", "card_declined", "challenged, then declined"}
	case "3220":
		return TestCard{last4, "frictionless", "", "3DS without a challenge"}
	case "5126":
		return TestCard{last4, "refund_fails", "", "refunds fail"}
	case "0259":
		return TestCard{last4, "dispute", "", "charge disputed"}
	}
	return TestCard{Last4: last4, Outcome: "success", Description: "approved"}
}
