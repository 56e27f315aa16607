package funding

import (
	"flag"
	"math"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/corebank/corebank"
)

var railSeed = flag.Int64("funding.rail.seed", 0, "seed of the crypto outcome property test (0: time-based)")

func TestMomoChannels(t *testing.T) {
	want := []MomoChannel{
		{Name: "KE-SAFARICOM-C2B", Country: "KE", Network: "SAFARICOM"},
		{Name: "TZ-AIRTEL-C2B", Country: "TZ", Network: "AIRTEL"},
		{Name: "TZ-TIGO-C2B", Country: "TZ", Network: "TIGO"},
		{Name: "TZ-HALOTEL-C2B", Country: "TZ", Network: "HALOTEL"},
		{Name: "TZ-VODACOM-C2B", Country: "TZ", Network: "VODACOM"},
	}
	got := MomoChannels()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("MomoChannels (-want +got):\n%s", diff)
	}
	got[0].Name = "changed"
	if diff := cmp.Diff(want, MomoChannels()); diff != "" {
		t.Fatalf("MomoChannels after changing a returned slice (-want +got):\n%s", diff)
	}
	for _, c := range want {
		if _, ok := momoCountries[c.Country]; !ok {
			t.Errorf("channel %s: no numbering plan for %s", c.Name, c.Country)
		}
	}
}

// momoResult is checkMomo's answer in one comparable value.
type momoResult struct {
	Country, MSISDN, Warning string
	Problems                 corebank.Problems
}

func runCheckMomo(meta map[string]string) momoResult {
	p := corebank.Problems{}
	country, msisdn, warning := checkMomo(p, meta)
	if len(p) == 0 {
		p = nil
	}
	return momoResult{country, msisdn, warning, p}
}

