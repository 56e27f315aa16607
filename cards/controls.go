package cards

import (
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/storage"
)

// MCCGroupsVersion names the version of MCCGroups; a change of a group's
// codes is a new version.
const MCCGroupsVersion = "2026-11"

// mccRange is an inclusive range of merchant category codes.
type mccRange struct{ lo, hi int }

var (
	airlines  = []mccRange{{3000, 3350}, {4511, 4511}}
	carRental = []mccRange{{3351, 3500}, {7512, 7512}}
	lodging   = []mccRange{{3501, 3999}, {7011, 7011}}
)

// MCCGroups is the table group_name is checked against (version
// MCCGroupsVersion): each group's merchant category codes.
var MCCGroups = map[string][]mccRange{
	"airlines":   airlines,
	"car_rental": carRental,
	"lodging":    lodging,
	"travel": append(append(append([]mccRange{{4111, 4112}, {4131, 4131}, {4411, 4411}, {4722, 4722}, {4789, 4789}},
		airlines...), carRental...), lodging...),
	"restaurants":    {{5811, 5814}},
	"gambling":       {{7800, 7802}, {7995, 7995}},
	"cash":           {{6010, 6011}},
	"quasi_cash":     {{6050, 6051}, {6540, 6540}},
	"money_transfer": {{4829, 4829}, {6536, 6538}},
}

// inGroup reports whether mcc is in group name.
func inGroup(name string, mcc int) bool {
	for _, r := range MCCGroups[name] {
		if mcc >= r.lo && mcc <= r.hi {
			return true
		}
	}
	return false
}

// Usage is what a control has counted in the windows open now: held
// (authorized, not yet cleared) and used (cleared) amounts and counts,
// and the balance left under each limit (null without the limit).
type Usage struct {
	AmountUsed                   int64  `json:"amount_used"`
	AmountHold                   int64  `json:"amount_hold"`
	AmountBalance                *int64 `json:"amount_balance"`
	DailyTransactionCountUsed    int64  `json:"daily_transaction_count_used"`
	DailyTransactionCountHold    int64  `json:"daily_transaction_count_hold"`
	DailyTransactionCountBalance *int64 `json:"daily_transaction_count_balance"`
	DailyAmountLimitUsed         int64  `json:"daily_amount_limit_used"`
	DailyAmountLimitHold         int64  `json:"daily_amount_limit_hold"`
	DailyAmountLimitBalance      *int64 `json:"daily_amount_limit_balance"`
	CycleTransactionCountUsed    int64  `json:"cycle_transaction_count_used"`
	CycleTransactionCountHold    int64  `json:"cycle_transaction_count_hold"`
	CycleTransactionCountBalance *int64 `json:"cycle_transaction_count_balance"`
}

// counter is what one control counted in one window.
type counter struct {
	AmountHold int64 `json:"ah"`
	AmountUsed int64 `json:"au"`
	CountHold  int64 `json:"ch"`
	CountUsed  int64 `json:"cu"`
}

func (c counter) amount() int64 { return c.AmountHold + c.AmountUsed }

// add is c with hold and used amounts moved by dh and du, held and used
// counts by ch and cu.
func (c counter) add(dh, du, ch, cu int64) counter {
	return counter{c.AmountHold + dh, c.AmountUsed + du, c.CountHold + ch, c.CountUsed + cu}
}
func (c counter) count() int64 { return c.CountHold + c.CountUsed }

// weekdays parses billing_cycle_day for a weekly cycle.
var weekdays = map[string]time.Weekday{"sunday": time.Sunday, "monday": time.Monday, "tuesday": time.Tuesday,
	"wednesday": time.Wednesday, "thursday": time.Thursday, "friday": time.Friday, "saturday": time.Saturday}

// location is the card's time zone: UTC unless time_zone names another.
func (c *Controls) location() *time.Location {
	if c.TimeZone == "" {
		return time.UTC
	}
	if loc, ok := zones.Load(c.TimeZone); ok {
		return loc.(*time.Location)
	}
	loc, err := time.LoadLocation(c.TimeZone)
	if err != nil {
		return time.UTC
	}
	zones.Store(c.TimeZone, loc)
	return loc
}

// zones caches loaded time zones by name (time.LoadLocation reads the
// zone database each call).
var zones sync.Map

// checkCycle adds the problems of c's cycle fields to p.
func (c *Controls) checkCycle(p corebank.Problems) {
	const pre = "individual_controls."
	switch strings.ToLower(c.BillingCycle) {
	case "weekly":
		if _, ok := weekdays[strings.ToLower(string(c.BillingCycleDay))]; !ok && c.BillingCycleDay != "" {
			p.Add(pre+"billing_cycle_day", "must name a weekday (Monday to Sunday) for a weekly cycle")
		}
	case "", "monthly":
		if n, err := strconv.Atoi(string(c.BillingCycleDay)); c.BillingCycleDay != "" && (err != nil || n < 1 || n > 31) {
			p.Add(pre+"billing_cycle_day", "must be a day of the month, 1 to 31")
		}
	default:
		p.Add(pre+"billing_cycle", "must be Weekly or Monthly")
	}
	if c.TimeZone != "" {
		if _, err := time.LoadLocation(c.TimeZone); err != nil || c.TimeZone == "Local" {
			p.Add(pre+"time_zone", "must be an IANA time zone such as Europe/London")
		}
	}
}

