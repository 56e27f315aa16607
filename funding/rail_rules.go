package funding

import (
	"fmt"
	"math"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/corebank/corebank"
)

// This file holds the rules of the momo and crypto rails as pure
// functions: no storage, no clock, no randomness. The session service
// calls them while it validates a request (checkMomo) and while it decides
// what a payment does to a session (cryptoOutcome); the sandbox providers
// call the sandbox... functions to pick an outcome from a magic value.

// MomoChannel is one mobile-money collection channel a momo funding
// session can push its prompt through: Name is what meta.channel holds,
// Country the alpha-2 country the session takes from it, Network the
// operator part of the name.
type MomoChannel struct{ Name, Country, Network string }

// momoChannels is the list SPEC.md's momo rail is limited to (see
// "Mobile money channels" in doc.go).
var momoChannels = []MomoChannel{
	{Name: "KE-SAFARICOM-C2B", Country: "KE", Network: "SAFARICOM"},
	{Name: "TZ-AIRTEL-C2B", Country: "TZ", Network: "AIRTEL"},
	{Name: "TZ-TIGO-C2B", Country: "TZ", Network: "TIGO"},
	{Name: "TZ-HALOTEL-C2B", Country: "TZ", Network: "HALOTEL"},
	{Name: "TZ-VODACOM-C2B", Country: "TZ", Network: "VODACOM"},
}

// MomoChannels returns the momo channels a funding session accepts, in a
// fresh slice the caller may keep or change.
func MomoChannels() []MomoChannel {
	return append([]MomoChannel(nil), momoChannels...)
}

func momoChannel(name string) (MomoChannel, bool) {
	for _, c := range momoChannels {
		if c.Name == name {
			return c, true
		}
	}
	return MomoChannel{}, false
}

// momoCountry is one national numbering plan: its E.164 country code, the
// length of its national significant number (NSN), the digits a mobile
// NSN starts with, and the NSN prefixes the regulator allocated to each
// mobile network.
type momoCountry struct {
	name     string
	code     string
	nsnLen   int
	mobile   string // first digits of a mobile NSN
	example  string // a valid NSN, for problem messages
	prefixes []momoPrefix
}

// momoPrefix is an inclusive range of NSN prefixes of one length (from and
// to have the same number of digits) allocated to Operator, whose momo
// channels carry Network in their name.
type momoPrefix struct {
	from, to string
	operator string
	network  string
}

