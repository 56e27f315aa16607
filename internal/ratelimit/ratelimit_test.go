package ratelimit_test

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank/internal/ratelimit"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want ratelimit.Rate
		err  string // a part of the error; "" for none
	}{
		{in: "off", want: ratelimit.Rate{}},
		{in: " OFF ", want: ratelimit.Rate{}},
		{in: "100/s,burst=200", want: ratelimit.Rate{Count: 100, Per: time.Second, Burst: 200}},
		{in: "100/s", want: ratelimit.Rate{Count: 100, Per: time.Second, Burst: 100}},
		{in: "10/m,burst=20", want: ratelimit.Rate{Count: 10, Per: time.Minute, Burst: 20}},
		{in: "5/h", want: ratelimit.Rate{Count: 5, Per: time.Hour, Burst: 5}},
		{in: " 7 / s , burst = 3 ", want: ratelimit.Rate{Count: 7, Per: time.Second, Burst: 3}},
		{in: "1000000/s,burst=1000000", want: ratelimit.Rate{Count: 1_000_000, Per: time.Second, Burst: 1_000_000}},
		{in: "", err: "is empty"},
		{in: "   ", err: "is empty"},
		{in: "on", err: `"on" is not "off" or a rate`},
		{in: "100", err: "is not"},
		{in: "100/d", err: "the unit after the slash must be s, m or h, not \"d\""},
		{in: "100/", err: "the unit after the slash must be s, m or h"},
		{in: "100/min", err: "not \"min\""},
		{in: "/s", err: "the count before the slash must be a whole number"},
		{in: "x/s", err: "must be a whole number, not \"x\""},
		{in: "1.5/s", err: "must be a whole number"},
		{in: "0/s", err: "must be from 1 to 1000000, not 0"},
		{in: "-3/s", err: "must be from 1 to 1000000, not -3"},
		{in: "1000001/s", err: "not 1000001"},
		{in: "99999999999999999999/s", err: "must be a whole number"},
		{in: "10/s,burst=0", err: "burst must be from 1"},
		{in: "10/s,burst=", err: "burst must be a whole number"},
		{in: "10/s,burst=2,burst=3", err: "burst is given twice"},
		{in: "10/s,bust=2", err: `only burst=B may follow, not "bust=2"`},
		{in: "10/s,", err: `only burst=B may follow, not ""`},
		{in: "10/s,burst", err: "only burst=B may follow"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ratelimit.Parse(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Parse(%q) = %v, %v; want an error with %q", tc.in, got, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(%q): %v", tc.in, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Parse(%q) (-want +got):\n%s", tc.in, diff)
			}
			// String reads back as the same Rate.
			again, err := ratelimit.Parse(got.String())
			if err != nil || again != got {
				t.Errorf("Parse(%q.String() = %q) = %v, %v", tc.in, got.String(), again, err)
			}
		})
	}
}

