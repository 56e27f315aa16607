package workspace

import (
	"container/heap"
	"context"
	"sync"
	"time"
)

// A workspace's background state: idle (nothing asked), queued (in the
// ready queue), running (a pass is on), again (a commit came during the
// pass, which then runs once more). A commit of a workspace (bank.Options
// OnCommit) and its timer entry kick it; a kick of a queued or running
// workspace costs one compare-and-swap.
const (
	idle int32 = iota
	queued
	running
	again
)

// passesAtOnce bounds how many passes one workspace runs in a row while
// its commits keep coming, so that a busy workspace does not hold a worker
// from the others; the rest waits for its timer.
const passesAtOnce = 10

// minGap is the least time between a pass and the next one its due work
// asks for: the interval at which bank.Run looks for due work on a real
// clock, so that an item that keeps failing is not retried in a loop.
const minGap = time.Second

// background is the ready queue and the timers of a Manager's workspaces.
type background struct {
	mu     sync.Mutex
	ready  []*Space
	timers timerHeap
	work   chan struct{} // cap 1: ready has items
	retime chan struct{} // cap 1: timers' first entry may have changed
}

func (bg *background) init() {
	bg.work = make(chan struct{}, 1)
	bg.retime = make(chan struct{}, 1)
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// kick asks for a pass of s.
func (m *Manager) kick(s *Space) {
	for {
		switch s.state.Load() {
		case idle:
			if s.state.CompareAndSwap(idle, queued) {
				m.bg.mu.Lock()
				m.bg.ready = append(m.bg.ready, s)
				m.bg.mu.Unlock()
				signal(m.bg.work)
				return
			}
		case running:
			if s.state.CompareAndSwap(running, again) {
				return
			}
		default: // queued, or again: a pass is coming
			return
		}
	}
}

// wakeAt asks for a pass of s at t (real time), unless one is asked for
// sooner already: a workspace has one timer entry at most.
func (m *Manager) wakeAt(s *Space, t time.Time) {
	at := t.UnixNano()
	m.bg.mu.Lock()
	defer m.bg.mu.Unlock()
	switch {
	case s.gone:
		return
	case s.timer < 0:
		heap.Push(&m.bg.timers, timer{at: at, s: s})
	case at < m.bg.timers[s.timer].at:
		m.bg.timers[s.timer].at = at
		heap.Fix(&m.bg.timers, s.timer)
	default:
		return
	}
	if m.bg.timers[0].s == s {
		signal(m.bg.retime)
	}
}

// forget drops s's timer entry and refuses it new ones, so that a deleted
// workspace is not held until one would have fired.
func (m *Manager) forget(s *Space) {
	m.bg.mu.Lock()
	defer m.bg.mu.Unlock()
	s.gone = true
	if s.timer >= 0 {
		heap.Remove(&m.bg.timers, s.timer)
	}
}

// Run runs the workspaces' background work and expires idle workspaces
// (every minute) until ctx is done; then it deletes every workspace and
// returns nil once the passes in flight end.
func (m *Manager) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	for range m.o.Workers {
		wg.Add(1)
		go func() { defer wg.Done(); m.worker(ctx) }()
	}
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	sweep := time.NewTicker(time.Minute)
	defer sweep.Stop()
	for {
		var due []*Space
		now := time.Now().UnixNano()
		wait := time.Hour
		m.bg.mu.Lock()
		for len(m.bg.timers) > 0 {
			first := m.bg.timers[0]
			if first.at > now {
				wait = time.Duration(first.at - now)
				break
			}
			heap.Pop(&m.bg.timers)
			due = append(due, first.s)
		}
		m.bg.mu.Unlock()
		for _, s := range due {
			m.kick(s)
		}
		t.Reset(wait)
		select {
		case <-ctx.Done():
			wg.Wait()
			m.mu.Lock()
			all := m.spaces
			m.spaces = map[string]*Space{}
			m.mu.Unlock()
			for _, s := range all {
				m.release(s)
			}
			return nil
		case <-t.C:
		case <-m.bg.retime:
		case <-sweep.C:
			m.Sweep(m.o.Clock.Now())
		}
	}
}

// worker runs passes of the ready workspaces until ctx is done.
func (m *Manager) worker(ctx context.Context) {
	for {
		m.bg.mu.Lock()
		var s *Space
		if len(m.bg.ready) > 0 {
			s = m.bg.ready[0]
			m.bg.ready[0] = nil
			m.bg.ready = m.bg.ready[1:]
			if len(m.bg.ready) > 0 {
				signal(m.bg.work) // for the next idle worker
			}
		}
		m.bg.mu.Unlock()
		if s == nil {
			select {
			case <-ctx.Done():
				return
			case <-m.bg.work:
				continue
			}
		}
		m.passes(ctx, s)
	}
}

// passes runs s's background work until no commit came during the last
// pass, passesAtOnce times at most.
func (m *Manager) passes(ctx context.Context, s *Space) {
	for n := 0; ; n++ {
		s.state.Store(running)
		m.pass(ctx, s)
		if s.state.CompareAndSwap(running, idle) {
			return
		}
		if n+1 == passesAtOnce || ctx.Err() != nil {
			s.state.Store(idle)
			m.wakeAt(s, time.Now().Add(minGap))
			return
		}
	}
}

// pass does what is due in s now. On a fake clock that is its webhooks'
// work alone (first attempts go right after the commit that made them,
// whatever the clock says), as bank.Run does: the rest of its due work
// runs when its clock is advanced. On a real clock it is all of the
// bank's due work, and then its timer is set to the next due item.
func (m *Manager) pass(ctx context.Context, s *Space) {
	if !s.enter() {
		return
	}
	defer s.leave()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(s.ctx, cancel)()
	if s.Fake {
		if _, err := s.Bank.Webhooks.RunDue(ctx, s.Bank.Clock.Now()); err != nil && ctx.Err() == nil {
			m.log.Error("workspace webhooks", "workspace", s.ID, "err", err)
		}
		return
	}
	now := s.Bank.Clock.Now()
	_, _ = s.Bank.RunDue(ctx, now) // it logs its errors
	next, err := s.Bank.Due.Next(ctx)
	if err != nil && ctx.Err() == nil {
		m.log.Error("workspace due work", "workspace", s.ID, "err", err)
	}
	if !next.IsZero() {
		m.wakeAt(s, later(next, now.Add(minGap)))
	}
}

// timer is a pass of s asked for at at (Unix ns).
type timer struct {
	at int64
	s  *Space
}

// timerHeap orders the entries by time; each entry's Space knows its
// index (Space.timer, -1 when it has none).
type timerHeap []timer

func (h timerHeap) Len() int           { return len(h) }
func (h timerHeap) Less(i, j int) bool { return h[i].at < h[j].at }
func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].s.timer, h[j].s.timer = i, j
}
func (h *timerHeap) Push(x any) {
	t := x.(timer)
	t.s.timer = len(*h)
	*h = append(*h, t)
}
func (h *timerHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	x.s.timer = -1
	old[len(old)-1] = timer{}
	*h = old[:len(old)-1]
	return x
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
