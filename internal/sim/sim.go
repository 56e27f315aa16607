package sim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/bank"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/storage"
)

// Start is the simulated clock's first instant.
var Start = time.Date(2026, time.January, 5, 9, 0, 0, 0, time.UTC)

// Store names the backend a run uses.
type Store string

const (
	Memory   Store = "memory"
	Bolt     Store = "bolt"
	Postgres Store = "postgres"
)

// Config is one run.
type Config struct {
	// Seed makes the run: the same seed and Steps (and Keep) replay the same
	// history.
	Seed uint64
	// Steps is the history's length.
	Steps int
	// Keep, when not nil, replays only these steps of the seed's history
	// (a shrunk history), each with the choices it had in the full one.
	Keep []int
	// Store is the backend (default Memory).
	Store Store
	// Dir holds the bolt file (default a temporary folder, removed after).
	Dir string
	// Postgres opens a new connection to the store named store (a table
	// of its own, say): one per bank, and again after a crash; each Run
	// names a new store. Required with Store Postgres.
	Postgres func(store string) (storage.Backend, error)
	// Banks is how many banks share the store, requests spread over them
	// (default 1; several need Postgres).
	Banks int
	// NoFaults leaves out crashes, receiver failures and provider outages
	// (clock jumps stay: time is part of the workload).
	NoFaults bool
	// Only, when set, runs only the ops whose names start with one of these
	// prefixes, beside the core ones (entities, accounts, inflows, the
	// clock, faults, retries, concurrency).
	Only []string
	// Serial runs a concurrent step's requests one after another. A
	// concurrent step's interleaving is the scheduler's, so the IDs and
	// outcomes after one may differ between two runs of a seed; with Serial
	// a seed replays exactly, step for step.
	Serial bool
	// Log, when set, gets one line per step.
	Log io.Writer
	// Break, when set, is called with the bank after each step: a scratch
	// hook that breaks an invariant on purpose, to show the simulator
	// catches it.
	Break func(ctx context.Context, b *bank.Bank, step int, rng *rand.Rand)
}

// Failure is a broken invariant: the seed and step that broke it.
type Failure struct {
	Seed uint64
	Step int    // index in the full history
	Op   string // the op the step ran
	Err  error
}

func (f *Failure) Error() string {
	return fmt.Sprintf("seed %d step %d (%s): %v", f.Seed, f.Step, f.Op, f.Err)
}

// Result is what a run did.
type Result struct {
	Steps int
	// Counts is how often each op and fault ran.
	Counts  map[string]int
	Failure *Failure
}

// An Op is one kind of step. Run makes and sends its requests through s
// with choices from r, records what it learned in the world, and returns
// an error only for a broken invariant; a refusal the bank is entitled to
// make is not an error.
type Op struct {
	Name   string
	Weight int
	// Fault marks an op that injects a fault (NoFaults leaves it out).
	Fault bool
	// Concurrent marks an op safe to run beside others in one step: it
	// touches the world only through its locking helpers.
	Concurrent bool
	Run        func(s *Sim, r *rand.Rand) error
}

// ops is every op, registered by the files that define them.
var ops []Op

// register adds ops; the files of each domain call it from init.
func register(o ...Op) { ops = append(ops, o...) }

// checks run after every step; each returns a broken invariant.
var checks []func(s *Sim) error

func registerCheck(c func(s *Sim) error) { checks = append(checks, c) }

// Sim is one run in progress: the banks, their clock and store, and the
// world the ops build.
type Sim struct {
	cfg   Config
	ctx   context.Context
	Clock *clock.Mock
	step  int
	op    string

	mu    sync.Mutex // guards the world and counts for concurrent ops
	world World
	// Domain state, each guarded by mu too.
	state map[string]any

	counts map[string]int

	store *crashStore // what the banks write through
	banks []*bank.Bank

	ledgerCursor ledger.CheckCursor
	events       eventCheck
	keyed        []keyedCall // answered keyed requests, for retries
	acked        []string    // GET paths of what was acknowledged since the last crash

	outage outages
	hooks  *receivers

	boots        int           // process starts so far
	pgStore      string        // the PostgreSQL store's name
	extra        []*crashStore // the stores of banks after the first (PostgreSQL nodes)
	boltPath     string
	cleanup      []func()
	confirmCrash bool // the next capital confirm dies between its transactions
	concurrent   bool // a step of concurrent requests is running: crashes wait for its end

	violation error // the first broken invariant a helper noticed
}