// momoCountries holds the numbering plans of the channels' countries.
//
// Kenya: the Communications Authority of Kenya's Telecommunication
// Numbering Plan (CA/LCS/NNP, October 2019) as summarised, with later
// allocations, by Wikipedia's "Telephone numbers in Kenya"
// (https://en.wikipedia.org/wiki/Telephone_numbers_in_Kenya) and
// libphonenumber's resources/carrier/en/254.txt; the 01xx ranges
// (Safaricom 0110-0115, Airtel 0100-0102) were opened in May 2019
// (techweez.com 2019-04-10, standardmedia.co.ke 2001323442).
//
// Tanzania: the TCRA National Numbering Plan as summarised by Wikipedia's
// "Telephone numbers in Tanzania"
// (https://en.wikipedia.org/wiki/Telephone_numbers_in_Tanzania) and
// libphonenumber's resources/carrier/en/255.txt (the release that names
// Tigo by its 2024 brand, Yas). Zantel's 77 range is carried by Tigo since
// Honora (Tigo) took Zantel over in 2022, so a Tigo channel accepts it
// without a warning.
//
// Both countries have mobile number portability, so a prefix only says
// which network a number was issued on: checkMomo warns, never refuses.
var momoCountries = map[string]momoCountry{
	"KE": {name: "Kenyan", code: "254", nsnLen: 9, mobile: "17", example: "712345678", prefixes: []momoPrefix{
		{"100", "102", "Airtel", "AIRTEL"},
		{"110", "115", "Safaricom", "SAFARICOM"},
		{"700", "729", "Safaricom", "SAFARICOM"},
		{"730", "739", "Airtel", "AIRTEL"},
		{"740", "743", "Safaricom", "SAFARICOM"},
		{"745", "746", "Safaricom", "SAFARICOM"},
		{"747", "747", "JTL (Faiba)", "FAIBA"},
		{"748", "748", "Safaricom", "SAFARICOM"},
		{"750", "756", "Airtel", "AIRTEL"},
		{"757", "759", "Safaricom", "SAFARICOM"},
		{"762", "762", "Airtel", "AIRTEL"},
		{"763", "766", "Finserve (Equitel)", "EQUITEL"},
		{"768", "769", "Safaricom", "SAFARICOM"},
		{"770", "779", "Telkom", "TELKOM"},
		{"780", "789", "Airtel", "AIRTEL"},
		{"790", "799", "Safaricom", "SAFARICOM"},
	}},
	"TZ": {name: "Tanzanian", code: "255", nsnLen: 9, mobile: "67", example: "712345678", prefixes: []momoPrefix{
		{"61", "63", "Halotel", "HALOTEL"},
		{"65", "65", "Tigo", "TIGO"},
		{"66", "66", "Airtel", "AIRTEL"},
		{"67", "67", "Tigo", "TIGO"},
		{"68", "69", "Airtel", "AIRTEL"},
		{"70", "71", "Tigo", "TIGO"},
		{"72", "72", "Vodacom", "VODACOM"},
		{"73", "73", "TTCL", "TTCL"},
		{"74", "76", "Vodacom", "VODACOM"},
		{"77", "77", "Zantel", "TIGO"},
		{"78", "78", "Airtel", "AIRTEL"},
		{"79", "79", "Vodacom", "VODACOM"},
	}},
}

// operator returns the prefix range nsn falls in, and false for a prefix
// allocated to no mobile network this table knows.
func (c momoCountry) operator(nsn string) (momoPrefix, bool) {
	for _, p := range c.prefixes {
		if head := nsn[:len(p.from)]; head >= p.from && head <= p.to {
			return p, true
		}
	}
	return momoPrefix{}, false
}

// checkMomo validates the momo rail's meta: meta.channel must be one of
// MomoChannels and meta.msisdn the payer's number in international form.
// It records problems under "meta.channel" and "meta.msisdn" and returns
// the channel's alpha-2 country ("" for an unknown channel), the number in
// its one stored form "+<country code><NSN>" ("" when it is invalid), and
// a warning ("" for none) when the number's prefix was allocated to
// another network than the channel's. The number is accepted with or
// without its leading '+' and with spaces between digits, which are
// dropped; a local form ("07...", "7...") or any other character is
// refused.
func checkMomo(p corebank.Problems, meta map[string]string) (country, msisdn, warning string) {
	name := meta["channel"]
	ch, ok := momoChannel(name)
	switch {
	case name == "":
		p.Add("meta.channel", "is required for momo")
	case !ok:
		p.Add("meta.channel", "must be one of "+momoChannelNames())
	}
	raw, present := meta["msisdn"]
	digits, problem := msisdnDigits(raw, present)
	if problem != "" {
		p.Add("meta.msisdn", problem)
		return ch.Country, "", ""
	}
	if !ok {
		// Without a channel there is no country to check the number
		// against; the channel's problem is the one to fix first.
		return "", "", ""
	}
	c := momoCountries[ch.Country]
	nsn, problem := c.nsn(digits, name)
	if problem != "" {
		p.Add("meta.msisdn", problem)
		return ch.Country, "", ""
	}
	msisdn = "+" + digits
	if op, known := c.operator(nsn); !known {
		warning = fmt.Sprintf("msisdn %s is in a range allocated to no known mobile network, not %s; accepted because numbers are portable", msisdn, ch.Network)
	} else if op.network != ch.Network {
		warning = fmt.Sprintf("msisdn %s is in a range allocated to %s, not %s; accepted because numbers are portable", msisdn, op.operator, ch.Network)
	}
	return ch.Country, msisdn, warning
}

