package webhooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/storage"
)

// Delivery statuses.
const (
	DeliveryPending   = "pending"
	DeliverySucceeded = "succeeded"
	DeliveryFailed    = "failed"
)

// UserAgent is sent with every delivery.
const UserAgent = "corebank-webhooks/1.0"

// Delivery headers.
const (
	HeaderEventID   = "x-service-event-id"
	HeaderTimestamp = "x-service-event-timestamp"
	HeaderSignature = "x-service-event-signature"
)

const (
	ingestBatch    = 256
	housekeepBatch = 1000
	maxErrorText   = 300
)

// Delivery is one event on its way to one webhook, with every attempt made.
type Delivery struct {
	ID        string `json:"id"`
	WebhookID string `json:"webhook_id"`
	EventID   string `json:"event_id"`
	EventType string `json:"event_type"`
	// Status is DeliveryPending, DeliverySucceeded or DeliveryFailed; a
	// failed delivery is never attempted again (Redeliver makes a new one).
	Status   string    `json:"status"`
	Attempts []Attempt `json:"attempts"`
	// NextAttemptAt is when the next attempt is due (ms); 0 when none is.
	// A delivery with no attempt yet is sent as soon as the dispatcher
	// runs, whatever the clock says.
	NextAttemptAt int64 `json:"next_attempt_at"`
	// RetryUntil is the end of the retry window (ms): the event's creation
	// plus RetryWindow, or the redelivery's creation plus RetryWindow.
	RetryUntil int64 `json:"retry_until"`
	// FailureReason says why a failed delivery stopped.
	FailureReason string `json:"failure_reason,omitempty"`
	// Test marks a SendTest delivery: one attempt, no retries.
	Test    bool  `json:"test"`
	Created int64 `json:"created"`
	Updated int64 `json:"updated"`
}

// Attempt is one POST of a delivery.
type Attempt struct {
	Number int   `json:"number"`
	At     int64 `json:"at"`
	// StatusCode is the receiver's HTTP status, 0 when none was received.
	StatusCode int `json:"status_code"`
	// Error is empty for a 2xx, else what went wrong.
	Error      string `json:"error"`
	DurationMS int64  `json:"duration_ms"`
}

// storedEvent is an event kept for ListEvents, Redeliver and attempts.
type storedEvent struct {
	Event
	// Entities are the entities the event is indexed under: its own, then
	// its ancestors (with Ancestry all of them, else those owning webhooks
	// at ingestion). Empty for test events.
	Entities []string `json:"entities"`
}

// ancestorsTx returns the ancestors of id to index an event under and fan
// it out to: every ancestor with Ancestry; without, each entity owning a
// webhook that InTreeTx places above id; none without a tree.
func (s *Service) ancestorsTx(tx storage.Tx, id string) ([]string, error) {
	if s.tree == nil || id == "" {
		return nil, nil
	}
	if s.ancestry != nil {
		anc, err := s.ancestry.AncestorsTx(tx, id)
		if err != nil {
			return nil, fmt.Errorf("webhooks: ancestors of %s: %w", id, err)
		}
		return anc, nil
	}
	var out []string
	var after []byte
	for {
		var owner string
		err := tx.Scan(bucketHooksEntity, storage.ScanOptions{After: after, Limit: 1}, func(k, _ []byte) error {
			owner, _, _ = strings.Cut(string(k), "/")
			return nil
		})
		if err != nil {
			return nil, err
		}
		if owner == "" {
			return out, nil
		}
		after = append(storage.Prefix(owner), 0xff) // skip the rest of owner's webhooks
		if owner == id {
			continue
		}
		in, err := s.tree.InTreeTx(tx, owner, id)
		if err != nil {
			return nil, fmt.Errorf("webhooks: scope of %s: %w", id, err)
		}
		if in {
			out = append(out, owner)
		}
	}
}

var errCursorMoved = errors.New("webhooks: outbox cursor moved")

