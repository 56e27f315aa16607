// Package bank wires every corebank service over one store the way the
// bundled server does: the ledger, entities, funding, payments, acquiring, cards, capital and webhooks,
// one due-work queue running all their jobs in a fixed order, the store's
// migrations, and the REST API as an http.Handler. examples/server is flags
// around New; corebanktest is New over memory with a mock clock.
//
// It is a package of its own because the root package cannot import the
// services that import it, and httpapi is the HTTP layer only: a program
// that embeds the services without serving HTTP uses the Bank's fields and
// never mounts Handler. A new domain adds itself here once: its service in
// New, its due jobs in the order, its migrations, its httpapi.Services field.
//
//	db := memory.New()
//	b, err := bank.New(db, bank.Options{SecretKey: key, Clock: mock})
//	...
//	err = b.Migrate(ctx)            // once per opened store
//	root, created, err := b.Entities.Bootstrap(ctx)
//	go b.Run(ctx)                    // webhook dispatcher and, on a real clock, due work
//	http.ListenAndServe(addr, b.Handler)
package bank

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/acquiring"
	"github.com/corebank/corebank/capital"
	"github.com/corebank/corebank/cards"
	"github.com/corebank/corebank/entities"
	"github.com/corebank/corebank/funding"
	"github.com/corebank/corebank/httpapi"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/payments"
	"github.com/corebank/corebank/service"
	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/webhooks"
)

// The webhooks' fan-out reads an event's ancestors from the entities' gate
// records (entities.Gate.AncestorsTx).
var _ webhooks.Ancestry = entities.Gate{}

// DefaultDueWorkers is Options.DueWorkers' default. On PostgreSQL a node
// runs its transactions at once, and a claim of 16 book transfers costs
// about 16 round trips per transfer: through a 1 ms round trip, with 64
// clients sending transfers, 8 claims in flight settled 102 transfers/s
// where 2 settled 69/s (bank's in-process load on this project's 2-core
// machine).
const DefaultDueWorkers = 8

// Environments accepted by Options.Env.
const (
	EnvSandbox    = httpapi.EnvSandbox
	EnvProduction = httpapi.EnvProduction
)