func momoChannelNames() string {
	names := make([]string, len(momoChannels))
	for i, c := range momoChannels {
		names[i] = c.Name
	}
	return strings.Join(names, ", ")
}

// localForm is the problem of a number written without its country code.
const localForm = "is a local number; use the international form with the country code, such as +254712345678"

// msisdnDigits returns raw's digits without its '+' and spaces, or a
// problem: it is missing, holds anything else, starts with the 00
// international prefix, or starts with a trunk '0' (a local form).
func msisdnDigits(raw string, present bool) (digits, problem string) {
	if !present || strings.TrimSpace(raw) == "" {
		return "", "is required for momo"
	}
	s := strings.ReplaceAll(raw, " ", "")
	s = strings.TrimPrefix(s, "+")
	switch {
	case !corebank.IsDigits(s):
		return "", "must be + and digits, such as +254712345678"
	case strings.HasPrefix(s, "00"):
		return "", "must start with the country code, not 00; use the international form, such as +254712345678"
	case s[0] == '0':
		return "", localForm
	case len(s) > 15:
		return "", "must have at most 15 digits (E.164)"
	}
	return s, ""
}

// nsn returns the national significant number of digits (a number in
// international form without '+'), or a problem: a bare NSN (a local
// form), a country code other than c's, a trunk 0 after the code, a
// length other than c's plan, or a number that is not mobile.
func (c momoCountry) nsn(digits, channel string) (string, string) {
	want := fmt.Sprintf("+%s and %d digits, such as +%s%s", c.code, c.nsnLen, c.code, c.example)
	if !strings.HasPrefix(digits, c.code) {
		if len(digits) == c.nsnLen {
			return "", localForm
		}
		return "", fmt.Sprintf("must be a %s number for channel %s: %s", c.name, channel, want)
	}
	nsn := digits[len(c.code):]
	switch {
	case strings.HasPrefix(nsn, "0"):
		return "", fmt.Sprintf("must not have a 0 after the country code: %s", want)
	case len(nsn) != c.nsnLen:
		return "", fmt.Sprintf("must have %d digits after +%s, has %d", c.nsnLen, c.code, len(nsn))
	case !strings.ContainsRune(c.mobile, rune(nsn[0])):
		return "", fmt.Sprintf("is not a %s mobile number (those start +%s and one of %s)", c.name, c.code, strings.Join(strings.Split(c.mobile, ""), ", "))
	}
	return nsn, ""
}

// momoMagic is one sandbox MSISDN suffix: the M-Pesa-style result the
// sandbox provider reports for a number ending in Suffix, with SPEC.md's
// failure code for it.
type momoMagic struct {
	Suffix      string
	ResultCode  string // the provider's raw code (Daraja STK push ResultCode)
	Result      string
	FailureCode string
}

// momoMagics is the sandbox's MSISDN suffix table. Each suffix spells the
// M-Pesa (Daraja STK push) ResultCode it stands for, so a test reads as
// the provider's documentation does.
var momoMagics = []momoMagic{
	{Suffix: "1032", ResultCode: "1032", Result: "request cancelled by user", FailureCode: "payment_cancelled"},
	{Suffix: "0001", ResultCode: "1", Result: "insufficient balance", FailureCode: "insufficient_funds"},
	{Suffix: "1037", ResultCode: "1037", Result: "timeout: user cannot be reached", FailureCode: "session_expired"},
}

// sandboxMomoResult returns the failure code the sandbox momo provider
// reports for a push prompt to msisdn: "" (the payer approves) unless
// msisdn ends in one of momoMagics' suffixes.
func sandboxMomoResult(msisdn string) (failureCode string) {
	return sandboxMomoMagic(msisdn).FailureCode
}