// Run runs cfg's history, checking every invariant after every step, and
// stops at the first broken one.
func Run(ctx context.Context, cfg Config) (res Result) {
	if cfg.Store == "" {
		cfg.Store = Memory
	}
	if cfg.Banks <= 0 {
		cfg.Banks = 1
	}
	s := &Sim{cfg: cfg, ctx: ctx, counts: map[string]int{}, state: map[string]any{}}
	res.Counts = s.counts
	fail := func(err error) {
		res.Failure = &Failure{Seed: cfg.Seed, Step: s.step, Op: s.op, Err: err}
	}
	defer func() {
		if p := recover(); p != nil {
			fail(fmt.Errorf("panic: %v", p))
		}
		s.close()
	}()
	if err := s.open(); err != nil {
		fail(fmt.Errorf("open: %w", err))
		return res
	}
	seeds := stepSeeds(cfg.Seed, cfg.Steps)
	order := cfg.Keep
	if order == nil {
		order = make([]int, cfg.Steps)
		for i := range order {
			order[i] = i
		}
	}
	table := enabled(cfg)
	for _, i := range order {
		if i < 0 || i >= len(seeds) {
			continue
		}
		if ctx.Err() != nil {
			break
		}
		s.step = i
		r := rand.New(rand.NewPCG(seeds[i], uint64(i)))
		op := pick(table, r)
		s.op = op.Name
		s.counts[op.Name]++
		err := s.runStep(op, r)
		if err == nil && cfg.Break != nil {
			cfg.Break(ctx, s.banks[0], i, r)
		}
		if err == nil {
			err = s.check()
		}
		if cfg.Log != nil {
			// The outbox position makes a digest of the bank's history: a
			// replay that diverges shows here first.
			fmt.Fprintf(cfg.Log, "step %d %s %s events=%d last=%s err=%v\n", i, s.Clock.Now().Format(time.RFC3339), op.Name, s.events.seen, s.events.after, err)
		}
		res.Steps++
		if err != nil {
			fail(err)
			return res
		}
	}
	return res
}

// stepSeeds derives each step's own seed from the run's, so that a step
// keeps its choices when a shrunk history leaves out the steps before it.
func stepSeeds(seed uint64, n int) []uint64 {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	out := make([]uint64, n)
	for i := range out {
		out[i] = r.Uint64()
	}
	return out
}

func enabled(cfg Config) []Op {
	var t []Op
	for _, o := range ops {
		if o.Fault && cfg.NoFaults {
			continue
		}
		if len(cfg.Only) > 0 && !coreOp(o.Name) && !slices.ContainsFunc(cfg.Only, func(p string) bool { return strings.HasPrefix(o.Name, p) }) {
			continue
		}
		t = append(t, o)
	}
	sort.SliceStable(t, func(i, j int) bool { return t[i].Name < t[j].Name })
	return t
}