// Options configures New. SecretKey is required; every other zero field
// takes the documented default.
type Options struct {
	// SecretKey is the 32-byte key everything secret at rest is sealed
	// under (API keys' private keys, webhook secrets, idempotent replays);
	// list cursors are signed with a key derived from it, so they survive
	// restarts. Keep it outside the store: a lost key makes every sealed
	// secret unreadable.
	SecretKey []byte
	// Clock is the only time source (default the real clock). A
	// *clock.Mock makes a sandbox whose time moves only when the test or
	// POST /sandbox/clock/advance moves it; Run then leaves due work to
	// RunDue. The route stores the time it moves to, and every bank over
	// the store brings its mock up to it before each request and every
	// DueInterval in Run (storage.SharedClock).
	Clock clock.Clock
	// Env is EnvSandbox (default) or EnvProduction: the /sandbox/* routes
	// exist only in the sandbox, and API keys say which they belong to.
	Env string
	// Logger receives the services' logs (default slog.Default()).
	Logger *slog.Logger
	// IDs makes every object ID (default ULIDs from crypto/rand).
	IDs *corebank.IDs
	// DueInterval is how often Run runs due work on a real clock (default
	// a second).
	DueInterval time.Duration
	// NodeID names this bank among the nodes sharing its store (several
	// processes, or several embedding programs, on one database): its due
	// runners write it into the leases they take on due work that waits
	// on the outside world (payout checks, webhook attempts). Default a
	// random one (storage.NewNodeID), logged by New; set it only to
	// something unique per running bank. A bank restarted with the NodeID
	// it had takes the work it had leased back on its first due run,
	// instead of waiting for the leases to end (examples/server derives a
	// stable one from the machine and -addr).
	NodeID string
	// Instance names this bank across restarts (examples/server derives it
	// from the machine and the listening address): a bank takes back at
	// once the due work leased by a bank of the same Instance under
	// another NodeID, its predecessor that died, instead of waiting for
	// the leases to end. Banks running at once must not share one. Empty,
	// the default, is none.
	Instance string
	// LeaseDuration is how long a node keeps the due work it took before
	// another node may take it over (default storage.DefaultDueLease,
	// 30 s). It must outlast the slowest payout check or webhook attempt
	// (two webhooks.AttemptTimeout).
	LeaseDuration time.Duration
	// LeaseClock measures leases (default the real clock, whatever Clock
	// is: a lease is about a node's liveness, so a sandbox's fake clock
	// jumping ahead takes no work from a live node).
	LeaseClock clock.Clock
	// DueWorkers is how many claims of due work that waits on the outside
	// world this bank's due runner works on at once (default
	// DefaultDueWorkers): payout checks, and book transfers' settlement,
	// go DueWorkers claims of 16 at a time, each applied in one
	// transaction, so that settlement keeps pace with a store whose every
	// transaction costs a round trip. Webhook attempts have their own bound
	// (Webhooks.Concurrency) and go one claim at a time. 1 makes due work
	// sequential, for replays that need it.
	DueWorkers int
	// OnCommit, when set, is called after every commit of the services'
	// writes (not the webhook dispatcher's own), beside waking the
	// dispatcher: a host that runs a bank's background work without Run
	// (bank/workspace, which keeps no goroutine for an idle workspace)
	// learns from it that work may have fallen due. It must not block.
	OnCommit func()

	// The services' own knobs. New sets the fields that wire the services
	// together and those above (every service's Deps: Clock, IDs, Logger
	// and the entities' tree; Env, Gate, Receiver, the HTTP layer's
	// FakeClock, RunJobs, CursorKey and Sealer);
	// the rest are used as given (payments fees, rate and payout
	// providers, webhook retries, retention and CAs, the RSA key generator
	// of API keys, the idempotency TTL, the request log and the metrics
	// callbacks HTTP.LogRequests, HTTP.OnRequest and Webhooks.OnAttempt,
	// ...). The other two metrics hooks wrap what New is given or returns:
	// storage.WithUpdateHook around db, and Bank.Due.OnLag before Run
	// (examples/server wires all four to Prometheus).
	Ledger   ledger.Options
	Entities entities.Options
	Funding  funding.Options
	// FundingSessions are the funding sessions' rail providers (nil: the
	// sandbox ones), expiries, settle delay and crypto tolerance.
	FundingSessions funding.SessionOptions
	Payments        payments.Options
	// Acquiring are the payment intents' fee schedule (keyed by
	// payment_type: card-acq, walletpay-acq), the 3DS challenge page's
	// base URL, the challenge's time limit and the sandbox acquirer's
	// refund delay.
	Acquiring acquiring.Options
	// Cards are the issued cards' BIN and creation limit (-card-create-limit).
	Cards cards.Options
	// Capital are the capital products' reservation, recovery and
	// settlement delays (and a test's failure hook).
	Capital  capital.Options
	Webhooks webhooks.Options
	HTTP     httpapi.Options
}

// Bank is every service wired over one store.
type Bank struct {
	// DB is the store the services write through: the one given to New,
	// wrapped so that every commit wakes the webhook dispatcher.
	DB    storage.Backend
	Clock clock.Clock
	// Node is the node ID (Options.NodeID) this bank's due work leases
	// under.
	Node     string
	Ledger   *ledger.Service
	Entities *entities.Service
	Funding  *funding.Service
	// FundingSessions runs funding sessions over Funding's inflows.
	FundingSessions *funding.SessionService
	Payments        *payments.Service
	// Acquiring runs payment intents and intent actions.
	Acquiring *acquiring.Service
	// Cards issues virtual and disposable cards.
	Cards *cards.Service
	// Capital sells fixed-return deposits and share offerings.
	Capital  *capital.Service
	Webhooks *webhooks.Service
	// Due runs every service's due work on one queue; RunDue runs it.
	Due *storage.Due
	// Handler is the REST API (httpapi.New over the services).
	Handler http.Handler

	log   *slog.Logger
	tick  time.Duration
	clock *storage.SharedClock // a sandbox's fake clock, kept in the store; nil on a real clock
}

