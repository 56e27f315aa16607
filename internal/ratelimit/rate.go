package ratelimit

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// MaxCount is the largest Count and Burst Parse accepts.
const MaxCount = 1_000_000

// Rate is Count requests per Per on average, at most Burst at once. The
// zero Rate (Count 0) means no limit.
type Rate struct {
	Count int
	Per   time.Duration
	// Burst is how many requests may come at once after a quiet spell
	// (the bucket's size); 0 means Count.
	Burst int
}

// Off reports whether r limits nothing.
func (r Rate) Off() bool { return r.Count <= 0 || r.Per <= 0 }

// burst is r.Burst, or Count when it is 0.
func (r Rate) burst() int {
	if r.Burst > 0 {
		return r.Burst
	}
	return r.Count
}

// String is r in the form Parse reads: "off", or like "100/s,burst=200".
func (r Rate) String() string {
	if r.Off() {
		return "off"
	}
	unit := r.Per.String()
	for u, d := range units {
		if d == r.Per {
			unit = u
		}
	}
	return strconv.Itoa(r.Count) + "/" + unit + ",burst=" + strconv.Itoa(r.burst())
}

// units are the periods Parse reads after the slash.
var units = map[string]time.Duration{"s": time.Second, "m": time.Minute, "h": time.Hour}

// Parse reads a Rate: "off" (the zero Rate), or N/s, N/m or N/h with an
// optional ",burst=B" (B defaults to N), like "100/s,burst=200" or "10/m".
// N and B are whole numbers from 1 to MaxCount. Spaces around the parts
// are ignored. The error says what was wrong without naming a flag; the
// caller names it.
func Parse(s string) (Rate, error) {
	s = strings.TrimSpace(s)
	if strings.EqualFold(s, "off") {
		return Rate{}, nil
	}
	if s == "" {
		return Rate{}, errors.New(`is empty: give "off" or a rate like 100/s,burst=200`)
	}
	parts := strings.Split(s, ",")
	count, unit, ok := strings.Cut(strings.TrimSpace(parts[0]), "/")
	if !ok {
		return Rate{}, fmt.Errorf(`%q is not "off" or a rate like 100/s,burst=200 (N/s, N/m or N/h, then an optional ,burst=B)`, s)
	}
	var r Rate
	var err error
	if r.Count, err = whole(count); err != nil {
		return Rate{}, fmt.Errorf("%q: the count before the slash %w", s, err)
	}
	if r.Per, ok = units[strings.TrimSpace(unit)]; !ok {
		return Rate{}, fmt.Errorf("%q: the unit after the slash must be s, m or h, not %q", s, strings.TrimSpace(unit))
	}
	for i, p := range parts[1:] {
		name, val, ok := strings.Cut(strings.TrimSpace(p), "=")
		if !ok || strings.TrimSpace(name) != "burst" {
			return Rate{}, fmt.Errorf("%q: after the rate only burst=B may follow, not %q", s, strings.TrimSpace(p))
		}
		if i > 0 {
			return Rate{}, fmt.Errorf("%q: burst is given twice", s)
		}
		if r.Burst, err = whole(val); err != nil {
			return Rate{}, fmt.Errorf("%q: burst %w", s, err)
		}
	}
	if r.Burst == 0 {
		r.Burst = r.Count
	}
	return r, nil
}

// whole reads a count from 1 to MaxCount; the error completes a sentence
// that names the count.
func whole(s string) (int, error) {
	s = strings.TrimSpace(s)
	n, err := strconv.Atoi(s)
	switch {
	case err != nil:
		return 0, fmt.Errorf("must be a whole number, not %q", s)
	case n < 1 || n > MaxCount:
		return 0, fmt.Errorf("must be from 1 to %d, not %d", MaxCount, n)
	}
	return n, nil
}