func readCursor(tx storage.Tx) (uint64, error) {
	v, err := tx.Get(bucketMeta, keyCursor)
	if errors.Is(err, storage.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return storage.Uint64(v)
}

func timeKey(ms int64, id string) []byte { return append(storage.AppendInt64(nil, ms), id...) }

// Wake tells Run that new events may be in the outbox. It never blocks;
// hand it to storage.WithCommitHook so deliveries start right after commit.
func (s *Service) Wake() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// ingest moves new outbox events into deliveries, advancing the persisted
// cursor in the same transaction.
func (s *Service) ingest(ctx context.Context) (int, error) {
	s.ingestMu.Lock()
	defer s.ingestMu.Unlock()
	total := 0
	for {
		var cursor uint64
		if err := s.db.View(ctx, func(tx storage.Tx) error {
			var err error
			cursor, err = readCursor(tx)
			return err
		}); err != nil {
			return total, err
		}
		evs, err := s.outbox.Events(ctx, cursor, ingestBatch)
		if err != nil {
			return total, fmt.Errorf("webhooks: read outbox: %w", err)
		}
		if len(evs) == 0 {
			return total, nil
		}
		now := s.clock.Now()
		var created int
		err = s.db.Update(ctx, func(tx storage.Tx) error {
			created = 0
			c, err := readCursor(tx)
			if err != nil {
				return err
			}
			if c != cursor {
				return errCursorMoved
			}
			last := cursor
			for _, ev := range evs {
				if ev.Seq <= last {
					continue
				}
				n, err := s.ingestEventTx(tx, now, ev)
				if err != nil {
					return err
				}
				created += n
				last = ev.Seq
			}
			return tx.Put(bucketMeta, keyCursor, storage.AppendUint64(nil, last))
		})
		if errors.Is(err, errCursorMoved) {
			continue
		}
		if err != nil {
			return total, err
		}
		total += created
		if len(evs) < ingestBatch {
			return total, nil
		}
	}
}

// ingestEventTx stores and indexes ev and creates a delivery for each
// active webhook of its entity or an ancestor that subscribes to its type.
func (s *Service) ingestEventTx(tx storage.Tx, now time.Time, ev Event) (int, error) {
	if ok, err := storage.Exists(tx, bucketEvents, []byte(ev.ID)); err != nil || ok {
		return 0, err // already ingested (an outbox replay)
	}
	anc, err := s.ancestorsTx(tx, ev.EntityID)
	if err != nil {
		return 0, err
	}
	entities := append([]string{ev.EntityID}, anc...)
	if err := storeEventTx(tx, &storedEvent{Event: ev, Entities: entities}); err != nil {
		return 0, err
	}
	ds, err := s.fanOutTx(tx, now, ev, entities, ev.Created+s.window.Milliseconds(), false)
	return len(ds), err
}

func storeEventTx(tx storage.Tx, se *storedEvent) error {
	if err := storage.PutJSON(tx, bucketEvents, []byte(se.ID), se); err != nil {
		return err
	}
	for _, ent := range se.Entities {
		if err := tx.Put(bucketEventIndex, storage.Key(ent, se.ID), nil); err != nil {
			return err
		}
		if err := tx.Put(bucketEventTypes, storage.Key(ent, se.Type, se.ID), nil); err != nil {
			return err
		}
	}
	return tx.Put(bucketEventTime, timeKey(se.Created, se.ID), nil)
}

// fanOutTx creates a delivery of ev for each active, subscribed webhook
// owned by one of entities. Unless again (a redelivery), a webhook created
// after the event or already holding a delivery of it gets none.
func (s *Service) fanOutTx(tx storage.Tx, now time.Time, ev Event, entities []string, retryUntil int64, again bool) ([]Delivery, error) {
	nowMS := corebank.Millis(now)
	var out []Delivery
	for _, ent := range entities {
		var hooks []string
		prefix := storage.Prefix(ent)
		if err := tx.Scan(bucketHooksEntity, storage.ScanOptions{Prefix: prefix}, func(k, _ []byte) error {
			hooks = append(hooks, string(k[len(prefix):]))
			return nil
		}); err != nil {
			return nil, err
		}
		for _, hid := range hooks {
			r, err := getRecord(tx, hid)
			if err != nil {
				return nil, err
			}
			if !r.active(nowMS) || !r.EnabledEvents.Enabled(ev.Type) {
				continue
			}
			if !again {
				if ev.Created < r.Created {
					continue // the webhook did not exist yet when the event happened
				}
				if dup, err := storage.Exists(tx, bucketDlvKeys, storage.Key(hid, ev.ID)); err != nil || dup {
					if err != nil {
						return nil, err
					}
					continue
				}
			}
			d, err := s.newDeliveryTx(tx, now, s.ids.New(now), hid, ev, retryUntil, false)
			if err != nil {
				return nil, err
			}
			out = append(out, *d)
		}
	}
	return out, nil
}

// newDeliveryTx stores a pending delivery queued for an immediate first
// attempt. The latest delivery of (webhook, event) is recorded so that an
// outbox replay creates no duplicate.
func (s *Service) newDeliveryTx(tx storage.Tx, now time.Time, id, hookID string, ev Event, retryUntil int64, test bool) (*Delivery, error) {
	ms := corebank.Millis(now)
	d := &Delivery{
		ID: id, WebhookID: hookID, EventID: ev.ID, EventType: ev.Type, Status: DeliveryPending,
		Attempts: []Attempt{}, NextAttemptAt: ms, RetryUntil: retryUntil, Test: test,
		Created: ms, Updated: ms,
	}
	if err := storage.PutJSON(tx, bucketDeliveries, []byte(id), d); err != nil {
		return nil, err
	}
	for _, kv := range []struct {
		b storage.Bucket
		k []byte
		v []byte
	}{
		{bucketDlvHook, storage.Key(hookID, id), nil},
		{bucketDlvKeys, storage.Key(hookID, ev.ID), []byte(id)},
		{bucketDlvTime, timeKey(ms, id), nil},
		{bucketReady, []byte(id), nil},
	} {
		if err := tx.Put(kv.b, kv.k, kv.v); err != nil {
			return nil, err
		}
	}
	return d, nil
}

func getDelivery(tx storage.Tx, id string) (*Delivery, error) {
	var d Delivery
	if err := storage.GetJSON(tx, bucketDeliveries, []byte(id), &d); err != nil {
		return nil, err
	}
	return &d, nil
}

// unqueueTx removes a pending delivery from the ready or due queue.
func unqueueTx(tx storage.Tx, d *Delivery) error {
	if len(d.Attempts) == 0 {
		return tx.Delete(bucketReady, []byte(d.ID))
	}
	return tx.Delete(bucketDue, timeKey(d.NextAttemptAt, d.ID))
}

// scanCursor is where candidates resumes each queue within one dispatch,
// so that a large backlog is scanned once, not once per batch.
type scanCursor struct{ ready, due []byte }

// candidates returns up to max pending deliveries not in flight and not in
// skip: first attempts, then retries due at asOf, from cur on.
func (s *Service) candidates(ctx context.Context, asOf time.Time, max int, skip map[string]bool, cur *scanCursor) ([]string, error) {
	s.mu.Lock()
	busy := make(map[string]bool, len(s.inflight))
	for id := range s.inflight {
		busy[id] = true
	}
	s.mu.Unlock()
	var ids []string
	asOfMS := corebank.Millis(asOf)
	err := s.db.View(ctx, func(tx storage.Tx) error {
		if err := tx.Scan(bucketReady, storage.ScanOptions{After: cur.ready}, func(k, _ []byte) error {
			cur.ready = bytes.Clone(k)
			if id := string(k); !busy[id] && !skip[id] {
				ids = append(ids, id)
			}
			if len(ids) >= max {
				return storage.ErrStop
			}
			return nil
		}); err != nil || len(ids) >= max {
			return err
		}
		return tx.Scan(bucketDue, storage.ScanOptions{After: cur.due}, func(k, _ []byte) error {
			ms, err := storage.Uint64(k)
			if err != nil {
				return err
			}
			if int64(ms) > asOfMS {
				return storage.ErrStop
			}
			cur.due = bytes.Clone(k)
			if id := string(k[8:]); !busy[id] && !skip[id] {
				ids = append(ids, id)
			}
			if len(ids) >= max {
				return storage.ErrStop
			}
			return nil
		})
	})
	return ids, err
}

func (s *Service) claim(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inflight[id] {
		return false
	}
	s.inflight[id] = true
	return true
}

func (s *Service) release(id string) {
	s.mu.Lock()
	delete(s.inflight, id)
	s.mu.Unlock()
}

// dispatch ingests the outbox and starts an attempt for every delivery due
// at asOf, at most Concurrency at a time. With wait it returns once they
// (and the retries they make due at asOf) are done; without, it returns
// once all are started and wg tracks them.
func (s *Service) dispatch(ctx context.Context, asOf time.Time, wg *sync.WaitGroup, wait bool) (int, error) {
	if _, err := s.ingest(ctx); err != nil {
		return 0, err
	}
	var mu sync.Mutex
	attempts := 0
	skip := map[string]bool{}
	progressed := map[string]bool{}
	var round sync.WaitGroup
	spawned := 0
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return attempts
	}
	actx := context.WithoutCancel(ctx) // an attempt in flight finishes (bounded by AttemptTimeout)
	var cur scanCursor
	for {
		ids, err := s.candidates(ctx, asOf, 4*cap(s.sem), skip, &cur)
		if err != nil {
			if wait {
				round.Wait()
			}
			return count(), err
		}
		if len(ids) == 0 {
			if !wait || spawned == 0 {
				return count(), nil
			}
			// Wait for this round, then look again: a delivery that made
			// progress may be due again at asOf.
			round.Wait()
			spawned, cur = 0, scanCursor{}
			mu.Lock()
			for id := range progressed {
				delete(skip, id)
			}
			clear(progressed)
			mu.Unlock()
			continue
		}
		for _, id := range ids {
			skip[id] = true
			if !s.claim(id) {
				continue
			}
			select {
			case s.sem <- struct{}{}:
			case <-ctx.Done():
				s.release(id)
				if wait {
					round.Wait()
				}
				return count(), ctx.Err()
			}
			wg.Add(1)
			round.Add(1)
			spawned++
			go func() {
				defer wg.Done()
				defer round.Done()
				defer func() { <-s.sem; s.release(id) }()
				sent, progress, err := s.attempt(actx, id, asOf)
				if err != nil {
					s.log.Error("webhook attempt", "delivery", id, "err", err)
				}
				mu.Lock()
				if sent {
					attempts++
				}
				if progress {
					progressed[id] = true
				}
				mu.Unlock()
			}()
		}
	}
}