func TestCheckMomo(t *testing.T) {
	const (
		ke = "KE-SAFARICOM-C2B"
		tz = "TZ-VODACOM-C2B"
	)
	local := corebank.Problems{"meta.msisdn": localForm}
	ok := func(country, msisdn string) momoResult { return momoResult{Country: country, MSISDN: msisdn} }
	bad := func(country, field, problem string) momoResult {
		return momoResult{Country: country, Problems: corebank.Problems{field: problem}}
	}
	keWant := "must be a Kenyan number for channel KE-SAFARICOM-C2B: +254 and 9 digits, such as +254712345678"
	tzWant := "must be a Tanzanian number for channel TZ-VODACOM-C2B: +255 and 9 digits, such as +255712345678"
	tests := []struct {
		name string
		meta map[string]string
		want momoResult
	}{
		// Normal forms: with or without '+', spaces dropped.
		{"OK/KE plus", map[string]string{"channel": ke, "msisdn": "+254712345678"}, ok("KE", "+254712345678")},
		{"OK/KE no plus", map[string]string{"channel": ke, "msisdn": "254712345678"}, ok("KE", "+254712345678")},
		{"OK/KE spaces", map[string]string{"channel": ke, "msisdn": "+254 712 345 678"}, ok("KE", "+254712345678")},
		{"OK/KE spaces no plus", map[string]string{"channel": ke, "msisdn": " 254 7123 45678 "}, ok("KE", "+254712345678")},
		{"OK/KE 01xx range", map[string]string{"channel": ke, "msisdn": "+254110123456"}, ok("KE", "+254110123456")},
		{"OK/TZ plus", map[string]string{"channel": tz, "msisdn": "+255754123456"}, ok("TZ", "+255754123456")},
		{"OK/TZ no plus", map[string]string{"channel": tz, "msisdn": "255754123456"}, ok("TZ", "+255754123456")},
		{"OK/TZ-AIRTEL", map[string]string{"channel": "TZ-AIRTEL-C2B", "msisdn": "+255784123456"}, ok("TZ", "+255784123456")},
		{"OK/TZ-TIGO", map[string]string{"channel": "TZ-TIGO-C2B", "msisdn": "+255714123456"}, ok("TZ", "+255714123456")},
		{"OK/TZ-TIGO Zantel range", map[string]string{"channel": "TZ-TIGO-C2B", "msisdn": "+255774123456"}, ok("TZ", "+255774123456")},
		{"OK/TZ-HALOTEL", map[string]string{"channel": "TZ-HALOTEL-C2B", "msisdn": "+255621234567"}, ok("TZ", "+255621234567")},

		// Portability: another network's prefix is accepted with a warning.
		{"Warn/Airtel on Safaricom", map[string]string{"channel": ke, "msisdn": "+254733123456"}, momoResult{Country: "KE", MSISDN: "+254733123456",
			Warning: "msisdn +254733123456 is in a range allocated to Airtel, not SAFARICOM; accepted because numbers are portable"}},
		{"Warn/Telkom on Safaricom", map[string]string{"channel": ke, "msisdn": "254770123456"}, momoResult{Country: "KE", MSISDN: "+254770123456",
			Warning: "msisdn +254770123456 is in a range allocated to Telkom, not SAFARICOM; accepted because numbers are portable"}},
		{"Warn/unallocated", map[string]string{"channel": ke, "msisdn": "+254760123456"}, momoResult{Country: "KE", MSISDN: "+254760123456",
			Warning: "msisdn +254760123456 is in a range allocated to no known mobile network, not SAFARICOM; accepted because numbers are portable"}},
		{"Warn/Tigo on Vodacom", map[string]string{"channel": tz, "msisdn": "+255714123456"}, momoResult{Country: "TZ", MSISDN: "+255714123456",
			Warning: "msisdn +255714123456 is in a range allocated to Tigo, not VODACOM; accepted because numbers are portable"}},

		// meta.channel.
		{"ErrChannel/missing", map[string]string{"msisdn": "+254712345678"}, bad("", "meta.channel", "is required for momo")},
		{"ErrChannel/nil meta", nil, momoResult{Problems: corebank.Problems{"meta.channel": "is required for momo", "meta.msisdn": "is required for momo"}}},
		{"ErrChannel/unknown", map[string]string{"channel": "KE-AIRTEL-C2B", "msisdn": "+254712345678"},
			bad("", "meta.channel", "must be one of KE-SAFARICOM-C2B, TZ-AIRTEL-C2B, TZ-TIGO-C2B, TZ-HALOTEL-C2B, TZ-VODACOM-C2B")},
		{"ErrChannel/lower case", map[string]string{"channel": "ke-safaricom-c2b", "msisdn": "+254712345678"},
			bad("", "meta.channel", "must be one of KE-SAFARICOM-C2B, TZ-AIRTEL-C2B, TZ-TIGO-C2B, TZ-HALOTEL-C2B, TZ-VODACOM-C2B")},
		{"ErrChannel/and local msisdn", map[string]string{"channel": "UG-MTN-C2B", "msisdn": "0712345678"}, momoResult{Problems: corebank.Problems{
			"meta.channel": "must be one of KE-SAFARICOM-C2B, TZ-AIRTEL-C2B, TZ-TIGO-C2B, TZ-HALOTEL-C2B, TZ-VODACOM-C2B", "meta.msisdn": localForm}}},

		// meta.msisdn: presence and characters.
		{"ErrMSISDN/missing", map[string]string{"channel": ke}, bad("KE", "meta.msisdn", "is required for momo")},
		{"ErrMSISDN/empty", map[string]string{"channel": ke, "msisdn": ""}, bad("KE", "meta.msisdn", "is required for momo")},
		{"ErrMSISDN/blank", map[string]string{"channel": ke, "msisdn": "   "}, bad("KE", "meta.msisdn", "is required for momo")},
		{"ErrMSISDN/plus only", map[string]string{"channel": ke, "msisdn": "+"}, bad("KE", "meta.msisdn", "must be + and digits, such as +254712345678")},
		{"ErrMSISDN/dashes", map[string]string{"channel": ke, "msisdn": "+254-712-345-678"}, bad("KE", "meta.msisdn", "must be + and digits, such as +254712345678")},
		{"ErrMSISDN/brackets", map[string]string{"channel": ke, "msisdn": "+254(712)345678"}, bad("KE", "meta.msisdn", "must be + and digits, such as +254712345678")},
		{"ErrMSISDN/two plus", map[string]string{"channel": ke, "msisdn": "++254712345678"}, bad("KE", "meta.msisdn", "must be + and digits, such as +254712345678")},
		{"ErrMSISDN/tab", map[string]string{"channel": ke, "msisdn": "+254\t712345678"}, bad("KE", "meta.msisdn", "must be + and digits, such as +254712345678")},
		{"ErrMSISDN/letters", map[string]string{"channel": ke, "msisdn": "+2547123456ab"}, bad("KE", "meta.msisdn", "must be + and digits, such as +254712345678")},

		// Local forms.
		{"ErrMSISDN/local 07", map[string]string{"channel": ke, "msisdn": "0712345678"}, momoResult{Country: "KE", Problems: local}},
		{"ErrMSISDN/local 07 spaces", map[string]string{"channel": ke, "msisdn": "0712 345 678"}, momoResult{Country: "KE", Problems: local}},
		{"ErrMSISDN/local 01", map[string]string{"channel": ke, "msisdn": "0110123456"}, momoResult{Country: "KE", Problems: local}},
		{"ErrMSISDN/local 7", map[string]string{"channel": ke, "msisdn": "712345678"}, momoResult{Country: "KE", Problems: local}},
		{"ErrMSISDN/local plus 07", map[string]string{"channel": ke, "msisdn": "+0712345678"}, momoResult{Country: "KE", Problems: local}},
		{"ErrMSISDN/local TZ 07", map[string]string{"channel": tz, "msisdn": "0754123456"}, momoResult{Country: "TZ", Problems: local}},
		{"ErrMSISDN/local TZ 7", map[string]string{"channel": tz, "msisdn": "754123456"}, momoResult{Country: "TZ", Problems: local}},
		{"ErrMSISDN/00 prefix", map[string]string{"channel": ke, "msisdn": "00254712345678"},
			bad("KE", "meta.msisdn", "must start with the country code, not 00; use the international form, such as +254712345678")},

		// Country codes.
		{"ErrMSISDN/TZ number on KE", map[string]string{"channel": ke, "msisdn": "+255754123456"}, bad("KE", "meta.msisdn", keWant)},
		{"ErrMSISDN/KE number on TZ", map[string]string{"channel": tz, "msisdn": "+254712345678"}, bad("TZ", "meta.msisdn", tzWant)},
		{"ErrMSISDN/UG number on KE", map[string]string{"channel": ke, "msisdn": "+256712345678"}, bad("KE", "meta.msisdn", keWant)},
		{"ErrMSISDN/US number on TZ", map[string]string{"channel": tz, "msisdn": "+14155550100"}, bad("TZ", "meta.msisdn", tzWant)},
		{"ErrMSISDN/short foreign", map[string]string{"channel": ke, "msisdn": "+7123"}, bad("KE", "meta.msisdn", keWant)},

		// Lengths of the national significant number: exactly 9.
		{"ErrMSISDN/KE no NSN", map[string]string{"channel": ke, "msisdn": "+254"}, bad("KE", "meta.msisdn", "must have 9 digits after +254, has 0")},
		{"ErrMSISDN/KE 8 digits", map[string]string{"channel": ke, "msisdn": "+25471234567"}, bad("KE", "meta.msisdn", "must have 9 digits after +254, has 8")},
		{"ErrMSISDN/KE 10 digits", map[string]string{"channel": ke, "msisdn": "+2547123456789"}, bad("KE", "meta.msisdn", "must have 9 digits after +254, has 10")},
		{"ErrMSISDN/TZ 8 digits", map[string]string{"channel": tz, "msisdn": "25575412345"}, bad("TZ", "meta.msisdn", "must have 9 digits after +255, has 8")},
		{"ErrMSISDN/TZ 10 digits", map[string]string{"channel": tz, "msisdn": "+2557541234567"}, bad("TZ", "meta.msisdn", "must have 9 digits after +255, has 10")},
		{"ErrMSISDN/15 digits", map[string]string{"channel": ke, "msisdn": "+254712345678901"}, bad("KE", "meta.msisdn", "must have 9 digits after +254, has 12")},
		{"ErrMSISDN/16 digits", map[string]string{"channel": ke, "msisdn": "+2547123456789012"}, bad("KE", "meta.msisdn", "must have at most 15 digits (E.164)")},
		{"ErrMSISDN/trunk 0 after code", map[string]string{"channel": ke, "msisdn": "+2540712345678"},
			bad("KE", "meta.msisdn", "must not have a 0 after the country code: +254 and 9 digits, such as +254712345678")},

		// Not a mobile number.
		{"ErrMSISDN/KE landline", map[string]string{"channel": ke, "msisdn": "+254201234567"},
			bad("KE", "meta.msisdn", "is not a Kenyan mobile number (those start +254 and one of 1, 7)")},
		{"ErrMSISDN/TZ landline", map[string]string{"channel": tz, "msisdn": "+255221234567"},
			bad("TZ", "meta.msisdn", "is not a Tanzanian mobile number (those start +255 and one of 6, 7)")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, runCheckMomo(tt.meta)); diff != "" {
				t.Errorf("checkMomo(%q) (-want +got):\n%s", tt.meta, diff)
			}
		})
	}
}