// windows are the day and the billing cycle that now falls in, as the
// dates (in the card's zone) they start on.
type windows struct{ day, cycle string }

// windowsAt returns the windows of c open at now. The day runs from
// midnight in the card's zone (UTC by default). A weekly cycle starts on
// the weekday billing_cycle_day names (default Monday); a monthly cycle
// starts on day billing_cycle_day (default 1), moved to the month's last
// day in months shorter than that.
func (c *Controls) windowsAt(now time.Time) windows {
	t := now.In(c.location())
	day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	var start time.Time
	if strings.EqualFold(c.BillingCycle, "weekly") {
		wd, ok := weekdays[strings.ToLower(string(c.BillingCycleDay))]
		if !ok {
			wd = time.Monday
		}
		start = day.AddDate(0, 0, -((int(day.Weekday()) - int(wd) + 7) % 7))
	} else {
		n, err := strconv.Atoi(string(c.BillingCycleDay))
		if err != nil || n < 1 || n > 31 {
			n = 1
		}
		start = monthDay(day.Year(), day.Month(), n)
		if day.Before(start) {
			start = monthDay(day.Year(), day.Month()-1, n)
		}
	}
	return windows{day: day.Format(time.DateOnly), cycle: start.Format(time.DateOnly)}
}

// monthDay is day n of the month, or the month's last day when shorter.
func monthDay(y int, m time.Month, n int) time.Time {
	first := time.Date(y, m, 1, 0, 0, 0, 0, time.UTC)
	last := first.AddDate(0, 1, -1).Day()
	return first.AddDate(0, 0, min(n, last)-1)
}

// control is one control of a card that applies to an authorization:
// where its reason points, its limits and open flag.
type control struct {
	name   string // the decline reason's prefix, e.g. individual_mcc_controls.5812
	scope  string // the counters' key part
	open   bool
	limits Limits
}

// controlsFor lists the card's controls that apply to mcc.
func (r *record) controlsFor(mcc int) []control {
	ic := r.IndividualControls.Controls
	out := []control{{name: "individual_controls", scope: "i", open: true, limits: Limits{
		CycleTransactionCount: ic.CycleTransactionCount, DailyAmountLimit: ic.DailyAmountLimit,
		DailyTransactionCount: ic.DailyTransactionCount, TransactionAmountLimit: ic.TransactionAmountLimit}}}
	for _, c := range r.IndividualMCCControls {
		if c.MCC == mcc {
			m := strconv.Itoa(c.MCC)
			out = append(out, control{name: "individual_mcc_controls." + m, scope: "m" + m, open: c.Open == nil || *c.Open, limits: c.Limits})
		}
	}
	for _, c := range r.MCCGroupControls {
		if inGroup(c.GroupName, mcc) {
			out = append(out, control{name: "mcc_group_controls." + c.GroupName, scope: "g" + c.GroupName, open: c.Open == nil || *c.Open, limits: c.Limits})
		}
	}
	return out
}

func counterKey(card, scope, window string) []byte { return storage.Key("u", card, scope, window) }

func getCounter(tx storage.Tx, key []byte) (counter, error) {
	raw, err := tx.Get(index, key)
	if errors.Is(err, storage.ErrNotFound) {
		return counter{}, nil
	}
	if err != nil {
		return counter{}, err
	}
	return parseCounter(raw)
}

func putCounter(tx storage.Tx, key []byte, c counter) error {
	if c == (counter{}) {
		return tx.Delete(index, key)
	}
	return tx.Put(index, key, appendCounter(nil, c))
}

// exceeds names the limit of ctl that adding amount and n transactions
// would pass given what the day and cycle counted, with total the
// transaction's whole amount, or "".
func (ctl *control) exceeds(amount, n, total int64, day, cycle counter) string {
	l := ctl.limits
	switch {
	case !ctl.open:
		return "open"
	case l.TransactionAmountLimit != nil && total > *l.TransactionAmountLimit:
		return "transaction_amount_limit"
	case l.DailyAmountLimit != nil && day.amount()+amount > *l.DailyAmountLimit:
		return "daily_amount_limit"
	case l.DailyTransactionCount != nil && day.count()+n > *l.DailyTransactionCount:
		return "daily_transaction_count"
	case l.CycleTransactionCount != nil && cycle.count()+n > *l.CycleTransactionCount:
		return "cycle_transaction_count"
	case l.Amount != nil && cycle.amount()+amount > *l.Amount:
		return "amount"
	}
	return ""
}