// New wires the services over db. It writes nothing: call Migrate before
// serving a store that an earlier release may have written, and
// Entities.Bootstrap to create the root entity of a new one. Errors: a
// SecretKey that is not 32 bytes, an unknown Env.
func New(db storage.Backend, o Options) (*Bank, error) {
	if len(o.SecretKey) != 32 {
		return nil, errors.New("bank: Options.SecretKey must be 32 bytes")
	}
	switch o.Env {
	case "":
		o.Env = EnvSandbox
	case EnvSandbox, EnvProduction:
	default:
		return nil, errors.New("bank: Options.Env must be sandbox or production, not " + o.Env)
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	// One set of dependencies for every service, defaulted once; the
	// entities' Gate is the tree of them all (it is what *entities.Service
	// answers with, and needs no service, so the ledger can have it before
	// the entities service exists).
	deps := service.Deps{Clock: o.Clock, IDs: o.IDs, Tree: entities.Gate{}, Logger: o.Logger}.WithDefaults(nil)
	o.Clock = deps.Clock
	for _, d := range []*service.Deps{&o.Ledger.Deps, &o.Entities.Deps, &o.Funding.Deps, &o.Payments.Deps,
		&o.Acquiring.Deps, &o.Cards.Deps, &o.Capital.Deps, &o.Webhooks.Deps} {
		*d = deps
	}
	sealer, err := sealerFor(o.SecretKey, "corebank sealer")
	if err != nil {
		return nil, err
	}
	// Idempotency records get a key of their own: a sealed value of one use
	// never opens as the other's.
	idemSealer, err := sealerFor(o.SecretKey, "httpapi idempotency")
	if err != nil {
		return nil, err
	}
	// Card numbers and CVVs are sealed under a key of their own, and
	// indexed (for uniqueness) by an HMAC under another.
	cardSealer, err := sealerFor(o.SecretKey, "cards numbers")
	if err != nil {
		return nil, err
	}
	cardIndexKey, err := corebank.DeriveKey(o.SecretKey, "cards number index")
	if err != nil {
		return nil, err
	}
	cursorKey, err := corebank.DeriveKey(o.SecretKey, "httpapi cursors")
	if err != nil {
		return nil, err
	}

	if o.DueInterval <= 0 {
		o.DueInterval = time.Second
	}
	if o.NodeID == "" {
		o.NodeID = storage.NewNodeID()
	}
	if o.LeaseDuration <= 0 {
		o.LeaseDuration = storage.DefaultDueLease
	}
	if o.LeaseClock == nil {
		o.LeaseClock = clock.New()
	}
	if o.DueWorkers <= 0 {
		o.DueWorkers = DefaultDueWorkers
	}
	o.Logger.Info("bank node", "node", o.NodeID, "lease", o.LeaseDuration, "due_workers", o.DueWorkers)
	b := &Bank{Clock: o.Clock, Node: o.NodeID, log: o.Logger, tick: o.DueInterval}
	// The dispatcher reads the outbox right after every commit: every
	// service writes through the hooked store, and the dispatcher's own
	// writes use the raw one so that they do not wake it again.
	b.DB = storage.WithCommitHook(db, func() {
		b.Webhooks.Wake()
		if o.OnCommit != nil {
			o.OnCommit()
		}
	})

	o.Ledger.Gate = entities.Gate{}
	b.Ledger = ledger.NewService(b.DB, &o.Ledger)

	o.Entities.Env = o.Env
	b.Entities = entities.NewService(b.DB, b.Ledger, sealer, &o.Entities)

	b.Funding = funding.NewService(b.DB, b.Ledger, &o.Funding)
	b.FundingSessions = funding.NewSessionService(b.Funding, &o.FundingSessions)

	o.Payments.Receiver = b.Funding // a book transfer's receiving leg is an inflow like any other
	b.Payments = payments.NewService(b.DB, b.Ledger, &o.Payments)

	o.Acquiring.Keys = b.Entities // card data is decrypted with the calling API key's private key
	b.Acquiring = acquiring.NewService(b.DB, b.Ledger, &o.Acquiring)

	o.Cards.NumberKey = cardIndexKey
	b.Cards = cards.NewService(b.DB, b.Ledger, cardSealer, &o.Cards)

	o.Capital.Directory = entities.Gate{}
	b.Capital = capital.NewService(b.DB, b.Ledger, &o.Capital)

	o.Webhooks.Env = o.Env
	o.Webhooks.Node, o.Webhooks.Lease, o.Webhooks.LeaseClock = o.NodeID, o.LeaseDuration, o.LeaseClock
	b.Webhooks = webhooks.NewService(db, webhooks.LedgerOutbox(b.Ledger), sealer, &o.Webhooks)

	// All due work on one queue, in this order at any instant: money first
	// (hold timeouts and account details expiry, inflow settlement,
	// funding sessions' payer answers, settlement and expiry, quote
	// expiry, payout progress, unanswered 3DS challenges, the sandbox acquirer's
	// answers to refunds, card authorizations, then capital: confirmation
	// recovery, reservation expiry, accrual, maturity, settlement, refunds
	// and lock ends), then the webhooks, so the events those
	// changes appended go out in the same run, then idempotency expiry.
	b.Due = storage.NewDue(b.DB, o.Clock, 0).Lease(o.NodeID, o.LeaseDuration).LeaseClock(o.LeaseClock).Workers(o.DueWorkers).Instance(o.Instance)
	b.Due.Add(b.Ledger.DueJobs()...)
	b.Due.Add(b.Funding.DueJobs()...)
	b.Due.Add(b.FundingSessions.DueJobs()...)
	b.Due.Add(b.Payments.DueJobs()...)
	b.Due.Add(b.Acquiring.DueJobs()...)
	b.Due.Add(b.Cards.DueJobs()...)
	b.Due.Add(b.Capital.DueJobs()...)
	// A webhook claim's attempts wait for the service's own slots
	// (Webhooks.Concurrency), and its lease allows for one claim's wait
	// (webhooks.Options.Lease): one claim at a time.
	hooks := b.Webhooks.DueJobs()
	for i := range hooks {
		if hooks[i].Batch != nil && hooks[i].Workers == 0 {
			hooks[i].Workers = 1
		}
	}
	b.Due.Add(hooks...)
	b.Due.Add(httpapi.DueJobs()...)

	ho := o.HTTP
	ho.Env, ho.Clock, ho.Logger, ho.CursorKey, ho.Sealer = o.Env, o.Clock, o.Logger, cursorKey, idemSealer
	ho.FakeClock, _ = o.Clock.(*clock.Mock)
	if o.Env != EnvSandbox {
		ho.FakeClock = nil
	}
	if ho.FakeClock != nil {
		// The fake time lives in the store, so that an advance on one node
		// moves every node's clock (see syncClock).
		b.clock = storage.NewSharedClock(b.DB, ho.FakeClock)
		ho.AdvanceClock = b.clock.Advance
	}
	ho.RunJobs = func(ctx context.Context, now time.Time) error {
		_, err := b.RunDue(ctx, now)
		return err
	}
	b.Handler = httpapi.New(httpapi.Services{
		DB:              b.DB,
		Ledger:          b.Ledger,
		Entities:        b.Entities,
		Funding:         b.Funding,
		FundingSessions: b.FundingSessions,
		Payments:        b.Payments,
		Webhooks:        b.Webhooks,
		Acquiring:       b.Acquiring,
		Cards:           b.Cards,
		Capital:         b.Capital,
	}, &ho)
	if b.clock != nil {
		b.Handler = b.syncClock(b.Handler)
	}
	return b, nil
}

// syncClock brings a sandbox's fake clock up to the time stored by the
// last advance on any node before each request. Now stays a read of the
// node's own clock; what a node can see late is an advance that commits
// while one of its requests runs (that request keeps the earlier time, as
// it would beside an advance on one node) or, between requests, until
// Run's next sync (every DueInterval): background work on a node then
// runs at an earlier time than another's, which only delays what falls
// due. A node's clock never moves back.
func (b *Bank) syncClock(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := b.clock.Sync(r.Context()); err != nil {
			b.log.Warn("sandbox clock: reading the stored time", "err", err)
		}
		next.ServeHTTP(w, r)
	})
}