// TestCheckMomoNetworkPrefixes checks each network's prefixes against
// every channel of its country: a channel of the number's own network
// takes it silently, every other channel takes it with a warning naming
// the network the prefix was allocated to.
func TestCheckMomoNetworkPrefixes(t *testing.T) {
	tests := []struct {
		msisdn   string
		operator string // "" for a prefix allocated to no known network
		network  string
	}{
		// Kenya.
		{"+254700000000", "Safaricom", "SAFARICOM"},
		{"+254722123456", "Safaricom", "SAFARICOM"},
		{"+254729999999", "Safaricom", "SAFARICOM"},
		{"+254740123456", "Safaricom", "SAFARICOM"},
		{"+254743123456", "Safaricom", "SAFARICOM"},
		{"+254745123456", "Safaricom", "SAFARICOM"},
		{"+254746123456", "Safaricom", "SAFARICOM"},
		{"+254748123456", "Safaricom", "SAFARICOM"},
		{"+254757123456", "Safaricom", "SAFARICOM"},
		{"+254759123456", "Safaricom", "SAFARICOM"},
		{"+254768123456", "Safaricom", "SAFARICOM"},
		{"+254769123456", "Safaricom", "SAFARICOM"},
		{"+254790123456", "Safaricom", "SAFARICOM"},
		{"+254799123456", "Safaricom", "SAFARICOM"},
		{"+254110123456", "Safaricom", "SAFARICOM"},
		{"+254115123456", "Safaricom", "SAFARICOM"},
		{"+254100123456", "Airtel", "AIRTEL"},
		{"+254102123456", "Airtel", "AIRTEL"},
		{"+254730123456", "Airtel", "AIRTEL"},
		{"+254739123456", "Airtel", "AIRTEL"},
		{"+254750123456", "Airtel", "AIRTEL"},
		{"+254756123456", "Airtel", "AIRTEL"},
		{"+254762123456", "Airtel", "AIRTEL"},
		{"+254780123456", "Airtel", "AIRTEL"},
		{"+254789123456", "Airtel", "AIRTEL"},
		{"+254770123456", "Telkom", "TELKOM"},
		{"+254779123456", "Telkom", "TELKOM"},
		{"+254747123456", "JTL (Faiba)", "FAIBA"},
		{"+254763123456", "Finserve (Equitel)", "EQUITEL"},
		{"+254766123456", "Finserve (Equitel)", "EQUITEL"},
		{"+254103123456", "", ""},
		{"+254116123456", "", ""},
		{"+254744123456", "", ""},
		{"+254749123456", "", ""},
		{"+254760123456", "", ""},
		{"+254767123456", "", ""},
		// Tanzania.
		{"+255612345678", "Halotel", "HALOTEL"},
		{"+255622345678", "Halotel", "HALOTEL"},
		{"+255632345678", "Halotel", "HALOTEL"},
		{"+255652345678", "Tigo", "TIGO"},
		{"+255672345678", "Tigo", "TIGO"},
		{"+255702345678", "Tigo", "TIGO"},
		{"+255712345678", "Tigo", "TIGO"},
		{"+255772345678", "Zantel", "TIGO"},
		{"+255662345678", "Airtel", "AIRTEL"},
		{"+255682345678", "Airtel", "AIRTEL"},
		{"+255692345678", "Airtel", "AIRTEL"},
		{"+255782345678", "Airtel", "AIRTEL"},
		{"+255722345678", "Vodacom", "VODACOM"},
		{"+255742345678", "Vodacom", "VODACOM"},
		{"+255752345678", "Vodacom", "VODACOM"},
		{"+255762345678", "Vodacom", "VODACOM"},
		{"+255792345678", "Vodacom", "VODACOM"},
		{"+255732345678", "TTCL", "TTCL"},
		{"+255642345678", "", ""},
		{"+255602345678", "", ""},
	}
	for _, tt := range tests {
		for _, ch := range MomoChannels() {
			if !strings.HasPrefix(tt.msisdn[1:], momoCountries[ch.Country].code) {
				continue
			}
			t.Run(tt.msisdn+"/"+ch.Name, func(t *testing.T) {
				want := momoResult{Country: ch.Country, MSISDN: tt.msisdn}
				switch {
				case tt.operator == "":
					want.Warning = "msisdn " + tt.msisdn + " is in a range allocated to no known mobile network, not " + ch.Network + "; accepted because numbers are portable"
				case tt.network != ch.Network:
					want.Warning = "msisdn " + tt.msisdn + " is in a range allocated to " + tt.operator + ", not " + ch.Network + "; accepted because numbers are portable"
				}
				got := runCheckMomo(map[string]string{"channel": ch.Name, "msisdn": tt.msisdn})
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
			})
		}
	}
}

