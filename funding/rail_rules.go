package funding

import (
	"github.com/shopspring/decimal"

	"github.com/corebank/corebank"
)

// This file stands in for the rail rules (momo channels and MSISDNs, the
// crypto payer and its outcomes) that the rail-rules branch writes; the
// integrator takes that branch's file. The declarations are the agreed
// ones; the bodies are the least that lets sessions compile and run.

// MomoChannel is one mobile-money channel a momo session may name.
type MomoChannel struct{ Name, Country, Network string }

// MomoChannels returns the channels momo sessions accept.
func MomoChannels() []MomoChannel {
	// replaced by the rail-rules branch
	return []MomoChannel{
		{Name: "KE-SAFARICOM-C2B", Country: "KE", Network: "SAFARICOM"},
		{Name: "TZ-AIRTEL-C2B", Country: "TZ", Network: "AIRTEL"},
		{Name: "TZ-TIGO-C2B", Country: "TZ", Network: "TIGO"},
		{Name: "TZ-HALOTEL-C2B", Country: "TZ", Network: "HALOTEL"},
		{Name: "TZ-VODACOM-C2B", Country: "TZ", Network: "VODACOM"},
	}
}

// checkMomo validates meta.channel and meta.msisdn, adding problems named
// "meta.channel" and "meta.msisdn" to p, and returns the channel's
// country, the MSISDN's normal form "+<digits>", and a warning when the
// number's prefix belongs to another network than the channel's.
func checkMomo(p corebank.Problems, meta map[string]string) (country, msisdn, warning string) {
	// replaced by the rail-rules branch
	for _, c := range MomoChannels() {
		if c.Name == meta["channel"] {
			country = c.Country
		}
	}
	if country == "" {
		p.Add("meta.channel", "must be one of the momo channels")
	}
	msisdn = meta["msisdn"]
	if len(msisdn) > 0 && msisdn[0] != '+' {
		msisdn = "+" + msisdn
	}
	if len(msisdn) < 9 || !corebank.IsDigits(msisdn[1:]) {
		p.Add("meta.msisdn", "must be an international number")
	}
	return country, msisdn, ""
}

// sandboxMomoResult is what the sandbox payer answers a push prompt to
// msisdn: "" approves, else the failure code its suffix forces.
func sandboxMomoResult(msisdn string) (failureCode string) {
	// replaced by the rail-rules branch
	return ""
}

// CryptoPayment is what a crypto payer sent: how much, and whether it came
// after the invoice's window.
type CryptoPayment struct {
	Received int64
	Late     bool
}

// sandboxCryptoPayment is what the sandbox payer sends for an invoice of
// requested (amount suffixes pick under-, over- and late payment).
func sandboxCryptoPayment(requested int64) CryptoPayment {
	// replaced by the rail-rules branch
	return CryptoPayment{Received: requested}
}

// CryptoOutcome is what a crypto payment does to its session: Outcome is
// "exact", "underpaid", "overpaid" or "late"; Credit is what arrived;
// Settle is false (with FailureCode) when the underpayment is beyond
// tolerance.
type CryptoOutcome struct {
	Outcome     string
	Credit      int64
	Settle      bool
	FailureCode string
}

// cryptoOutcome judges payment p against an invoice of requested, allowing
// an underpayment of up to tolerance (a fraction of requested).
func cryptoOutcome(requested int64, p CryptoPayment, tolerance decimal.Decimal) CryptoOutcome {
	// replaced by the rail-rules branch
	switch {
	case p.Late:
		return CryptoOutcome{Outcome: "late", Credit: p.Received, Settle: true}
	case p.Received == requested:
		return CryptoOutcome{Outcome: "exact", Credit: p.Received, Settle: true}
	case p.Received > requested:
		return CryptoOutcome{Outcome: "overpaid", Credit: p.Received, Settle: true}
	}
	short := decimal.NewFromInt(requested - p.Received)
	if short.LessThanOrEqual(tolerance.Mul(decimal.NewFromInt(requested))) {
		return CryptoOutcome{Outcome: "underpaid", Credit: p.Received, Settle: true}
	}
	return CryptoOutcome{Outcome: "underpaid", Credit: p.Received, FailureCode: "payment_rejected"}
}
