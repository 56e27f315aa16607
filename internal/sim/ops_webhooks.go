package sim

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/webhooks"
)

// Webhooks: each webhook the simulator makes has a receiver of its own
// (faults.go), so what reached it is exactly what the bank sent to that
// webhook. The invariants, checked from the receivers' records after every
// step (only the new entries) and, lazily, against the bank's deliveries:
//
//   - every delivery carries a valid signature under the secret the last
//     create or rotate_secret answered (the contract: after a rotation every
//     attempt, retries of earlier events included, is signed with the new
//     one, and the old one verifies nothing more);
//   - for each (webhook, event) nothing reaches the receiver after a 2xx
//     answer the bank got, beyond one more stream per redelivery requested
//     and per acknowledgement in a step whose process crashed (the outcome
//     may not have been recorded: delivery is at least once);
//   - after a DELETE answer nothing reaches the webhook; after a disable
//     answer (or past expires_at) no outbox event does (test events still
//     may: SendTest ignores the status);
//   - an outbox event reaches a webhook only from the webhook's entity tree,
//     of an enabled type (when the subscription has not changed since), and
//     not before the webhook existed unless redelivered;
//   - liveness, lazily: an event of the webhook's tree and of an enabled
//     type, created after the webhook's configuration last changed, whose
//     receiver stayed in ok mode from before the event, is acknowledged
//     once the retry window (and a margin) has passed: the bank's delivery
//     is succeeded and the receiver got it.

const (
	whWindow   = 15 * time.Minute // webhooks.Options default RetryWindow
	whMargin   = 2 * time.Minute
	whMaxLive  = 8
	whMaxTotal = 40
	whMonth    = 30 * 24 * 3600
	// whRetention is webhooks.Options' default EventRetention.
	whRetention = 30 * 24 * time.Hour
)

type whEvent struct {
	entity  string
	typ     string
	created int64
}

type whPair struct {
	acks   int // deliveries whose 2xx the bank got
	unsure int // of those, in a step whose process crashed
}

type whHook struct {
	ID, Entity, URL string
	rc              *receiver
	busy            bool // an op is on it: ops on one webhook never overlap

	created, expiresAt int64
	events             webhooks.EnabledEvents
	disabled, deleted  bool
	unknown            bool  // a change's answer was lost: configuration unknown
	changedAt          int64 // ms of the last configuration change answered
	secretKnown        bool

	seen  int // entries of rc.Got judged
	pairs map[string]*whPair

	version int // bumped by every change of configuration or receiver mode

	lastMode string // receiver mode as last seen
	modeAt   int64  // when it last changed (ms, at or after the change)

	dlvAfter string            // cursor in the bank's deliveries of the webhook
	dlv      map[string]string // wanted event -> first delivery ID
	want     map[string]bool
}

type whDemand struct {
	due     int64
	version int
	hook    *whHook
	ev      string
}

type whState struct {
	mu         sync.Mutex
	hooks      []*whHook
	orphans    []*whHook // created, answer lost: ID unknown
	events     map[string]whEvent
	redelivers map[string]int
	recent     []string
	parents    map[string]string
	worldSeen  int
	demands    []whDemand
	head       int
	lastBoots  int
	modeStep   int   // the step whose receiver modes were last read
	rebootAt   int64 // ms, at or after the last process restart
}

func whOf(s *Sim) *whState {
	return State(s, "webhooks", func() *whState {
		return &whState{events: map[string]whEvent{}, redelivers: map[string]int{}, parents: map[string]string{}, lastBoots: -1, modeStep: -1}
	})
}

// whPick takes a webhook that keep accepts and marks it busy; whDone
// releases it.
func (st *whState) pick(r *rand.Rand, keep func(h *whHook) bool) *whHook {
	st.mu.Lock()
	defer st.mu.Unlock()
	h := pickWhere(r, st.hooks, func(h *whHook) bool { return !h.busy && keep(h) })
	if h != nil {
		h.busy = true
	}
	return h
}

func (st *whState) done(h *whHook) {
	st.mu.Lock()
	h.busy = false
	st.mu.Unlock()
}

func (st *whState) live() int {
	n := len(st.orphans)
	for _, h := range st.hooks {
		if !h.deleted {
			n++
		}
	}
	return n
}

// chain is the entity and its ancestors as the world knows them; an
// entity the world does not know is under the root (every entity is).
func (st *whState) chain(s *Sim, id string) []string {
	root := s.world.Root.ID
	out := []string{id}
	for id != root && len(out) < 64 {
		p, ok := st.parents[id]
		if !ok {
			if out[len(out)-1] != root {
				out = append(out, root)
			}
			return out
		}
		if p == "" {
			p = root
		}
		out = append(out, p)
		id = p
	}
	return out
}

