package payments

import (
	"fmt"
	"math/big"
	"sort"
	"strconv"
	"strings"

	"github.com/corebank/corebank"
)

// Fee is the fee of one payment type: Fixed smallest units of the debited
// account's currency plus BasisPoints (1/100 of a percent) of the debited
// amount, rounded toward zero.
type Fee struct {
	Fixed       int64 `json:"fixed"`
	BasisPoints int64 `json:"basis_points"`
}

// Of returns the fee on amount: Fixed + amount*BasisPoints/10000, the
// percentage part rounded toward zero.
func (f Fee) Of(amount int64) int64 {
	if f.BasisPoints == 0 {
		return f.Fixed
	}
	p := new(big.Int).Mul(big.NewInt(amount), big.NewInt(f.BasisPoints))
	p.Quo(p, big.NewInt(10000))
	return f.Fixed + p.Int64()
}

func (f Fee) String() string {
	switch {
	case f.BasisPoints == 0:
		return strconv.FormatInt(f.Fixed, 10)
	case f.Fixed == 0:
		return strconv.FormatInt(f.BasisPoints, 10) + "bps"
	}
	return fmt.Sprintf("%d+%dbps", f.Fixed, f.BasisPoints)
}

// FeeSchedule maps a payment type ("bank-transfer") to its Fee. The key
// "*" is the fee of every payment type not listed. A nil or empty schedule
// charges nothing.
type FeeSchedule map[string]Fee

// For returns the fee of paymentType.
func (s FeeSchedule) For(paymentType string) Fee {
	if f, ok := s[paymentType]; ok {
		return f
	}
	return s["*"]
}

// String returns the schedule in ParseFeeSchedule's syntax, sorted by
// payment type.
func (s FeeSchedule) String() string {
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + s[k].String()
	}
	return strings.Join(parts, ",")
}

func (s FeeSchedule) clone() FeeSchedule {
	out := make(FeeSchedule, len(s))
	for k, v := range s {
		out[k] = v
	}
	return out
}

// maxFixedFee and maxBps bound what ParseFeeSchedule accepts.
const (
	maxFixedFee = 1 << 40
	maxBps      = 10000
)

// ParseFeeSchedule parses a schedule such as
// "bank-transfer=100+25bps,momo-transfer=50,stablecoin-transfer=10bps".
// Entries are separated by commas or newlines; each is
// <payment-type>=<fee>, where <fee> is a fixed amount in smallest units
// ("100"), basis points ("25bps"), or both joined by "+"
// ("100+25bps"). The payment type is one of bank-transfer, momo-transfer,
// stablecoin-transfer, book-transfer, or "*" for every type not listed.
// Blank entries and lines starting with "#" are ignored, as is space around
// tokens. An empty string is an empty schedule. It returns an error naming
// the first bad entry.
func ParseFeeSchedule(s string) (FeeSchedule, error) {
	out := FeeSchedule{}
	entries := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '\n' || r == ';' })
	for _, e := range entries {
		e = strings.TrimSpace(e)
		if e == "" || strings.HasPrefix(e, "#") {
			continue
		}
		typ, spec, ok := strings.Cut(e, "=")
		typ, spec = strings.TrimSpace(typ), strings.TrimSpace(spec)
		if !ok || spec == "" {
			return nil, fmt.Errorf("payments: fee entry %q: want <payment-type>=<fee>", e)
		}
		if typ != "*" && !validPaymentType(typ) {
			return nil, fmt.Errorf("payments: fee entry %q: unknown payment type %q", e, typ)
		}
		if _, dup := out[typ]; dup {
			return nil, fmt.Errorf("payments: fee entry %q: payment type %q given twice", e, typ)
		}
		var f Fee
		var seenFixed, seenBps bool
		for _, part := range strings.Split(spec, "+") {
			part = strings.TrimSpace(part)
			if num, isBps := strings.CutSuffix(strings.ToLower(part), "bps"); isBps {
				n, err := strconv.ParseInt(strings.TrimSpace(num), 10, 64)
				if err != nil || n < 0 || n > maxBps || seenBps {
					return nil, fmt.Errorf("payments: fee entry %q: basis points must be one whole number 0-%d", e, maxBps)
				}
				f.BasisPoints, seenBps = n, true
				continue
			}
			n, err := strconv.ParseInt(part, 10, 64)
			if err != nil || n < 0 || n > maxFixedFee || seenFixed {
				return nil, fmt.Errorf("payments: fee entry %q: fixed fee must be one whole number of smallest units", e)
			}
			f.Fixed, seenFixed = n, true
		}
		out[typ] = f
	}
	return out, nil
}

// errFeeTooLarge guards against a fee that would overflow with the amount.
var errFeeTooLarge = corebank.InvalidField("amount", "amount plus fee is too large")
