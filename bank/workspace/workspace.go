// Package workspace hosts sandbox workspaces: whole banks in memory
// inside one server, each reached by its own API keys, so that every test
// of a suite in any language gets an isolated, stateful bank with a clock
// of its own without starting a process (CONTRACT.md, "Sandbox
// workspaces").
//
// A workspace's keys carry its ID (entities.Options.KeyNamespace:
// "sk_sandbox_ws<ID>_..."), so Handler routes a request to its bank by the
// key's prefix alone, in one map lookup, before any bank reads the key; a
// request with any other key (or none) goes to the server's own handler,
// which pays one prefix check. A workspace's key therefore never reaches
// another bank, and the server's own keys never reach a workspace; each
// bank checks the whole key as usual.
//
// A workspace's hosted pages (the sandbox checkout and 3DS challenge
// pages, reached by their token without a key) live under
// /sandbox/workspaces/<ID>/: the links its bank makes point there.
//
// No workspace has a goroutine of its own. Its background work (webhook
// first attempts, and on a real clock the rest of its due work) runs on
// the Manager's few workers (Run), when a commit of that workspace or its
// next due item says there is some: an idle workspace costs its memory
// and one timer entry at most.
package workspace

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/corebank/corebank/bank"
	"github.com/corebank/corebank/entities"
	"github.com/corebank/corebank/internal/keypool"
	"github.com/corebank/corebank/storage/memory"
	"github.com/corebank/corebank/webhooks"
)

// keyPrefix starts every workspace key: the sandbox prefix, then "ws" and
// the workspace's ID (letters and digits), then "_".
const keyPrefix = entities.PrefixSandbox + "ws"

// Options configures a Manager.
type Options struct {
	// Bank is what every workspace's bank.New gets, but for its store,
	// clock, key namespace, key generator, hosted pages' base and
	// OnCommit: the secret key and what is immutable and safe to share
	// (fee schedule, card creation limit, webhook roots, logger, and the
	// webhook HTTP client, made once here when nil).
	Bank bank.Options
	// BaseURL is the server's own absolute URL ("http://127.0.0.1:8080"),
	// under which a workspace's hosted pages are linked; empty makes the
	// links relative to the host.
	BaseURL string
	// TTL is how long an idle workspace lives (default 1h, on Clock).
	TTL time.Duration
	// Max is how many workspaces live at once (default 1000).
	Max int
	// Clock measures idleness (default the real clock); each workspace's
	// bank has a clock of its own.
	Clock clock.Clock
	// Workers is how many workspaces' background work runs at once
	// (default 16): a webhook attempt to a slow endpoint holds one.
	Workers int
}

// Manager holds the workspaces of one server. It is safe for concurrent
// use; Run must run for workspaces' background work to happen.
type Manager struct {
	o      Options
	mu     sync.RWMutex
	spaces map[string]*Space
	bg     background
	log    *slog.Logger
}

// Space is one workspace.
type Space struct {
	ID   string
	Bank *bank.Bank
	Root entities.BootstrapResult
	// Fake says whether the bank's clock moves only when asked.
	Fake bool
	db   *memory.DB
	used atomic.Int64 // Unix ns of the last request, on Manager's clock

	// life is held for reading by each request and background pass, and
	// for writing by Delete, which waits for them and then marks the
	// workspace closed: nothing runs on a closed store.
	life   sync.RWMutex
	closed bool
	stop   context.CancelFunc // cancels the background pass in flight
	ctx    context.Context

	state atomic.Int32 // background state (background.go)
	timer int          // index of its timer entry, -1 for none; under bg.mu
	gone  bool         // deleted: no timer entry any more; under bg.mu
}

// enter begins a request or pass on s; false when s is closed.
func (s *Space) enter() bool {
	s.life.RLock()
	if s.closed {
		s.life.RUnlock()
		return false
	}
	return true
}

func (s *Space) leave() { s.life.RUnlock() }

// New returns a Manager.
func New(o Options) *Manager {
	if o.TTL <= 0 {
		o.TTL = time.Hour
	}
	if o.Max <= 0 {
		o.Max = 1000
	}
	if o.Clock == nil {
		o.Clock = clock.New()
	}
	if o.Workers <= 0 {
		o.Workers = 16
	}
	if o.Bank.Webhooks.HTTPClient == nil {
		// One client for every workspace's deliveries: its connections
		// outlive no workspace, and a suite's receivers are few.
		env := o.Bank.Env
		if env == "" {
			env = entities.EnvSandbox
		}
		o.Bank.Webhooks.HTTPClient = webhooks.NewHTTPClient(env, o.Bank.Webhooks.RootCAs)
	}
	m := &Manager{o: o, spaces: map[string]*Space{}, log: o.Bank.Logger}
	if m.log == nil {
		m.log = slog.Default()
	}
	m.bg.init()
	return m
}

