package httpapi_test

import (
	"context"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"testing"

	"github.com/corebank/corebank/acquiring"
	"github.com/corebank/corebank/corebanktest"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/storage"
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

// acqFixture is the root's USD account and a card helper.
type acqFixture struct {
	e    *env
	acct string
	seq  int
}

func newAcq(t *testing.T) *acqFixture {
	e := newEnv(t)
	return &acqFixture{e: e, acct: e.account(e.key, "", "USD")}
}

func (f *acqFixture) ref() string {
	f.seq++
	return "order-" + itoa(f.seq)
}

// pay creates an intent of amount confirmed inline with action.
func (f *acqFixture) pay(amount int64, action map[string]any) resp {
	f.e.t.Helper()
	b := intentBody(f.acct, f.ref(), amount)
	b["intent_action"] = action
	return f.e.must(201, "POST", "/payment-intents", f.e.key, b)
}

func (f *acqFixture) card(last4, auth, ret string) map[string]any {
	return cardAction(encryptCard(f.e.t, testPub(f.e.t), cardNumber(last4), "123"), auth, ret)
}

// events returns the types and intent statuses of the events about
// intent id, oldest first.
func (f *acqFixture) events(id string) []string {
	f.e.t.Helper()
	evs, err := storage.View(context.Background(), f.e.db, func(tx storage.Tx) ([]ledger.Event, error) {
		return f.e.led.EventsTx(tx, "", 10000)
	})
	if err != nil {
		f.e.t.Fatal(err)
	}
	var out []string
	for _, ev := range evs {
		var obj map[string]any
		if err := json.Unmarshal(ev.Object, &obj); err != nil || obj["id"] != id {
			continue
		}
		a, _ := obj["intent_action"].(map[string]any)
		out = append(out, ev.Type+" "+obj["status"].(string)+" "+str(a["status"]))
	}
	return out
}

func str(v any) string { s, _ := v.(string); return s }
