package ledger_test

import (
	"flag"
	"fmt"
	"math/rand"
	"path/filepath"
	"testing"
	"time"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/bolt"
)

var (
	propSteps = flag.Int("ledger.steps", 2000, "steps of the ledger property test (on memory; a quarter on bolt, a tenth on PostgreSQL, where each is a commit on a server); .ci/run: 10000")
	propSeed  = flag.Int64("ledger.seed", 0, "seed of the ledger property test (0: time-based)")
)

// model is an independent account of what every balance must be.
type model struct {
	bal       map[string]ledger.Balance
	currency  map[string]string
	customers map[string][]string // per currency
	systems   map[string][]string // per currency
	holds     map[string]*mhold
	holdIDs   []string
	keys      map[string]func() error // replays of keyed requests
}

type mhold struct {
	debit, credit string
	amount        int64
	expiresAt     int64
	onTimeout     ledger.TimeoutAction
	status        ledger.HoldStatus
	posted        int64
}

func (m *model) apply(acct string, settled, pd, pc int64) {
	b := m.bal[acct]
	b.Settled += settled
	b.PendingDebits += pd
	b.PendingCredits += pc
	m.bal[acct] = b
}

func (m *model) resolve(h *mhold, status ledger.HoldStatus, amount int64) {
	m.apply(h.debit, -amount, -h.amount, 0)
	m.apply(h.credit, amount, 0, -h.amount)
	h.status, h.posted = status, amount
}

// historyCheck recomputes balances from each account's history lines,
// reading only lines it has not seen.
type historyCheck struct {
	last map[string]*ledger.HistoryLine
	sum  map[string]ledger.Balance
}

func (hc *historyCheck) check(t *testing.T, s *ledger.Service, acct string, want ledger.Balance) {
	t.Helper()
	sum := hc.sum[acct]
	err := s.History(ctx, acct, hc.last[acct], func(l ledger.HistoryLine) error {
		if prev := hc.last[acct]; prev != nil && (l.Seq != prev.Seq+1 || l.Created < prev.Created) {
			return fmt.Errorf("line %d (t=%d) follows %d (t=%d)", l.Seq, l.Created, prev.Seq, prev.Created)
		} else if prev == nil && l.Seq != 1 {
			return fmt.Errorf("first line has seq %d", l.Seq)
		}
		sum.Settled += l.SettledDelta
		sum.PendingDebits += l.PendingDebitsDelta
		sum.PendingCredits += l.PendingCreditsDelta
		if sum != l.Balance {
			return fmt.Errorf("line %d records %+v, deltas sum to %+v", l.Seq, l.Balance, sum)
		}
		lc := l
		hc.last[acct] = &lc
		return nil
	})
	if err != nil {
		if corebank.KindOf(err) == corebank.KindNotFound && sum == (ledger.Balance{}) && want == (ledger.Balance{}) {
			return // a system account never used
		}
		t.Fatalf("history of %s: %v", acct, err)
	}
	hc.sum[acct] = sum
	if sum != want {
		t.Fatalf("history of %s sums to %+v, model says %+v", acct, sum, want)
	}
}

// TestPropertyInvariants runs the property test on memory, bolt and
// PostgreSQL (whose every read is a round trip, hence fewer steps). On
// bolt the log is folded into the bbolt file every 16 KiB (about every 40
// steps), so reads keep crossing checkpoints: a quarter of the memory
// run's steps make about 60 folds, as many as the full count made at 64
// KiB, into a file a quarter the size.
func TestPropertyInvariants(t *testing.T) {
	for _, backend := range []struct {
		name  string
		open  func(testing.TB) storage.Backend
		steps int
	}{{"memory", newMemory, *propSteps}, {"bolt", openBoltCheckpointing, *propSteps / 4}, {"postgres", openPostgres, *propSteps / 10}} {
		t.Run(backend.name, func(t *testing.T) {
			testProperty(t, newEnvOn(t, backend.open(t), nil), backend.steps)
		})
	}
}

