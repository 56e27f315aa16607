package acquiring

// Card data
//
// A card-acq intent action carries the card in
// intent_action.payment_type_data.data: Base64 of one RSA-OAEP block made
// with the calling API key's encryption_public_key. DecryptCard opens it
// with that key's private key, validates the card and keeps only a Card:
// brand, type, BIN country, last four digits and expiry. The number and the
// CVV never leave DecryptCard: they are read from the decrypted buffer as
// bytes (never as Go strings, which cannot be wiped), checked, and the
// buffers are zeroed before it returns. No error message repeats them.
//
// # Accepted forms
//
//   - Base64 in the standard alphabet, padded or not, or the URL-safe
//     alphabet, padded or not; spaces and line breaks are ignored (Java's
//     MIME encoder wraps lines at 76 characters).
//   - Exactly one RSA-OAEP block, as long as the key's modulus (256 bytes
//     for the 2048-bit keys corebank mints), with SHA-256 as the OAEP hash,
//     no label, and MGF1 with either SHA-256 (Go's rsa.EncryptOAEP, OpenSSL
//     with rsa_mgf1_md:sha256, WebCrypto's RSA-OAEP with SHA-256) or SHA-1
//     (Java's "RSA/ECB/OAEPWithSHA-256AndMGF1Padding", whose default
//     MGF1 digest is SHA-1). Both are tried; either decrypting is enough.
//   - A plaintext of at most MaxCardPlaintext (190) bytes. That is all a
//     2048-bit key can carry with OAEP SHA-256 (256 - 2*32 - 2); a client
//     holding a larger key could encrypt more, but the limit is kept for
//     every key size so that card data valid under one key is valid under
//     all of them. Longer plaintext is refused naming the limit.
//   - The plaintext is one JSON object with exactly these members (others
//     are refused, so a misspelt "cvc" is named, not ignored):
//     "card_number" a string of 13-19 digits, spaces ignored, passing the
//     Luhn check; "expiration_month" 1-12 or "01"-"12", a string or a
//     number; "expiration_year" four digits, a string or a number, not in
//     the past, where a card expiring in the current month (UTC) is still
//     valid; "cvv" a string of 3 digits, or 4 for American Express (a
//     number would lose leading zeros, so it must be a string);
//     "card_holder_name" optional, a string, not kept.
//
// # Errors
//
// Every failure is a corebank validation error (KindInvalid, 422) naming
// the field: the data field itself when it cannot be opened (empty, not
// Base64, Base64 of plain JSON, a raw card number or raw JSON where
// ciphertext belongs, the wrong length for the key, ciphertext of another or
// a rotated key, plaintext over the limit or not a JSON object), or its
// members under it ("intent_action.payment_type_data.data.card_number",
// ".expiration_month", ".expiration_year", ".cvv", ".card_holder_name", or
// the name of an unknown member), all of them at once. A nil key is a
// programming error and answers an internal error.
//
// # What is derived
//
// Brand comes from the issuer identification number ranges: visa (4),
// mastercard (51-55, 2221-2720), amex (34, 37), discover (6011, 644-649,
// 65), diners (300-305, 36, 38-39), jcb (3528-3589), unionpay (62),
// maestro (50, 56-58, 6304, 6759, 676770, 676774), else "unknown". Type
// ("credit", "debit" or "prepaid") and BINCountry (ISO 3166 alpha-2) come
// from the small table of test BINs below (longest prefix wins); a BIN it
// does not list is Type "unknown" (as card processors report a funding type
// they cannot tell) and BINCountry "".
//
//	prefix     brand       type     country   example number
//	40000012   visa        credit   CA        4000 0012 4000 0000
//	40000007   visa        credit   BR        4000 0007 6000 0002
//	40000048   visa        credit   MX        4000 0048 4000 8001
//	40000082   visa        credit   GB        4000 0082 6000 0000
//	40000566   visa        debit    US        4000 0566 5566 5556
//	400000     visa        credit   US        4000 0000 0000 0002 (the test cards)
//	400008     visa        credit   US        4000 0084 0000 1629
//	424242     visa        credit   US        4242 4242 4242 4242
//	520082     mastercard  debit    US        5200 8282 8282 8210
//	510510     mastercard  prepaid  US        5105 1051 0510 5100
//	555555     mastercard  credit   US        5555 5555 5555 4444
//	222300     mastercard  credit   US        2223 0031 2200 3222
//	378282     amex        credit   US        3782 822463 10005
//	601111     discover    credit   US        6011 1111 1111 1117
//	305693     diners      credit   US        3056 9300 0902 0004
//	356600     jcb         credit   JP        3566 0020 2036 0505
//	620000     unionpay    credit   CN        6200 0000 0000 0005
//
// # Test cards
//
// In the sandbox the last four digits of the number choose what happens
// (TestCardOutcome); the numbers below are Luhn-valid Visa numbers.
// Any other valid card succeeds, with 3-D Secure as the request's
// auth_model says (3ds_disabled completes at once, 3ds_required
// challenges). Failure codes are the action's status_reason; SPEC.md names
// only card_declined (CONTRACT.md "Card test data"), the others follow the
// decline codes card processors publish. A card that always challenges
// (challenge, challenge_decline) cannot be charged under 3ds_disabled: it
// is declined with CodeAuthenticationRequired, as card processors decline
// a charge that needs authentication when none was attempted.
//
//	number               outcome            failure code / reason   what happens
//	4000 0000 0000 0002  decline            card_declined           declined
//	4000 0000 0000 9995  decline            insufficient_funds      declined
//	4000 0000 0000 0069  decline            expired_card            declined as expired, whatever the expiry sent
//	4000 0000 0000 0127  decline            incorrect_cvc           declined, whatever the CVV sent
//	4000 0000 0000 0119  decline            processing_error        declined by a processing error
//	4000 0000 0000 3220  challenge          -                       3-D Secure always challenges
//	4000 0084 0000 1629  challenge_decline  card_declined           challenged, then declined once authenticated
//	4000 0000 0000 3055  frictionless       -                       3-D Secure completes without a challenge
//	4000 0000 0000 5126  refund_fails       refund_declined         charge succeeds; its refunds fail asynchronously
//	4000 0000 0000 0259  dispute            fraudulent              charge succeeds, then is disputed as fraudulent