// tally is a counter as check read it, under its key.
type tally struct {
	key string
	c   counter
}

// check evaluates the card's controls at mcc for adding amount and n
// transactions to the windows open at (the authorization's time), total
// being the transaction's whole amount: the decline reason
// ("<control>.<limit>") of the first that fires, or "" and the counters
// the transaction is counted in, as read (apply moves them without
// reading them again).
func (s *Service) check(tx storage.Tx, r *record, mcc int, at time.Time, amount, n, total int64) (string, []tally, error) {
	w := r.IndividualControls.windowsAt(at)
	var ts []tally
	for _, ctl := range r.controlsFor(mcc) {
		dk, ck := counterKey(r.ID, ctl.scope, "d"+w.day), counterKey(r.ID, ctl.scope, "c"+w.cycle)
		day, err := getCounter(tx, dk)
		if err != nil {
			return "", nil, err
		}
		cycle, err := getCounter(tx, ck)
		if err != nil {
			return "", nil, err
		}
		if what := ctl.exceeds(amount, n, total, day, cycle); what != "" {
			return ctl.name + "." + what, nil, nil
		}
		ts = append(ts, tally{string(dk), day}, tally{string(ck), cycle})
	}
	return "", ts, nil
}

// keys are the counter keys of ts.
func keys(ts []tally) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.key
	}
	return out
}

// apply moves the counters check read, as count does.
func apply(tx storage.Tx, ts []tally, dh, du, ch, cu int64) error {
	for _, t := range ts {
		if err := putCounter(tx, []byte(t.key), t.c.add(dh, du, ch, cu)); err != nil {
			return err
		}
	}
	return nil
}

// count applies a change to the counters of keys: hold and used amounts
// move by dh and du, held and used counts by ch and cu.
func count(tx storage.Tx, keys []string, dh, du, ch, cu int64) error {
	for _, k := range keys {
		c, err := getCounter(tx, []byte(k))
		if err != nil {
			return err
		}
		if err := putCounter(tx, []byte(k), c.add(dh, du, ch, cu)); err != nil {
			return err
		}
	}
	return nil
}

// usage reads what the control of scope counted in w and the balances
// left under limits.
func usage(tx storage.Tx, card, scope string, w windows, l Limits) (*Usage, error) {
	day, err := getCounter(tx, counterKey(card, scope, "d"+w.day))
	if err != nil {
		return nil, err
	}
	cycle, err := getCounter(tx, counterKey(card, scope, "c"+w.cycle))
	if err != nil {
		return nil, err
	}
	left := func(limit *int64, used int64) *int64 {
		if limit == nil {
			return nil
		}
		v := max(*limit-used, 0)
		return &v
	}
	return &Usage{
		AmountUsed: cycle.AmountUsed, AmountHold: cycle.AmountHold, AmountBalance: left(l.Amount, cycle.amount()),
		DailyTransactionCountUsed: day.CountUsed, DailyTransactionCountHold: day.CountHold,
		DailyTransactionCountBalance: left(l.DailyTransactionCount, day.count()),
		DailyAmountLimitUsed:         day.AmountUsed, DailyAmountLimitHold: day.AmountHold,
		DailyAmountLimitBalance:   left(l.DailyAmountLimit, day.amount()),
		CycleTransactionCountUsed: cycle.CountUsed, CycleTransactionCountHold: cycle.CountHold,
		CycleTransactionCountBalance: left(l.CycleTransactionCount, cycle.count()),
	}, nil
}

// viewAt is the card's view with the usage of each control at now.
func (r *record) viewAt(tx storage.Tx, now time.Time) (*Card, error) {
	c := r.view()
	if r.Type == TypeDisposable {
		return c, nil
	}
	w := r.IndividualControls.windowsAt(now)
	ctls := r.controlsFor(-1)
	u, err := usage(tx, r.ID, "i", w, ctls[0].limits)
	if err != nil {
		return nil, err
	}
	c.IndividualControls.Usage = u
	c.IndividualMCCControls = slices.Clone(c.IndividualMCCControls)
	for i := range c.IndividualMCCControls {
		m := &c.IndividualMCCControls[i]
		if m.Usage, err = usage(tx, r.ID, "m"+strconv.Itoa(m.MCC), w, m.Limits); err != nil {
			return nil, err
		}
	}
	c.MCCGroupControls = slices.Clone(c.MCCGroupControls)
	for i := range c.MCCGroupControls {
		g := &c.MCCGroupControls[i]
		if g.Usage, err = usage(tx, r.ID, "g"+g.GroupName, w, g.Limits); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// groupNames lists MCCGroups' names, sorted.
func groupNames() string {
	return strings.Join(slices.Sorted(maps.Keys(MCCGroups)), ", ")
}
