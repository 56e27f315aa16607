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
// order RunDue runs it: "webhooks.expire" (a webhook's expires_in
// elapsed) and "webhooks.sweep" (events and deliveries past
// EventRetention, oldest first), each inside the transaction that takes the item off the
// queue, then "webhooks.attempt", a Batch job that sends every attempt due
// (first attempts whatever the clock, retries on it) outside any
// transaction and returns once they are recorded. Reading the outbox is not
// due work: RunDue and Run do it before sending.
func (s *Service) DueJobs() []storage.DueJob {
	return append(s.housekeeping(), s.sendJob(nil))
}

// RunDue does every job due at asOf: webhooks whose expires_in elapsed
// become inactive, events and deliveries past EventRetention are purged,
// new outbox events become deliveries, and every first attempt and every
// retry due at asOf is sent, Concurrency at a time. It returns once those
// attempts are recorded, with the number of items handled (expiries,
// purges and attempts sent). A retry that one of these attempts makes due
// at asOf waits for the next call. The sandbox clock-advance route calls
// it after moving the clock; Run does the same work continuously.
func (s *Service) RunDue(ctx context.Context, asOf time.Time) (int, error) {
	return s.due(s.DueJobs()...).RunDue(ctx, asOf)
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
		if tick {
			if _, err := housekeeping.RunDue(ctx, now); err != nil && ctx.Err() == nil {
				s.log.Error("webhook housekeeping", "err", err)
			}
		}
		if _, err := sending.RunDue(ctx, now); err != nil && ctx.Err() == nil {
			s.log.Error("webhook dispatch", "err", err)
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
