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
	"sync"
	"sync/atomic"
	"time"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/storage"
)

// Sending: every pending delivery waits in the due queue (kind
// "webhooks.attempt"). The send job takes the items due, makes one signed
// POST per delivery, at most Concurrency at a time, and records each
// outcome with the next retry (or the delivery's end) in one transaction.

// UserAgent is sent with every delivery.
const UserAgent = "corebank-webhooks/1.0"

// Delivery headers.
const (
	HeaderEventID   = "x-service-event-id"
	HeaderTimestamp = "x-service-event-timestamp"
	HeaderSignature = "x-service-event-signature"
)

const maxErrorText = 300

// sendJob returns the due job that sends attempts. With track nil (RunDue)
// each batch returns once its attempts are recorded, with the number sent;
// otherwise (Run) it returns once they are started, and track follows
// them. A delivery already in flight in this Service is skipped. Its
// Prepare reads the outbox into deliveries (ingest.go).
func (s *Service) sendJob(track *sync.WaitGroup) storage.DueJob {
	prepare := func(ctx context.Context) error {
		_, err := s.ingest(ctx)
		return err
	}
	// A claim is Concurrency attempts, each started within one attempt's
	// time of the claim (see Options.Lease).
	return storage.DueJob{Kind: dueAttempt, Prepare: prepare, Claim: cap(s.sem), Batch: func(ctx context.Context, _ time.Time, items []storage.DueItem) (int, error) {
		var round sync.WaitGroup
		var sent atomic.Int64
		actx := context.WithoutCancel(ctx) // an attempt in flight finishes (bounded by AttemptTimeout)
		var err error
		for i, it := range items {
			// A slot first, then the claim: a delivery claimed while its
			// runner waited for a slot would be skipped by a Drain and then
			// dropped when the runner's ctx ends (TestConcurrentRunners).
			select {
			case s.sem <- struct{}{}:
			case <-ctx.Done():
				err = ctx.Err()
			}
			if err != nil {
				// Give the store's leases on the rest back to every node.
				_ = storage.Release(actx, s.db, dueAttempt, items[i:])
				break
			}
			if !s.claim(it.ID) {
				<-s.sem
				continue
			}
			round.Add(1)
			if track != nil {
				track.Add(1)
			}
			go func() {
				defer func() {
					<-s.sem
					s.release(it.ID)
					round.Done()
					if track != nil {
						track.Done()
					}
				}()
				ok, err := s.attempt(actx, it)
				if err != nil {
					s.log.Error("webhook attempt", "delivery", it.ID, "err", err)
					_ = storage.Release(actx, s.db, dueAttempt, []storage.DueItem{it})
				}
				if ok {
					sent.Add(1)
				}
			}()
		}
		if track == nil {
			round.Wait()
		}
		return int(sent.Load()), err
	}}
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

// attempt makes one attempt of the delivery it names if it is still
// pending, still queued at it.At and still leased to this node (else
// another attempt got there first). sent reports an HTTP attempt.
func (s *Service) attempt(ctx context.Context, it storage.DueItem) (sent bool, err error) {
	type read struct {
		d    *Delivery
		rec  *record
		ev   Event
		stop string
	}
	got, err := storage.View(ctx, s.db, func(tx storage.Tx) (read, error) {
		var r read
		d, err := getDelivery(tx, it.ID)
		if errors.Is(err, storage.ErrNotFound) {
			return r, nil
		}
		if err != nil {
			return r, err
		}
		if d.Status != DeliveryPending || d.queuedAt() != it.At {
			return r, nil
		}
		if err := storage.CheckLease(tx, dueAttempt, it); errors.Is(err, storage.ErrLeaseLost) {
			return r, nil // another node took it over
		} else if err != nil {
			return r, err
		}
		r.d = d
		r.rec, err = getRecord(tx, d.WebhookID)
		if errors.Is(err, ErrWebhookNotFound) {
			r.stop = "webhook not found"
			return r, nil
		}
		if err != nil {
			return r, err
		}
		if d.Test {
			r.ev, err = testEvent(tx, d.EventID)
		} else {
			r.ev, err = s.outbox.EventTx(tx, d.EventID)
		}
		if errors.Is(err, storage.ErrNotFound) {
			r.stop = "event no longer retained"
			return r, nil
		}
		return r, err
	})
	if err != nil || got.d == nil {
		return false, err
	}
	d, rec, stop := got.d, got.rec, got.stop
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
		return false, s.outcome(OutcomeStopped, s.finish(ctx, it, d, nowMS, nil, stop))
	}

	a := Attempt{Number: len(d.Attempts) + 1, At: nowMS}
	secret, oerr := s.sealer.Open(rec.SealedSecret, secretAD(rec.ID))
	if oerr != nil {
		a.Error = "internal error: the webhook secret cannot be opened"
		s.log.Error("webhook secret", "webhook", rec.ID, "err", oerr)
	} else {
		a.StatusCode, a.Error, a.DurationMS = s.post(ctx, rec.URL, string(secret), &got.ev)
	}
	if a.Error != "" {
		s.log.Info("webhook attempt failed", "webhook", rec.ID, "delivery", d.ID, "event", got.ev.ID,
			"attempt", a.Number, "status_code", a.StatusCode, "error", a.Error)
	}
	outcome := OutcomeSucceeded
	if a.Error != "" {
		outcome = OutcomeFailed
	}
	return true, s.outcome(outcome, s.finish(ctx, it, d, nowMS, &a, ""))
}

// outcome reports an attempt's outcome to Options.OnAttempt once it is
// recorded (err == nil), and returns err.
func (s *Service) outcome(outcome string, err error) error {
	if err == nil && s.onAttempt != nil {
		s.onAttempt(outcome)
	}
	return err
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
func (s *Service) post(ctx context.Context, url, secret string, ev *Event) (code int, errText string, durMS int64) {
	body := Body(ev.Type, ev.Data)
	ts := strconv.FormatInt(s.signClk.Now().UnixMilli(), 10) // the time of sending (Options.SignClock)
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
// changed since it was read (another attempt recorded), or whose item
// another node has taken over (its attempt is the one recorded), is left
// alone.
func (s *Service) finish(ctx context.Context, it storage.DueItem, read *Delivery, nowMS int64, a *Attempt, reason string) error {
	return s.db.Update(ctx, func(tx storage.Tx) error {
		if err := storage.CheckLease(tx, dueAttempt, it); errors.Is(err, storage.ErrLeaseLost) {
			return nil
		} else if err != nil {
			return err
		}
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
			if err := queueTx(tx, d); err != nil {
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