// TestMomoPrefixTable checks the table itself: ranges well formed, of
// the country's mobile digits, and never overlapping.
func TestMomoPrefixTable(t *testing.T) {
	for alpha2, c := range momoCountries {
		for i, p := range c.prefixes {
			if len(p.from) != len(p.to) || p.from > p.to || !corebank.IsDigits(p.from) || !corebank.IsDigits(p.to) {
				t.Errorf("%s: range %s-%s is malformed", alpha2, p.from, p.to)
			}
			if !strings.ContainsRune(c.mobile, rune(p.from[0])) {
				t.Errorf("%s: range %s-%s is not mobile", alpha2, p.from, p.to)
			}
			for _, q := range c.prefixes[i+1:] {
				if len(p.from) == len(q.from) && p.from <= q.to && q.from <= p.to {
					t.Errorf("%s: ranges %s-%s and %s-%s overlap", alpha2, p.from, p.to, q.from, q.to)
				}
			}
		}
	}
}

func TestSandboxMomoResult(t *testing.T) {
	tests := []struct {
		msisdn      string
		failureCode string
		resultCode  string
	}{
		{"+254712345678", "", "0"},
		{"+254712341032", "payment_cancelled", "1032"},
		{"+254712340001", "insufficient_funds", "1"},
		{"+254712341037", "session_expired", "1037"},
		{"+255754121032", "payment_cancelled", "1032"},
		{"+255754120001", "insufficient_funds", "1"},
		{"+255754121037", "session_expired", "1037"},
		// Near misses approve.
		{"+254712341033", "", "0"},
		{"+254712340002", "", "0"},
		{"+254712341036", "", "0"},
		{"+254712310320", "", "0"},
		{"", "", "0"},
	}
	for _, tt := range tests {
		t.Run(tt.msisdn, func(t *testing.T) {
			if got := sandboxMomoResult(tt.msisdn); got != tt.failureCode {
				t.Errorf("sandboxMomoResult(%q) = %q, want %q", tt.msisdn, got, tt.failureCode)
			}
			if got := sandboxMomoMagic(tt.msisdn).ResultCode; got != tt.resultCode {
				t.Errorf("result code of %q = %q, want %q", tt.msisdn, got, tt.resultCode)
			}
		})
	}
	// Every magic number is a valid momo number, so a test can use it.
	for _, m := range momoMagics {
		got := runCheckMomo(map[string]string{"channel": "KE-SAFARICOM-C2B", "msisdn": "+25471234" + m.Suffix})
		if got.Problems != nil {
			t.Errorf("magic suffix %s: %v", m.Suffix, got.Problems)
		}
	}
}

