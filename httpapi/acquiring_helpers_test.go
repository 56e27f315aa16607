package httpapi_test

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/corebank/corebank/acquiring"
)

// cardNumber is a 16-digit Luhn-valid test number ending last4: a Visa
// BIN, then a digit chosen so that the whole number passes Luhn.
func cardNumber(last4 string) string {
	for d := '0'; d <= '9'; d++ {
		n := "42424242424" + string(d) + last4
		if luhn(n) {
			return n
		}
	}
	panic("no Luhn digit for " + last4)
}

func luhn(n string) bool {
	sum := 0
	for i := 0; i < len(n); i++ {
		d := int(n[len(n)-1-i] - '0')
		if i%2 == 1 {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return sum%10 == 0
}

// encryptCard is payment_type_data.data for the card: its JSON encrypted
// with RSA-OAEP SHA-256 under pub, in Base64, as a client does with the
// API key's encryption_public_key.
func encryptCard(tb testing.TB, pub *rsa.PublicKey, number, cvv string) string {
	tb.Helper()
	pt, _ := json.Marshal(map[string]any{"card_number": number, "expiration_month": "12",
		"expiration_year": 2030, "cvv": cvv, "card_holder_name": "Ada Lovelace"})
	ct, err := rsa.EncryptOAEP(sha256.New(), rand.Reader, pub, pt, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(ct)
}

// testPub is the public key of every API key the test env makes (testKey).
func testPub(tb testing.TB) *rsa.PublicKey {
	tb.Helper()
	k, err := testKey()
	if err != nil {
		tb.Fatal(err)
	}
	return &k.PublicKey
}

// cardWith returns the last four digits of a card whose sandbox outcome
// is outcome (and failure code code, when not ""), from the test-card
// table, whatever digits the table gives it.
func cardWith(tb testing.TB, outcome, code string) string {
	tb.Helper()
	for i := 0; i < 10000; i++ {
		l4 := strings.Repeat("0", 4-len(itoa(i))) + itoa(i)
		c := acquiring.TestCardOutcome(l4)
		if c.Outcome == outcome && (code == "" || c.FailureCode == code) {
			return l4
		}
	}
	tb.Skipf("the test-card table has no %s card %s", outcome, code)
	return ""
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

// browserData is a complete 3DS browser_data.
func browserData() map[string]any {
	return map[string]any{"ip_address": "203.0.113.7", "user_agent": "Mozilla/5.0", "accept_header": "text/html",
		"language": "en-GB", "color_depth": 24, "screen_height": 1080, "screen_width": 1920, "time_zone_offset": 0,
		"java_enabled": false, "javascript_enabled": true}
}

// cardAction is intent_action for a card: data (encrypted), auth model,
// return_url.
func cardAction(data, auth, returnURL string) map[string]any {
	td := map[string]any{"data": data, "auth_model": auth, "billing_address": map[string]any{"country": "GB",
		"address_line_one": "1 Main St", "city": "London", "state": "LDN", "zip": "N1 1AA"}}
	if auth == acquiring.Auth3DSRequired {
		td["browser_data"] = browserData()
	}
	a := map[string]any{"action": "confirm", "category": "collections", "payment_type": "card-acq",
		"payment_type_data": td, "customer": map[string]any{"first_name": "Ada", "last_name": "Lovelace", "email": "ada@example.com"}}
	if returnURL != "" {
		a["return_url"] = returnURL
	}
	return a
}

// walletAction is a walletpay-acq intent_action, 3ds_disabled.
func walletAction() map[string]any {
	return map[string]any{"action": "confirm", "category": "collections", "payment_type": "walletpay-acq",
		"payment_type_data": map[string]any{"auth_model": "3ds_disabled", "billing_address": map[string]any{"country": "GB"}},
		"customer":          map[string]any{"first_name": "Ada", "last_name": "Lovelace", "email": "ada@example.com"}}
}

// intentBody is a POST /payment-intents body of amount USD on account.
func intentBody(account, ref string, amount int64) map[string]any {
	return map[string]any{"currency": "USD", "amount": amount, "account_id": account, "reference": ref}
}
