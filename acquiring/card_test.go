package acquiring_test

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/acquiring"
)

const field = "intent_action.payment_type_data.data"

// now is the test's clock: November 2026.
var now = time.Date(2026, time.November, 24, 13, 0, 0, 0, time.UTC)

var (
	key2048  = sync.OnceValue(func() *rsa.PrivateKey { return mustKey(2048) })
	other    = sync.OnceValue(func() *rsa.PrivateKey { return mustKey(2048) })
	key3072  = sync.OnceValue(func() *rsa.PrivateKey { return mustKey(3072) })
	mgfSHA1  = crypto.SHA1
	mgfSHA25 = crypto.SHA256
)

func mustKey(bits int) *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, bits)
	if err != nil {
		panic(err)
	}
	return k
}

// seal encrypts plaintext for priv's public key with OAEP SHA-256 and
// MGF1 mgf, as a client would, and returns standard padded Base64.
func seal(tb testing.TB, priv *rsa.PrivateKey, mgf crypto.Hash, plaintext string) string {
	tb.Helper()
	ct, err := rsa.EncryptOAEPWithOptions(rand.Reader, &priv.PublicKey, []byte(plaintext),
		&rsa.OAEPOptions{Hash: crypto.SHA256, MGFHash: mgf})
	if err != nil {
		tb.Fatalf("encrypt %d bytes: %v", len(plaintext), err)
	}
	return base64.StdEncoding.EncodeToString(ct)
}

func card(number, month, year, cvv string) string {
	return `{"card_number":"` + number + `","expiration_month":` + month + `,"expiration_year":` + year + `,"cvv":"` + cvv + `"}`
}