// known reports whether chain is exact (every entity in it is known).
func (st *whState) exact(s *Sim, id string) bool {
	for id != s.world.Root.ID {
		p, ok := st.parents[id]
		if !ok {
			return false
		}
		if p == "" {
			return true
		}
		id = p
	}
	return true
}

func (st *whState) syncWorld(s *Sim) {
	s.mu.Lock()
	for _, e := range s.world.Entities[st.worldSeen:] {
		st.parents[e.ID] = e.Parent
	}
	st.worldSeen = len(s.world.Entities)
	s.mu.Unlock()
}

func whContains(l []string, v string) bool {
	for _, x := range l {
		if x == v {
			return true
		}
	}
	return false
}

func whSameEvents(a, b webhooks.EnabledEvents) bool {
	if a.All != b.All {
		return false
	}
	if a.All {
		return true
	}
	for _, t := range webhooks.EventTypes() {
		if a.Enabled(t) != b.Enabled(t) {
			return false
		}
	}
	return true
}

// whEventsBody makes enabled_events: all, or a few types.
func whEventsBody(r *rand.Rand) (map[string]any, webhooks.EnabledEvents) {
	if r.IntN(3) == 0 {
		return map[string]any{"all": true}, webhooks.EnabledEvents{All: true}
	}
	// Mostly the types the core ops make, some others.
	common := []string{"entities.created", "entities.updated", "accounts.created", "accounts.updated", "accounts.deleted", "inflows.completed"}
	all := webhooks.EventTypes()
	body := map[string]any{}
	ee := webhooks.EnabledEvents{Groups: map[string]map[string]bool{}}
	for range 1 + r.IntN(4) {
		t := Pick(r, common)
		if r.IntN(4) == 0 {
			t = Pick(r, all)
		}
		g, k, _ := strings.Cut(t, ".")
		m, _ := body[g].(map[string]any)
		if m == nil {
			m = map[string]any{}
			body[g] = m
		}
		m[k] = true
		if ee.Groups[g] == nil {
			ee.Groups[g] = map[string]bool{}
		}
		ee.Groups[g][k] = true
	}
	return body, ee
}

func (s *Sim) whMS() int64 { return corebank.Millis(s.Now()) }

// scanLocked judges the receiver's new entries; st.mu and s.hooks.mu are
// held. rebooted says a process restart happened in this step.
func (st *whState) scanLocked(s *Sim, h *whHook, rebooted bool) error {
	got := h.rc.Got
	for ; h.seen < len(got); h.seen++ {
		d := got[h.seen]
		ev, outbox := st.events[d.EventID]
		where := fmt.Sprintf("webhook %s (%s, entity %s) delivery #%d of event %s at %s", h.ID, h.URL, h.Entity, h.seen, d.EventID, d.At.Format(time.RFC3339))
		if h.secretKnown && !d.Valid {
			return fmt.Errorf("%s: the signature does not verify under the webhook's current secret", where)
		}
		if h.deleted {
			return fmt.Errorf("%s: reached the webhook after its deletion was answered", where)
		}
		if outbox && h.ID != "" {
			if h.disabled {
				return fmt.Errorf("%s: outbox event %s delivered after the webhook was set inactive", where, ev.typ)
			}
			if !h.unknown && corebank.Millis(d.At) >= h.expiresAt {
				return fmt.Errorf("%s: outbox event %s delivered after the webhook expired at %d", where, ev.typ, h.expiresAt)
			}
			if st.exact(s, ev.entity) || h.Entity == s.world.Root.ID {
				if !whContains(st.chain(s, ev.entity), h.Entity) {
					return fmt.Errorf("%s: event of entity %s, outside the webhook's tree", where, ev.entity)
				}
			}
			if st.redelivers[d.EventID] == 0 {
				if ev.created < h.created {
					return fmt.Errorf("%s: event created at %d, before the webhook (%d), and never redelivered", where, ev.created, h.created)
				}
				if !h.unknown && h.changedAt < ev.created && !h.events.Enabled(ev.typ) {
					return fmt.Errorf("%s: event type %s is not enabled (%v)", where, ev.typ, h.events.Preferred())
				}
			}
		}
		p := h.pairs[d.EventID]
		if p == nil {
			p = &whPair{}
			h.pairs[d.EventID] = p
		}
		if streams := 1 + st.redelivers[d.EventID] + p.unsure; p.acks >= streams {
			return fmt.Errorf("%s: delivered again after the bank got a 2xx for it (%d acknowledgements, %d redeliveries)", where, p.acks, st.redelivers[d.EventID])
		}
		if d.Delivered && d.Status >= 200 && d.Status < 300 {
			p.acks++
			if rebooted {
				p.unsure++
			}
		}
	}
	return nil
}

