package sim

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/bank"
	"github.com/corebank/corebank/corebanktest"
	"github.com/corebank/corebank/payments"
	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/bolt"
	"github.com/corebank/corebank/storage/memory"
)

// errCrash is what a store answers once its process has "died".
var errCrash = errors.New("sim: the process crashed")

// crashStore is the store as one process sees it: it can be armed to die
// at its n-th Update from now, before or after that Update commits (on
// bolt, with the power cut during the commit's log writes), and a dead
// store fails everything until the simulator reboots the process.
type crashStore struct {
	mu     sync.Mutex
	inner  storage.Backend
	armed  int  // the armed-th Update from now dies; 0 never
	after  bool // it commits first
	torn   int  // on bolt: cut the power this many log writes or syncs in
	dead   bool
	powerf *bolt.PowerFS
}

func (c *crashStore) crashed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dead
}

// kill makes the process die now.
func (c *crashStore) kill() {
	c.mu.Lock()
	c.dead = true
	c.mu.Unlock()
}

func (c *crashStore) View(ctx context.Context, fn func(storage.Tx) error) error {
	if c.crashed() {
		return errCrash
	}
	return c.inner.View(ctx, fn)
}

func (c *crashStore) Update(ctx context.Context, fn func(storage.Tx) error) error {
	c.mu.Lock()
	if c.dead {
		c.mu.Unlock()
		return errCrash
	}
	die := false
	if c.armed > 0 {
		c.armed--
		die = c.armed == 0
	}
	after, torn := c.after, c.torn
	c.mu.Unlock()
	if !die {
		return c.inner.Update(ctx, fn)
	}
	if after {
		if c.powerf != nil && torn > 0 {
			c.powerf.CutAfter(torn)
		}
		_ = c.inner.Update(ctx, fn)
	}
	c.kill()
	return errCrash
}

func (c *crashStore) Close() error { return nil }

// open builds the store and the banks, migrates and bootstraps.
func (s *Sim) open() error {
	s.Clock = clock.NewMock()
	s.Clock.Set(Start)
	s.hooks = newReceivers(s)
	s.store = &crashStore{}
	switch s.cfg.Store {
	case Memory:
		s.store.inner = memory.New()
	case Bolt:
		dir := s.cfg.Dir
		if dir == "" {
			d, err := os.MkdirTemp("", "corebank-sim-")
			if err != nil {
				return err
			}
			dir = d
			s.cleanup = append(s.cleanup, func() { os.RemoveAll(d) })
		}
		s.boltPath = filepath.Join(dir, "bank.db")
		s.store.powerf = bolt.NewPowerFS()
		db, err := bolt.OpenOn(s.boltPath, boltOptions, s.store.powerf)
		if err != nil {
			return err
		}
		s.store.inner = db
	case Postgres:
		if s.cfg.Postgres == nil {
			return errors.New("Config.Postgres is required with the postgres store")
		}
		s.pgStore = fmt.Sprintf("sim_%d_%d", s.cfg.Seed, pgRuns.Add(1))
	default:
		return fmt.Errorf("unknown store %q", s.cfg.Store)
	}
	if err := s.boot(); err != nil {
		return err
	}
	root, _, err := s.banks[0].Entities.Bootstrap(s.ctx)
	if err != nil {
		return fmt.Errorf("bootstrap: %w", err)
	}
	s.world.Root = Entity{ID: root.EntityID, Type: "individual", Status: "approved", Key: root.APIKey}
	return nil
}

// pgRuns numbers the runs on PostgreSQL, so that each has a new store.
var pgRuns atomic.Uint64

// boltOptions folds the log often, so that a run crosses checkpoints.
var boltOptions = &bolt.Options{CheckpointSize: 64 << 10}

// boot builds the banks over the store (a process start).
func (s *Sim) boot() error {
	s.boots++
	s.banks = nil
	n := s.cfg.Banks
	// One ID source for the banks of a boot, seeded by the run and the
	// boot, so that a replay makes the same IDs; shared, so that events of
	// one millisecond sort in the order they were made on any bank. Two
	// processes' events of one millisecond sort either way (ledger.Event),
	// and on one fake clock every step's events share a millisecond: the
	// checks, which follow objects across banks in event order, would see
	// a cause after its effect.
	var seed [32]byte
	for i := range 8 {
		seed[i] = byte(s.cfg.Seed >> (8 * i))
	}
	seed[8] = byte(s.boots)
	ids := corebank.NewIDs(rand.NewChaCha8(seed))
	for i := range n {
		db := storage.Backend(s.store)
		if s.cfg.Store == Postgres {
			// Every node has its own connections, and dies alone.
			inner, err := s.cfg.Postgres(s.pgStore)
			if err != nil {
				return err
			}
			if i == 0 {
				s.store.inner = inner
			} else {
				db = &crashStore{inner: inner}
				s.extra = append(s.extra, db.(*crashStore))
			}
		}
		b, err := s.newBank(db, i, ids)
		if err != nil {
			return err
		}
		if _, err := b.Migrate(s.ctx); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		s.banks = append(s.banks, b)
	}
	return nil
}