// coreOp reports an op of this package's core, which Config.Only keeps.
func coreOp(name string) bool {
	for _, p := range []string{"entity.", "account.", "inflow", "clock.", "crash", "fault.", "idem.", "concurrent"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

func pick(table []Op, r *rand.Rand) Op {
	total := 0
	for _, o := range table {
		total += o.Weight
	}
	n := r.IntN(total)
	for _, o := range table {
		if n < o.Weight {
			return o
		}
		n -= o.Weight
	}
	return table[len(table)-1]
}

// runStep moves the clock a little (time passes between requests), runs
// op, then the work that fell due.
func (s *Sim) runStep(op Op, r *rand.Rand) error {
	if d := time.Duration(r.IntN(3000)) * time.Millisecond; d > 0 {
		s.Clock.Add(d)
	}
	if err := op.Run(s, r); err != nil {
		return err
	}
	if s.violation != nil {
		return s.violation
	}
	if err := s.runDue(r); err != nil {
		return err
	}
	return s.violation
}

// runDue runs every due job at the clock's time on one of the banks, as
// the nodes' runners would.
func (s *Sim) runDue(r *rand.Rand) error {
	b := s.banks[r.IntN(len(s.banks))]
	_, err := b.RunDue(s.ctx, s.Clock.Now())
	if s.store.crashed() {
		return s.reboot(r)
	}
	if err != nil && !s.outage.any() {
		return fmt.Errorf("due work: %w", err)
	}
	return nil
}

func init() {
	register(Op{Name: "concurrent", Weight: 4, Run: func(s *Sim, r *rand.Rand) error {
		// Several requests in flight at once, as clients on several
		// connections send them. Their order is the scheduler's, so a
		// replay repeats the requests but not always their interleaving.
		var table []Op
		for _, o := range enabled(s.cfg) {
			if o.Concurrent {
				table = append(table, o)
			}
		}
		n := 2 + r.IntN(5)
		errs := make([]error, n)
		var wg sync.WaitGroup
		s.concurrent = true
		for i := range n {
			op := pick(table, r)
			rr := rand.New(rand.NewPCG(r.Uint64(), uint64(i)))
			run := func() {
				defer func() {
					if p := recover(); p != nil {
						errs[i] = fmt.Errorf("%s panicked: %v", op.Name, p)
					}
				}()
				errs[i] = op.Run(s, rr)
			}
			if s.cfg.Serial {
				run()
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				run()
			}()
		}
		wg.Wait()
		s.concurrent = false
		if s.anyCrashed() {
			if err := s.reboot(r); err != nil {
				return err
			}
		}
		return errors.Join(errs...)
	}})
}

// Parallel runs fns at once, as clients on several connections send
// requests, or one after another with Config.Serial, so that a seed
// replays exactly.
func (s *Sim) Parallel(fns ...func()) {
	if s.cfg.Serial {
		for _, f := range fns {
			f()
		}
		return
	}
	var wg sync.WaitGroup
	for _, f := range fns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f()
		}()
	}
	wg.Wait()
}

// check runs every invariant.
func (s *Sim) check() error {
	for _, c := range checks {
		if err := c(s); err != nil {
			return err
		}
	}
	return nil
}

// Violate records a broken invariant noticed inside a helper (a receiver,
// a provider) that cannot return it.
func (s *Sim) Violate(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.violation == nil {
		s.violation = fmt.Errorf(format, args...)
	}
}

// Count counts a fault or an outcome worth reporting.
func (s *Sim) Count(name string) {
	s.mu.Lock()
	s.counts[name]++
	s.mu.Unlock()
}

// Bank returns one of the banks, for checks that read through the Go API.
func (s *Sim) Bank() *bank.Bank { return s.banks[0] }

// State returns the domain state named name, made by mk on first use.
func State[T any](s *Sim, name string, mk func() *T) *T {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok := s.state[name]; ok {
		return v.(*T)
	}
	v := mk()
	s.state[name] = v
	return v
}

// Now is the simulated time.
func (s *Sim) Now() time.Time { return s.Clock.Now() }

// root is the system caller for Go reads in checks.
var root = corebank.System()

var discard = slog.New(slog.NewTextHandler(io.Discard, nil))

// Verbose, when COREBANK_SIM_VERBOSE is set, sends the banks' logs to
// stderr.
func logger() *slog.Logger {
	if os.Getenv("COREBANK_SIM_VERBOSE") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	return discard
}

// Summary formats counts, most frequent first.
func Summary(counts map[string]int) string {
	type kv struct {
		k string
		v int
	}
	var l []kv
	for k, v := range counts {
		l = append(l, kv{k, v})
	}
	sort.Slice(l, func(i, j int) bool { return l[i].v > l[j].v || l[i].v == l[j].v && l[i].k < l[j].k })
	var b strings.Builder
	for i, e := range l {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %d", e.k, e.v)
	}
	return b.String()
}
