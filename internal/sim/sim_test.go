package sim

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var (
	flagSeed   = flag.Uint64("seed", 0, "replay this seed only (0: the default seeds, or new ones under -budget)")
	flagSteps  = flag.Int("steps", 300, "steps per seed")
	flagSeeds  = flag.Int("seeds", 4, "how many seeds TestSim runs")
	flagKeep   = flag.String("keep", "", "replay only these steps of -seed's history (a shrunk history, as a failure prints it)")
	flagStore  = flag.String("store", "memory", "memory or bolt")
	flagBudget = flag.Duration("budget", 0, "TestSimLong: run new seeds for this long (0: skip)")
	flagShrink = flag.Duration("shrink", time.Minute, "how long a failure may spend shrinking its history")
	flagVerb   = flag.Bool("steplog", false, "print every step")
	flagNoFlt  = flag.Bool("nofaults", false, "leave out crashes, receiver failures and provider outages")
	flagProcs  = flag.Int("workers", 1, "TestSimLong: seeds run at once")
	flagRuns   = flag.Int("runs", 0, "TestSimLong: stop after this many seeds (0: when -budget ends)")
	flagSerial = flag.Bool("serial", false, "run each concurrent step's requests one after another, so that a seed replays exactly")
	flagBanks  = flag.Int("banks", 1, "TestSim: banks sharing the store, requests spread over them")
	flagOnly   = flag.String("only", "", "comma-separated op name prefixes to run beside the core ops (default all)")
)

// runSeed runs one seed and, when it fails, shrinks its history and fails
// t with both ways to replay it.
func runSeed(t *testing.T, cfg Config) Result {
	t.Helper()
	if *flagVerb {
		cfg.Log = os.Stdout
	}
	if *flagOnly != "" {
		cfg.Only = strings.Split(*flagOnly, ",")
	}
	if *flagSerial {
		cfg.Serial = true
	}
	res := Run(context.Background(), cfg)
	if res.Failure == nil {
		return res
	}
	f := res.Failure
	sized := fmt.Sprintf("-steps=%d -store=%s", cfg.Steps, cfg.Store)
	if cfg.Store == Postgres {
		// TestSimPostgres reads its own flag, and ignores -steps and -store.
		sized = fmt.Sprintf("-pgsteps=%d", cfg.Steps)
	}
	// A seed replays through TestSim (or TestSimPostgres): TestSimLong
	// skips without -budget.
	name := t.Name()
	if name == "TestSimLong" {
		name = "TestSim"
	}
	replay := fmt.Sprintf("go test ./internal/sim -run '^%s$' -seed=%d %s", name, cfg.Seed, sized)
	if cfg.NoFaults {
		replay += " -nofaults"
	}
	if *flagOnly != "" {
		replay += " -only=" + *flagOnly
	}
	if cfg.Serial {
		replay += " -serial"
	}
	t.Errorf("seed %d failed at step %d (%s) after %d steps: %v\nreplay: %s", f.Seed, f.Step, f.Op, res.Steps, f.Err, replay)
	if !cfg.Serial {
		// A failure that needs no concurrent interleaving replays exactly
		// with -serial, and shrinks reliably that way.
		sc := cfg
		sc.Serial, sc.Log = true, nil
		if sr := Run(context.Background(), sc); sr.Failure != nil {
			t.Errorf("it fails with -serial too, at step %d (%s): %v\nexact replay: %s -serial", sr.Failure.Step, sr.Failure.Op, sr.Failure.Err, replay)
			cfg, f, replay = sc, sr.Failure, replay+" -serial"
		} else {
			t.Errorf("it does not fail with -serial: it needs a concurrent step's interleaving")
		}
	}
	if *flagShrink > 0 {
		keep, sf := Shrink(context.Background(), cfg, f, *flagShrink)
		t.Errorf("shortest history found: %d steps, failing at step %d (%s): %v\nreplay: %s -keep=%s",
			len(keep), sf.Step, sf.Op, sf.Err, replay, FormatKeep(keep))
	}
	return res
}

// TestSim runs a few seeds of a few hundred steps each, every invariant
// checked after every step; -seed replays one.
func TestSim(t *testing.T) {
	keep, err := ParseKeep(*flagKeep)
	if err != nil {
		t.Fatalf("-keep: %v", err)
	}
	seeds := []uint64{1, 2, 3, 4, 5, 6, 7, 8}[:min(8, *flagSeeds)]
	if *flagSeed != 0 {
		seeds = []uint64{*flagSeed}
	}
	total := map[string]int{}
	for _, seed := range seeds {
		cfg := Config{Seed: seed, Steps: *flagSteps, Keep: keep, Store: Store(*flagStore), NoFaults: *flagNoFlt, Banks: *flagBanks}
		res := runSeed(t, cfg)
		for k, v := range res.Counts {
			total[k] += v
		}
	}
	t.Logf("%d seeds: %s", len(seeds), Summary(total))
}

