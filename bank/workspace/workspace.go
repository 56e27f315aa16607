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
// another bank, and the server's own keys never reach a workspace.
//
// Work in progress (issue 27): the routes are not yet in the OpenAPI
// document nor wired into examples/server, and a workspace runs no
// background work (its due work runs on POST /sandbox/clock/advance).
package workspace

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/corebank/corebank/bank"
	"github.com/corebank/corebank/entities"
	"github.com/corebank/corebank/storage/memory"
)

// keyPrefix starts every workspace key: the sandbox prefix, then "ws" and
// the workspace's ID (letters and digits), then "_".
const keyPrefix = entities.PrefixSandbox + "ws"

// Options configures a Manager.
type Options struct {
	// Bank is what every workspace's bank.New gets, but for its store,
	// clock and key namespace: the secret key and what is immutable and
	// safe to share (fee schedule, card key pool, webhook roots).
	Bank bank.Options
	// TTL is how long an idle workspace lives (default 1h, on Clock).
	TTL time.Duration
	// Max is how many workspaces live at once (default 1000).
	Max int
	// Clock measures idleness (default the real clock); each workspace's
	// bank has a clock of its own.
	Clock clock.Clock
}

// Manager holds the workspaces of one server. It is safe for concurrent
// use.
type Manager struct {
	o      Options
	mu     sync.RWMutex
	spaces map[string]*Space
}

// Space is one workspace.
type Space struct {
	ID   string
	Bank *bank.Bank
	Root entities.BootstrapResult
	// Fake says whether the bank's clock moves only when asked.
	Fake bool
	db   *memory.DB
	used atomic.Int64 // Unix ns of the last request
}

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
	return &Manager{o: o, spaces: map[string]*Space{}}
}

// Params is what POST /sandbox/workspaces may ask for.
type Params struct {
	// ClockStart is where a fake clock starts (default now).
	ClockStart time.Time
	// Fake gives the workspace a clock that moves only when advanced.
	Fake bool
}

// ErrFull is returned by Create when Max workspaces live; RetryAfter says
// when the oldest idle one expires.
type ErrFull struct{ RetryAfter time.Duration }

func (e *ErrFull) Error() string {
	return fmt.Sprintf("workspace: the server holds its most workspaces; retry after %s", e.RetryAfter)
}

// Create builds a workspace: a bank over a store of its own, migrated,
// with a root entity and its two keys.
func (m *Manager) Create(ctx context.Context, p Params) (*Space, error) {
	now := m.o.Clock.Now()
	m.Sweep(now)
	m.mu.RLock()
	full := len(m.spaces) >= m.o.Max
	m.mu.RUnlock()
	if full {
		return nil, &ErrFull{RetryAfter: m.untilFree(now)}
	}
	id := newID()
	o := m.o.Bank
	if p.Fake {
		mock := clock.NewMock()
		start := p.ClockStart
		if start.IsZero() {
			start = now
		}
		mock.Set(start)
		o.Clock = mock
	} else {
		o.Clock = clock.New()
	}
	o.Entities.KeyNamespace = "ws" + id
	db := memory.New()
	b, err := bank.New(db, o)
	if err != nil {
		db.Close()
		return nil, err
	}
	if _, err := b.Migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	root, _, err := b.Entities.Bootstrap(ctx)
	if err != nil {
		db.Close()
		return nil, err
	}
	s := &Space{ID: id, Bank: b, Root: *root, Fake: p.Fake, db: db}
	s.used.Store(now.UnixNano())
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.spaces) >= m.o.Max { // another create took the last place
		db.Close()
		return nil, &ErrFull{RetryAfter: m.untilFreeLocked(now)}
	}
	m.spaces[id] = s
	return s, nil
}

// Delete removes workspace id and releases its memory; false when there
// is none.
func (m *Manager) Delete(id string) bool {
	m.mu.Lock()
	s, ok := m.spaces[id]
	delete(m.spaces, id)
	m.mu.Unlock()
	if ok {
		s.db.Close()
	}
	return ok
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
		s.db.Close()
	}
	return len(gone)
}

func (m *Manager) untilFree(now time.Time) time.Duration {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.untilFreeLocked(now)
}

// untilFreeLocked is how long until the longest idle workspace expires.
func (m *Manager) untilFreeLocked(now time.Time) time.Duration {
	oldest := now.UnixNano()
	for _, s := range m.spaces {
		oldest = min(oldest, s.used.Load())
	}
	return max(time.Unix(0, oldest).Add(m.o.TTL).Sub(now), time.Second)
}

