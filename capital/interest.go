package capital

import (
	"math"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// The arithmetic of fixed-return deposits. Every function here is pure (no
// clock, no storage) so the confirm, accrual, preview and withdrawal paths
// compute the same figures from the same inputs, and total: a zero, negative
// or absurd input yields a documented value instead of a panic, because
// these run inside transactions where a panic would be a 500.

// day360 lists the currencies whose money markets count interest on an
// actual/360 basis. Everything else is actual/365 (GBP, NGN, KES, ZAR, CAD,
// AED, every stablecoin), so a currency the ledger adds later gets 365
// without touching this table.
var day360 = map[string]bool{
	"USD": true,
	"EUR": true,
}

// DayCountBasis returns the number of days in the year that a deposit's
// annual rate is divided by: 360 for USD and EUR, 365 for every other
// currency (GBP, NGN, KES, ZAR, CAD, AED, USDC, USDT, ...). The basis is
// fixed per currency, not per calendar year: a deposit spanning 29 February
// still divides by 365, the way those markets quote. Codes are matched
// without regard to case; an unknown or empty code gets 365.
func DayCountBasis(currency string) int {
	if day360[strings.ToUpper(currency)] {
		return 360
	}
	return 365
}

// Maturity returns when a deposit started at start stops earning
// (accrualEnd: start plus tenorDays calendar days at the same UTC clock
// time) and when it is paid (maturity: accrualEnd, or the next Monday at the
// same time when accrualEnd falls on a Saturday or Sunday in UTC, because
// settlement only happens on business days). The days between accrualEnd and
// maturity earn nothing: interest is owed for the tenor, not for the wait.
// Both results are in UTC. A negative tenorDays counts as 0.
func Maturity(start time.Time, tenorDays int) (accrualEnd, maturity time.Time) {
	tenorDays = max(tenorDays, 0)
	// UTC has no daylight saving, so adding calendar days keeps the clock
	// time; doing it in the start's own zone could shift it by an hour.
	accrualEnd = start.UTC().AddDate(0, 0, tenorDays)
	switch accrualEnd.Weekday() {
	case time.Saturday:
		maturity = accrualEnd.AddDate(0, 0, 2)
	case time.Sunday:
		maturity = accrualEnd.AddDate(0, 0, 1)
	default:
		maturity = accrualEnd
	}
	return accrualEnd, maturity
}

// DaysElapsed returns the whole 24-hour days from start to now, clamped to
// [0, tenorDays]: 0 before start or within the first day, tenorDays at and
// after the accrual end (so a weekend wait before maturity adds nothing). A
// negative tenorDays counts as 0. Whole days, not calendar dates, so the
// answer is the same whatever hour the deposit started.
func DaysElapsed(start, now time.Time, tenorDays int) int {
	if tenorDays <= 0 || !now.After(start) {
		return 0
	}
	// Sub saturates at about 292 years, far beyond any tenor, so the clamp
	// below still gives tenorDays for any later now.
	days := int64(now.Sub(start) / (24 * time.Hour))
	return int(min(days, int64(tenorDays)))
}

// Interest returns principal × rate × days / basis in smallest units,
// computed exactly in decimal and rounded toward zero once at the end, so
// the running total of a deposit never rounds up and the daily accruals
// posted as differences of running totals sum to it exactly. It returns 0
// when any of principal, rate, days or basis is zero or negative (no input
// makes a deposit owe its holder negative interest), and math.MaxInt64 when
// the figure does not fit in an int64.
func Interest(principal int64, rate decimal.Decimal, days, basis int) int64 {
	if principal <= 0 || !rate.IsPositive() || days <= 0 || basis <= 0 {
		return 0
	}
	num := decimal.NewFromInt(principal).Mul(rate).Mul(decimal.NewFromInt(int64(days)))
	// QuoRem at precision 0 gives the exact truncated quotient; Div would
	// round at 16 decimal places first and could carry a long run of nines
	// up to the next unit.
	q, _ := num.QuoRem(decimal.NewFromInt(int64(basis)), 0)
	return units(q)
}

// Penalty returns floor(gross × penaltyRate), the early-withdrawal penalty
// taken from the gross interest (SPEC.md's penalty_amount). It returns 0
// when gross or penaltyRate is zero or negative. Keeping the rate within
// [0, 1] is the product's validation, not this function's: a larger rate
// gives a penalty above gross, which NetPayout then takes from principal.
func Penalty(gross int64, penaltyRate decimal.Decimal) int64 {
	return floorShare(gross, penaltyRate)
}

// Withholding returns floor(gross × rate), the tax withheld from the gross
// interest at the product's withholding_rate (an account's
// total_deductions). It returns 0 when gross or rate is zero or negative.
func Withholding(gross int64, rate decimal.Decimal) int64 {
	return floorShare(gross, rate)
}

// floorShare is the one rounding of a rate applied to an amount: exact
// product, then toward zero (floor, as both are non-negative here).
func floorShare(amount int64, rate decimal.Decimal) int64 {
	if amount <= 0 || !rate.IsPositive() {
		return 0
	}
	return units(decimal.NewFromInt(amount).Mul(rate).Truncate(0))
}

// NetPayout returns principal + gross − penalty − deductions: what a
// withdrawal pays into the funding account. It never returns less than 0
// (charges cannot make the holder owe money) nor more than math.MaxInt64,
// and a negative argument counts as 0, so a corrupt figure cannot inflate
// the payout by being subtracted.
func NetPayout(principal, gross, penalty, deductions int64) int64 {
	// In decimal so the sum cannot overflow before the clamp.
	net := decimal.NewFromInt(max(principal, 0)).
		Add(decimal.NewFromInt(max(gross, 0))).
		Sub(decimal.NewFromInt(max(penalty, 0))).
		Sub(decimal.NewFromInt(max(deductions, 0)))
	if !net.IsPositive() {
		return 0
	}
	return units(net)
}

var maxUnits = decimal.NewFromInt(math.MaxInt64)

// units converts a whole, non-negative decimal to smallest units,
// saturating at math.MaxInt64 instead of wrapping.
func units(d decimal.Decimal) int64 {
	if d.GreaterThan(maxUnits) {
		return math.MaxInt64
	}
	return d.IntPart()
}
