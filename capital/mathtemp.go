package capital

// Temporary implementations of the math API (CAPITAL.md "Math API"), until
// branch capmath (interest.go, allot.go) is merged; then this file goes.

import (
	"sort"
	"time"

	"github.com/shopspring/decimal"
)

func DayCountBasis(currency string) int {
	switch currency {
	case "USD", "EUR":
		return 360
	}
	return 365
}

func Maturity(start time.Time, tenorDays int) (accrualEnd, maturity time.Time) {
	accrualEnd = start.AddDate(0, 0, tenorDays)
	maturity = accrualEnd
	switch maturity.UTC().Weekday() {
	case time.Saturday:
		maturity = maturity.AddDate(0, 0, 2)
	case time.Sunday:
		maturity = maturity.AddDate(0, 0, 1)
	}
	return accrualEnd, maturity
}

func DaysElapsed(start, now time.Time, tenorDays int) int {
	d := int(now.Sub(start) / (24 * time.Hour))
	return max(0, min(d, tenorDays))
}

func Interest(principal int64, rate decimal.Decimal, days, basis int) int64 {
	return decimal.NewFromInt(principal).Mul(rate).Mul(decimal.NewFromInt(int64(days))).
		Div(decimal.NewFromInt(int64(basis))).Truncate(0).IntPart()
}

func Penalty(gross int64, penaltyRate decimal.Decimal) int64 {
	return decimal.NewFromInt(gross).Mul(penaltyRate).Floor().IntPart()
}

func Withholding(gross int64, rate decimal.Decimal) int64 {
	return decimal.NewFromInt(gross).Mul(rate).Floor().IntPart()
}

func NetPayout(principal, gross, penalty, deductions int64) int64 {
	return max(0, principal+gross-penalty-deductions)
}

func Allot(inventory int64, requests []int64) []int64 {
	out := make([]int64, len(requests))
	var total int64
	for _, r := range requests {
		total += r
	}
	if total <= inventory {
		copy(out, requests)
		return out
	}
	type rem struct {
		i int
		r decimal.Decimal
	}
	var rems []rem
	var given int64
	for i, r := range requests {
		q := decimal.NewFromInt(r).Mul(decimal.NewFromInt(inventory)).Div(decimal.NewFromInt(total))
		out[i] = q.Floor().IntPart()
		given += out[i]
		rems = append(rems, rem{i, q.Sub(q.Floor())})
	}
	sort.SliceStable(rems, func(a, b int) bool { return rems[a].r.GreaterThan(rems[b].r) })
	for k := 0; given < inventory && k < len(rems); k++ {
		if out[rems[k].i] < requests[rems[k].i] {
			out[rems[k].i]++
			given++
		}
	}
	return out
}