// TestSimBolt is TestSim on bolt, whose crashes cut the power of the log
// and lose or tear what was not synced.
func TestSimBolt(t *testing.T) {
	if *flagSeed != 0 {
		t.Skip("-seed replays with -store")
	}
	for _, seed := range []uint64{11, 12} {
		runSeed(t, Config{Seed: seed, Steps: *flagSteps / 2, Store: Bolt, Dir: t.TempDir()})
	}
}

// TestSimLong runs new seeds for -budget (CI's long run), -workers at a
// time, printing each seed so that a failure replays.
func TestSimLong(t *testing.T) {
	if *flagBudget <= 0 {
		t.Skip("set -budget to run new seeds for that long")
	}
	deadline := time.Now().Add(*flagBudget)
	base := rand.Uint64() >> 1
	t.Logf("seeds from %d, %d steps each, on %s", base, *flagSteps, *flagStore)
	// Seeds go on after a failure (each one is reported with its replay),
	// up to a few, so that one bug does not hide the next.
	var next, steps, runs, failed atomic.Uint64
	var mu sync.Mutex
	total := map[string]int{}
	var wg sync.WaitGroup
	for range max(1, *flagProcs) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) && failed.Load() < 5 {
				n := next.Add(1)
				if *flagRuns > 0 && n > uint64(*flagRuns) {
					return
				}
				seed := base + n
				cfg := Config{Seed: seed, Steps: *flagSteps, Store: Store(*flagStore), NoFaults: *flagNoFlt}
				if cfg.Store == Bolt {
					cfg.Dir = t.TempDir()
				}
				res := runSeed(t, cfg)
				if res.Failure != nil {
					failed.Add(1)
				}
				steps.Add(uint64(res.Steps))
				if done := runs.Add(1); done%50 == 0 {
					t.Logf("%d seeds, %d steps, %s", done, steps.Load(), time.Since(deadline.Add(-*flagBudget)).Round(time.Second))
				}
				mu.Lock()
				for k, v := range res.Counts {
					total[k] += v
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	t.Logf("%d seeds (%d to %d, %d failed), %d steps in %s: %s", runs.Load(), base+1, base+min(next.Load(), runs.Load()), failed.Load(), steps.Load(),
		time.Since(deadline.Add(-*flagBudget)).Round(time.Second), Summary(total))
}

// TestReplay runs one seed twice with Serial and compares the step logs,
// which carry the outbox position after each step: a replay is the same
// history, to the event IDs.
func TestReplay(t *testing.T) {
	var logs [2]strings.Builder
	for i := range logs {
		res := Run(context.Background(), Config{Seed: 99, Steps: 400, Serial: true, Log: &logs[i]})
		if res.Failure != nil {
			t.Fatalf("run %d: %v", i, res.Failure)
		}
	}
	a, b := strings.Split(logs[0].String(), "\n"), strings.Split(logs[1].String(), "\n")
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			t.Fatalf("the replay diverges at line %d:\n%s\n%s", i, a[i], b[i])
		}
	}
	if len(a) != len(b) {
		t.Fatalf("the replay logged %d lines, the first run %d", len(b), len(a))
	}
}

// TestSameReplay: a replay is the same bytes, or the same JSON less a
// card's number and CVV, and never shows them.
func TestSameReplay(t *testing.T) {
	card := `{"status":"success","data":{"id":"c1","number":"4111","cvv":"123","name":"x"}}`
	for _, tc := range []struct {
		first, replay string
		want          bool
	}{
		{`{"a":1}`, `{"a":1}`, true},
		{`{"a":1}`, `{"a":2}`, false},
		{card, `{"data":{"name":"x","id":"c1"},"status":"success"}`, true},
		{card, `{"data":{"name":"y","id":"c1"},"status":"success"}`, false},
		{card, card[:len(card)-1] + `,"x":1}`, false},
		{card, `{"data":{"name":"x","id":"c1","cvv":"123"},"status":"success"}`, false},
	} {
		if got := sameReplay([]byte(tc.first), []byte(tc.replay)); got != tc.want {
			t.Errorf("sameReplay(%s, %s) = %v", tc.first, tc.replay, got)
		}
	}
}