// Migrate brings a store written by an earlier release up to date, once:
// each service's migrations, in the order the services are built. It
// returns how many ran (on a new store each is recorded with nothing to
// move).
func (b *Bank) Migrate(ctx context.Context) (int, error) {
	var ms []storage.Migration
	ms = append(ms, b.Ledger.Migrations()...)
	ms = append(ms, b.Funding.Migrations()...)
	ms = append(ms, b.Payments.Migrations()...)
	ms = append(ms, b.Acquiring.Migrations()...)
	ms = append(ms, b.Cards.Migrations()...)
	ms = append(ms, b.Capital.Migrations()...)
	ms = append(ms, b.Webhooks.Migrations()...)
	ms = append(ms, httpapi.Migrations()...)
	return storage.Migrate(ctx, b.DB, ms...)
}

// RunDue runs every job due at or before now, every kind in the fixed
// order, and returns how many items it ran. A failing kind does not stop
// the others; its items stay queued for the next run, and the error is
// logged and returned.
func (b *Bank) RunDue(ctx context.Context, now time.Time) (int, error) {
	n, err := b.Due.RunDue(ctx, now)
	if err != nil {
		b.log.Error("due work failed", "err", err)
	}
	return n, err
}

// Run runs what works beside the requests until ctx is done: the webhook
// dispatcher, which sends first attempts right after each commit whatever
// the clock says and runs the webhooks' due work, and on a real clock the
// rest of the due work every Options.DueInterval, in two lanes (settlement
// and the books' housekeeping) that do not wait for each other. On a mock
// clock due work runs only through RunDue (POST /sandbox/clock/advance
// calls it), and in the sandbox Run brings the clock up to the time
// another node's advance stored every DueInterval. Run returns nil when
// ctx is done.
func (b *Bank) Run(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := b.Webhooks.Run(ctx); err != nil && ctx.Err() == nil {
			b.log.Error("webhook dispatcher stopped", "err", err)
		}
	}()
	defer func() { <-done }()
	_, mock := b.Clock.(*clock.Mock)
	if mock && b.clock == nil {
		<-ctx.Done()
		return nil
	}
	if mock {
		// On a fake clock, whose due work runs through RunDue, each tick
		// brings the clock up to another node's advance, so that this
		// node's background work (webhook retries) sees it without
		// waiting for a request here.
		every(ctx, b.tick, func() bool { _, _ = b.clock.Sync(ctx); return false })
		return nil
	}
	// On a real clock the due work runs in two lanes, each on its own
	// ticker: the jobs that settle and wait on the outside world (Batch
	// jobs), and the transactions that keep the books (Tx jobs: expiries,
	// the ledger's folds), so that a fold of a busy second's changes does
	// not hold settlement back. The webhooks' kinds are the dispatcher's,
	// which runs them after every commit.
	hooks := map[string]bool{}
	for _, j := range b.Webhooks.DueJobs() {
		hooks[j.Kind] = true
	}
	lane := func(batch bool) func() bool {
		keep := func(j storage.DueJob) bool { return !hooks[j.Kind] && (j.Batch != nil) == batch }
		return func() bool {
			n, err := b.Due.RunDueWhere(ctx, b.Clock.Now(), keep)
			if err != nil {
				b.log.Error("due work failed", "err", err)
			}
			return n > 0 && err == nil
		}
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); every(ctx, b.tick, lane(true)) }()
	every(ctx, b.tick, lane(false))
	wg.Wait()
	return nil
}

// every calls run on each tick of interval until ctx is done, and again
// at once while it reports work found (up to rerunsAtOnce times): what
// fell due while it ran, under load much, does not wait a whole interval.
func every(ctx context.Context, interval time.Duration, run func() bool) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			for range rerunsAtOnce {
				if !run() || ctx.Err() != nil {
					break
				}
			}
		}
	}
}

// rerunsAtOnce bounds how many due runs follow each other without waiting
// for the next tick: a job that finds work due again at once on every run
// cannot keep a node's due work from resting.
const rerunsAtOnce = 10

func sealerFor(secret []byte, purpose string) (*corebank.Sealer, error) {
	k, err := corebank.DeriveKey(secret, purpose)
	if err != nil {
		return nil, err
	}
	return corebank.NewSealer(k)
}