func TestDecryptCard(t *testing.T) {
	visa := acquiring.Card{Brand: "visa", Type: "credit", BINCountry: "US", Last4: "4242", ExpMonth: 12, ExpYear: 2030}
	std := seal(t, key2048(), mgfSHA25, card("4242424242424242", `"12"`, `"2030"`, "737"))
	raw, _ := base64.StdEncoding.DecodeString(std)
	mime := base64.StdEncoding.EncodeToString(raw)
	mime = mime[:76] + "\r\n" + mime[76:152] + "\r\n" + mime[152:]
	long := `{"card_number":"4242424242424242","expiration_month":12,"expiration_year":2030,"cvv":"737","card_holder_name":"` +
		strings.Repeat("A", 200) + `"}`

	for _, tc := range []struct {
		name   string
		key    *rsa.PrivateKey
		data   string
		want   acquiring.Card
		fields map[string]string // problems by field; nil for success
	}{
		{name: "OK/MGF1SHA256", data: std, want: visa},
		{name: "OK/MGF1SHA1Java", data: seal(t, key2048(), mgfSHA1, card("4242424242424242", `"12"`, `"2030"`, "737")), want: visa},
		{name: "OK/URLSafeUnpadded", data: base64.RawURLEncoding.EncodeToString(raw), want: visa},
		{name: "OK/URLSafePadded", data: base64.URLEncoding.EncodeToString(raw), want: visa},
		{name: "OK/StdUnpadded", data: base64.RawStdEncoding.EncodeToString(raw), want: visa},
		{name: "OK/MIMELines", data: mime, want: visa},
		{name: "OK/NumbersAndSpaces", data: seal(t, key2048(), mgfSHA25, card("4242 4242 4242 4242", `1`, `2027`, "737")),
			want: acquiring.Card{Brand: "visa", Type: "credit", BINCountry: "US", Last4: "4242", ExpMonth: 1, ExpYear: 2027}},
		{name: "OK/LeadingZeroMonth", data: seal(t, key2048(), mgfSHA25, card("4242424242424242", `"01"`, `2027`, "737")),
			want: acquiring.Card{Brand: "visa", Type: "credit", BINCountry: "US", Last4: "4242", ExpMonth: 1, ExpYear: 2027}},
		{name: "OK/ExpiresThisMonth", data: seal(t, key2048(), mgfSHA25, card("4242424242424242", `11`, `2026`, "737")),
			want: acquiring.Card{Brand: "visa", Type: "credit", BINCountry: "US", Last4: "4242", ExpMonth: 11, ExpYear: 2026}},
		{name: "OK/HolderName", data: seal(t, key2048(), mgfSHA25,
			`{"card_number":"5555555555554444","expiration_month":3,"expiration_year":2031,"cvv":"737","card_holder_name":"Ada Lovelace"}`),
			want: acquiring.Card{Brand: "mastercard", Type: "credit", BINCountry: "US", Last4: "4444", ExpMonth: 3, ExpYear: 2031}},
		{name: "OK/AmexFourDigitCVV", data: seal(t, key2048(), mgfSHA25, card("378282246310005", `7`, `2029`, "7373")),
			want: acquiring.Card{Brand: "amex", Type: "credit", BINCountry: "US", Last4: "0005", ExpMonth: 7, ExpYear: 2029}},
		{name: "OK/UnknownBINAndBrand", data: seal(t, key2048(), mgfSHA25, card("9999999999999995", `7`, `2029`, "7373")),
			want: acquiring.Card{Brand: "unknown", Type: "unknown", BINCountry: "", Last4: "9995", ExpMonth: 7, ExpYear: 2029}},
		{name: "OK/3072BitKey", key: key3072(), data: seal(t, key3072(), mgfSHA25, card("4242424242424242", `"12"`, `"2030"`, "737")), want: visa},

		{name: "ErrEmpty", data: "  ", fields: map[string]string{field: "is required"}},
		{name: "ErrBadBase64", data: "!!not base64!!", fields: map[string]string{field: "is not Base64 (standard or URL-safe alphabet)"}},
		{name: "ErrRawJSON", data: card("4242424242424242", "12", "2030", "737"), fields: map[string]string{field: "is plain JSON; raw card details are never accepted: send Base64 of the card JSON encrypted with RSA-OAEP SHA-256 under this API key's encryption_public_key"}},
		{name: "ErrRawCardNumber", data: "4242 4242 4242 4242", fields: map[string]string{field: "looks like a raw card number; raw card details are never accepted: send Base64 of the card JSON encrypted with RSA-OAEP SHA-256 under this API key's encryption_public_key"}},
		{name: "ErrPlainBase64JSON", data: base64.StdEncoding.EncodeToString([]byte(card("4242424242424242", "12", "2030", "737"))),
			fields: map[string]string{field: "is Base64 of plain JSON; raw card details are never accepted: encrypt the card JSON with RSA-OAEP SHA-256 under this API key's encryption_public_key"}},
		{name: "ErrTruncated", data: base64.StdEncoding.EncodeToString(raw[:200]),
			fields: map[string]string{field: "decodes to 200 bytes; it must be one RSA-OAEP block of 256 bytes, made with this API key's 2048-bit encryption_public_key from at most 190 bytes of card JSON"}},
		{name: "ErrTwoBlocks", data: base64.StdEncoding.EncodeToString(append(append([]byte(nil), raw...), raw...)),
			fields: map[string]string{field: "decodes to 512 bytes; it must be one RSA-OAEP block of 256 bytes, made with this API key's 2048-bit encryption_public_key from at most 190 bytes of card JSON"}},
		{name: "ErrAnotherKey", data: seal(t, other(), mgfSHA25, card("4242424242424242", "12", "2030", "737")), fields: notDecrypt},
		{name: "ErrGarbage", data: base64.StdEncoding.EncodeToString(make([]byte, 256)), fields: notDecrypt},
		{name: "ErrOAEPLabel", data: func() string {
			ct, err := rsa.EncryptOAEP(sha256.New(), rand.Reader, &key2048().PublicKey, []byte(card("4242424242424242", "12", "2030", "737")), []byte("card"))
			if err != nil {
				t.Fatal(err)
			}
			return base64.StdEncoding.EncodeToString(ct)
		}(), fields: notDecrypt},
		{name: "ErrOverLongPlaintext3072", key: key3072(), data: seal(t, key3072(), mgfSHA25, long),
			fields: map[string]string{field: "decrypts to " + strconv.Itoa(len(long)) + " bytes of card JSON; at most 190 are accepted (what RSA-OAEP SHA-256 carries under a 2048-bit key)"}},
		{name: "ErrNotJSON", data: seal(t, key2048(), mgfSHA25, "hello"), fields: map[string]string{field: "decrypts, but not to a JSON object with the card's members"}},
		{name: "ErrJSONNull", data: seal(t, key2048(), mgfSHA25, "null"), fields: map[string]string{field: "decrypts, but not to a JSON object with the card's members"}},
		{name: "ErrJSONArray", data: seal(t, key2048(), mgfSHA25, `["4242424242424242"]`), fields: map[string]string{field: "decrypts, but not to a JSON object with the card's members"}},
		{name: "ErrMissingMembers", data: seal(t, key2048(), mgfSHA25, `{}`), fields: map[string]string{
			field + ".card_number": "is required", field + ".expiration_month": "is required",
			field + ".expiration_year": "is required", field + ".cvv": "is required"}},
		{name: "ErrUnknownMembers", data: seal(t, key2048(), mgfSHA25,
			`{"card_number":"4242424242424242","expiration_month":12,"expiration_year":2030,"cvc":"737","4242424242424242":1}`), fields: map[string]string{
			field + ".cvc": "unknown field; the card's security code is cvv", field: "the card object has an unknown member",
			field + ".cvv": "is required"}},
		{name: "ErrUnknownCamelCase", data: seal(t, key2048(), mgfSHA25,
			`{"cardNumber":"4242424242424242","expiration_month":12,"expiration_year":2030,"cvv":"737"}`), fields: map[string]string{
			field + ".cardNumber": "unknown field", field + ".card_number": "is required"}},
		{name: "ErrLuhn", data: seal(t, key2048(), mgfSHA25, card("4242424242424241", "12", "2030", "737")),
			fields: map[string]string{field + ".card_number": "is not a valid card number (fails the Luhn check)"}},
		{name: "ErrTwelveDigits", data: seal(t, key2048(), mgfSHA25, card("424242424242", "12", "2030", "737")),
			fields: map[string]string{field + ".card_number": "must be a string of 13-19 digits (spaces ignored)"}},
		{name: "ErrTwentyDigits", data: seal(t, key2048(), mgfSHA25, card("42424242424242424242", "12", "2030", "737")),
			fields: map[string]string{field + ".card_number": "must be a string of 13-19 digits (spaces ignored)"}},
		{name: "ErrNumberLetters", data: seal(t, key2048(), mgfSHA25, card("4242-4242-4242-4242", "12", "2030", "737")),
			fields: map[string]string{field + ".card_number": "must be a string of 13-19 digits (spaces ignored)"}},
		{name: "ErrNumberAsJSONNumber", data: seal(t, key2048(), mgfSHA25, `{"card_number":4242424242424242,"expiration_month":12,"expiration_year":2030,"cvv":"737"}`),
			fields: map[string]string{field + ".card_number": "must be a string of 13-19 digits (spaces ignored)"}},
		{name: "ErrMonth13", data: seal(t, key2048(), mgfSHA25, card("4242424242424242", "13", "2030", "737")),
			fields: map[string]string{field + ".expiration_month": "must be 1-12 or 01-12"}},
		{name: "ErrMonth0", data: seal(t, key2048(), mgfSHA25, card("4242424242424242", `"00"`, "2030", "737")),
			fields: map[string]string{field + ".expiration_month": "must be 1-12 or 01-12"}},
		{name: "ErrMonthWord", data: seal(t, key2048(), mgfSHA25, card("4242424242424242", `"dec"`, "2030", "737")),
			fields: map[string]string{field + ".expiration_month": "must be 1-12 or 01-12"}},
		{name: "ErrYearTwoDigits", data: seal(t, key2048(), mgfSHA25, card("4242424242424242", "12", `"30"`, "737")),
			fields: map[string]string{field + ".expiration_year": "must be four digits"}},
		{name: "ErrYearPast", data: seal(t, key2048(), mgfSHA25, card("4242424242424242", "12", "2025", "737")),
			fields: map[string]string{field + ".expiration_year": "is in the past; the card has expired"}},
		{name: "ErrYearFarAhead", data: seal(t, key2048(), mgfSHA25, card("4242424242424242", "12", "2077", "737")),
			fields: map[string]string{field + ".expiration_year": "is more than 50 years ahead"}},
		{name: "ErrExpiredLastMonth", data: seal(t, key2048(), mgfSHA25, card("4242424242424242", "10", "2026", "737")),
			fields: map[string]string{field + ".expiration_month": "is in the past; the card has expired"}},
		{name: "ErrCVVTwoDigits", data: seal(t, key2048(), mgfSHA25, card("4242424242424242", "12", "2030", "73")),
			fields: map[string]string{field + ".cvv": "must be a string of 3 digits"}},
		{name: "ErrCVVFourDigitsVisa", data: seal(t, key2048(), mgfSHA25, card("4242424242424242", "12", "2030", "7373")),
			fields: map[string]string{field + ".cvv": "must be a string of 3 digits"}},
		{name: "ErrCVVThreeDigitsAmex", data: seal(t, key2048(), mgfSHA25, card("378282246310005", "12", "2030", "737")),
			fields: map[string]string{field + ".cvv": "must be a string of 4 digits for American Express"}},
		{name: "ErrCVVFiveDigitsBadNumber", data: seal(t, key2048(), mgfSHA25, card("4242424242424241", "12", "2030", "73737")),
			fields: map[string]string{field + ".card_number": "is not a valid card number (fails the Luhn check)", field + ".cvv": "must be a string of 3 or 4 digits"}},
		{name: "ErrCVVLetters", data: seal(t, key2048(), mgfSHA25, card("4242424242424242", "12", "2030", "7a7")),
			fields: map[string]string{field + ".cvv": "must be a string of 3 digits"}},
		{name: "ErrCVVAsNumber", data: seal(t, key2048(), mgfSHA25, `{"card_number":"4242424242424242","expiration_month":12,"expiration_year":2030,"cvv":737}`),
			fields: map[string]string{field + ".cvv": "must be a string of 3 digits"}},
		{name: "ErrHolderName", data: seal(t, key2048(), mgfSHA25, `{"card_number":"4242424242424242","expiration_month":12,"expiration_year":2030,"cvv":"737","card_holder_name":7}`),
			fields: map[string]string{field + ".card_holder_name": "must be a string"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := tc.key
			if key == nil {
				key = key2048()
			}
			got, err := acquiring.DecryptCard(key, field, tc.data, now)
			if tc.fields == nil {
				if err != nil {
					t.Fatalf("DecryptCard: %v", err)
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("card (-want +got):\n%s", diff)
				}
				return
			}
			var e *corebank.Error
			if !errors.As(err, &e) || e.Kind != corebank.KindInvalid || e.Code != corebank.CodeValidation {
				t.Fatalf("err = %v, want a validation error", err)
			}
			if diff := cmp.Diff(tc.fields, e.Fields); diff != "" {
				t.Errorf("fields (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(acquiring.Card{}, got); diff != "" {
				t.Errorf("card on error (-want +got):\n%s", diff)
			}
		})
	}
}

var notDecrypt = map[string]string{field: "does not decrypt with this API key's encryption key: " +
	"encrypt with RSA-OAEP SHA-256 (MGF1 SHA-256 or SHA-1) under the encryption_public_key of the key making the request, as issued or last rotated"}

func TestDecryptCardNilKey(t *testing.T) {
	_, err := acquiring.DecryptCard(nil, field, "AAAA", now)
	if err == nil || corebank.KindOf(err) != corebank.KindInternal {
		t.Fatalf("err = %v, want an internal error", err)
	}
}

// TestDecryptCardErrorsNeverShowTheCard checks that no error, its message
// or its fields repeats the card number (with or without spaces) or the
// CVV, for every kind of rejected card data.
func TestDecryptCardErrorsNeverShowTheCard(t *testing.T) {
	const number, spaced, cvv, amexCVV = "4000056655665556", "4000 0566 5566 5556", "918", "9183"
	secrets := []string{number, spaced, "40000566", "56655665556", cvv, amexCVV, "91837"}
	k := key2048()
	inputs := []string{
		card(spaced, "12", "2030", cvv),
		spaced, number,
		base64.StdEncoding.EncodeToString([]byte(card(number, "12", "2030", cvv))),
		seal(t, other(), mgfSHA25, card(number, "12", "2030", cvv)),
		seal(t, k, mgfSHA25, card(number, "12", "2020", cvv)),
		seal(t, k, mgfSHA25, card(number, "10", "2026", cvv)),
		seal(t, k, mgfSHA25, card(number, "12", "2030", amexCVV)),
		seal(t, k, mgfSHA25, card(number, "12", "2030", "91837")),
		seal(t, k, mgfSHA25, card("4000056655665557", "12", "2030", cvv)),
		seal(t, k, mgfSHA25, card(number+"123", "13", "30", cvv)),
		seal(t, k, mgfSHA25, `{"`+number+`":"`+cvv+`","`+cvv+`":"`+number+`"}`),
		seal(t, k, mgfSHA25, `{"card_number":"`+number+`","expiration_month":12,"expiration_year":2030,"cvc":"`+cvv+`"}`),
		seal(t, k, mgfSHA25, `{"card_number":`+number+`,"expiration_month":12,"expiration_year":2030,"cvv":`+cvv+`}`),
		seal(t, k, mgfSHA25, number+" "+cvv),
	}
	for i, in := range inputs {
		_, err := acquiring.DecryptCard(k, field, in, now)
		if err == nil {
			t.Fatalf("input %d: no error", i)
		}
		text := err.Error()
		var e *corebank.Error
		if errors.As(err, &e) {
			text += e.Message
			for f, p := range e.Fields {
				text += " " + f + " " + p
			}
		}
		for _, s := range secrets {
			if strings.Contains(text, s) {
				t.Errorf("input %d: error %q shows %q", i, text, s)
			}
		}
	}
}

// docCards is the "Test cards" table of card.go, number by number.
var docCards = []struct{ number, outcome, code string }{
	{"4000 0000 0000 0002", "decline", "card_declined"},
	{"4000 0000 0000 9995", "decline", "insufficient_funds"},
	{"4000 0000 0000 0069", "decline", "expired_card"},
	{"4000 0000 0000 0127", "decline", "incorrect_cvc"},
	{"4000 0000 0000 0119", "decline", "processing_error"},
	{"4000 0000 0000 3220", "challenge", ""},
	{"4000 0084 0000 1629", "challenge_decline", "card_declined"},
	{"4000 0000 0000 3055", "frictionless", ""},
	{"4000 0000 0000 5126", "refund_fails", "refund_declined"},
	{"4000 0000 0000 0259", "dispute", "fraudulent"},
	{"4242 4242 4242 4242", "success", ""},
	{"5555 5555 5555 4444", "success", ""},
}

func TestTestCards(t *testing.T) {
	k := key2048()
	for _, dc := range docCards {
		t.Run(strings.ReplaceAll(dc.number, " ", ""), func(t *testing.T) {
			c, err := acquiring.DecryptCard(k, field, seal(t, k, mgfSHA25, card(dc.number, "12", "2030", "737")), now)
			if err != nil {
				t.Fatalf("the documented number does not validate: %v", err)
			}
			got := acquiring.TestCardOutcome(c.Last4)
			if got.Outcome != dc.outcome || got.FailureCode != dc.code || got.Last4 != c.Last4 || got.Description == "" {
				t.Errorf("TestCardOutcome(%q) = %+v, want outcome %q code %q", c.Last4, got, dc.outcome, dc.code)
			}
		})
	}
	if n, want := len(acquiring.TestCards()), len(docCards)-2; n != want {
		t.Errorf("TestCards() has %d cards, the documented table %d", n, want)
	}
	valid := map[string]bool{"success": true, "decline": true, "challenge": true, "challenge_decline": true,
		"frictionless": true, "refund_fails": true, "dispute": true}
	for _, c := range acquiring.TestCards() {
		if !valid[c.Outcome] {
			t.Errorf("test card %s: outcome %q", c.Last4, c.Outcome)
		}
	}
}

// TestBINTable checks each example number of the BIN table in card.go.
func TestBINTable(t *testing.T) {
	k := key2048()
	for _, tc := range []struct{ number, brand, typ, country string }{
		{"4000 0012 4000 0000", "visa", "credit", "CA"},
		{"4000 0007 6000 0002", "visa", "credit", "BR"},
		{"4000 0048 4000 8001", "visa", "credit", "MX"},
		{"4000 0082 6000 0000", "visa", "credit", "GB"},
		{"4000 0566 5566 5556", "visa", "debit", "US"},
		{"4000 0000 0000 0002", "visa", "credit", "US"},
		{"4000 0084 0000 1629", "visa", "credit", "US"},
		{"4242 4242 4242 4242", "visa", "credit", "US"},
		{"5200 8282 8282 8210", "mastercard", "debit", "US"},
		{"5105 1051 0510 5100", "mastercard", "prepaid", "US"},
		{"5555 5555 5555 4444", "mastercard", "credit", "US"},
		{"2223 0031 2200 3222", "mastercard", "credit", "US"},
		{"3782 822463 10005", "amex", "credit", "US"},
		{"6011 1111 1111 1117", "discover", "credit", "US"},
		{"3056 9300 0902 0004", "diners", "credit", "US"},
		{"3566 0020 2036 0505", "jcb", "credit", "JP"},
		{"6200 0000 0000 0005", "unionpay", "credit", "CN"},
		{"4111 1111 1111 1111", "visa", "unknown", ""},
		{"6555 9000 0060 4105", "discover", "unknown", ""},
		{"6759 6498 2643 8453", "maestro", "unknown", ""},
	} {
		t.Run(strings.ReplaceAll(tc.number, " ", ""), func(t *testing.T) {
			cvv := "737"
			if tc.brand == "amex" {
				cvv = "7373"
			}
			c, err := acquiring.DecryptCard(k, field, seal(t, k, mgfSHA25, card(tc.number, "12", "2030", cvv)), now)
			if err != nil {
				t.Fatal(err)
			}
			if got := [3]string{c.Brand, c.Type, c.BINCountry}; got != [3]string{tc.brand, tc.typ, tc.country} {
				t.Errorf("brand, type, country = %q, want %q", got, [3]string{tc.brand, tc.typ, tc.country})
			}
		})
	}
}

// BenchmarkDecryptCard measures DecryptCard under a 2048-bit key: one
// RSA-OAEP decryption for Go-style padding, two for Java-style (SHA-256
// is tried first).
func BenchmarkDecryptCard(b *testing.B) {
	k := key2048()
	for _, bc := range []struct {
		name string
		mgf  crypto.Hash
	}{{"MGF1SHA256", mgfSHA25}, {"MGF1SHA1", mgfSHA1}} {
		data := seal(b, k, bc.mgf, card("4242 4242 4242 4242", "12", "2030", "737"))
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := acquiring.DecryptCard(k, field, data, now); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// FuzzDecryptCard checks that any card plaintext, encrypted as a client
// would, either validates or answers a validation error; never a panic or
// another kind of error.
func FuzzDecryptCard(f *testing.F) {
	for _, s := range []string{card("4242424242424242", "12", "2030", "737"), `{}`, `null`, `{"card_number":"\u0034"}`,
		`{"cvv":"` + strings.Repeat("9", 40) + `"}`, `{"expiration_year":1e3}`, `{"expiration_month":-1}`, "\xff"} {
		f.Add(s)
	}
	k := key2048()
	f.Fuzz(func(t *testing.T, plaintext string) {
		if len(plaintext) > acquiring.MaxCardPlaintext {
			return
		}
		_, err := acquiring.DecryptCard(k, field, seal(t, k, mgfSHA25, plaintext), now)
		if err != nil && corebank.KindOf(err) != corebank.KindInvalid {
			t.Fatalf("err = %v, want nil or a validation error", err)
		}
	})
}