// sandboxMomoMagic returns msisdn's entry in momoMagics, or the approval
// entry (ResultCode "0", no failure code) when no suffix matches.
func sandboxMomoMagic(msisdn string) momoMagic {
	for _, m := range momoMagics {
		if strings.HasSuffix(msisdn, m.Suffix) {
			return m
		}
	}
	return momoMagic{ResultCode: "0", Result: "the service request is processed successfully"}
}

// CryptoPayment is what a crypto payer sent for a session: Received
// smallest units, and Late when they arrived after the invoice lapsed.
type CryptoPayment struct {
	Received int64
	Late     bool
}

// Sandbox crypto amount suffixes (requested % 100); see "Sandbox magic
// values" in doc.go.
const (
	cryptoMagicUnderWithin = 91 // one unit short
	cryptoMagicUnderBeyond = 92 // half the amount
	cryptoMagicOver        = 93 // a tenth more
	cryptoMagicLate        = 94 // exact, late
)

// sandboxCryptoPayment returns what the sandbox crypto payer sends for an
// invoice of requested smallest units, picked by requested's last two
// digits: 91 one unit short, 92 half (rounded down), 93 a tenth more
// (rounded down, at least one unit, capped at math.MaxInt64), 94 the exact
// amount but late; any other amount is paid exactly and on time.
func sandboxCryptoPayment(requested int64) CryptoPayment {
	switch requested % 100 {
	case cryptoMagicUnderWithin:
		return CryptoPayment{Received: requested - 1}
	case cryptoMagicUnderBeyond:
		return CryptoPayment{Received: requested / 2}
	case cryptoMagicOver:
		extra := max(requested/10, 1)
		if requested > math.MaxInt64-extra {
			return CryptoPayment{Received: math.MaxInt64}
		}
		return CryptoPayment{Received: requested + extra}
	case cryptoMagicLate:
		return CryptoPayment{Received: requested, Late: true}
	}
	return CryptoPayment{Received: requested}
}

// Crypto outcomes, CryptoOutcome.Outcome.
const (
	CryptoExact     = "exact"
	CryptoUnderpaid = "underpaid"
	CryptoOverpaid  = "overpaid"
	CryptoLate      = "late"
)

// CryptoOutcome is what a crypto payment does to its session: Outcome (one
// of CryptoExact, CryptoUnderpaid, CryptoOverpaid, CryptoLate), Credit
// (always the amount that arrived), Settle (whether the session settles,
// crediting Credit) and FailureCode (SPEC.md's code when it does not).
type CryptoOutcome struct {
	Outcome     string
	Credit      int64
	Settle      bool
	FailureCode string
}

// cryptoOutcome decides what payment p does to a session that requested
// requested smallest units. Credit is always p.Received, never requested.
// An exact payment or an overpayment settles; an underpayment settles
// when its shortfall is at most tolerance × requested (tolerance is a
// fraction, 0.01 for 1%; a negative one counts as 0) and otherwise fails
// with "payment_rejected", as does a payment of nothing (Received <= 0,
// whatever was requested). A late payment
// has Outcome CryptoLate and follows the same amount rules: the money is
// on chain and the bank holds it, so lateness alone never refuses it.
// The arithmetic is exact (decimal), so no amount overflows.
func cryptoOutcome(requested int64, p CryptoPayment, tolerance decimal.Decimal) CryptoOutcome {
	o := CryptoOutcome{Outcome: CryptoExact, Credit: p.Received, Settle: true}
	switch {
	case p.Received > requested:
		o.Outcome = CryptoOverpaid
	case p.Received < requested:
		o.Outcome = CryptoUnderpaid
		short := decimal.NewFromInt(requested).Sub(decimal.NewFromInt(p.Received))
		allowed := decimal.NewFromInt(requested).Mul(decimal.Max(tolerance, decimal.Zero))
		if short.GreaterThan(allowed) {
			o.Settle, o.FailureCode = false, "payment_rejected"
		}
	}
	if p.Received <= 0 { // nothing arrived, whatever was asked for
		o.Settle, o.FailureCode = false, "payment_rejected"
	}
	if p.Late {
		o.Outcome = CryptoLate
	}
	return o
}