func TestSandboxCryptoPayment(t *testing.T) {
	tests := []struct {
		name      string
		requested int64
		want      CryptoPayment
	}{
		{"exact", 10000, CryptoPayment{Received: 10000}},
		{"exact 1", 1, CryptoPayment{Received: 1}},
		{"exact 90", 10090, CryptoPayment{Received: 10090}},
		{"exact 95", 10095, CryptoPayment{Received: 10095}},
		{"exact max", math.MaxInt64, CryptoPayment{Received: math.MaxInt64}},
		{"under within 91", 10091, CryptoPayment{Received: 10090}},
		{"under within 91 small", 91, CryptoPayment{Received: 90}},
		{"under beyond 92", 10092, CryptoPayment{Received: 5046}},
		{"under beyond 92 small", 92, CryptoPayment{Received: 46}},
		{"over 93", 10093, CryptoPayment{Received: 11102}},
		{"over 93 small", 93, CryptoPayment{Received: 102}},
		{"over 93 huge saturates", math.MaxInt64 - 14, CryptoPayment{Received: math.MaxInt64}},
		{"late 94", 10094, CryptoPayment{Received: 10094, Late: true}},
		{"late 94 small", 94, CryptoPayment{Received: 94, Late: true}},
		{"negative", -93, CryptoPayment{Received: -93}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, sandboxCryptoPayment(tt.requested)); diff != "" {
				t.Errorf("sandboxCryptoPayment(%d) (-want +got):\n%s", tt.requested, diff)
			}
		})
	}
}

