package capital

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"
)

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// TestDepositFigures checks the whole computation of a deposit (basis,
// accrual end, maturity, days, gross interest, penalty, withholding, net
// payout) against figures worked by hand, for every tenor in both bases.
//
// Penalty is pure: the domain passes a rate of 0 at or after maturity. Most
// rows use a non-zero rate anyway, as an early-withdrawal preview would on
// that day, so that the arithmetic is exercised on every row.
//
// USD rows: 1,000,000.00 (100_000_000 cents) at 5%, penalty 25%, withholding
// 10%, so gross = 100_000_000 × 0.05 × t / 360 = 5_000_000 × t / 360.
// GBP rows: 250,000.00 (25_000_000 pence) at 4.75%, penalty 50%, withholding
// 20%, so gross = 25_000_000 × 0.0475 × t / 365 = 1_187_500 × t / 365.
// Every USD start is Monday 5 January 2026 09:30 UTC, every GBP start Monday
// 1 June 2026 09:30 UTC.
func TestDepositFigures(t *testing.T) {
	type want struct {
		Basis                int
		AccrualEnd, Maturity time.Time
		Days                 int
		Gross, Penalty, WH   int64
		Net                  int64
	}
	tests := []struct {
		name                      string
		currency                  string
		principal                 int64
		rate, penaltyRate, whRate string
		start                     string
		tenor                     int
		withdraw                  string // when the figures are taken
		want                      want
	}{
		{
			// 2026-01-05 Mon + 7 = 2026-01-12 Mon.
			// gross 5_000_000×7/360 = 35_000_000/360 = 97_222.22 → 97_222
			// penalty 97_222×0.25 = 24_305.5 → 24_305
			// withholding 97_222×0.10 = 9_722.2 → 9_722
			// net 100_000_000 + 97_222 − 24_305 − 9_722 = 100_063_195
			name: "USD 7", currency: "USD", principal: 100_000_000, rate: "0.05", penaltyRate: "0.25", whRate: "0.10",
			start: "2026-01-05T09:30:00Z", tenor: 7, withdraw: "2026-01-12T09:30:00Z",
			want: want{360, at("2026-01-12T09:30:00Z"), at("2026-01-12T09:30:00Z"), 7, 97_222, 24_305, 9_722, 100_063_195},
		},
		{
			// 2026-01-05 + 30 = 2026-02-04 Wed (26 days left in January + 4).
			// gross 5_000_000×30/360 = 150_000_000/360 = 416_666.67 → 416_666
			// penalty 416_666×0.25 = 104_166.5 → 104_166
			// withholding 416_666×0.10 = 41_666.6 → 41_666
			// net 100_000_000 + 416_666 − 104_166 − 41_666 = 100_270_834
			name: "USD 30", currency: "USD", principal: 100_000_000, rate: "0.05", penaltyRate: "0.25", whRate: "0.10",
			start: "2026-01-05T09:30:00Z", tenor: 30, withdraw: "2026-02-04T09:30:00Z",
			want: want{360, at("2026-02-04T09:30:00Z"), at("2026-02-04T09:30:00Z"), 30, 416_666, 104_166, 41_666, 100_270_834},
		},
		{
			// 2026-01-05 + 60 = 2026-03-06 Fri (26 + 28 in February + 6).
			// gross 5_000_000×60/360 = 300_000_000/360 = 833_333.33 → 833_333
			// penalty 833_333×0.25 = 208_333.25 → 208_333
			// withholding 833_333×0.10 = 83_333.3 → 83_333
			// net 100_000_000 + 833_333 − 208_333 − 83_333 = 100_541_667
			name: "USD 60", currency: "USD", principal: 100_000_000, rate: "0.05", penaltyRate: "0.25", whRate: "0.10",
			start: "2026-01-05T09:30:00Z", tenor: 60, withdraw: "2026-03-06T09:30:00Z",
			want: want{360, at("2026-03-06T09:30:00Z"), at("2026-03-06T09:30:00Z"), 60, 833_333, 208_333, 83_333, 100_541_667},
		},
		{
			// 2026-01-05 + 90 = 2026-04-05, a Sunday: maturity Monday
			// 2026-04-06; withdrawn at maturity, still 90 days of interest.
			// gross 5_000_000×90/360 = 1_250_000 exactly
			// penalty 1_250_000×0.25 = 312_500; withholding 125_000
			// net 100_000_000 + 1_250_000 − 312_500 − 125_000 = 100_812_500
			name: "USD 90 Sunday end", currency: "USD", principal: 100_000_000, rate: "0.05", penaltyRate: "0.25", whRate: "0.10",
			start: "2026-01-05T09:30:00Z", tenor: 90, withdraw: "2026-04-06T09:30:00Z",
			want: want{360, at("2026-04-05T09:30:00Z"), at("2026-04-06T09:30:00Z"), 90, 1_250_000, 312_500, 125_000, 100_812_500},
		},
		{
			// 2026-01-05 + 180 = 2026-07-04, a Saturday: maturity Monday
			// 2026-07-06.
			// gross 5_000_000×180/360 = 2_500_000 exactly
			// penalty 625_000; withholding 250_000
			// net 100_000_000 + 2_500_000 − 625_000 − 250_000 = 101_625_000
			name: "USD 180 Saturday end", currency: "USD", principal: 100_000_000, rate: "0.05", penaltyRate: "0.25", whRate: "0.10",
			start: "2026-01-05T09:30:00Z", tenor: 180, withdraw: "2026-07-06T09:30:00Z",
			want: want{360, at("2026-07-04T09:30:00Z"), at("2026-07-06T09:30:00Z"), 180, 2_500_000, 625_000, 250_000, 101_625_000},
		},
		{
			// 2026-06-01 Mon + 7 = 2026-06-08 Mon.
			// gross 1_187_500×7/365 = 8_312_500/365 = 22_773.97 → 22_773
			// penalty 22_773×0.5 = 11_386.5 → 11_386
			// withholding 22_773×0.2 = 4_554.6 → 4_554
			// net 25_000_000 + 22_773 − 11_386 − 4_554 = 25_006_833
			name: "GBP 7", currency: "GBP", principal: 25_000_000, rate: "0.0475", penaltyRate: "0.5", whRate: "0.2",
			start: "2026-06-01T09:30:00Z", tenor: 7, withdraw: "2026-06-08T09:30:00Z",
			want: want{365, at("2026-06-08T09:30:00Z"), at("2026-06-08T09:30:00Z"), 7, 22_773, 11_386, 4_554, 25_006_833},
		},
		{
			// 2026-06-01 + 30 = 2026-07-01 Wed.
			// gross 1_187_500×30/365 = 35_625_000/365 = 97_602.74 → 97_602
			// penalty 97_602×0.5 = 48_801
			// withholding 97_602×0.2 = 19_520.4 → 19_520
			// net 25_000_000 + 97_602 − 48_801 − 19_520 = 25_029_281
			name: "GBP 30", currency: "GBP", principal: 25_000_000, rate: "0.0475", penaltyRate: "0.5", whRate: "0.2",
			start: "2026-06-01T09:30:00Z", tenor: 30, withdraw: "2026-07-01T09:30:00Z",
			want: want{365, at("2026-07-01T09:30:00Z"), at("2026-07-01T09:30:00Z"), 30, 97_602, 48_801, 19_520, 25_029_281},
		},
		{
			// 2026-06-01 + 60 = 2026-07-31 Fri.
			// gross 1_187_500×60/365 = 71_250_000/365 = 195_205.48 → 195_205
			// penalty 195_205×0.5 = 97_602.5 → 97_602
			// withholding 195_205×0.2 = 39_041
			// net 25_000_000 + 195_205 − 97_602 − 39_041 = 25_058_562
			name: "GBP 60", currency: "GBP", principal: 25_000_000, rate: "0.0475", penaltyRate: "0.5", whRate: "0.2",
			start: "2026-06-01T09:30:00Z", tenor: 60, withdraw: "2026-07-31T09:30:00Z",
			want: want{365, at("2026-07-31T09:30:00Z"), at("2026-07-31T09:30:00Z"), 60, 195_205, 97_602, 39_041, 25_058_562},
		},
		{
			// 2026-06-01 + 90 = 2026-08-30, a Sunday: maturity 2026-08-31.
			// gross 1_187_500×90/365 = 106_875_000/365 = 292_808.22 → 292_808
			// penalty 292_808×0.5 = 146_404
			// withholding 292_808×0.2 = 58_561.6 → 58_561
			// net 25_000_000 + 292_808 − 146_404 − 58_561 = 25_087_843
			name: "GBP 90 Sunday end", currency: "GBP", principal: 25_000_000, rate: "0.0475", penaltyRate: "0.5", whRate: "0.2",
			start: "2026-06-01T09:30:00Z", tenor: 90, withdraw: "2026-08-31T09:30:00Z",
			want: want{365, at("2026-08-30T09:30:00Z"), at("2026-08-31T09:30:00Z"), 90, 292_808, 146_404, 58_561, 25_087_843},
		},
		{
			// 2026-06-01 + 180 = 2026-11-28, a Saturday: maturity 2026-11-30.
			// gross 1_187_500×180/365 = 213_750_000/365 = 585_616.44 → 585_616
			// penalty 585_616×0.5 = 292_808
			// withholding 585_616×0.2 = 117_123.2 → 117_123
			// net 25_000_000 + 585_616 − 292_808 − 117_123 = 25_175_685
			name: "GBP 180 Saturday end", currency: "GBP", principal: 25_000_000, rate: "0.0475", penaltyRate: "0.5", whRate: "0.2",
			start: "2026-06-01T09:30:00Z", tenor: 180, withdraw: "2026-11-30T09:30:00Z",
			want: want{365, at("2026-11-28T09:30:00Z"), at("2026-11-30T09:30:00Z"), 180, 585_616, 292_808, 117_123, 25_175_685},
		},
		{
			// Leap year: 2028-02-15 Tue + 30 calendar days counts 29 February,
			// so the end is 2028-03-16 Thu (it would be 03-17 in a common
			// year). The basis stays 365 in a leap year.
			// 100,000.00 GBP (10_000_000 pence) at 6%:
			// gross 10_000_000×0.06×30/365 = 18_000_000/365 = 49_315.07 → 49_315
			// penalty 49_315×0.5 = 24_657.5 → 24_657
			// withholding 49_315×0.2 = 9_863
			// net 10_000_000 + 49_315 − 24_657 − 9_863 = 10_014_795
			name: "GBP 30 over 29 February", currency: "GBP", principal: 10_000_000, rate: "0.06", penaltyRate: "0.5", whRate: "0.2",
			start: "2028-02-15T12:00:00Z", tenor: 30, withdraw: "2028-03-16T12:00:00Z",
			want: want{365, at("2028-03-16T12:00:00Z"), at("2028-03-16T12:00:00Z"), 30, 49_315, 24_657, 9_863, 10_014_795},
		},
		{
			// Early withdrawal on 2028-03-01 12:00: 14 days to 29 February
			// plus 1 = 15 whole days.
			// gross 10_000_000×0.06×15/365 = 9_000_000/365 = 24_657.53 → 24_657
			// penalty 24_657×0.5 = 12_328.5 → 12_328
			// withholding 24_657×0.2 = 4_931.4 → 4_931
			// net 10_000_000 + 24_657 − 12_328 − 4_931 = 10_007_398
			name: "GBP 30 early on 1 March 2028", currency: "GBP", principal: 10_000_000, rate: "0.06", penaltyRate: "0.5", whRate: "0.2",
			start: "2028-02-15T12:00:00Z", tenor: 30, withdraw: "2028-03-01T12:00:00Z",
			want: want{365, at("2028-03-16T12:00:00Z"), at("2028-03-16T12:00:00Z"), 15, 24_657, 12_328, 4_931, 10_007_398},
		},
		{
			// Weekend maturity: 2026-10-01 Thu + 30 = 2026-10-31, a Saturday;
			// paid Monday 2026-11-02, interest for 30 days only (32 days
			// would be 20_000). At maturity there is no penalty (rate 0).
			// 50,000.00 USD (5_000_000 cents) at 4.5%:
			// gross 5_000_000×0.045×30/360 = 6_750_000/360 = 18_750 exactly
			// penalty 0; withholding 18_750×0.1 = 1_875
			// net 5_000_000 + 18_750 − 0 − 1_875 = 5_016_875
			name: "USD 30 Saturday end paid Monday", currency: "USD", principal: 5_000_000, rate: "0.045", penaltyRate: "0", whRate: "0.1",
			start: "2026-10-01T08:00:00Z", tenor: 30, withdraw: "2026-11-02T08:00:00Z",
			want: want{360, at("2026-10-31T08:00:00Z"), at("2026-11-02T08:00:00Z"), 30, 18_750, 0, 1_875, 5_016_875},
		},
		{
			// Early withdrawal on day 10 of 30, five hours into the 11th day:
			// whole days only, so 10.
			// gross 5_000_000×10/360 = 50_000_000/360 = 138_888.89 → 138_888
			// penalty 138_888×0.25 = 34_722
			// withholding 138_888×0.10 = 13_888.8 → 13_888
			// net 100_000_000 + 138_888 − 34_722 − 13_888 = 100_090_278
			name: "USD 30 early on day 10", currency: "USD", principal: 100_000_000, rate: "0.05", penaltyRate: "0.25", whRate: "0.10",
			start: "2026-01-05T09:30:00Z", tenor: 30, withdraw: "2026-01-15T14:30:00Z",
			want: want{360, at("2026-02-04T09:30:00Z"), at("2026-02-04T09:30:00Z"), 10, 138_888, 34_722, 13_888, 100_090_278},
		},
		{
			// Rounding toward zero where every figure has a fraction.
			// 9,999.99 GBP (999_999 pence) at 12.34% for 180 days:
			// gross 999_999×0.1234×180/365 = 22_211_977.788/365
			//       = 60_854.7336... → 60_854 (not 60_855)
			// penalty 60_854×0.3333 = 20_282.6382 → 20_282
			// withholding 60_854×0.15 = 9_128.1 → 9_128
			// net 999_999 + 60_854 − 20_282 − 9_128 = 1_031_443
			name: "GBP 180 rounding toward zero", currency: "GBP", principal: 999_999, rate: "0.1234", penaltyRate: "0.3333", whRate: "0.15",
			start: "2026-06-01T09:30:00Z", tenor: 180, withdraw: "2026-11-28T09:30:00Z",
			want: want{365, at("2026-11-28T09:30:00Z"), at("2026-11-30T09:30:00Z"), 180, 60_854, 20_282, 9_128, 1_031_443},
		},
		{
			// A fraction of a unit is never paid: 1 penny at 50% for 7 days
			// earns 1×0.5×7/365 = 0.0096 → 0.
			name: "GBP 7 below one unit", currency: "GBP", principal: 1, rate: "0.5", penaltyRate: "0.5", whRate: "0.2",
			start: "2026-06-01T09:30:00Z", tenor: 7, withdraw: "2026-06-08T09:30:00Z",
			want: want{365, at("2026-06-08T09:30:00Z"), at("2026-06-08T09:30:00Z"), 7, 0, 0, 0, 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := at(tt.start)
			var got want
			got.Basis = DayCountBasis(tt.currency)
			got.AccrualEnd, got.Maturity = Maturity(start, tt.tenor)
			got.Days = DaysElapsed(start, at(tt.withdraw), tt.tenor)
			got.Gross = Interest(tt.principal, dec(tt.rate), got.Days, got.Basis)
			got.Penalty = Penalty(got.Gross, dec(tt.penaltyRate))
			got.WH = Withholding(got.Gross, dec(tt.whRate))
			got.Net = NetPayout(tt.principal, got.Gross, got.Penalty, got.WH)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestDayCountBasis(t *testing.T) {
	want := map[string]int{
		"USD": 360, "EUR": 360, "usd": 360,
		"GBP": 365, "NGN": 365, "KES": 365, "ZAR": 365, "CAD": 365, "AED": 365,
		"USDC": 365, "USDT": 365, "XYZ": 365, "": 365,
	}
	got := map[string]int{}
	for c := range want {
		got[c] = DayCountBasis(c)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

func TestMaturity(t *testing.T) {
	lagos := time.FixedZone("WAT", 3600)
	tests := []struct {
		name                 string
		start                time.Time
		tenor                int
		accrualEnd, maturity time.Time
	}{
		// Friday 23:30 in Lagos is Friday 22:30 UTC: + 1 day is Saturday in
		// UTC (though Sunday 00:30 in Lagos), so Monday 22:30 UTC.
		{"UTC decides the weekday", time.Date(2026, 1, 9, 23, 30, 0, 0, lagos), 1,
			at("2026-01-10T22:30:00Z"), at("2026-01-12T22:30:00Z")},
		{"Sunday end", at("2026-01-10T00:00:00Z"), 1, at("2026-01-11T00:00:00Z"), at("2026-01-12T00:00:00Z")},
		{"Monday end", at("2026-01-11T23:59:59Z"), 1, at("2026-01-12T23:59:59Z"), at("2026-01-12T23:59:59Z")},
		{"zero tenor", at("2026-01-05T10:00:00Z"), 0, at("2026-01-05T10:00:00Z"), at("2026-01-05T10:00:00Z")},
		{"negative tenor counts as 0", at("2026-01-05T10:00:00Z"), -7, at("2026-01-05T10:00:00Z"), at("2026-01-05T10:00:00Z")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			end, mat := Maturity(tt.start, tt.tenor)
			if !end.Equal(tt.accrualEnd) || !mat.Equal(tt.maturity) || end.Location() != time.UTC || mat.Location() != time.UTC {
				t.Errorf("Maturity(%v, %d) = %v, %v; want %v, %v in UTC", tt.start, tt.tenor, end, mat, tt.accrualEnd, tt.maturity)
			}
		})
	}
}

func TestDaysElapsed(t *testing.T) {
	start := at("2026-01-05T09:30:00Z")
	tests := []struct {
		name  string
		now   time.Time
		tenor int
		want  int
	}{
		{"before start", start.Add(-48 * time.Hour), 30, 0},
		{"at start", start, 30, 0},
		{"one second short of a day", start.Add(24*time.Hour - time.Second), 30, 0},
		{"one day", start.Add(24 * time.Hour), 30, 1},
		{"day 10 and some hours", start.Add(10*24*time.Hour + 5*time.Hour), 30, 10},
		{"at accrual end", start.Add(30 * 24 * time.Hour), 30, 30},
		{"long after", start.AddDate(400, 0, 0), 30, 30},
		{"zero tenor", start.Add(72 * time.Hour), 0, 0},
		{"negative tenor", start.Add(72 * time.Hour), -1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := DaysElapsed(start, tt.now, tt.tenor); got != tt.want {
				t.Errorf("DaysElapsed(%v, %v, %d) = %d, want %d", start, tt.now, tt.tenor, got, tt.want)
			}
		})
	}
}

// TestGuards pins what each function returns for zero, negative and
// out-of-range input: a value, never a panic.
func TestGuards(t *testing.T) {
	tests := []struct {
		name string
		got  int64
		want int64
	}{
		{"Interest zero principal", Interest(0, dec("0.05"), 30, 360), 0},
		{"Interest negative principal", Interest(-100_000, dec("0.05"), 30, 360), 0},
		{"Interest zero rate", Interest(100_000, dec("0"), 30, 360), 0},
		{"Interest negative rate", Interest(100_000, dec("-0.05"), 30, 360), 0},
		{"Interest zero rate value", Interest(100_000, decimal.Decimal{}, 30, 360), 0},
		{"Interest zero days", Interest(100_000, dec("0.05"), 0, 360), 0},
		{"Interest negative days", Interest(100_000, dec("0.05"), -3, 360), 0},
		{"Interest zero basis", Interest(100_000, dec("0.05"), 30, 0), 0},
		{"Interest negative basis", Interest(100_000, dec("0.05"), 30, -365), 0},
		// 9_223_372_036_854_775_807 × 2 × 360 / 360 does not fit.
		{"Interest saturates", Interest(math.MaxInt64, dec("2"), 360, 360), math.MaxInt64},
		// Exact at the edge: MaxInt64 × 1 × 365 / 365.
		{"Interest at MaxInt64", Interest(math.MaxInt64, dec("1"), 365, 365), math.MaxInt64},
		// A rate with more digits than Div keeps: 1 × 0.99999999999999999999 ×
		// 1 / 1 is just under 1, so 0 (Div at 16 places would give 1).
		{"Interest long fraction", Interest(1, dec("0.99999999999999999999"), 1, 1), 0},
		{"Penalty zero gross", Penalty(0, dec("0.5")), 0},
		{"Penalty negative gross", Penalty(-10, dec("0.5")), 0},
		{"Penalty negative rate", Penalty(1000, dec("-0.5")), 0},
		{"Penalty rate above 1", Penalty(1000, dec("1.5")), 1500},
		{"Penalty saturates", Penalty(math.MaxInt64, dec("3")), math.MaxInt64},
		{"Withholding zero gross", Withholding(0, dec("0.2")), 0},
		{"Withholding negative gross", Withholding(-10, dec("0.2")), 0},
		{"Withholding zero rate", Withholding(1000, dec("0")), 0},
		{"Withholding negative rate", Withholding(1000, dec("-0.2")), 0},
		{"NetPayout all zero", NetPayout(0, 0, 0, 0), 0},
		{"NetPayout charges above principal and gross", NetPayout(100, 10, 500, 20), 0},
		{"NetPayout negative principal counts as 0", NetPayout(-100, 10, 0, 0), 10},
		{"NetPayout negative gross counts as 0", NetPayout(100, -10, 0, 0), 100},
		{"NetPayout negative penalty counts as 0", NetPayout(100, 10, -1_000, 0), 110},
		{"NetPayout negative deductions count as 0", NetPayout(100, 10, 0, -1_000), 110},
		{"NetPayout saturates", NetPayout(math.MaxInt64, math.MaxInt64, 0, 0), math.MaxInt64},
		{"NetPayout large without overflow", NetPayout(math.MaxInt64, 10, 5, 5), math.MaxInt64},
		{"NetPayout back in range", NetPayout(math.MaxInt64, math.MaxInt64, math.MaxInt64, 1), math.MaxInt64 - 1},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %d, want %d", tt.name, tt.got, tt.want)
		}
	}
}

// TestAccrualProperty plays random deposits day by day the way the daily
// accrual job does: on each run it posts, for every whole day d elapsed and
// not yet posted, Interest(d) − Interest(d−1). After every run the posted
// sum must equal the accrued interest computed on read from DaysElapsed,
// never exceed the interest of the whole tenor, and no posting may be
// negative. Runs land at random times of day, sometimes skip days (a job
// that was down catches up) and continue past maturity.
func TestAccrualProperty(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	tenors := []int{7, 30, 60, 90, 180}
	currencies := []string{"USD", "EUR", "GBP", "NGN", "USDC"}
	for range 300 {
		principal := 1 + rng.Int64N(1_000_000_000_000)
		rate := decimal.New(rng.Int64N(5_001), -4) // 0 to 0.5000
		tenor := tenors[rng.IntN(len(tenors))]
		basis := DayCountBasis(currencies[rng.IntN(len(currencies))])
		start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(rng.Int64N(int64(6 * 365 * 24 * time.Hour))))
		_, maturity := Maturity(start, tenor)
		whole := Interest(principal, rate, tenor, basis)

		var posted int64
		lastPosted := 0
		for now := start; !now.After(maturity.Add(72 * time.Hour)); now = now.Add(time.Duration(1 + rng.Int64N(int64(60*time.Hour)))) {
			days := DaysElapsed(start, now, tenor)
			for d := lastPosted + 1; d <= days; d++ {
				accrual := Interest(principal, rate, d, basis) - Interest(principal, rate, d-1, basis)
				if accrual < 0 {
					t.Fatalf("principal %d rate %s tenor %d basis %d: day %d accrual %d < 0", principal, rate, tenor, basis, d, accrual)
				}
				posted += accrual
			}
			lastPosted = days
			if onRead := Interest(principal, rate, days, basis); posted != onRead || posted > whole {
				t.Fatalf("principal %d rate %s tenor %d basis %d at %v (day %d): posted %d, on read %d, tenor's interest %d",
					principal, rate, tenor, basis, now, days, posted, onRead, whole)
			}
		}
		if lastPosted != tenor || posted != whole {
			t.Fatalf("principal %d rate %s tenor %d basis %d: after maturity posted %d over %d days, want %d over %d",
				principal, rate, tenor, basis, posted, lastPosted, whole, tenor)
		}
	}
}