import (
	"bytes"
	"crypto"
	"crypto/rsa"
	_ "crypto/sha1" // registers crypto.SHA1, the MGF1 hash of Java-style padding
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/internal/b64"
	"github.com/corebank/corebank/internal/luhn"
)

// MaxCardPlaintext is the largest decrypted card object DecryptCard
// accepts, in bytes: what RSA-OAEP with SHA-256 carries under a 2048-bit
// key (256 - 2*32 - 2), kept for every key size.
const MaxCardPlaintext = 190

// Card is all that is kept of a card: never its number or CVV. Brand is
// visa, mastercard, amex, discover, diners, jcb, unionpay, maestro or
// unknown; Type is credit, debit, prepaid or unknown; BINCountry is an
// ISO 3166 alpha-2 code or "" when unknown. An action record stores it
// (as "card"), under these names.
type Card struct {
	Brand      string `json:"brand"`
	Type       string `json:"type"`
	BINCountry string `json:"bin_country"`
	Last4      string `json:"last4"`
	ExpMonth   int    `json:"exp_month"`
	ExpYear    int    `json:"exp_year"`
}

// UnmarshalJSON reads a Card in either form the store holds: the tagged
// names, or Go's field names, which records written before Card had tags
// carry ("BINCountry", "ExpMonth"). encoding/json already matches "Brand",
// "Type" and "Last4" to their tags, as it ignores case; the three names
// with a word break are read under their old spelling here.
func (c *Card) UnmarshalJSON(b []byte) error {
	type tagged Card // Card without this method
	var v struct {
		tagged
		OldBINCountry *string `json:"BINCountry"`
		OldExpMonth   *int    `json:"ExpMonth"`
		OldExpYear    *int    `json:"ExpYear"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*c = Card(v.tagged)
	if v.OldBINCountry != nil {
		c.BINCountry = *v.OldBINCountry
	}
	if v.OldExpMonth != nil {
		c.ExpMonth = *v.OldExpMonth
	}
	if v.OldExpYear != nil {
		c.ExpYear = *v.OldExpYear
	}
	return nil
}

// DecryptCard decrypts and validates b64, the card data of the API key
// whose private key is priv, as of now, and returns what is kept of the
// card. field is the JSON path of b64 in the request, used to name the
// field (and its members under it) in a corebank validation error; see
// "Accepted forms" and "Errors" at the top of this file. A nil priv answers
// an internal error.
func DecryptCard(priv *rsa.PrivateKey, field, b64 string, now time.Time) (Card, error) {
	if priv == nil {
		return Card{}, errors.New("acquiring: DecryptCard without a private key")
	}
	pt, err := openCard(priv, field, b64)
	if err != nil {
		return Card{}, err
	}
	defer clear(pt)
	return parseCard(pt, field, now)
}

// openCard returns the plaintext of data or an error naming field.
func openCard(priv *rsa.PrivateKey, field, data string) ([]byte, error) {
	s := strings.TrimSpace(data)
	switch {
	case s == "":
		return nil, corebank.InvalidField(field, "is required")
	case strings.HasPrefix(s, "{"):
		return nil, corebank.InvalidField(field, "is plain JSON; raw card details are never accepted: "+
			"send Base64 of the card JSON encrypted with RSA-OAEP SHA-256 under this API key's encryption_public_key")
	case looksLikeCardNumber(s):
		return nil, corebank.InvalidField(field, "looks like a raw card number; raw card details are never accepted: "+
			"send Base64 of the card JSON encrypted with RSA-OAEP SHA-256 under this API key's encryption_public_key")
	}
	ct, err := b64.Decode(s)
	if err != nil {
		return nil, corebank.InvalidField(field, "is not Base64 (standard or URL-safe alphabet)")
	}
	if looksLikeJSON(ct) && len(ct) != priv.Size() {
		return nil, corebank.InvalidField(field, "is Base64 of plain JSON; raw card details are never accepted: "+
			"encrypt the card JSON with RSA-OAEP SHA-256 under this API key's encryption_public_key")
	}
	if len(ct) != priv.Size() {
		return nil, corebank.InvalidField(field, fmt.Sprintf(
			"decodes to %d bytes; it must be one RSA-OAEP block of %d bytes, made with this API key's %d-bit encryption_public_key "+
				"from at most %d bytes of card JSON", len(ct), priv.Size(), priv.N.BitLen(), MaxCardPlaintext))
	}
	pt, err := rsa.DecryptOAEP(sha256.New(), nil, priv, ct, nil)
	if err != nil {
		// Java's OAEPWithSHA-256AndMGF1Padding keeps SHA-1 for MGF1.
		pt, err = priv.Decrypt(nil, ct, &rsa.OAEPOptions{Hash: crypto.SHA256, MGFHash: crypto.SHA1})
	}
	if err != nil {
		return nil, corebank.InvalidField(field, "does not decrypt with this API key's encryption key: "+
			"encrypt with RSA-OAEP SHA-256 (MGF1 SHA-256 or SHA-1) under the encryption_public_key of the key making the request, "+
			"as issued or last rotated")
	}
	if len(pt) > MaxCardPlaintext {
		n := len(pt)
		clear(pt)
		return nil, corebank.InvalidField(field, fmt.Sprintf(
			"decrypts to %d bytes of card JSON; at most %d are accepted (what RSA-OAEP SHA-256 carries under a 2048-bit key)",
			n, MaxCardPlaintext))
	}
	return pt, nil
}

// looksLikeCardNumber reports whether s is 13-19 digits with optional spaces.
func looksLikeCardNumber(s string) bool {
	n := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			n++
		case c == ' ' || c == '-':
		default:
			return false
		}
	}
	return n >= 13 && n <= 19
}

func looksLikeJSON(b []byte) bool {
	b = bytes.TrimLeft(b, " \t\r\n")
	return len(b) > 0 && b[0] == '{'
}

// cardMembers are the members of the card plaintext; see SPEC.md
// "Payment intents and intent actions".
var cardMembers = []string{"card_number", "expiration_month", "expiration_year", "cvv", "card_holder_name"}

// parseCard validates the plaintext card object pt. Every raw member is
// zeroed before it returns; only the last four digits become a string.
func parseCard(pt []byte, field string, now time.Time) (Card, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(pt, &raw); err != nil || raw == nil {
		return Card{}, corebank.InvalidField(field, "decrypts, but not to a JSON object with the card's members")
	}
	defer func() {
		for _, v := range raw {
			clear(v)
		}
	}()
	p := corebank.Problems{}
	for name := range raw {
		known := false
		for _, m := range cardMembers {
			known = known || name == m
		}
		if known {
			continue
		}
		// A member name is echoed only when it cannot be card digits.
		if strings.ContainsFunc(name, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '_' || r == '-') }) || len(name) > 40 {
			p.Add(field, "the card object has an unknown member")
		} else if name == "cvc" {
			p.Add(field+"."+name, "unknown field; the card's security code is cvv")
		} else {
			p.Add(field+"."+name, "unknown field")
		}
	}

	var c Card
	var digits [19]byte
	defer clear(digits[:])
	n, ok := cardDigits(raw["card_number"], &digits)
	switch {
	case raw["card_number"] == nil:
		p.Add(field+".card_number", "is required")
	case !ok || n < 13 || n > 19:
		p.Add(field+".card_number", "must be a string of 13-19 digits (spaces ignored)")
	case !luhn.Valid(digits[:n]):
		p.Add(field+".card_number", "is not a valid card number (fails the Luhn check)")
	default:
		c.Brand = brandOf(digits[:n])
		c.Type, c.BINCountry = "unknown", ""
		if b, ok := lookupBIN(digits[:n]); ok {
			c.Type, c.BINCountry = b.typ, b.country
		}
		c.Last4 = string(digits[n-4 : n])
	}

	month, monthOK := smallNumber(raw["expiration_month"], 1, 2)
	switch {
	case raw["expiration_month"] == nil:
		p.Add(field+".expiration_month", "is required")
	case !monthOK || month < 1 || month > 12:
		p.Add(field+".expiration_month", "must be 1-12 or 01-12")
	default:
		c.ExpMonth = month
	}
	year, yearOK := smallNumber(raw["expiration_year"], 4, 4)
	now = now.UTC()
	switch {
	case raw["expiration_year"] == nil:
		p.Add(field+".expiration_year", "is required")
	case !yearOK:
		p.Add(field+".expiration_year", "must be four digits")
	case year < now.Year():
		p.Add(field+".expiration_year", "is in the past; the card has expired")
	case year > now.Year()+50:
		p.Add(field+".expiration_year", "is more than 50 years ahead")
	default:
		c.ExpYear = year
		if c.ExpMonth != 0 && year == now.Year() && time.Month(c.ExpMonth) < now.Month() {
			p.Add(field+".expiration_month", "is in the past; the card has expired")
		}
	}

	// The CVV's length follows the brand when the number gave one.
	cvv := raw["cvv"]
	l, ok := cvvDigits(cvv)
	want, lenOK := "3 or 4 digits", l == 3 || l == 4
	switch c.Brand {
	case "amex":
		want, lenOK = "4 digits for American Express", l == 4
	case "", "unknown":
	default:
		want, lenOK = "3 digits", l == 3
	}
	switch {
	case cvv == nil:
		p.Add(field+".cvv", "is required")
	case !ok || !lenOK:
		p.Add(field+".cvv", "must be a string of "+want)
	}

	if name, ok := raw["card_holder_name"]; ok {
		var s string
		if err := json.Unmarshal(name, &s); err != nil && !bytes.Equal(name, []byte("null")) {
			p.Add(field+".card_holder_name", "must be a string")
		}
	}
	if err := p.Err(); err != nil {
		return Card{}, err
	}
	return c, nil
}

// cardDigits copies the digits of the JSON string raw into d, skipping
// spaces; ok is false for anything but a string of digits and spaces, or
// more than len(d) digits.
func cardDigits(raw json.RawMessage, d *[19]byte) (n int, ok bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return 0, false
	}
	for _, c := range raw[1 : len(raw)-1] {
		switch {
		case c == ' ':
		case c >= '0' && c <= '9' && n < len(d):
			d[n] = c
			n++
		default:
			return 0, false
		}
	}
	return n, true
}

// cvvDigits returns the length of the JSON string raw when it holds only
// digits.
func cvvDigits(raw json.RawMessage) (int, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return 0, false
	}
	s := raw[1 : len(raw)-1]
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	return len(s), true
}

// smallNumber reads raw, a JSON number or string of min-max digits.
func smallNumber(raw json.RawMessage, min, max int) (int, bool) {
	s := raw
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		s = s[1 : len(s)-1]
	}
	if len(s) < min || len(s) > max {
		return 0, false
	}
	v := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, true
}

// prefixIn reports whether the first len(lo) digits of d lie in [lo, hi].
func prefixIn(d []byte, lo, hi string) bool {
	if len(d) < len(lo) {
		return false
	}
	p := string(d[:len(lo)])
	return p >= lo && p <= hi
}

// brands lists issuer identification number ranges; the first match wins.
var brands = []struct{ brand, lo, hi string }{
	{"amex", "34", "34"}, {"amex", "37", "37"},
	{"jcb", "3528", "3589"},
	{"diners", "300", "305"}, {"diners", "36", "36"}, {"diners", "38", "39"},
	{"visa", "4", "4"},
	{"mastercard", "51", "55"}, {"mastercard", "2221", "2720"},
	{"discover", "6011", "6011"}, {"discover", "644", "649"}, {"discover", "65", "65"},
	{"unionpay", "62", "62"},
	{"maestro", "50", "50"}, {"maestro", "56", "58"}, {"maestro", "6304", "6304"},
	{"maestro", "6759", "6759"}, {"maestro", "676770", "676770"}, {"maestro", "676774", "676774"},
}

func brandOf(d []byte) string {
	for _, b := range brands {
		if prefixIn(d, b.lo, b.hi) {
			return b.brand
		}
	}
	return "unknown"
}

type binInfo struct{ prefix, typ, country string }

// testBINs is the table of test BINs in "What is derived" above, longest
// prefixes first.
var testBINs = []binInfo{
	{"40000012", "credit", "CA"},
	{"40000007", "credit", "BR"},
	{"40000048", "credit", "MX"},
	{"40000082", "credit", "GB"},
	{"40000566", "debit", "US"},
	{"400000", "credit", "US"},
	{"400008", "credit", "US"},
	{"424242", "credit", "US"},
	{"520082", "debit", "US"},
	{"510510", "prepaid", "US"},
	{"555555", "credit", "US"},
	{"222300", "credit", "US"},
	{"378282", "credit", "US"},
	{"601111", "credit", "US"},
	{"305693", "credit", "US"},
	{"356600", "credit", "JP"},
	{"620000", "credit", "CN"},
}

func lookupBIN(d []byte) (binInfo, bool) {
	for _, b := range testBINs {
		if bytes.HasPrefix(d, []byte(b.prefix)) {
			return b, true
		}
	}
	return binInfo{}, false
}

// TestCard is a sandbox test card: what a card whose number ends in Last4
// does when charged. Outcome is one of "success", "decline", "challenge",
// "challenge_decline", "frictionless", "refund_fails" and "dispute";
// FailureCode is the declined action's status_reason (decline,
// challenge_decline), the failed refund's status_reason (refund_fails) or
// the dispute's reason (dispute), and "" otherwise. See "Test cards" at
// the top of this file for the numbers.
type TestCard struct {
	Last4, Outcome, FailureCode, Description string
}

// The outcomes of TestCard.
const (
	OutcomeSuccess          = "success"
	OutcomeDecline          = "decline"
	OutcomeChallenge        = "challenge"
	OutcomeChallengeDecline = "challenge_decline"
	OutcomeFrictionless     = "frictionless"
	OutcomeRefundFails      = "refund_fails"
	OutcomeDispute          = "dispute"
)

// CodeAuthenticationRequired is the status_reason of a challenge or
// challenge_decline test card charged under 3ds_disabled.
const CodeAuthenticationRequired = "authentication_required"

var testCards = []TestCard{
	{"0002", OutcomeDecline, "card_declined", "declined"},
	{"9995", OutcomeDecline, "insufficient_funds", "declined for insufficient funds"},
	{"0069", OutcomeDecline, "expired_card", "declined as expired, whatever the expiry sent"},
	{"0127", OutcomeDecline, "incorrect_cvc", "declined for an incorrect CVV, whatever the CVV sent"},
	{"0119", OutcomeDecline, "processing_error", "declined by a processing error"},
	{"3220", OutcomeChallenge, "", "always challenged by 3-D Secure"},
	{"1629", OutcomeChallengeDecline, "card_declined", "challenged by 3-D Secure, then declined once authenticated"},
	{"3055", OutcomeFrictionless, "", "3-D Secure completes without a challenge"},
	{"5126", OutcomeRefundFails, "refund_declined", "the charge succeeds; its refunds fail asynchronously"},
	{"0259", OutcomeDispute, "fraudulent", "the charge succeeds, then is disputed as fraudulent"},
}

// TestCardOutcome returns the sandbox behaviour of a card whose number
// ends in last4: a row of "Test cards" at the top of this file, or, for
// any other card, Outcome "success" (with 3-D Secure as the request's
// auth_model says).
func TestCardOutcome(last4 string) TestCard {
	for _, c := range testCards {
		if c.Last4 == last4 {
			return c
		}
	}
	return TestCard{Last4: last4, Outcome: OutcomeSuccess, Description: "succeeds"}
}

// TestCards returns every sandbox test card of TestCardOutcome, in the
// order of the table in "Test cards".
func TestCards() []TestCard {
	return append([]TestCard(nil), testCards...)
}
