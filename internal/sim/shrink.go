package sim

import (
	"context"
	"strconv"
	"strings"
	"time"
)

// Shrink cuts a failing run's history to a shorter one that still fails:
// it drops runs of steps, halving their length down to single steps, and
// keeps each cut that still fails (any broken invariant counts, as a
// shrunk history may expose the same bug another way). Every step keeps
// its own choices (stepSeeds), so what is left replays as it did. It stops
// at budget and returns the shortest failing history found and its
// failure.
func Shrink(ctx context.Context, cfg Config, f *Failure, budget time.Duration) ([]int, *Failure) {
	deadline := time.Now().Add(budget)
	keep := cfg.Keep
	if keep == nil {
		keep = make([]int, f.Step+1)
		for i := range keep {
			keep[i] = i
		}
	} else {
		keep = keep[:indexOf(keep, f.Step)+1]
	}
	best := f
	fails := func(cand []int) *Failure {
		c := cfg
		c.Keep = cand
		c.Log = nil
		return Run(ctx, c).Failure
	}
	for chunk := len(keep) / 2; chunk >= 1; chunk /= 2 {
		for i := 0; i < len(keep); {
			if time.Now().After(deadline) || ctx.Err() != nil {
				return keep, best
			}
			end := min(len(keep), i+chunk)
			cand := append(append([]int(nil), keep[:i]...), keep[end:]...)
			if len(cand) == 0 {
				i = end
				continue
			}
			if got := fails(cand); got != nil {
				keep, best = cand[:indexOf(cand, got.Step)+1], got
				continue
			}
			i = end
		}
	}
	return keep, best
}

func indexOf(l []int, v int) int {
	for i, x := range l {
		if x == v {
			return i
		}
	}
	return len(l) - 1
}

// FormatKeep writes a history for the -keep flag.
func FormatKeep(keep []int) string {
	var b strings.Builder
	for i, k := range keep {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(k))
	}
	return b.String()
}

// ParseKeep reads FormatKeep's form; "" is nil (the whole history).
func ParseKeep(s string) ([]int, error) {
	if s == "" {
		return nil, nil
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}