// attempt makes one attempt of delivery id if it is still pending and due
// at asOf. sent reports an HTTP attempt; progress any recorded change.
func (s *Service) attempt(ctx context.Context, id string, asOf time.Time) (sent, progress bool, err error) {
	var (
		d    *Delivery
		rec  *record
		ev   storedEvent
		stop string
	)
	err = s.db.View(ctx, func(tx storage.Tx) error {
		var err error
		d, err = getDelivery(tx, id)
		if err != nil {
			return err
		}
		if d.Status != DeliveryPending || (len(d.Attempts) > 0 && d.NextAttemptAt > corebank.Millis(asOf)) {
			d = nil
			return nil
		}
		rec, err = getRecord(tx, d.WebhookID)
		if errors.Is(err, ErrWebhookNotFound) {
			stop = "webhook not found"
			return nil
		}
		if err != nil {
			return err
		}
		err = storage.GetJSON(tx, bucketEvents, []byte(d.EventID), &ev)
		if errors.Is(err, storage.ErrNotFound) {
			stop = "event no longer retained"
			return nil
		}
		return err
	})
	if errors.Is(err, storage.ErrNotFound) || (err == nil && d == nil) {
		return false, false, nil
	}
	if err != nil {
		return false, false, err
	}
	now := s.clock.Now()
	nowMS := corebank.Millis(now)
	switch {
	case stop != "":
	case len(d.Attempts) > 0 && !d.Test && nowMS > d.RetryUntil:
		// A retry that falls due inside the window but runs after it (the
		// clock jumped, or the runner was down) is not sent: the window is
		// a promise to the receiver, not only a schedule.
		stop = "retry window elapsed"
	case rec.Deleted != 0:
		stop = "webhook deleted"
	case !d.Test && !rec.active(nowMS):
		stop = "webhook inactive"
	}
	if stop != "" {
		return false, true, s.finish(ctx, d, nowMS, nil, stop)
	}

	a := Attempt{Number: len(d.Attempts) + 1, At: nowMS}
	secret, oerr := s.sealer.Open(rec.SealedSecret, secretAD(rec.ID))
	if oerr != nil {
		a.Error = "internal error: the webhook secret cannot be opened"
		s.log.Error("webhook secret", "webhook", rec.ID, "err", oerr)
	} else {
		a.StatusCode, a.Error, a.DurationMS = s.post(ctx, rec.URL, string(secret), &ev.Event, nowMS)
	}
	if a.Error != "" {
		s.log.Info("webhook attempt failed", "webhook", rec.ID, "delivery", d.ID, "event", ev.ID,
			"attempt", a.Number, "status_code", a.StatusCode, "error", a.Error)
	}
	return true, true, s.finish(ctx, d, nowMS, &a, "")
}