func TestCryptoOutcome(t *testing.T) {
	pct := decimal.RequireFromString("0.01")
	rejected := func(outcome string, credit int64) CryptoOutcome {
		return CryptoOutcome{Outcome: outcome, Credit: credit, FailureCode: "payment_rejected"}
	}
	settles := func(outcome string, credit int64) CryptoOutcome {
		return CryptoOutcome{Outcome: outcome, Credit: credit, Settle: true}
	}
	tests := []struct {
		name      string
		requested int64
		payment   CryptoPayment
		tolerance decimal.Decimal
		want      CryptoOutcome
	}{
		{"exact", 10000, CryptoPayment{Received: 10000}, pct, settles(CryptoExact, 10000)},
		{"exact no tolerance", 10000, CryptoPayment{Received: 10000}, decimal.Zero, settles(CryptoExact, 10000)},
		{"over by one", 10000, CryptoPayment{Received: 10001}, pct, settles(CryptoOverpaid, 10001)},
		{"over double", 10000, CryptoPayment{Received: 20000}, pct, settles(CryptoOverpaid, 20000)},
		{"under by one", 10000, CryptoPayment{Received: 9999}, pct, settles(CryptoUnderpaid, 9999)},
		{"under at tolerance", 10000, CryptoPayment{Received: 9900}, pct, settles(CryptoUnderpaid, 9900)},
		{"under one past tolerance", 10000, CryptoPayment{Received: 9899}, pct, rejected(CryptoUnderpaid, 9899)},
		{"under fractional allowance within", 150, CryptoPayment{Received: 149}, pct, settles(CryptoUnderpaid, 149)},
		{"under fractional allowance beyond", 150, CryptoPayment{Received: 148}, pct, rejected(CryptoUnderpaid, 148)},
		{"under fractional allowance at", 200, CryptoPayment{Received: 198}, pct, settles(CryptoUnderpaid, 198)},
		{"under no tolerance", 10000, CryptoPayment{Received: 9999}, decimal.Zero, rejected(CryptoUnderpaid, 9999)},
		{"under negative tolerance", 10000, CryptoPayment{Received: 9999}, decimal.RequireFromString("-0.5"), rejected(CryptoUnderpaid, 9999)},
		{"under half", 10000, CryptoPayment{Received: 5000}, pct, rejected(CryptoUnderpaid, 5000)},
		{"nothing arrived", 10000, CryptoPayment{}, pct, rejected(CryptoUnderpaid, 0)},
		{"nothing arrived full tolerance", 10000, CryptoPayment{}, decimal.NewFromInt(1), rejected(CryptoUnderpaid, 0)},
		{"late exact", 10000, CryptoPayment{Received: 10000, Late: true}, pct, settles(CryptoLate, 10000)},
		{"late over", 10000, CryptoPayment{Received: 12000, Late: true}, pct, settles(CryptoLate, 12000)},
		{"late under within", 10000, CryptoPayment{Received: 9950, Late: true}, pct, settles(CryptoLate, 9950)},
		{"late under beyond", 10000, CryptoPayment{Received: 5000, Late: true}, pct, rejected(CryptoLate, 5000)},
		{"huge exact", math.MaxInt64, CryptoPayment{Received: math.MaxInt64}, pct, settles(CryptoExact, math.MaxInt64)},
		{"huge under within", math.MaxInt64, CryptoPayment{Received: math.MaxInt64 - 92233720368547758}, pct, settles(CryptoUnderpaid, math.MaxInt64-92233720368547758)},
		{"huge under beyond", math.MaxInt64, CryptoPayment{Received: math.MaxInt64 - 92233720368547759}, pct, rejected(CryptoUnderpaid, math.MaxInt64-92233720368547759)},
		{"huge shortfall", math.MaxInt64, CryptoPayment{Received: math.MinInt64}, pct, rejected(CryptoUnderpaid, math.MinInt64)},
		{"huge over", math.MinInt64, CryptoPayment{Received: math.MaxInt64}, pct, settles(CryptoOverpaid, math.MaxInt64)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, cryptoOutcome(tt.requested, tt.payment, tt.tolerance)); diff != "" {
				t.Errorf("cryptoOutcome(%d, %+v, %s) (-want +got):\n%s", tt.requested, tt.payment, tt.tolerance, diff)
			}
		})
	}
}