func (s *Sim) newBank(db storage.Backend, node int, ids *corebank.IDs) (*bank.Bank, error) {
	o := bank.Options{
		SecretKey: make([]byte, 32),
		Clock:     s.Clock,
		Logger:    logger(),
		IDs:       ids,
		NodeID:    fmt.Sprintf("sim-%d-%d", node, s.boots),
		// The same instance across reboots, as examples/server names
		// itself: a rebooted bank takes its predecessor's leased work at
		// once (the other bank still waits out the lease).
		Instance: fmt.Sprintf("sim-%d", node),
		// Due work one claim at a time, in a fixed order, for replays.
		DueWorkers: 1,
		// Leases on the simulated clock: due work a crashed process held is
		// taken over once the clock has moved past its lease, as a real
		// node's would be 30 s later, rather than after 30 s of real time,
		// which outlasts a whole run. Due work runs on one bank at a time,
		// so a clock jump never takes work from a node in flight.
		LeaseClock: s.Clock,
	}
	o.Entities.GenerateKey = corebanktest.KeyPool()
	o.Webhooks.HTTPClient = &http.Client{Transport: s.hooks}
	o.Webhooks.Concurrency = 1 // attempts in a fixed order, for replays
	o.Payments.Payouts = &payoutProvider{s: s, next: payments.NewSandboxPayouts(nil)}
	o.Capital.AfterDebit = s.afterDebit
	o.FundingSessions.CheckoutBase = "https://bank.sim"
	return bank.New(db, o)
}

// reboot is a process restart after a crash: everything the process held
// is dropped, the store is reopened (on bolt, with what the power cut left
// of the unsynced log writes), and the banks are built again. Then every
// request acknowledged since the last crash must still be visible.
func (s *Sim) reboot(r *rand.Rand) error {
	s.Count("fault.crash")
	switch s.cfg.Store {
	case Bolt:
		db := s.store.inner.(*bolt.DB)
		s.store.powerf.Cut()
		bolt.Crash(db)
		s.store.powerf = s.store.powerf.Reboot(bolt.RandomLoss(r))
		ndb, err := bolt.OpenOn(s.boltPath, boltOptions, s.store.powerf)
		if err != nil {
			return fmt.Errorf("reopen after a crash: %w", err)
		}
		s.store.inner = ndb
	case Postgres:
		s.store.inner.Close()
		for _, e := range s.extra {
			e.inner.Close()
		}
		s.extra = nil
	}
	s.store.mu.Lock()
	s.store.dead, s.store.armed, s.store.torn = false, 0, 0
	s.store.mu.Unlock()
	// A restart takes time: IDs of the new process sort after the old's.
	s.Clock.Add(time.Second)
	if err := s.boot(); err != nil {
		return fmt.Errorf("restart after a crash: %w", err)
	}
	// The FX provider is outside the process: if it was down, it still is.
	s.outage.mu.Lock()
	fxDown := s.outage.fx
	s.outage.mu.Unlock()
	if fxDown {
		for i := range s.banks {
			s.send(r, Req{Method: http.MethodPost, Path: "/sandbox/fx/outage", Body: map[string]bool{"enabled": true}, Key: s.world.Root.Key, Bank: i + 1})
		}
	}
	return s.checkAcked()
}

// close releases the store.
func (s *Sim) close() {
	if s.store != nil && s.store.inner != nil {
		if s.cfg.Store == Bolt {
			if db, ok := s.store.inner.(*bolt.DB); ok {
				bolt.Crash(db)
			}
		} else {
			s.store.inner.Close()
		}
	}
	for _, e := range s.extra {
		e.inner.Close()
	}
	for _, f := range s.cleanup {
		f()
	}
}

// afterDebit is capital's hook between a confirmation's two transactions:
// an armed confirm either kills the process right there or, one time in
// three, fails the second transaction while the process lives on (the
// order is then RECOVERY_REQUIRED until the recovery job completes it).
func (s *Sim) afterDebit(id string) error {
	s.mu.Lock()
	armed := s.confirmCrash
	s.confirmCrash = false
	s.mu.Unlock()
	if !armed {
		return nil
	}
	if len(id) > 0 && id[len(id)-1]%3 == 0 {
		s.Count("fault.confirm_failed")
		return errors.New("sim: the capital account could not be written")
	}
	s.Count("fault.crash_in_confirm")
	s.store.kill()
	return errCrash
}

// ArmConfirmCrash makes the next capital confirmation die between its
// debit and its capital account.
func (s *Sim) ArmConfirmCrash() {
	s.mu.Lock()
	s.confirmCrash = true
	s.mu.Unlock()
}

func init() {
	register(Op{Name: "crash", Weight: 2, Fault: true, Run: func(s *Sim, r *rand.Rand) error {
		// Die inside one of the next few Updates: those of the next request,
		// or of the due work after it.
		s.store.mu.Lock()
		s.store.armed = 1 + r.IntN(4)
		s.store.after = r.IntN(2) == 0
		if s.store.powerf != nil && r.IntN(2) == 0 {
			s.store.torn = 1 + r.IntN(3)
		}
		s.store.mu.Unlock()
		s.Count("fault.crash_armed")
		return nil
	}})
	register(Op{Name: "crash.now", Weight: 1, Fault: true, Run: func(s *Sim, r *rand.Rand) error {
		// A crash between requests: nothing in flight.
		s.store.kill()
		return s.reboot(r)
	}})
}