// Body returns the JSON body delivered for an event:
// {"event": type, "data": object}.
func Body(typ string, data json.RawMessage) []byte {
	if len(data) == 0 {
		data = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		Event string          `json:"event"`
		Data  json.RawMessage `json:"data"`
	}{typ, data})
	return b
}

// post sends one signed attempt and classifies the outcome.
func (s *Service) post(ctx context.Context, url, secret string, ev *Event, nowMS int64) (code int, errText string, durMS int64) {
	body := Body(ev.Type, ev.Data)
	ts := strconv.FormatInt(nowMS, 10)
	ctx, cancel := context.WithTimeout(ctx, AttemptTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, truncate("invalid request: " + err.Error()), 0
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", UserAgent)
	req.Header.Set(HeaderEventID, ev.ID)
	req.Header.Set(HeaderTimestamp, ts)
	req.Header.Set(HeaderSignature, Sign(secret, ts, body))
	start := time.Now()
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, truncate(err.Error()), time.Since(start).Milliseconds()
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	durMS = time.Since(start).Milliseconds()
	switch c := resp.StatusCode; {
	case c >= 200 && c < 300:
		return c, "", durMS
	case c >= 300 && c < 400:
		return c, fmt.Sprintf("redirect not followed (HTTP %d)", c), durMS
	default:
		return c, fmt.Sprintf("HTTP %d", c), durMS
	}
}

func truncate(s string) string {
	if len(s) > maxErrorText {
		return s[:maxErrorText]
	}
	return s
}

// backoff is the delay after the n-th failed attempt: base, 2 base, 4 base...
func (s *Service) backoff(n int) time.Duration {
	if n > 30 {
		n = 30
	}
	return s.base << (n - 1)
}

// finish records an attempt's outcome (a == nil: the delivery stops with
// reason, nothing sent), schedules the next retry or ends the delivery, and
// updates the webhook's stats, all in one transaction. A delivery that
// changed since it was read (another attempt recorded) is left alone.
func (s *Service) finish(ctx context.Context, read *Delivery, nowMS int64, a *Attempt, reason string) error {
	return s.db.Update(ctx, func(tx storage.Tx) error {
		d, err := getDelivery(tx, read.ID)
		if err != nil {
			return err
		}
		if d.Status != DeliveryPending || len(d.Attempts) != len(read.Attempts) {
			return nil
		}
		if err := unqueueTx(tx, d); err != nil {
			return err
		}
		d.Updated = nowMS
		if a == nil {
			d.Status, d.NextAttemptAt, d.FailureReason = DeliveryFailed, 0, reason
			return storage.PutJSON(tx, bucketDeliveries, []byte(d.ID), d)
		}
		d.Attempts = append(d.Attempts, *a)
		switch next := a.At + s.backoff(a.Number).Milliseconds(); {
		case a.Error == "":
			d.Status, d.NextAttemptAt = DeliverySucceeded, 0
		case d.Test:
			d.Status, d.NextAttemptAt, d.FailureReason = DeliveryFailed, 0, "test deliveries are not retried"
		case next > d.RetryUntil:
			d.Status, d.NextAttemptAt, d.FailureReason = DeliveryFailed, 0, "retry window elapsed"
		default:
			d.NextAttemptAt = next
			if err := tx.Put(bucketDue, timeKey(next, d.ID), nil); err != nil {
				return err
			}
		}
		if err := storage.PutJSON(tx, bucketDeliveries, []byte(d.ID), d); err != nil {
			return err
		}
		r, err := getRecord(tx, d.WebhookID)
		if errors.Is(err, ErrWebhookNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		r.Stats.TotalWebhooksSent++
		if a.Error == "" {
			r.Stats.TotalWebhooksSuccessful++
		} else {
			r.Stats.TotalWebhooksFailed++
		}
		r.Stats.LastWebhookEvent = a.At
		return putRecord(tx, r)
	})
}

// housekeep marks webhooks whose expires_in elapsed at asOf inactive and
// purges events and finished deliveries older than the retention period.
// It writes only when there is something to do, so that a commit hook
// waking Run does not make it spin.
func (s *Service) housekeep(ctx context.Context, asOf time.Time) error {
	asOfMS := corebank.Millis(asOf)
	cutoff := asOfMS - s.retention.Milliseconds()
	var expired, events, deliveries [][]byte
	collect := func(tx storage.Tx) error {
		expired, events, deliveries = nil, nil, nil
		if err := scanBefore(tx, bucketExpiry, asOfMS+1, func(k []byte) { expired = append(expired, k) }); err != nil {
			return err
		}
		if cutoff <= 0 {
			return nil
		}
		if err := scanBefore(tx, bucketEventTime, cutoff, func(k []byte) { events = append(events, k) }); err != nil {
			return err
		}
		return scanBefore(tx, bucketDlvTime, cutoff, func(k []byte) { deliveries = append(deliveries, k) })
	}
	if err := s.db.View(ctx, collect); err != nil {
		return err
	}
	if len(expired)+len(events)+len(deliveries) == 0 {
		return nil
	}
	return s.db.Update(ctx, func(tx storage.Tx) error {
		if err := collect(tx); err != nil {
			return err
		}
		for _, k := range expired {
			if err := tx.Delete(bucketExpiry, k); err != nil {
				return err
			}
			r, err := getRecord(tx, string(k[8:]))
			if errors.Is(err, ErrWebhookNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			if r.Status == StatusActive && r.ExpiresAt <= asOfMS {
				r.Status, r.Updated = StatusInactive, asOfMS
				if err := putRecord(tx, r); err != nil {
					return err
				}
			}
		}
		for _, k := range events {
			if err := purgeEventTx(tx, k); err != nil {
				return err
			}
		}
		for _, k := range deliveries {
			if err := purgeDeliveryTx(tx, k); err != nil {
				return err
			}
		}
		return nil
	})
}

// scanBefore calls fn with a copy of each time-keyed key before ms, at most
// housekeepBatch of them.
func scanBefore(tx storage.Tx, b storage.Bucket, ms int64, fn func(k []byte)) error {
	n := 0
	return tx.Scan(b, storage.ScanOptions{}, func(k, _ []byte) error {
		v, err := storage.Uint64(k)
		if err != nil {
			return err
		}
		if int64(v) >= ms || n == housekeepBatch {
			return storage.ErrStop
		}
		n++
		fn(bytes.Clone(k))
		return nil
	})
}

func purgeEventTx(tx storage.Tx, timeK []byte) error {
	id := string(timeK[8:])
	var se storedEvent
	err := storage.GetJSON(tx, bucketEvents, []byte(id), &se)
	if err != nil && !errors.Is(err, storage.ErrNotFound) {
		return err
	}
	if err == nil {
		for _, ent := range se.Entities {
			if err := tx.Delete(bucketEventIndex, storage.Key(ent, id)); err != nil {
				return err
			}
			if err := tx.Delete(bucketEventTypes, storage.Key(ent, se.Type, id)); err != nil {
				return err
			}
		}
		if err := tx.Delete(bucketEvents, []byte(id)); err != nil {
			return err
		}
	}
	return tx.Delete(bucketEventTime, timeK)
}

func purgeDeliveryTx(tx storage.Tx, timeK []byte) error {
	id := string(timeK[8:])
	d, err := getDelivery(tx, id)
	if errors.Is(err, storage.ErrNotFound) {
		return tx.Delete(bucketDlvTime, timeK)
	}
	if err != nil {
		return err
	}
	if d.Status == DeliveryPending {
		// Older than the retention period yet never finished (no runner
		// ran): it is far outside its retry window, so drop it too.
		if err := unqueueTx(tx, d); err != nil {
			return err
		}
	}
	if err := tx.Delete(bucketDlvHook, storage.Key(d.WebhookID, id)); err != nil {
		return err
	}
	if v, err := tx.Get(bucketDlvKeys, storage.Key(d.WebhookID, d.EventID)); err == nil && string(v) == id {
		if err := tx.Delete(bucketDlvKeys, storage.Key(d.WebhookID, d.EventID)); err != nil {
			return err
		}
	}
	if err := tx.Delete(bucketDeliveries, []byte(id)); err != nil {
		return err
	}
	return tx.Delete(bucketDlvTime, timeK)
}

// RunDue does every job due at asOf and returns the number of attempts
// sent: webhooks whose expires_in elapsed become inactive, events and
// finished deliveries past EventRetention are purged, new outbox events
// become deliveries, and every first attempt and every retry due at asOf
// is sent, Concurrency at a time. It returns once those attempts are
// recorded. The sandbox clock-advance route calls it after moving the
// clock; Run calls it implicitly.
func (s *Service) RunDue(ctx context.Context, asOf time.Time) (int, error) {
	if err := s.housekeep(ctx, asOf); err != nil {
		return 0, err
	}
	var wg sync.WaitGroup
	return s.dispatch(ctx, asOf, &wg, true)
}

// Drain is RunDue at the clock's current time: it delivers everything
// pending now and returns the number of attempts sent.
func (s *Service) Drain(ctx context.Context) (int, error) {
	return s.RunDue(ctx, s.clock.Now())
}

// Run delivers until ctx is done: after each Wake and every PollInterval
// of real time it does what RunDue does at the clock's current time,
// without waiting for attempts before looking for more. When ctx is done
// it waits for the attempts in flight to be recorded and returns nil.
// Errors are logged and retried on the next round.
func (s *Service) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	t := time.NewTicker(s.poll)
	defer t.Stop()
	for {
		now := s.clock.Now()
		if err := s.housekeep(ctx, now); err != nil && ctx.Err() == nil {
			s.log.Error("webhook housekeeping", "err", err)
		}
		if _, err := s.dispatch(ctx, now, &wg, false); err != nil && ctx.Err() == nil {
			s.log.Error("webhook dispatch", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-s.wake:
		case <-t.C:
		}
	}
}