// mock is a Limiter option with a mock clock at a fixed start.
func mock() (*clock.Mock, *ratelimit.Options) {
	c := clock.NewMock()
	c.Set(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	return c, &ratelimit.Options{Clock: c}
}

func TestLimiterBurstThenRate(t *testing.T) {
	clk, opt := mock()
	l := ratelimit.New[string](ratelimit.Rate{Count: 10, Per: time.Minute, Burst: 3}, opt) // a token every 6s
	for i := 1; i <= 3; i++ {
		if diff := cmp.Diff(ratelimit.Result{OK: true, Count: i, Limit: 3}, l.Allow("a")); diff != "" {
			t.Fatalf("request %d (-want +got):\n%s", i, diff)
		}
	}
	want := ratelimit.Result{RetryAfter: 6 * time.Second, Count: 3, Limit: 3}
	if diff := cmp.Diff(want, l.Allow("a")); diff != "" {
		t.Fatalf("over the burst (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, l.Check("a")); diff != "" {
		t.Fatalf("Check over the burst (-want +got):\n%s", diff)
	}
	// Another key has its own bucket.
	if r := l.Allow("b"); !r.OK {
		t.Fatalf("another key: %+v", r)
	}
	clk.Add(6*time.Second - time.Millisecond)
	if r := l.Allow("a"); r.OK || r.RetryAfter != time.Millisecond {
		t.Fatalf("a millisecond early: %+v", r)
	}
	clk.Add(time.Millisecond)
	if r := l.Allow("a"); !r.OK || r.Count != 3 {
		t.Fatalf("after RetryAfter: %+v", r)
	}
	if r := l.Allow("a"); r.OK || r.RetryAfter != 6*time.Second {
		t.Fatalf("the token it got was the only one: %+v", r)
	}
	// A quiet spell as long as the burst refills it whole, no more.
	clk.Add(time.Hour)
	for i := 1; i <= 3; i++ {
		if r := l.Allow("a"); !r.OK || r.Count != i {
			t.Fatalf("after an hour, request %d: %+v", i, r)
		}
	}
	if r := l.Allow("a"); r.OK {
		t.Fatalf("after an hour, the burst is still 3: %+v", r)
	}
}

func TestLimiterCheckAndReturn(t *testing.T) {
	clk, opt := mock()
	l := ratelimit.New[string](ratelimit.Rate{Count: 1, Per: time.Second, Burst: 2}, opt)
	if diff := cmp.Diff(ratelimit.Result{OK: true, Count: 0, Limit: 2}, l.Check("k")); diff != "" {
		t.Fatalf("Check of a new key (-want +got):\n%s", diff)
	}
	l.Allow("k")
	l.Allow("k")
	if r := l.Check("k"); r.OK {
		t.Fatalf("Check of an empty bucket: %+v", r)
	}
	l.Return("k")
	if r := l.Check("k"); !r.OK || r.Count != 1 {
		t.Fatalf("Check after Return: %+v", r)
	}
	l.Return("k")
	l.Return("k") // more than was taken: the bucket stays at its size
	l.Return("never seen")
	for i := 1; i <= 2; i++ {
		if r := l.Allow("k"); !r.OK {
			t.Fatalf("request %d after the returns: %+v", i, r)
		}
	}
	if r := l.Allow("k"); r.OK {
		t.Fatalf("a third request: Return gave more than Burst: %+v", r)
	}
	clk.Add(time.Second)
	if r := l.Allow("k"); !r.OK {
		t.Fatalf("a second later: %+v", r)
	}
}

func TestLimiterOffIsNil(t *testing.T) {
	l := ratelimit.New[string](ratelimit.Rate{}, nil)
	if l != nil {
		t.Fatalf("New(off) = %v, want nil", l)
	}
	for range 1000 {
		if r := l.Allow("x"); !r.OK {
			t.Fatal("a nil Limiter refused")
		}
	}
	l.Return("x")
	if r := l.Check("x"); !r.OK || l.Len() != 0 || !l.Rate().Off() {
		t.Fatal("a nil Limiter is not empty and open")
	}
}

// TestLimiterMemoryBounded: keys whose bucket refilled are swept, and no
// flood of new keys holds more than MaxKeys.
func TestLimiterMemoryBounded(t *testing.T) {
	clk, opt := mock()
	opt.MaxKeys = 640
	l := ratelimit.New[string](ratelimit.Rate{Count: 100, Per: time.Second, Burst: 200}, opt)
	for i := range 10_000 {
		l.Allow(strconv.Itoa(i))
	}
	if n := l.Len(); n > 640 || n < 320 {
		t.Fatalf("after 10000 keys: %d held, want at most MaxKeys 640 (and most of it used)", n)
	}
	// Each bucket is full again after 2s; sweeps run at most once a second
	// per shard, on a call that lands on it.
	clk.Add(3 * time.Second)
	for i := range 64 * 20 {
		l.Check("probe" + strconv.Itoa(i))
	}
	if n := l.Len(); n != 0 {
		t.Fatalf("after every bucket refilled: %d keys held, want 0", n)
	}
}

func TestRecent(t *testing.T) {
	clk, opt := mock()
	r := ratelimit.NewRecent[[2]uint64](time.Hour, opt)
	k := [2]uint64{1, 2}
	if r.Has(k) {
		t.Fatal("Has before Add")
	}
	r.Add(k)
	clk.Add(59 * time.Minute)
	if !r.Has(k) || r.Has([2]uint64{2, 1}) {
		t.Fatal("Has after 59 minutes")
	}
	r.Add(k) // refreshed
	clk.Add(59 * time.Minute)
	if !r.Refresh(k) {
		t.Fatal("Refresh 59 minutes after the second Add")
	}
	clk.Add(59 * time.Minute)
	if !r.Has(k) {
		t.Fatal("Has 59 minutes after Refresh")
	}
	clk.Add(time.Minute)
	if r.Has(k) || r.Refresh(k) {
		t.Fatal("Has or Refresh an hour after the last Refresh")
	}
	if r.Refresh([2]uint64{7, 7}) || r.Has([2]uint64{7, 7}) {
		t.Fatal("Refresh added a key never added")
	}
	clk.Add(time.Minute)
	for i := range 64 * 20 {
		r.Has([2]uint64{uint64(i), 0})
	}
	if n := r.Len(); n != 0 {
		t.Fatalf("%d keys held after they expired", n)
	}
}

// TestLimiterConcurrent: however many goroutines ask at once, one key gets
// exactly Burst tokens while the clock stands still (go test -race).
func TestLimiterConcurrent(t *testing.T) {
	_, opt := mock()
	l := ratelimit.New[string](ratelimit.Rate{Count: 1, Per: time.Hour, Burst: 50}, opt)
	var (
		wg sync.WaitGroup
		mu sync.Mutex
		ok = map[string]int{}
	)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 100 {
				k := strconv.Itoa(i % 4)
				if g%2 == 0 {
					l.Check(k)
				}
				if l.Allow(k).OK {
					mu.Lock()
					ok[k]++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if diff := cmp.Diff(map[string]int{"0": 50, "1": 50, "2": 50, "3": 50}, ok); diff != "" {
		t.Fatalf("allowed per key (-want +got):\n%s", diff)
	}
}

// BenchmarkAllow is the cost of one Allow: on one key from every
// goroutine (the worst case: one lock), and on a key per goroutine.
func BenchmarkAllow(b *testing.B) {
	lots := ratelimit.Rate{Count: 1_000_000, Per: time.Second, Burst: 1_000_000}
	b.Run("one-key", func(b *testing.B) {
		l := ratelimit.New[string](lots, nil)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				l.Allow("127.0.0.1")
			}
		})
	})
	b.Run("key-each", func(b *testing.B) {
		l := ratelimit.New[string](lots, nil)
		var n atomic.Int64
		b.RunParallel(func(pb *testing.PB) {
			k := "10.0.0." + strconv.FormatInt(n.Add(1), 10)
			for pb.Next() {
				l.Allow(k)
			}
		})
	})
	b.Run("recent", func(b *testing.B) {
		r := ratelimit.NewRecent[[2]uint64](time.Hour, nil)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if !r.Refresh([2]uint64{1, 2}) {
					r.Add([2]uint64{1, 2})
				}
			}
		})
	})
}
