package httpapi_test

import (
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"testing"

	"github.com/corebank/corebank/acquiring"
	"github.com/corebank/corebank/corebanktest"
)

// cardNumber is a Luhn-valid test number ending last4.
func cardNumber(last4 string) string { return corebanktest.CardNumber(last4) }

// encryptCard is payment_type_data.data for the card under pub, as a
// client makes it with the API key's encryption_public_key.
func encryptCard(tb testing.TB, pub *rsa.PublicKey, number, cvv string) string {
	tb.Helper()
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		tb.Fatal(err)
	}
	p := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	return corebanktest.EncryptCard(tb, string(p), number, 12, 2030, cvv)
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

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

// cardAction is intent_action for a card: data (encrypted), auth model,
// return_url.
func cardAction(data, auth, returnURL string) map[string]any {
	return corebanktest.CardAction(data, auth, returnURL)
}

// walletAction is a walletpay-acq intent_action, 3ds_disabled.
func walletAction() map[string]any {
	return map[string]any{"action": "confirm", "category": "collections", "payment_type": acquiring.WalletPayAcq,
		"payment_type_data": map[string]any{"auth_model": "3ds_disabled", "billing_address": map[string]any{"country": "GB"}},
		"customer":          map[string]any{"first_name": "Ada", "last_name": "Lovelace", "email": "ada@example.com"}}
}

// intentBody is a POST /payment-intents body of amount USD on account.
func intentBody(account, ref string, amount int64) map[string]any {
	return map[string]any{"currency": "USD", "amount": amount, "account_id": account, "reference": ref}
}