// modes follows the receivers' modes after a step that may have changed
// them (fault.receiver), before the step's events are judged; st.mu is
// held.
func (st *whState) modes(s *Sim) {
	if s.op != "fault.receiver" || st.modeStep == s.step {
		return
	}
	st.modeStep = s.step
	now := s.whMS()
	s.hooks.mu.Lock()
	defer s.hooks.mu.Unlock()
	for _, l := range [][]*whHook{st.hooks, st.orphans} {
		for _, h := range l {
			if h.rc.Mode != h.lastMode {
				h.lastMode, h.modeAt = h.rc.Mode, now
				h.version++
			}
		}
	}
}

// scanAll judges every receiver's new entries.
func (st *whState) scanAll(s *Sim, rebooted bool) error {
	st.modes(s)
	s.hooks.mu.Lock()
	defer s.hooks.mu.Unlock()
	for _, l := range [][]*whHook{st.hooks, st.orphans} {
		for _, h := range l {
			if h.seen < len(h.rc.Got) {
				if err := st.scanLocked(s, h, rebooted); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// scanOne judges one receiver's new entries now (before its state changes).
func (st *whState) scanOneLocked(s *Sim, h *whHook) error {
	s.hooks.mu.Lock()
	defer s.hooks.mu.Unlock()
	return st.scanLocked(s, h, false)
}

// eligible reports whether (h, ev) must be acknowledged by due.
func (st *whState) eligible(s *Sim, h *whHook, id string, ev whEvent, due int64) bool {
	if h.ID == "" || h.deleted || h.disabled || h.unknown || h.changedAt >= ev.created || h.expiresAt <= ev.created+60_000 {
		return false
	}
	if !h.events.Enabled(ev.typ) || ev.created < h.created {
		return false
	}
	if h.lastMode != recvOK || h.modeAt >= ev.created {
		return false
	}
	return whContains(st.chain(s, ev.entity), h.Entity)
}

func (st *whState) onEvent(s *Sim, ev ledger.Event) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if len(st.hooks) == 0 && len(st.orphans) == 0 {
		return nil
	}
	st.syncWorld(s)
	st.modes(s)
	e := whEvent{entity: ev.EntityID, typ: ev.Type, created: ev.Created}
	st.events[ev.ID] = e
	if ev.EntityID == "" {
		return nil
	}
	st.recent = append(st.recent, ev.ID)
	if len(st.recent) > 128 {
		st.recent = st.recent[64:]
	}
	due := ev.Created + (whWindow + whMargin).Milliseconds()
	for _, h := range st.hooks {
		if st.eligible(s, h, ev.ID, e, due) {
			h.want[ev.ID] = true
			st.demands = append(st.demands, whDemand{due: due, version: h.version, hook: h, ev: ev.ID})
		}
	}
	return nil
}

// findDelivery returns the first delivery of ev to h in the bank, reading
// the webhook's deliveries after the cursor (and, when that misses it,
// from the start).
func (st *whState) findDelivery(s *Sim, h *whHook, ev string) (*webhooks.Delivery, error) {
	if id, ok := h.dlv[ev]; ok {
		return s.Bank().Webhooks.GetDelivery(s.ctx, root, "", id)
	}
	svc := s.Bank().Webhooks
	for full := range 2 {
		after := h.dlvAfter
		if full == 1 {
			after = ""
		}
		for {
			page, err := svc.ListDeliveries(s.ctx, root, webhooks.DeliveryFilter{WebhookID: h.ID}, corebank.ListOptions{Limit: 100, After: after})
			if err != nil {
				return nil, err
			}
			for i := range page.Items {
				d := &page.Items[i]
				after = d.ID
				if full == 0 {
					h.dlvAfter = d.ID
				}
				if d.Test || !h.want[d.EventID] {
					continue
				}
				if _, ok := h.dlv[d.EventID]; !ok {
					h.dlv[d.EventID] = d.ID
				}
				if d.EventID == ev && full == 1 {
					return d, nil
				}
			}
			if !page.HasNext || len(page.Items) == 0 {
				break
			}
		}
		if id, ok := h.dlv[ev]; ok {
			return s.Bank().Webhooks.GetDelivery(s.ctx, root, "", id)
		}
	}
	return nil, nil
}

// verify checks a demand whose time has come.
func (st *whState) verify(s *Sim, dm whDemand) error {
	h := dm.hook
	ev := st.events[dm.ev]
	defer func() {
		delete(h.want, dm.ev)
		delete(h.dlv, dm.ev)
	}()
	// The webhook and its receiver were fit when the event's step ended,
	// and the first attempt goes out in that step: a later change matters
	// only when a crash may have put the attempt off.
	if h.version != dm.version && st.rebootAt >= ev.created {
		s.counts["webhooks.demand_dropped"]++
		return nil
	}
	d, err := st.findDelivery(s, h, dm.ev)
	if errors.Is(err, webhooks.ErrDeliveryNotFound) {
		d, err = nil, nil // purged
	}
	if err != nil {
		if s.anyCrashed() {
			return nil
		}
		return fmt.Errorf("webhook %s: read deliveries: %w", h.ID, err)
	}
	where := fmt.Sprintf("webhook %s (%s, entity %s, %v), event %s (%s of entity %s, created %d; receiver ok since %d, webhook unchanged since %d)",
		h.ID, h.URL, h.Entity, h.events.Preferred(), dm.ev, ev.typ, ev.entity, ev.created, h.modeAt, h.changedAt)
	acked := h.pairs[dm.ev] != nil && h.pairs[dm.ev].acks > 0
	// A crash mid-attempt leaves the item leased by the dead node for the
	// lease (on the simulated clock, as the simulator builds the bank),
	// and a clock jump within it may carry the first attempt past the
	// webhook's expiry or the event's retention: not a broken promise.
	leased := st.rebootAt >= ev.created
	if d == nil && s.whMS() >= ev.created+whRetention.Milliseconds() {
		// The bank purged the event and its deliveries (EventRetention):
		// the receiver's record is all that is left.
		if !acked && leased {
			s.counts["webhooks.demand_excused_crash"]++
			return nil
		}
		if !acked {
			return fmt.Errorf("%s: the receiver never acknowledged it (the bank's records are past retention)", where)
		}
		s.counts["webhooks.demand_verified_receiver"]++
		return nil
	}
	if d == nil {
		return fmt.Errorf("%s: no delivery was made for it %s after the event", where, whWindow+whMargin)
	}
	switch d.Status {
	case webhooks.DeliverySucceeded:
	case webhooks.DeliveryPending:
		if leased {
			s.counts["webhooks.demand_excused_crash"]++
			return nil
		}
		return fmt.Errorf("%s: delivery %s still pending after the retry window, attempts %+v", where, d.ID, d.Attempts)
	default:
		if leased && len(d.Attempts) == 0 {
			s.counts["webhooks.demand_excused_crash"]++
			return nil
		}
		return fmt.Errorf("%s: delivery %s %s (%s) though the receiver answered 200 throughout, attempts %+v", where, d.ID, d.Status, d.FailureReason, d.Attempts)
	}
	if !acked {
		return fmt.Errorf("%s: the bank records delivery %s succeeded, but the receiver never answered it 2xx", where, d.ID)
	}
	s.counts["webhooks.demand_verified"]++
	return nil
}

func (st *whState) check(s *Sim) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	rebooted := st.lastBoots >= 0 && s.boots != st.lastBoots
	if rebooted {
		st.rebootAt = s.whMS()
	}
	st.lastBoots = s.boots
	if len(st.hooks) == 0 && len(st.orphans) == 0 {
		return nil
	}
	if err := st.scanAll(s, rebooted); err != nil {
		return err
	}
	now := s.whMS()
	for st.head < len(st.demands) && st.demands[st.head].due <= now {
		dm := st.demands[st.head]
		st.demands[st.head] = whDemand{}
		st.head++
		if err := st.verify(s, dm); err != nil {
			return err
		}
	}
	if st.head > 1024 && st.head*2 > len(st.demands) {
		st.demands = append([]whDemand(nil), st.demands[st.head:]...)
		st.head = 0
	}
	return nil
}

// whApply records a webhook as the bank answered it; st.mu is held.
func (h *whHook) apply(w *webhooks.Webhook, now int64) {
	h.created = w.Created
	h.expiresAt = w.Created + w.ExpiresIn*1000
	h.events = w.EnabledEvents
	h.disabled = w.Status == webhooks.StatusInactive
	h.deleted = h.deleted || w.Deleted != 0
	h.unknown = false
	h.changedAt = now
	h.version++
}

// whCheckView checks an answered webhook against the webhook it is; before
// is the clock when the request was sent (the bank's view is at or after).
func whCheckView(w *webhooks.Webhook, h *whHook, before int64) error {
	if w.ID != h.ID || w.EntityID != h.Entity || w.URL != h.URL {
		return fmt.Errorf("webhook %s answered id %s entity %s url %s, want entity %s url %s", h.ID, w.ID, w.EntityID, w.URL, h.Entity, h.URL)
	}
	if w.Deleted != 0 && w.Status != webhooks.StatusInactive {
		return fmt.Errorf("webhook %s is deleted but reads %s", h.ID, w.Status)
	}
	if w.Status == webhooks.StatusActive && before >= w.Created+w.ExpiresIn*1000 {
		return fmt.Errorf("webhook %s reads active past its expiry (%d + %d s, now %d)", h.ID, w.Created, w.ExpiresIn, before)
	}
	return nil
}

func init() {
	registerEventHook(func(s *Sim, ev ledger.Event) error { return whOf(s).onEvent(s, ev) })
	registerCheck(func(s *Sim) error { return whOf(s).check(s) })
	register(
		Op{Name: "webhooks.create", Weight: 3, Concurrent: true, Run: whCreate},
		Op{Name: "webhooks.update", Weight: 3, Concurrent: true, Run: whUpdate},
		Op{Name: "webhooks.rotate", Weight: 1, Run: whRotate},
		Op{Name: "webhooks.delete", Weight: 1, Concurrent: true, Run: whDelete},
		Op{Name: "webhooks.test", Weight: 2, Concurrent: true, Run: whTest},
		Op{Name: "webhooks.get", Weight: 1, Concurrent: true, Run: whGet},
		Op{Name: "webhooks.events", Weight: 1, Concurrent: true, Run: whEvents},
		Op{Name: "webhooks.redeliver", Weight: 2, Concurrent: true, Run: whRedeliver},
		Op{Name: "webhooks.recover", Weight: 1, Run: whRecover},
	)
}

func whCreate(s *Sim, r *rand.Rand) error {
	st := whOf(s)
	st.mu.Lock()
	full := st.live() >= whMaxLive || len(st.hooks)+len(st.orphans) >= whMaxTotal
	st.mu.Unlock()
	if full {
		return nil
	}
	e := s.PickEntity(r, nil)
	if e == nil {
		return nil
	}
	if r.IntN(3) == 0 {
		e = &s.world.Root
	}
	rc := s.hooks.add(recvOK)
	body, ee := whEventsBody(r)
	expires := int64(whMonth)
	if r.IntN(6) == 0 {
		expires = int64(300 + r.IntN(3600))
	}
	req := map[string]any{"url": rc.URL, "expires_in": expires, "enabled_events": body, "description": "sim", "tags": []string{"sim"}}
	if e.ID != s.world.Root.ID || r.IntN(2) == 0 {
		req["entity_id"] = e.ID
	}
	key := keyOf(s, r, e)
	if key != s.world.Root.Key {
		req["entity_id"] = e.ID
	}
	before := s.whMS()
	resp := s.Do(r, Req{Method: http.MethodPost, Path: "/entity-webhooks", Body: req, Key: key,
		Idem: fmt.Sprintf("whc-%d-%d-%x", s.cfg.Seed, s.step, r.Uint32())})
	h := &whHook{Entity: e.ID, URL: rc.URL, rc: rc, pairs: map[string]*whPair{}, dlv: map[string]string{}, want: map[string]bool{},
		lastMode: recvOK, changedAt: math.MaxInt64, unknown: true}
	if resp.Status == 0 {
		st.mu.Lock()
		h.modeAt = s.whMS()
		st.orphans = append(st.orphans, h)
		st.mu.Unlock()
		return nil
	}
	if !resp.OK() {
		if resp.Status != http.StatusNotFound && resp.Status != http.StatusForbidden {
			return fmt.Errorf("create webhook for %s answered %s", e.ID, resp)
		}
		return nil
	}
	var w webhooks.Webhook
	if err := resp.Decode(&w); err != nil || w.ID == "" {
		return fmt.Errorf("create webhook answered %s (%v)", resp, err)
	}
	h.ID = w.ID
	now := s.whMS()
	if err := whCheckView(&w, h, before); err != nil {
		return err
	}
	if !strings.HasPrefix(w.Secret, "whsec_") || w.Status != webhooks.StatusActive || w.Deleted != 0 || w.ExpiresIn != expires {
		return fmt.Errorf("create webhook answered %s", resp)
	}
	if !whSameEvents(w.EnabledEvents, ee) {
		return fmt.Errorf("webhook %s: enabled_events %v answered, %v sent", w.ID, w.EnabledEvents.Preferred(), ee.Preferred())
	}
	st.mu.Lock()
	s.hooks.mu.Lock()
	rc.Secret = w.Secret
	h.lastMode, h.modeAt = rc.Mode, now
	s.hooks.mu.Unlock()
	h.secretKnown = true
	h.apply(&w, now)
	st.hooks = append(st.hooks, h)
	st.mu.Unlock()
	s.Acked("/entity-webhooks/" + w.ID)
	return nil
}

func whUpdate(s *Sim, r *rand.Rand) error {
	st := whOf(s)
	h := st.pick(r, func(h *whHook) bool { return !h.deleted })
	if h == nil {
		return nil
	}
	defer st.done(h)
	body := map[string]any{}
	var sentEvents *webhooks.EnabledEvents
	var sentStatus string
	now := s.whMS()
	switch r.IntN(5) {
	case 0, 1:
		sentStatus = webhooks.StatusInactive
		if h.disabled || r.IntN(3) == 0 {
			sentStatus = webhooks.StatusActive
			if h.expiresAt <= now+60_000 {
				body["expires_in"] = (now-h.created)/1000 + whMonth
			}
		}
		body["status"] = sentStatus
	case 2, 3:
		b, ee := whEventsBody(r)
		body["enabled_events"] = b
		sentEvents = &ee
	default:
		body["expires_in"] = (now-h.created)/1000 + int64(60+r.IntN(whMonth))
		body["description"] = fmt.Sprintf("sim %d", r.IntN(100))
	}
	if r.IntN(4) == 0 {
		body["entity_id"] = h.Entity
	}
	resp := s.Do(r, Req{Method: http.MethodPatch, Path: "/entity-webhooks/" + h.ID, Body: body})
	st.mu.Lock()
	defer st.mu.Unlock()
	if resp.Status == 0 {
		h.unknown, h.changedAt = true, math.MaxInt64
		h.version++
		if sentStatus == webhooks.StatusActive {
			h.disabled = false
		}
		return nil
	}
	if !resp.OK() {
		if resp.Status >= 500 || resp.Status == http.StatusNotFound && !h.unknown {
			return fmt.Errorf("PATCH webhook %s %v answered %s", h.ID, body, resp)
		}
		return nil
	}
	var w webhooks.Webhook
	if err := resp.Decode(&w); err != nil {
		return fmt.Errorf("PATCH webhook %s answered %s", h.ID, resp)
	}
	before := now
	now = s.whMS()
	if err := whCheckView(&w, h, before); err != nil {
		return err
	}
	if w.Deleted != 0 {
		return fmt.Errorf("PATCH of deleted webhook %s answered %s", h.ID, resp)
	}
	if sentStatus == "" && !h.unknown && before < h.expiresAt && now < w.Created+w.ExpiresIn*1000 {
		want := webhooks.StatusActive
		if h.disabled {
			want = webhooks.StatusInactive
		}
		if w.Status != want {
			return fmt.Errorf("PATCH webhook %s %v (no status) answered status %s; the simulator expects %s", h.ID, body, w.Status, want)
		}
	}
	if sentStatus != "" && w.Status != sentStatus {
		return fmt.Errorf("PATCH webhook %s status %s answered %s", h.ID, sentStatus, w.Status)
	}
	if sentEvents != nil && !whSameEvents(*sentEvents, w.EnabledEvents) {
		return fmt.Errorf("PATCH webhook %s: enabled_events %v answered, %v sent", h.ID, w.EnabledEvents.Preferred(), sentEvents.Preferred())
	}
	if err := st.scanOneLocked(s, h); err != nil {
		return err
	}
	h.apply(&w, now)
	return nil
}

func whRotate(s *Sim, r *rand.Rand) error {
	st := whOf(s)
	h := st.pick(r, func(h *whHook) bool { return !h.deleted })
	if h == nil {
		return nil
	}
	defer st.done(h)
	var body any
	if r.IntN(4) == 0 {
		body = map[string]any{"entity_id": h.Entity}
	}
	resp := s.Do(r, Req{Method: http.MethodPost, Path: "/entity-webhooks/" + h.ID + "/rotate_secret", Body: body,
		Idem: fmt.Sprintf("whr-%d-%d-%x", s.cfg.Seed, s.step, r.Uint32())})
	st.mu.Lock()
	defer st.mu.Unlock()
	s.hooks.mu.Lock()
	defer s.hooks.mu.Unlock()
	if err := st.scanLocked(s, h, st.lastBoots >= 0 && s.boots != st.lastBoots); err != nil {
		return err
	}
	if resp.Status == 0 {
		h.secretKnown, h.rc.Secret = false, ""
		return nil
	}
	if !resp.OK() {
		if !h.unknown {
			return fmt.Errorf("rotate_secret of webhook %s answered %s", h.ID, resp)
		}
		return nil
	}
	var w webhooks.Webhook
	if err := resp.Decode(&w); err != nil || !strings.HasPrefix(w.Secret, "whsec_") || w.ID != h.ID {
		return fmt.Errorf("rotate_secret of webhook %s answered %s", h.ID, resp)
	}
	if h.secretKnown && w.Secret == h.rc.Secret {
		return fmt.Errorf("rotate_secret of webhook %s answered the old secret", h.ID)
	}
	h.rc.Secret, h.secretKnown = w.Secret, true
	s.counts["webhooks.rotated"]++
	return nil
}

func whDelete(s *Sim, r *rand.Rand) error {
	st := whOf(s)
	h := st.pick(r, func(h *whHook) bool { return !h.deleted })
	if h == nil {
		return nil
	}
	defer st.done(h)
	resp := s.Do(r, Req{Method: http.MethodDelete, Path: "/entity-webhooks/" + h.ID})
	st.mu.Lock()
	defer st.mu.Unlock()
	if resp.Status == 0 {
		h.unknown, h.changedAt = true, math.MaxInt64
		h.version++
		return nil
	}
	if !resp.OK() {
		return fmt.Errorf("DELETE webhook %s answered %s", h.ID, resp)
	}
	var w webhooks.Webhook
	if err := resp.Decode(&w); err != nil || w.Deleted == 0 || w.Status != webhooks.StatusInactive {
		return fmt.Errorf("DELETE webhook %s answered %s", h.ID, resp)
	}
	if err := st.scanOneLocked(s, h); err != nil {
		return err
	}
	h.apply(&w, s.whMS())
	return nil
}

func whTest(s *Sim, r *rand.Rand) error {
	st := whOf(s)
	h := st.pick(r, func(h *whHook) bool { return !h.deleted || r.IntN(4) == 0 })
	if h == nil {
		return nil
	}
	defer st.done(h)
	st.mu.Lock()
	deleted, unknown := h.deleted, h.unknown
	st.mu.Unlock()
	s.hooks.mu.Lock()
	mode := h.rc.Mode
	s.hooks.mu.Unlock()
	resp := s.Do(r, Req{Method: http.MethodPost, Path: "/entity-webhooks/" + h.ID + "/test"})
	if resp.Status == 0 {
		return nil
	}
	if !resp.OK() {
		if deleted || unknown {
			return nil
		}
		return fmt.Errorf("test of webhook %s answered %s", h.ID, resp)
	}
	if deleted && !unknown {
		return fmt.Errorf("test of deleted webhook %s answered %s", h.ID, resp)
	}
	var d webhooks.Delivery
	if err := resp.Decode(&d); err != nil || !d.Test || d.WebhookID != h.ID || d.EventType != webhooks.TestEventType || len(d.Attempts) > 1 {
		return fmt.Errorf("test of webhook %s answered %s", h.ID, resp)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	s.hooks.mu.Lock()
	defer s.hooks.mu.Unlock()
	acked := false
	for _, g := range h.rc.Got[min(h.seen, len(h.rc.Got)):] {
		if g.EventID == d.EventID && g.Delivered && g.Status >= 200 && g.Status < 300 {
			acked = true
		}
	}
	if d.Status == webhooks.DeliverySucceeded && !acked && !resp.Replayed {
		return fmt.Errorf("test of webhook %s: delivery %s succeeded, but the receiver never answered it 2xx", h.ID, d.ID)
	}
	if mode == recvOK && !resp.Replayed && d.Status != webhooks.DeliverySucceeded {
		return fmt.Errorf("test of webhook %s to a receiver answering 200: %s", h.ID, resp)
	}
	return nil
}

func whGet(s *Sim, r *rand.Rand) error {
	st := whOf(s)
	h := st.pick(r, func(*whHook) bool { return true })
	if h == nil {
		return nil
	}
	defer st.done(h)
	path := "/entity-webhooks/" + h.ID
	if r.IntN(3) == 0 {
		path += "?entity_id=" + h.Entity
	}
	before := s.whMS()
	resp := s.Do(r, Req{Method: http.MethodGet, Path: path})
	if resp.Status == 0 {
		return nil
	}
	if !resp.OK() {
		return fmt.Errorf("GET webhook %s answered %s", h.ID, resp)
	}
	if strings.Contains(string(resp.Body), `"secret"`) {
		return fmt.Errorf("GET webhook %s shows a secret: %s", h.ID, resp)
	}
	var w webhooks.Webhook
	if err := resp.Decode(&w); err != nil {
		return fmt.Errorf("GET webhook %s answered %s", h.ID, resp)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	now := s.whMS()
	if err := whCheckView(&w, h, before); err != nil {
		return err
	}
	if !h.unknown {
		want := webhooks.StatusActive
		if h.disabled || h.deleted || before >= h.expiresAt {
			want = webhooks.StatusInactive
		}
		if now >= h.expiresAt && before < h.expiresAt {
			want = w.Status // expired while the request was served
		}
		if w.Status != want || (w.Deleted != 0) != h.deleted || !whSameEvents(w.EnabledEvents, h.events) || w.Created+w.ExpiresIn*1000 != h.expiresAt {
			return fmt.Errorf("GET webhook %s answered %s; the simulator expects status %s, deleted %v, expires at %d, events %v",
				h.ID, resp, want, h.deleted, h.expiresAt, h.events.Preferred())
		}
		return nil
	}
	if err := st.scanOneLocked(s, h); err != nil {
		return err
	}
	h.apply(&w, now)
	return nil
}

func whEvents(s *Sim, r *rand.Rand) error {
	e := s.PickEntity(r, nil)
	if e == nil {
		return nil
	}
	path := "/events?limit=" + fmt.Sprint(1+r.IntN(50))
	if e.ID != s.world.Root.ID || r.IntN(2) == 0 {
		path += "&entity_id=" + e.ID
	}
	resp := s.Do(r, Req{Method: http.MethodGet, Path: path, Key: keyOf(s, r, e)})
	if resp.Status == 0 {
		return nil
	}
	if !resp.OK() {
		if resp.Status == http.StatusForbidden || resp.Status == http.StatusUnauthorized {
			return nil // an entity's own key, refused for its status
		}
		return fmt.Errorf("GET %s answered %s", path, resp)
	}
	var evs []webhooks.Event
	if err := resp.Decode(&evs); err != nil {
		return fmt.Errorf("GET %s answered %s", path, resp)
	}
	st := whOf(s)
	st.mu.Lock()
	defer st.mu.Unlock()
	st.syncWorld(s)
	prev := ""
	for _, ev := range evs {
		if ev.ID <= prev {
			return fmt.Errorf("GET %s: events out of order (%s after %s)", path, ev.ID, prev)
		}
		prev = ev.ID
		if e.ID != s.world.Root.ID && st.exact(s, ev.EntityID) && !whContains(st.chain(s, ev.EntityID), e.ID) {
			return fmt.Errorf("GET %s lists event %s of entity %s, outside %s's tree", path, ev.ID, ev.EntityID, e.ID)
		}
		if ev.Type == webhooks.TestEventType {
			return fmt.Errorf("GET %s lists test event %s", path, ev.ID)
		}
	}
	return nil
}

func whRedeliver(s *Sim, r *rand.Rand) error {
	st := whOf(s)
	st.mu.Lock()
	id := Pick(r, st.recent)
	ev, ok := st.events[id]
	if id == "" || !ok {
		st.mu.Unlock()
		return nil
	}
	st.redelivers[id]++
	gone := map[string]bool{}
	for _, h := range st.hooks {
		if h.deleted && !h.busy {
			gone[h.ID] = true
		}
	}
	st.mu.Unlock()
	resp := s.Do(r, Req{Method: http.MethodPost, Path: "/events/" + id + "/redeliver"})
	if resp.Status == 0 {
		return nil
	}
	if !resp.OK() {
		st.mu.Lock()
		crashed := st.rebootAt >= ev.created
		st.mu.Unlock()
		if resp.Status == http.StatusNotFound && (s.whMS()-ev.created > 29*24*3600*1000 || crashed) {
			return nil // past retention, or not yet read from the outbox after a crash
		}
		return fmt.Errorf("redeliver event %s answered %s", id, resp)
	}
	var v struct {
		EventID    string              `json:"event_id"`
		Deliveries []webhooks.Delivery `json:"deliveries"`
	}
	if err := resp.Decode(&v); err != nil || v.EventID != id {
		return fmt.Errorf("redeliver event %s answered %s", id, resp)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	chain := st.chain(s, ev.entity)
	for _, d := range v.Deliveries {
		if d.EventID != id || d.Test {
			return fmt.Errorf("redeliver event %s answered %s", id, resp)
		}
		if gone[d.WebhookID] {
			return fmt.Errorf("redeliver event %s made delivery %s to deleted webhook %s", id, d.ID, d.WebhookID)
		}
		for _, h := range st.hooks {
			if h.ID == d.WebhookID && !whContains(chain, h.Entity) && st.exact(s, ev.entity) {
				return fmt.Errorf("redeliver event %s of entity %s made delivery %s to webhook %s of entity %s, outside", id, ev.entity, d.ID, h.ID, h.Entity)
			}
		}
	}
	s.Count("webhooks.redelivered")
	return nil
}

// whRecover finds a webhook whose create answer was lost.
func whRecover(s *Sim, r *rand.Rand) error {
	st := whOf(s)
	st.mu.Lock()
	h := Pick(r, st.orphans)
	st.mu.Unlock()
	if h == nil {
		return nil
	}
	resp := s.Do(r, Req{Method: http.MethodGet, Path: "/entity-webhooks?limit=100&entity_id=" + h.Entity})
	if resp.Status == 0 {
		return nil
	}
	if !resp.OK() {
		return fmt.Errorf("list webhooks of %s answered %s", h.Entity, resp)
	}
	var ws []webhooks.Webhook
	if err := resp.Decode(&ws); err != nil {
		return fmt.Errorf("list webhooks of %s answered %s", h.Entity, resp)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	st.orphans = Remove(st.orphans, func(o *whHook) bool { return o == h })
	for i := range ws {
		if ws[i].URL == h.URL {
			h.ID = ws[i].ID
			h.apply(&ws[i], s.whMS())
			st.hooks = append(st.hooks, h)
			s.counts["webhooks.recovered"]++
			return nil
		}
	}
	return nil // never created
}
