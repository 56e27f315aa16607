package payments

import (
	"sort"

	"github.com/corebank/corebank/ledger"
)

// Payment types (SPEC "Transfer"), which are also the payment_method of
// payment details.
const (
	BankTransfer       = "bank-transfer"
	MomoTransfer       = "momo-transfer"
	StablecoinTransfer = "stablecoin-transfer"
	BookTransfer       = "book-transfer"
)

func validPaymentType(s string) bool {
	switch s {
	case BankTransfer, MomoTransfer, StablecoinTransfer, BookTransfer:
		return true
	}
	return false
}

// payoutOnly are currencies corebank pays out in (after an FX quote) but
// holds no accounts in. Their exponents follow ISO 4217 (UGX has none).
var payoutOnly = map[string]ledger.CurrencyDetail{
	"MXN": {Code: "MXN", Exponent: 2, Kind: ledger.KindFiat},
	"GHS": {Code: "GHS", Exponent: 2, Kind: ledger.KindFiat},
	"TZS": {Code: "TZS", Exponent: 2, Kind: ledger.KindFiat},
	"UGX": {Code: "UGX", Exponent: 0, Kind: ledger.KindFiat},
}

// CurrencyInfo returns the detail of a currency payments can quote and pay
// out in: every ledger currency (ledger.CurrencyInfo) plus the payout-only
// currencies MXN, GHS, TZS and UGX. ok is false for any other code.
func CurrencyInfo(code string) (c ledger.CurrencyDetail, ok bool) {
	if c, ok := ledger.CurrencyInfo(code); ok {
		return c, true
	}
	c, ok = payoutOnly[code]
	return c, ok
}

// Currencies returns every currency CurrencyInfo knows, sorted by code.
func Currencies() []ledger.CurrencyDetail {
	out := ledger.Currencies()
	for _, c := range payoutOnly {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Code < out[j].Code })
	return out
}

// heldInLedger reports whether accounts (and system accounts) exist in code.
func heldInLedger(code string) bool {
	_, ok := ledger.CurrencyInfo(code)
	return ok
}
