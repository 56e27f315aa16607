package main

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/entities"
	"github.com/corebank/corebank/funding"
	"github.com/corebank/corebank/httpapi"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/payments"
	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/webhooks"
)

// app is the server's services wired over one store.
type app struct {
	db       storage.Backend
	clock    clock.Clock
	ledger   *ledger.Service
	entities *entities.Service
	funding  *funding.Service
	payments *payments.Service
	webhooks *webhooks.Service
	due      *storage.Due
	handler  http.Handler
	logger   *slog.Logger
}

func newApp(db storage.Backend, key []byte, clk clock.Clock, mock *clock.Mock, cfg *config, logger *slog.Logger) (*app, error) {
	sealer, err := newSealer(key, "corebank sealer")
	if err != nil {
		return nil, err
	}
	// Idempotency records get a key of their own: a sealed value of one use
	// never opens as the other's.
	idemSealer, err := newSealer(key, "httpapi idempotency")
	if err != nil {
		return nil, err
	}
	ids := corebank.NewIDs(nil)
	// The dispatcher reads the outbox right after every commit: every service
	// writes through the hooked store, and the dispatcher's own writes use the
	// raw one so that they do not wake it again.
	var wh *webhooks.Service
	raw := db
	db = storage.WithCommitHook(raw, func() { wh.Wake() })
	led := ledger.NewService(db, &ledger.Options{Clock: clk, IDs: ids, Gate: entities.Gate{}, Tree: entities.Gate{}})
	ents := entities.NewService(db, led, sealer, &entities.Options{Clock: clk, IDs: ids, Env: cfg.env, Logger: logger})
	fund := funding.NewService(db, led, &funding.Options{Clock: clk, IDs: ids, Tree: entities.Gate{}})
	pay := payments.NewService(db, led, &payments.Options{
		Clock: clk, IDs: ids, Fees: cfg.fees,
		// A book transfer's receiving leg is an inflow like any other.
		Receiver: fund,
		Tree:     entities.Gate{},
	})
	wh = webhooks.NewService(raw, webhooks.LedgerOutbox(led), sealer, &webhooks.Options{
		Clock: clk, IDs: ids, Env: cfg.env, Tree: ents, RootCAs: cfg.webhookCA, Logger: logger,
	})
	a := &app{db: db, clock: clk, ledger: led, entities: ents, funding: fund, payments: pay, webhooks: wh, logger: logger}
	// All due work on one queue, in this order at any instant: money first
	// (hold timeouts and account details expiry, inflow settlement, quote
	// expiry, payout progress), then the webhooks, so the events those
	// changes appended go out in the same run, then idempotency expiry.
	a.due = storage.NewDue(db, clk, 0)
	a.due.Add(led.DueJobs()...)
	a.due.Add(fund.DueJobs()...)
	a.due.Add(pay.DueJobs()...)
	a.due.Add(wh.DueJobs()...)
	a.due.Add(httpapi.DueJobs()...)
	a.handler = httpapi.New(httpapi.Services{
		DB:       db,
		Ledger:   led,
		Entities: ents,
		Funding:  fund,
		Payments: pay,
		Webhooks: wh,
	}, &httpapi.Options{
		Env:       cfg.env,
		Clock:     clk,
		FakeClock: mock,
		RunJobs:   a.runJobs,
		Logger:    logger,
		CursorKey: cursorKey(key),
		Sealer:    idemSealer,
	})
	return a, nil
}

// migrate brings a store written by an earlier release up to date, once:
// each service's migrations, in the order the services are built.
func (a *app) migrate(ctx context.Context) error {
	var ms []storage.Migration
	ms = append(ms, a.ledger.Migrations()...)
	ms = append(ms, a.funding.Migrations()...)
	ms = append(ms, a.payments.Migrations()...)
	ms = append(ms, a.webhooks.Migrations()...)
	ms = append(ms, httpapi.Migrations()...)
	n, err := storage.Migrate(ctx, a.db, ms...)
	if n > 0 {
		a.logger.Info("store migrations run (a new store records them with nothing to move)", "migrations", n)
	}
	return err
}

// newSealer returns a sealer under the key derived from the store's secret
// key for purpose.
func newSealer(secret []byte, purpose string) (*corebank.Sealer, error) {
	k, err := corebank.DeriveKey(secret, purpose)
	if err != nil {
		return nil, err
	}
	return corebank.NewSealer(k)
}

// cursorKey derives the cursor-signing key from the store's secret key, so
// that list cursors keep working across restarts.
func cursorKey(secret []byte) []byte {
	k, err := corebank.DeriveKey(secret, "httpapi cursors")
	if err != nil {
		return nil // httpapi falls back to a random key
	}
	return k
}

// runJobs runs every job that is due at now. A failing kind does not stop
// the others; its items stay queued and the next tick retries them.
func (a *app) runJobs(ctx context.Context, now time.Time) error {
	_, err := a.due.RunDue(ctx, now)
	if err != nil {
		a.logger.Error("due work failed", "err", err)
	}
	return err
}

// startBackground starts the goroutines that run beside the HTTP server:
// the webhook dispatcher, which sends first attempts right after commit
// whatever the clock, and with the real clock a runner that executes due jobs
// every second. With the fake clock jobs run only when
// POST /sandbox/clock/advance moves time.
func (a *app) startBackground(ctx context.Context, wg *sync.WaitGroup, realClock bool) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := a.webhooks.Run(ctx); err != nil {
			a.logger.Error("webhook dispatcher stopped", "err", err)
		}
	}()
	if !realClock {
		return
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				_ = a.runJobs(ctx, a.clock.Now())
			}
		}
	}()
}
