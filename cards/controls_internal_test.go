package cards

import (
	"testing"
	"time"
)

func TestWindowEdges(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, tc := range []struct {
		name      string
		c         Controls
		now       string
		day, cycl string
	}{
		{"just before midnight UTC", Controls{}, "2026-03-09T23:59:59Z", "2026-03-09", "2026-03-01"},
		{"midnight UTC", Controls{}, "2026-03-10T00:00:00Z", "2026-03-10", "2026-03-01"},
		{"before midnight in New York", Controls{TimeZone: "America/New_York"}, "2026-03-10T03:59:59Z", "2026-03-09", "2026-03-01"},
		{"midnight in New York", Controls{TimeZone: "America/New_York"}, "2026-03-10T04:00:00Z", "2026-03-10", "2026-03-01"},
		{"monthly on the 1st in Tokyo, UTC still February", Controls{TimeZone: "Asia/Tokyo"}, "2026-02-28T15:00:00Z", "2026-03-01", "2026-03-01"},
		{"weekly from Wednesday, on Tuesday", Controls{BillingCycle: "Weekly", BillingCycleDay: "Wednesday"}, "2026-03-10T12:00:00Z", "2026-03-10", "2026-03-04"},
		{"weekly from Wednesday, on Wednesday", Controls{BillingCycle: "Weekly", BillingCycleDay: "wednesday"}, "2026-03-11T00:00:00Z", "2026-03-11", "2026-03-11"},
		{"weekly default Monday", Controls{BillingCycle: "weekly"}, "2026-03-15T23:00:00Z", "2026-03-15", "2026-03-09"},
		{"the 31st in February starts on the 28th", Controls{BillingCycle: "Monthly", BillingCycleDay: "31"}, "2026-02-28T00:00:00Z", "2026-02-28", "2026-02-28"},
		{"the 31st, the day before in February", Controls{BillingCycle: "Monthly", BillingCycleDay: "31"}, "2026-02-27T23:59:59Z", "2026-02-27", "2026-01-31"},
		{"the 31st in a leap February", Controls{BillingCycle: "Monthly", BillingCycleDay: "31"}, "2028-02-29T10:00:00Z", "2028-02-29", "2028-02-29"},
		{"the 31st, in March before it", Controls{BillingCycle: "Monthly", BillingCycleDay: "31"}, "2026-03-30T10:00:00Z", "2026-03-30", "2026-02-28"},
		{"the 31st in March", Controls{BillingCycle: "Monthly", BillingCycleDay: "31"}, "2026-03-31T00:00:00Z", "2026-03-31", "2026-03-31"},
		{"the 15th in January, before it", Controls{BillingCycle: "Monthly", BillingCycleDay: "15"}, "2026-01-14T00:00:00Z", "2026-01-14", "2025-12-15"},
	} {
		w := tc.c.windowsAt(at(tc.now))
		if w.day != tc.day || w.cycle != tc.cycl {
			t.Errorf("%s: day %s cycle %s, want %s %s", tc.name, w.day, w.cycle, tc.day, tc.cycl)
		}
	}
}

func TestMCCGroups(t *testing.T) {
	for _, tc := range []struct {
		group string
		mcc   int
		in    bool
	}{
		{"airlines", 3000, true}, {"airlines", 4511, true}, {"travel", 4511, true}, {"travel", 7011, true},
		{"restaurants", 5812, true}, {"restaurants", 5411, false}, {"gambling", 7995, true}, {"cash", 6011, true},
		{"quasi_cash", 6051, true}, {"money_transfer", 4829, true}, {"car_rental", 7512, true}, {"lodging", 3501, true},
		{"nope", 5812, false},
	} {
		if got := inGroup(tc.group, tc.mcc); got != tc.in {
			t.Errorf("%s %d: %v", tc.group, tc.mcc, got)
		}
	}
}