func openBoltCheckpointing(tb testing.TB) storage.Backend {
	tb.Helper()
	db, err := bolt.Open(filepath.Join(tb.TempDir(), "db"), &bolt.Options{CheckpointSize: 16 << 10})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

func testProperty(t *testing.T, e *env, steps int) {
	seed := *propSeed
	if seed == 0 {
		seed = time.Now().UnixNano()
	}
	if testing.Short() && steps > 2000 {
		steps = 2000
	}
	t.Logf("seed %d, %d steps (replay with -ledger.seed=%d)", seed, steps, seed)
	rng := rand.New(rand.NewSource(seed))
	s := e.s
	m := &model{bal: map[string]ledger.Balance{}, currency: map[string]string{}, customers: map[string][]string{},
		systems: map[string][]string{}, holds: map[string]*mhold{}, keys: map[string]func() error{}}
	currencies := []string{"USD", "GBP"}
	for i := range 24 {
		cur := currencies[i%2]
		a := e.MustAccount(t, fmt.Sprintf("ent%d", i%5), cur)
		m.customers[cur] = append(m.customers[cur], a.ID)
		m.currency[a.ID] = cur
	}
	for _, cur := range currencies {
		for _, p := range []string{ledger.PurposeClearingBank, ledger.PurposeFees, ledger.PurposeClearingCard} {
			id := s.SystemAccount(cur, p)
			m.systems[cur] = append(m.systems[cur], id)
			m.currency[id] = cur
		}
	}
	all := func() []string {
		var out []string
		for _, cur := range currencies {
			out = append(append(out, m.customers[cur]...), m.systems[cur]...)
		}
		return out
	}()
	hc := &historyCheck{last: map[string]*ledger.HistoryLine{}, sum: map[string]ledger.Balance{}}
	pick := func(xs []string) string { return xs[rng.Intn(len(xs))] }
	amount := func() int64 {
		if rng.Intn(10) == 0 {
			return 1 + rng.Int63n(100000)
		}
		return 1 + rng.Int63n(2000)
	}
	expectCode := func(step int, op string, err error, want string) {
		t.Helper()
		if code(err) != want {
			t.Fatalf("step %d %s: err = %v, want %q", step, op, err, want)
		}
	}
	counts := map[string]int{}
	for step := 0; step < steps; step++ {
		cur := pick(currencies)
		cust := m.customers[cur]
		var op string
		switch r := rng.Intn(100); {
		case r < 12: // money in from a rail
			op = "fund"
			a, amt := pick(cust), amount()
			_, err := s.Post(ctx, ledger.Entry{Lines: []ledger.Line{{AccountID: m.systems[cur][0], Side: ledger.Debit, Amount: amt}, {AccountID: a, Side: ledger.Credit, Amount: amt}}})
			expectCode(step, op, err, "")
			m.apply(m.systems[cur][0], -amt, 0, 0)
			m.apply(a, amt, 0, 0)
		case r < 27: // transfer with a fee, three lines
			op = "transfer"
			from, to, amt := pick(cust), pick(cust), amount()
			fee := amt / 10
			key := ""
			if rng.Intn(3) == 0 {
				key = fmt.Sprintf("t%d", step)
			}
			entry := ledger.Entry{Key: key, Lines: []ledger.Line{
				{AccountID: from, Side: ledger.Debit, Amount: amt + fee},
				{AccountID: to, Side: ledger.Credit, Amount: amt},
			}}
			if fee > 0 {
				entry.Lines = append(entry.Lines, ledger.Line{AccountID: m.systems[cur][1], Side: ledger.Credit, Amount: fee})
			}
			// The net effect on from is what the sufficiency rule judges.
			net := -(amt + fee)
			if from == to {
				net = -fee
			}
			want := ""
			if net < 0 && m.bal[from].Available()+net < 0 {
				want = "insufficient_funds"
			}
			j, err := s.Post(ctx, entry)
			expectCode(step, op, err, want)
			if err == nil {
				m.apply(from, -(amt + fee), 0, 0)
				m.apply(to, amt, 0, 0)
				if fee > 0 {
					m.apply(m.systems[cur][1], fee, 0, 0)
				}
				if key != "" {
					m.keys[key] = func() error {
						j2, err := s.Post(ctx, entry)
						if err == nil && j2.ID != j.ID {
							err = fmt.Errorf("replay returned %s, want %s", j2.ID, j.ID)
						}
						return err
					}
				}
			}
		case r < 47: // hold, sometimes with a timeout
			op = "hold"
			debit := pick(cust)
			if rng.Intn(4) == 0 {
				debit = m.systems[cur][0] // an inflow
			}
			credit := pick(append(cust, m.systems[cur][2]))
			for credit == debit {
				credit = pick(cust)
			}
			req := ledger.HoldRequest{DebitAccountID: debit, CreditAccountID: credit, Amount: amount()}
			if rng.Intn(2) == 0 {
				req.Timeout = time.Duration(1+rng.Intn(120)) * time.Second
				if rng.Intn(2) == 0 {
					req.OnTimeout = ledger.TimeoutPost
				}
			}
			if rng.Intn(4) == 0 {
				req.Key = fmt.Sprintf("h%d", step)
			}
			want := ""
			if !ledger.IsSystemAccount(debit) && m.bal[debit].Available() < req.Amount {
				want = "insufficient_funds"
			}
			h, err := s.Hold(ctx, req)
			expectCode(step, op, err, want)
			if err == nil {
				mh := &mhold{debit: debit, credit: credit, amount: req.Amount, onTimeout: req.OnTimeout, status: ledger.HoldPending}
				if req.Timeout > 0 {
					mh.expiresAt = e.clock.Now().UnixMilli() + req.Timeout.Milliseconds()
				}
				if h.ExpiresAt != mh.expiresAt {
					t.Fatalf("step %d: expires_at %d, want %d", step, h.ExpiresAt, mh.expiresAt)
				}
				m.holds[h.ID] = mh
				m.holdIDs = append(m.holdIDs, h.ID)
				m.apply(debit, 0, req.Amount, 0)
				m.apply(credit, 0, 0, req.Amount)
				if req.Key != "" {
					m.keys[req.Key] = func() error {
						h2, err := s.Hold(ctx, req)
						if err == nil && h2.ID != h.ID {
							err = fmt.Errorf("replay returned %s, want %s", h2.ID, h.ID)
						}
						return err
					}
				}
			}
		case r < 62: // post a hold, in full or in part
			if len(m.holdIDs) == 0 {
				continue
			}
			op = "post"
			id := m.holdIDs[len(m.holdIDs)-1-rng.Intn(min(len(m.holdIDs), 30))]
			h := m.holds[id]
			amt := int64(0)
			if rng.Intn(2) == 0 {
				amt = rng.Int63n(h.amount + 2) // may exceed the hold
			}
			eff := amt
			if eff == 0 {
				eff = h.amount
			}
			want := ""
			switch {
			case amt > h.amount:
				want = corebank.CodeValidation
			case h.status == ledger.HoldPosted && h.posted == eff:
				want = "" // a retry
			case h.status != ledger.HoldPending:
				want = "hold_not_pending"
			}
			_, err := s.PostHold(ctx, id, amt)
			expectCode(step, op, err, want)
			if err == nil && h.status == ledger.HoldPending {
				m.resolve(h, ledger.HoldPosted, eff)
			}
		case r < 72: // void
			if len(m.holdIDs) == 0 {
				continue
			}
			op = "void"
			id := m.holdIDs[len(m.holdIDs)-1-rng.Intn(min(len(m.holdIDs), 30))]
			h := m.holds[id]
			want := ""
			if h.status == ledger.HoldPosted || h.status == ledger.HoldExpired {
				want = "hold_not_pending"
			}
			_, err := s.VoidHold(ctx, id)
			expectCode(step, op, err, want)
			if err == nil && h.status == ledger.HoldPending {
				m.resolve(h, ledger.HoldVoided, 0)
			}
		case r < 82: // time passes; timeouts fall due
			op = "tick"
			e.clock.Add(time.Duration(rng.Intn(40000)) * time.Millisecond)
			now := e.clock.Now().UnixMilli()
			due := 0
			for _, id := range m.holdIDs {
				h := m.holds[id]
				if h.status == ledger.HoldPending && h.expiresAt != 0 && h.expiresAt <= now {
					due++
					if h.onTimeout == ledger.TimeoutPost {
						m.resolve(h, ledger.HoldPosted, h.amount)
					} else {
						m.resolve(h, ledger.HoldExpired, 0)
					}
				}
			}
			n, err := s.RunDue(ctx, e.clock.Now())
			if err != nil || n != due {
				t.Fatalf("step %d: RunDue = %d, %v; model says %d due", step, n, err, due)
			}
		case r < 90: // operations that must fail
			op = "fail"
			other := currencies[0]
			if cur == other {
				other = currencies[1]
			}
			switch rng.Intn(4) {
			case 0:
				_, err := s.Hold(ctx, ledger.HoldRequest{DebitAccountID: pick(cust), CreditAccountID: pick(m.customers[other]), Amount: 1})
				expectCode(step, op, err, "currency_mismatch")
			case 1:
				_, err := s.Post(ctx, ledger.Entry{Lines: []ledger.Line{{AccountID: pick(cust), Side: ledger.Debit, Amount: 1}, {AccountID: pick(m.customers[other]), Side: ledger.Credit, Amount: 1}}})
				expectCode(step, op, err, "unbalanced_entry")
			case 2:
				_, err := s.Post(ctx, ledger.Entry{Lines: []ledger.Line{{AccountID: m.systems[cur][0], Side: ledger.Debit, Amount: 1}, {AccountID: "missing", Side: ledger.Credit, Amount: 1}}})
				expectCode(step, op, err, corebank.CodeNotFound)
			case 3:
				a := pick(cust)
				amt := m.bal[a].Available() + 1
				_, err := s.Hold(ctx, ledger.HoldRequest{DebitAccountID: a, CreditAccountID: m.systems[cur][2], Amount: amt})
				expectCode(step, op, err, "insufficient_funds")
			}
		default: // replay a keyed request, or reuse its key for something else
			if len(m.keys) == 0 {
				continue
			}
			op = "replay"
			var key string
			for k := range m.keys {
				key = k
				break
			}
			if err := m.keys[key](); err != nil {
				t.Fatalf("step %d: replay of %s: %v", step, key, err)
			}
			_, err := s.Post(ctx, ledger.Entry{Key: key, Lines: []ledger.Line{{AccountID: m.systems[cur][0], Side: ledger.Debit, Amount: 1}, {AccountID: m.systems[cur][1], Side: ledger.Credit, Amount: 1}}})
			expectCode(step, op, err, "idempotency_key_reused")
		}
		counts[op]++
		checkInvariants(t, step, op, e, m, all)
		// The history recompute reads only new lines, so it runs every step.
		// System accounts keep no history; the zero-sum invariant covers them.
		for _, a := range all {
			if !ledger.IsSystemAccount(a) {
				hc.check(t, s, a, m.bal[a])
			}
		}
	}
	// The ledger's own audit agrees with the model on the whole history.
	rep, err := s.Check(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.Err(); err != nil {
		t.Fatal(err)
	}
	t.Logf("operations: %v", counts)
}

func checkInvariants(t *testing.T, step int, op string, e *env, m *model, all []string) {
	t.Helper()
	s := e.s
	trial, err := s.TrialBalance(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for cur, b := range trial {
		if b.Settled != 0 || b.Current() != 0 {
			t.Fatalf("step %d (%s): %s does not balance: %+v", step, op, cur, b)
		}
	}
	sums := map[string]int64{}
	err = e.db.View(ctx, func(tx storage.Tx) error {
		for _, a := range all {
			b, err := s.BalanceTx(tx, a)
			if err != nil {
				return err
			}
			if b != m.bal[a] {
				return fmt.Errorf("%s is %+v, model says %+v", a, b, m.bal[a])
			}
			if !ledger.IsSystemAccount(a) && b.Available() < 0 {
				return fmt.Errorf("customer %s has negative available %+v", a, b)
			}
			sums[m.currency[a]] += b.Current()
		}
		return nil
	})
	if err != nil {
		t.Fatalf("step %d (%s): %v", step, op, err)
	}
	for cur, sum := range sums {
		if sum != 0 {
			t.Fatalf("step %d (%s): %s accounts sum to %d", step, op, cur, sum)
		}
	}
}
