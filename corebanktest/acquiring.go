package corebanktest

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"testing"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/acquiring"
	"github.com/corebank/corebank/internal/luhn"
)

// CardNumber returns a 16-digit test card number that ends in last4 and
// passes the Luhn check (a Visa BIN, and one digit chosen to make the
// check hold): the sandbox's behaviour for it is
// acquiring.TestCardOutcome(last4).
func CardNumber(last4 string) string {
	for d := byte('0'); d <= '9'; d++ {
		n := "42424242424" + string(d) + last4
		if luhn.Valid(n) {
			return n
		}
	}
	panic("corebanktest: no card number ends in " + last4)
}

// EncryptCard returns payment_type_data.data for a card, as a client
// makes it: the JSON {card_number, expiration_month, expiration_year,
// cvv} encrypted with RSA-OAEP SHA-256 under publicKeyPEM (an API key's
// encryption_public_key), in Base64. It fails the test on a bad key.
func EncryptCard(t testing.TB, publicKeyPEM, number string, expMonth, expYear int, cvv string) string {
	t.Helper()
	blk, _ := pem.Decode([]byte(publicKeyPEM))
	if blk == nil {
		t.Fatal("corebanktest: encryption_public_key is not PEM")
	}
	k, err := x509.ParsePKIXPublicKey(blk.Bytes)
	pub, ok := k.(*rsa.PublicKey)
	if err != nil || !ok {
		t.Fatalf("corebanktest: encryption_public_key is not an RSA public key: %v", err)
	}
	pt, _ := json.Marshal(map[string]any{"card_number": number, "expiration_month": expMonth,
		"expiration_year": expYear, "cvv": cvv})
	ct, err := rsa.EncryptOAEP(sha256.New(), rand.Reader, pub, pt, nil)
	if err != nil {
		t.Fatalf("corebanktest: encrypt card: %v", err)
	}
	return base64.StdEncoding.EncodeToString(ct)
}

// CardAction is an intent_action for a card payment with data (see
// EncryptCard) under authModel (acquiring.Auth3DSDisabled or
// Auth3DSRequired, which adds browser data), returning to returnURL when
// not "".
func CardAction(data, authModel, returnURL string) map[string]any {
	td := map[string]any{"data": data, "auth_model": authModel, "billing_address": map[string]any{
		"country": "GB", "address_line_one": "1 Main St", "city": "London", "state": "LDN", "zip": "N1 1AA"}}
	if authModel == acquiring.Auth3DSRequired {
		td["browser_data"] = map[string]any{"ip_address": "203.0.113.7", "user_agent": "Mozilla/5.0",
			"accept_header": "text/html", "language": "en-GB", "color_depth": 24, "screen_height": 1080,
			"screen_width": 1920, "time_zone_offset": 0, "java_enabled": false, "javascript_enabled": true}
	}
	a := map[string]any{"action": "confirm", "category": "collections", "payment_type": acquiring.CardAcq,
		"payment_type_data": td, "customer": map[string]any{"first_name": "Ada", "last_name": "Lovelace", "email": "ada@example.com"}}
	if returnURL != "" {
		a["return_url"] = returnURL
	}
	return a
}

// CardPayment takes a card payment of amount on accountID (a root
// account) over HTTP as the root's full-access key does: POST
// /payment-intents with the card ending last4 encrypted under the root
// key's encryption_public_key, 3ds_disabled. A plain card completes and
// credits the account (amount less the card-acq fee) with
// payment_intent.completed; a test card does what its row says
// (acquiring.TestCardOutcome). It returns the intent with its action, and
// fails the test on any error.
func (b *Bank) CardPayment(accountID string, amount int64, last4 string) *acquiring.Intent {
	b.t.Helper()
	data := EncryptCard(b.t, b.Root.EncryptionPublicKey, CardNumber(last4), 12, b.Clock.Now().Year()+2, "123")
	body := map[string]any{"currency": b.currencyOf(accountID), "amount": amount, "account_id": accountID,
		"reference":     "corebanktest-" + corebank.NewIDs(nil).New(b.Clock.Now()),
		"intent_action": CardAction(data, acquiring.Auth3DSDisabled, "")}
	var out acquiring.Intent
	b.Call(201, "POST", "/payment-intents", body, &out)
	return &out
}

// Dispute opens a dispute of the completed intent action actionID over
// HTTP through the sandbox route, for amount (0: the whole charge less its
// refunds) and reason ("": general): the amount leaves the merchant
// account at once with payment_dispute.created. Decide it with POST
// /sandbox/disputes/{id}/simulate. It fails the test on any error.
func (b *Bank) Dispute(actionID string, amount int64, reason string) *acquiring.Dispute {
	b.t.Helper()
	body := map[string]any{}
	if amount != 0 {
		body["amount"] = amount
	}
	if reason != "" {
		body["reason"] = reason
	}
	var out acquiring.Dispute
	b.Call(201, "POST", "/sandbox/intent-actions/"+actionID+"/dispute", body, &out)
	return &out
}

func (b *Bank) currencyOf(accountID string) string {
	b.t.Helper()
	a, err := b.Ledger.GetAccount(context.Background(), corebank.As(b.Root.EntityID), "", accountID)
	if err != nil {
		b.t.Fatalf("corebanktest: read account %s: %v", accountID, err)
	}
	return a.Currency
}

// RefundCardPayment refunds amount of completed intent action actionID
// (a CardPayment's IntentAction.ID) over HTTP as the root's full-access
// key does: POST /refunds, answered pending, the amount held on the
// merchant account. With settle, the refund is then settled as the
// sandbox simulate route does (POST /sandbox/refunds/{id}/simulate
// {"outcome": "successful"}): the hold posts and payment_refund.completed
// is appended; without it the sandbox acquirer answers when the clock
// passes the refund delay (Advance), failing the refunds of the
// refund_fails test card (acquiring.TestCardOutcome). It returns the
// refund as it stands, and fails the test on any error.
func (b *Bank) RefundCardPayment(actionID string, amount int64, settle bool) *acquiring.Refund {
	b.t.Helper()
	var out acquiring.Refund
	b.Call(200, "POST", "/refunds", map[string]any{"payment_intent_action_id": actionID, "amount": amount,
		"reference": "corebanktest-refund-" + corebank.NewIDs(nil).New(b.Clock.Now())}, &out)
	if settle {
		b.Call(200, "POST", "/sandbox/refunds/"+out.ID+"/simulate", map[string]any{"outcome": acquiring.RefundSuccessful}, &out)
	}
	return &out
}
