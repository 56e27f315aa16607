package sim

import (
	"encoding/json"
	"fmt"
	"github.com/corebank/corebank"
	"slices"
	"strings"

	"github.com/corebank/corebank/ledger"
)

// A Machine is an object's state machine as SPEC.md draws it: the states
// an object may first be seen in, and the moves allowed from each state.
// An event that repeats the state is always allowed.
type Machine struct {
	// Field holds the state in the event's object (default "status").
	Field   string
	Initial []string
	Edges   map[string][]string
}

// machines maps an event type's prefix (before its first dot, as in
// "transfers" of "transfers.updated") to the machine of its objects.
var machines = map[string]Machine{}

func registerMachine(prefix string, m Machine) {
	if m.Field == "" {
		m.Field = "status"
	}
	machines[prefix] = m
}

// eventCheck follows the outbox. IDs follow time, and one object's
// events their order, but two banks' events of one millisecond sort
// either way whatever their commit order (ledger.Event): so each read
// starts at the millisecond of the newest event read, and skips the events
// of that millisecond already read.
type eventCheck struct {
	after  string
	lastMs int64
	sameMs map[string]bool   // IDs read of millisecond lastMs
	states map[string]string // object ID -> last state seen
	seen   int
}

// onEvent hooks get every new outbox event, in commit order, after each
// step; each returns a broken invariant.
var onEvent []func(s *Sim, ev ledger.Event) error

func registerEventHook(fn func(s *Sim, ev ledger.Event) error) { onEvent = append(onEvent, fn) }

func init() {
	registerCheck(checkLedger)
	registerCheck(checkEvents)
}

// checkLedger runs the ledger's own audit: balanced entries, a zero trial
// balance per currency (money in through the clearing accounts equals the
// money held plus the money out), no available balance below zero without
// an overdraft, pending amounts equal to the open holds, and history
// (statements) agreeing with balances.
func checkLedger(s *Sim) error {
	rep, err := s.banks[0].Ledger.Check(s.ctx, &s.ledgerCursor)
	if err != nil {
		if s.anyCrashed() {
			return nil
		}
		return fmt.Errorf("ledger check: %w", err)
	}
	return rep.Err()
}

// checkEvents reads the events committed since the last step: each state
// change must be an edge of its object's machine, and each event goes to
// the domain hooks.
func checkEvents(s *Sim) error {
	if s.events.states == nil {
		s.events.states = map[string]string{}
	}
	after := ""
	if s.events.after != "" {
		after = corebank.IDTimePrefix(s.events.lastMs) // sorts before every ID of that millisecond
	}
	for {
		evs, err := s.banks[0].Ledger.Events(s.ctx, after, 500)
		if err != nil {
			if s.anyCrashed() {
				return nil
			}
			return fmt.Errorf("read the outbox: %w", err)
		}
		for _, ev := range evs {
			after = ev.ID
			if ev.Created == s.events.lastMs && s.events.sameMs[ev.ID] {
				continue
			}
			if ev.Created != s.events.lastMs {
				s.events.lastMs, s.events.sameMs = ev.Created, map[string]bool{}
			}
			s.events.sameMs[ev.ID] = true
			s.events.after = ev.ID
			s.events.seen++
			if err := s.checkMove(ev); err != nil {
				return err
			}
			for _, h := range onEvent {
				if err := h(s, ev); err != nil {
					return fmt.Errorf("event %s (%s): %w", ev.ID, ev.Type, err)
				}
			}
		}
		if len(evs) < 500 {
			return nil
		}
	}
}

func (s *Sim) checkMove(ev ledger.Event) error {
	prefix, _, _ := strings.Cut(ev.Type, ".")
	m, ok := machines[prefix]
	if !ok {
		return nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(ev.Object, &obj); err != nil {
		return fmt.Errorf("event %s (%s): object is not JSON: %v", ev.ID, ev.Type, err)
	}
	var id, state string
	_ = json.Unmarshal(obj["id"], &id)
	if err := json.Unmarshal(obj[m.Field], &state); err != nil || id == "" {
		return nil // not an object of the machine (a test event, a partial object)
	}
	key := prefix + "/" + id
	prev, seen := s.events.states[key]
	s.events.states[key] = state
	switch {
	case !seen:
		if len(m.Initial) > 0 && !slices.Contains(m.Initial, state) {
			return fmt.Errorf("event %s (%s): %s %s first seen in state %q, not one of %v", ev.ID, ev.Type, prefix, id, state, m.Initial)
		}
	case prev == state:
	case !slices.Contains(m.Edges[prev], state):
		return fmt.Errorf("event %s (%s): %s %s moved %q -> %q, not an edge of SPEC's machine", ev.ID, ev.Type, prefix, id, prev, state)
	}
	return nil
}
