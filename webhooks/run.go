package webhooks

import (
	"context"
	"sync"
	"time"

	"github.com/corebank/corebank/storage"
)

// Running: RunDue and Run drive ingestion (ingest.go), retention
// (retention.go) and sending (send.go) through storage's due queue.

// DueJobs returns the webhooks' due work for a storage.Due runner, in the
// order RunDue runs it: "webhooks.attempt", a Batch job that reads the
// outbox into deliveries (its Prepare) and sends every attempt due (first
// attempts whatever the clock, retries on it) outside any transaction,
// returning once they are recorded; then "webhooks.expire" (a webhook's
// expires_in elapsed) and "webhooks.sweep" (events and deliveries past
// EventRetention, oldest first), each inside the transaction that takes
// the item off the queue. Sending comes first because a runner meets its
// kinds one after the other, not in time order: after a clock jump (or a
// crashed node's lease) a first attempt due long before the sweep must be
// sent before the sweep purges its delivery as past retention, or its
// event would never reach the receiver.
func (s *Service) DueJobs() []storage.DueJob {
	return append([]storage.DueJob{s.sendJob(nil)}, s.housekeeping()...)
}

// RunDue does every job due at asOf: new outbox events become
// deliveries, every first attempt and every retry due at asOf is sent,
// Concurrency at a time, then webhooks whose expires_in elapsed become
// inactive and events and deliveries past EventRetention are purged. It
// returns once those attempts are recorded, with the number of items
// handled (attempts sent, expiries and purges). A retry that one of these
// attempts makes due at asOf waits for the next call. The sandbox
// clock-advance route calls it after moving the clock; Run does the same
// work continuously.
func (s *Service) RunDue(ctx context.Context, asOf time.Time) (int, error) {
	return s.due(s.DueJobs()...).RunDue(ctx, asOf)
}

// Settle returns once no attempt is in flight in this Service, or ctx's
// error. After RunDue(asOf), whose own attempts are recorded when it
// returns, the only attempts due at asOf still unrecorded are those Run
// had already started (RunDue skips them): a caller that must see every
// delivery due at asOf attempted, to whatever endpoint (corebanktest's
// Advance), calls RunDue and then Settle.
func (s *Service) Settle(ctx context.Context) error {
	for {
		s.mu.Lock()
		n := len(s.inflight)
		s.mu.Unlock()
		if n == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Millisecond): // real time: attempts are real requests
		}
	}
}

// Drain is RunDue at the clock's current time: it delivers everything
// pending now.
func (s *Service) Drain(ctx context.Context) (int, error) {
	return s.RunDue(ctx, s.clock.Now())
}

// Run delivers until ctx is done: after each Wake (wakeGap at the soonest
// after its latest pass began) and every PollInterval of real time it
// reads the outbox and starts every attempt due at the clock's current
// time, without waiting for attempts before looking for more; on each
// PollInterval (and at the start) it also runs the retention jobs, which
// a Wake alone does not, so that a busy bank's commits do not each cost a
// write transaction here. When ctx is done it waits for the attempts in
// flight to be recorded and returns nil. Errors are logged and retried on
// the next round.
func (s *Service) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	housekeeping := s.due(s.housekeeping()...)
	sending := s.due(s.sendJob(&wg))
	t := time.NewTicker(s.poll)
	defer t.Stop()
	tick := true
	var last time.Time // when the latest pass began, in real time
	for {
		last = time.Now()
		now := s.clock.Now()
		if _, err := sending.RunDue(ctx, now); err != nil && ctx.Err() == nil {
			s.log.Error("webhook dispatch", "err", err)
		}
		if tick { // after sending, as in DueJobs
			if _, err := housekeeping.RunDue(ctx, now); err != nil && ctx.Err() == nil {
				s.log.Error("webhook housekeeping", "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-s.wake:
			tick = false
			// Under load every commit wakes the dispatcher: one pass per
			// wakeGap at most, so that each ingests the events of many
			// commits, and a node's passes cost a bounded number of
			// transactions a second, however many commits wake it.
			if wait := wakeGap - time.Since(last); wait > 0 {
				select {
				case <-ctx.Done():
					return nil
				case <-time.After(wait):
				}
			}
		case <-t.C:
			tick = true
		}
	}
}

// wakeGap is the least time between the starts of two passes of Run that
// a Wake began: a first attempt waits for it at most.
const wakeGap = 50 * time.Millisecond

// due returns a runner of jobs that leases as this Service's node.
func (s *Service) due(jobs ...storage.DueJob) *storage.Due {
	return storage.NewDue(s.db, s.clock, 0, jobs...).Lease(s.node, s.lease).LeaseClock(s.leaseClk)
}
