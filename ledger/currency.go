package ledger

import (
	"sort"

	"github.com/corebank/corebank/storage"
)

// Currency kinds.
const (
	KindFiat       = "fiat"
	KindStablecoin = "stablecoin"
)

// CurrencyDetail describes one currency an account may hold: its ISO-style
// code, the exponent of its smallest unit (amounts are integers of 10^-Exponent)
// and whether it is fiat or a stablecoin.
type CurrencyDetail struct {
	Code     string `json:"code"`
	Exponent int    `json:"exponent"`
	Kind     string `json:"kind"`
}

// currencies follows CONTRACT.md: fiat exponent 2, stablecoins 6. CAD, AED
// and ZAR are accepted for accounts although SPEC.md's account table lists
// only five fiat codes: CONTRACT.md gives their exponents and SPEC.md's
// account details define identifiers for them, so accounts in them must exist.
var currencies = map[string]CurrencyDetail{
	"USD": {"USD", 2, KindFiat},
	"GBP": {"GBP", 2, KindFiat},
	"EUR": {"EUR", 2, KindFiat},
	"NGN": {"NGN", 2, KindFiat},
	"KES": {"KES", 2, KindFiat},
	"CAD": {"CAD", 2, KindFiat},
	"AED": {"AED", 2, KindFiat},
	"ZAR": {"ZAR", 2, KindFiat},
	"USC": {"USC", 6, KindStablecoin},
	"UST": {"UST", 6, KindStablecoin},
	"RLD": {"RLD", 6, KindStablecoin},
}

// Currencies returns every supported currency, sorted by code. The slice is
// the caller's to keep.
func Currencies() []CurrencyDetail {
	out := make([]CurrencyDetail, 0, len(currencies))
	for _, c := range currencies {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Code < out[j].Code })
	return out
}

// CurrencyInfo returns the detail of code (upper case, "USD") and whether
// it is supported.
func CurrencyInfo(code string) (CurrencyDetail, bool) {
	c, ok := currencies[code]
	return c, ok
}

// StablecoinAssets are the on-chain assets a stablecoin account accepts.
var stablecoinAssets = []string{"USDC", "USDT"}

// readCurrency reads a currency code from d, returning the canonical code
// without allocating when it is a supported one: hot records carry one each.
func readCurrency(d *storage.Decoder) string {
	raw := d.Raw()
	if c, ok := currencies[string(raw)]; ok {
		return c.Code
	}
	return string(raw)
}