// TestCryptoSandboxOutcomes runs each magic amount through cryptoOutcome
// with a 1% tolerance, as a session would.
func TestCryptoSandboxOutcomes(t *testing.T) {
	pct := decimal.RequireFromString("0.01")
	tests := []struct {
		requested int64
		want      CryptoOutcome
	}{
		{10000, CryptoOutcome{Outcome: CryptoExact, Credit: 10000, Settle: true}},
		{10091, CryptoOutcome{Outcome: CryptoUnderpaid, Credit: 10090, Settle: true}},
		{10092, CryptoOutcome{Outcome: CryptoUnderpaid, Credit: 5046, FailureCode: "payment_rejected"}},
		{10093, CryptoOutcome{Outcome: CryptoOverpaid, Credit: 11102, Settle: true}},
		{10094, CryptoOutcome{Outcome: CryptoLate, Credit: 10094, Settle: true}},
		// Below 100 units a one-unit shortfall is more than 1%.
		{91, CryptoOutcome{Outcome: CryptoUnderpaid, Credit: 90, FailureCode: "payment_rejected"}},
	}
	for _, tt := range tests {
		got := cryptoOutcome(tt.requested, sandboxCryptoPayment(tt.requested), pct)
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("amount %d (-want +got):\n%s", tt.requested, diff)
		}
	}
}

// TestCryptoOutcomeCreditsWhatArrived is the property that a session is
// credited what arrived, never what it asked for, whatever the amounts
// and tolerance; and that a refusal always carries a failure code.
func TestCryptoOutcomeCreditsWhatArrived(t *testing.T) {
	seed := *railSeed
	if seed == 0 {
		seed = time.Now().UnixNano()
	}
	const n = 20000
	t.Logf("seed %d, %d cases (replay with -funding.rail.seed=%d)", seed, n, seed)
	rng := rand.New(rand.NewSource(seed))
	amount := func() int64 {
		switch rng.Intn(4) {
		case 0:
			return rng.Int63n(1000)
		case 1:
			return math.MaxInt64 - rng.Int63n(1000)
		case 2:
			return -rng.Int63()
		}
		return rng.Int63()
	}
	for i := range n {
		requested := amount()
		var p CryptoPayment
		if rng.Intn(2) == 0 {
			p = sandboxCryptoPayment(requested)
		} else {
			p = CryptoPayment{Received: amount(), Late: rng.Intn(3) == 0}
		}
		tol := decimal.New(rng.Int63n(2000)-100, -3) // -0.1 to 1.9
		o := cryptoOutcome(requested, p, tol)
		if o.Credit != p.Received {
			t.Fatalf("case %d: cryptoOutcome(%d, %+v, %s).Credit = %d, want %d", i, requested, p, tol, o.Credit, p.Received)
		}
		if o.Settle == (o.FailureCode != "") {
			t.Fatalf("case %d: cryptoOutcome(%d, %+v, %s) = %+v: settles iff no failure code", i, requested, p, tol, o)
		}
		if o.Settle && p.Received <= 0 {
			t.Fatalf("case %d: cryptoOutcome(%d, %+v, %s) = %+v settles nothing", i, requested, p, tol, o)
		}
		if p.Received >= requested && !o.Settle && p.Received > 0 {
			t.Fatalf("case %d: cryptoOutcome(%d, %+v, %s) = %+v refuses a full payment", i, requested, p, tol, o)
		}
	}
}