// Params is what POST /sandbox/workspaces may ask for.
type Params struct {
	// ClockStart is where a fake clock starts (default now).
	ClockStart time.Time
	// Fake gives the workspace a clock that moves only when advanced.
	Fake bool
}

// ErrFull is returned by Create when Max workspaces live; RetryAfter says
// when the longest idle one expires.
type ErrFull struct{ RetryAfter time.Duration }

func (e *ErrFull) Error() string {
	return fmt.Sprintf("workspace: the server holds its most workspaces; retry after %s", e.RetryAfter)
}

// Create builds a workspace: a bank over a store of its own, migrated,
// with a root entity and its two keys. Its API keys' RSA pairs come from
// internal/keypool, whose private keys are public: a workspace is test
// data.
func (m *Manager) Create(ctx context.Context, p Params) (*Space, error) {
	now := m.o.Clock.Now()
	m.Sweep(now)
	m.mu.RLock()
	full := len(m.spaces) >= m.o.Max
	m.mu.RUnlock()
	if full {
		return nil, &ErrFull{RetryAfter: m.untilFree(now)}
	}
	s := &Space{ID: newID(), Fake: p.Fake, timer: -1}
	s.ctx, s.stop = context.WithCancel(context.Background())
	o := m.o.Bank
	if p.Fake {
		mock := clock.NewMock()
		start := p.ClockStart
		if start.IsZero() {
			start = time.Now()
		}
		mock.Set(start)
		o.Clock = mock
	} else {
		o.Clock = clock.New()
	}
	o.Entities.KeyNamespace = "ws" + s.ID
	o.Entities.GenerateKey = keypool.New()
	pages := m.o.BaseURL + "/sandbox/workspaces/" + s.ID
	o.FundingSessions.CheckoutBase, o.Acquiring.ChallengeBase = pages, pages
	o.OnCommit = func() { m.kick(s) }
	o.Logger = m.log.With("workspace", s.ID)
	s.db = memory.New()
	b, err := bank.New(s.db, o)
	if err == nil {
		s.Bank = b
		_, err = b.Migrate(ctx)
	}
	if err == nil {
		var root *entities.BootstrapResult
		if root, _, err = b.Entities.Bootstrap(ctx); err == nil {
			s.Root = *root
		}
	}
	if err != nil {
		s.db.Close()
		return nil, err
	}
	s.used.Store(now.UnixNano())
	m.mu.Lock()
	if len(m.spaces) >= m.o.Max { // another create took the last place
		m.mu.Unlock()
		s.db.Close()
		return nil, &ErrFull{RetryAfter: m.untilFree(now)}
	}
	m.spaces[s.ID] = s
	m.mu.Unlock()
	return s, nil
}

// Get returns workspace id, or nil.
func (m *Manager) Get(id string) *Space {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.spaces[id]
}

// Delete removes workspace id and releases its memory once the requests
// and background pass in flight on it end (the pass is cancelled); false
// when there is none.
func (m *Manager) Delete(id string) bool {
	m.mu.Lock()
	s, ok := m.spaces[id]
	delete(m.spaces, id)
	m.mu.Unlock()
	if ok {
		m.release(s)
		m.log.Info("workspace deleted", "workspace", id)
	}
	return ok
}

func (m *Manager) release(s *Space) {
	m.forget(s)
	s.stop()
	s.life.Lock()
	s.closed = true
	s.life.Unlock()
	s.db.Close()
}

// Len is how many workspaces live.
func (m *Manager) Len() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.spaces)
}

// Sweep deletes the workspaces idle for TTL at now and returns how many.
func (m *Manager) Sweep(now time.Time) int {
	cutoff := now.Add(-m.o.TTL).UnixNano()
	var gone []*Space
	m.mu.Lock()
	for id, s := range m.spaces {
		if s.used.Load() <= cutoff {
			delete(m.spaces, id)
			gone = append(gone, s)
		}
	}
	m.mu.Unlock()
	for _, s := range gone {
		m.release(s)
		m.log.Info("idle workspace expired", "workspace", s.ID)
	}
	return len(gone)
}

// untilFree is how long until the longest idle workspace expires.
func (m *Manager) untilFree(now time.Time) time.Duration {
	m.mu.RLock()
	defer m.mu.RUnlock()
	oldest := now.UnixNano()
	for _, s := range m.spaces {
		oldest = min(oldest, s.used.Load())
	}
	return max(time.Unix(0, oldest).Add(m.o.TTL).Sub(now), time.Second)
}

// newID is a workspace's ID: 16 random base32 letters and digits (80
// bits); the ID is no secret, the keys are.
func newID() string { return rand.Text()[:16] }