// lookup returns the workspace a bearer key names, and whether the key is
// a workspace key at all.
func (m *Manager) lookup(r *http.Request) (*Space, bool) {
	key, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return nil, false
	}
	rest, ok := strings.CutPrefix(key, keyPrefix)
	if !ok {
		return nil, false
	}
	id, _, ok := strings.Cut(rest, "_")
	if !ok {
		return nil, true
	}
	m.mu.RLock()
	s := m.spaces[id]
	m.mu.RUnlock()
	return s, true
}

// Handler serves the workspace routes and routes every request made with
// a workspace's key to that workspace's bank; everything else goes to
// own, the server's own bank.
func (m *Manager) Handler(own http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s, isWorkspaceKey := m.lookup(r)
		switch {
		case r.URL.Path == "/sandbox/workspaces" && r.Method == http.MethodPost && r.Header.Get("Authorization") == "":
			m.create(w, r)
		case !isWorkspaceKey:
			own.ServeHTTP(w, r)
		case s == nil:
			unauthorized(w)
		case r.URL.Path == "/sandbox/workspaces/"+s.ID && r.Method == http.MethodDelete:
			m.Delete(s.ID)
			w.WriteHeader(http.StatusNoContent)
		case strings.HasPrefix(r.URL.Path, "/sandbox/workspaces/"):
			unauthorized(w) // another workspace: its key alone acts on it
		default:
			s.used.Store(m.o.Clock.Now().UnixNano())
			s.Bank.Handler.ServeHTTP(w, r)
		}
	})
}

// created is the answer of POST /sandbox/workspaces.
type created struct {
	ID                  string    `json:"id"`
	APIKey              string    `json:"api_key"`
	ReadOnlyAPIKey      string    `json:"read_only_api_key"`
	EncryptionPublicKey string    `json:"encryption_public_key"`
	RootEntityID        string    `json:"root_entity_id"`
	Clock               clockView `json:"clock"`
	ExpiresAt           time.Time `json:"expires_at"`
}

type clockView struct {
	Now   time.Time `json:"now"`
	NowMS int64     `json:"now_ms"`
	Fake  bool      `json:"fake"`
}

func (m *Manager) create(w http.ResponseWriter, r *http.Request) {
	var req struct {
		ClockStart json.RawMessage `json:"clock_start"`
		FakeClock  bool            `json:"fake_clock"`
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil && !errors.Is(err, io.EOF) {
		invalid(w, "body", "must be {\"clock_start\"?, \"fake_clock\"?}")
		return
	}
	p := Params{Fake: req.FakeClock}
	if len(req.ClockStart) > 0 {
		t, ok := parseTime(req.ClockStart)
		if !ok {
			invalid(w, "clock_start", "must be an RFC 3339 time or Unix milliseconds")
			return
		}
		p.ClockStart = t
	}
	s, err := m.Create(r.Context(), p)
	var full *ErrFull
	if errors.As(err, &full) {
		secs := int(full.RetryAfter.Round(time.Second) / time.Second)
		w.Header().Set("Retry-After", fmt.Sprint(secs))
		writeJSON(w, http.StatusTooManyRequests, map[string]any{"status": "error", "code": "rate_limited",
			"message": err.Error(), "details": map[string]any{"retry_after": secs, "limit_type": "workspaces",
				"current_count": m.Len(), "limit": m.o.Max}, "retry_after": secs})
		return
	}
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, map[string]any{"status": "error", "code": "internal_error",
			"message": "the workspace could not be created", "details": map[string]string{}})
		return
	}
	now := s.Bank.Clock.Now()
	writeJSON(w, http.StatusCreated, created{ID: s.ID, APIKey: s.Root.APIKey, ReadOnlyAPIKey: s.Root.ReadOnlyAPIKey,
		EncryptionPublicKey: s.Root.EncryptionPublicKey, RootEntityID: s.Root.EntityID,
		Clock:     clockView{Now: now.UTC(), NowMS: now.UnixMilli(), Fake: s.Fake},
		ExpiresAt: m.o.Clock.Now().Add(m.o.TTL).UTC()})
}

func parseTime(raw json.RawMessage) (time.Time, bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		t, err := time.Parse(time.RFC3339Nano, s)
		return t, err == nil
	}
	var ms int64
	if json.Unmarshal(raw, &ms) == nil && ms >= 0 {
		return time.UnixMilli(ms), true
	}
	return time.Time{}, false
}

func unauthorized(w http.ResponseWriter) {
	writeJSON(w, http.StatusUnauthorized, map[string]any{"error": map[string]string{
		"code": "unauthorized", "message": "unknown or expired workspace key"}})
}

func invalid(w http.ResponseWriter, field, problem string) {
	writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"status": "error", "code": "validation_error",
		"message": field + ": " + problem, "details": map[string]string{field: problem}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// newID is a workspace's ID: 16 letters and digits, random.
func newID() string {
	const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	var b [16]byte
	rand.Read(b[:])
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b[:])
}
