// Package corebank is an embeddable banking core: entities, currency
// accounts on a double-entry ledger, bank and wallet coordinates, payouts,
// inflows, and signed webhooks, as Go services over one storage seam.
//
// # Embedding
//
// Open a storage backend, build the services you need over it, and call
// them in process. Mount httpapi.New on any net/http mux to serve the REST
// API described in the project's SPEC, or skip HTTP entirely:
//
//	db, err := bolt.Open("corebank.db", nil) // or memory.New() for tests
//	if err != nil { ... }
//	defer db.Close()
//	clk := clock.NewMock()                    // or clock.New() in production
//	led := ledger.NewService(db, &ledger.Options{Deps: service.Deps{Clock: clk}})
//	acct, err := led.CreateAccount(ctx, corebank.System(), ledger.NewAccount{...})
//
// # Callers and scope
//
// Every service method that acts for someone takes a Caller: the entity of
// the API key behind a request (As), or System() for trusted in-process
// work. The service decides scope itself, inside the transaction that reads
// the object, with one rule (internal/scope): a caller may act on its own
// entity, every entity below it, and the objects they own. An object outside
// that tree answers exactly as a missing one, with its resource's own
// not-found error; a request that names an entity_id outside the tree
// answers ErrEntityNotFound whether or not the object exists. Read-only
// callers get ErrForbidden from every method that changes something.
//
// # Money
//
// Amounts are int64 in the currency's smallest unit (cents for USD, 10^-6
// for stablecoins). Rates and interest use github.com/shopspring/decimal
// and round toward zero when they become smallest units. Every balance change
// is a balanced journal entry written in the same storage transaction as the
// state change that caused it and the outbox event that reports it.
//
// # Time
//
// Services read time only from an injected github.com/benbjohnson/clock
// Clock. Nothing happens in the background: expiries, hold timeouts, retries
// and accrual are due work on one queue (storage.Due). Each service
// schedules its items in the transaction that makes them due and exposes
// its DueJobs; an application registers them all on one storage.Due and
// calls its RunDue with the current instant, so a test advances a mock
// clock and then runs it, and a server runs it on a ticker. Each service's
// own RunDue runs just its jobs. (The bolt backend folds its write-ahead log into the bbolt
// file on a goroutine of its own: storage housekeeping that no clock drives
// and no result depends on.)
//
// # Errors
//
// Services return *Error values with a Kind (what the caller can do about
// it), a stable snake_case Code and, for validation, the offending fields by
// JSON path. Inspect them with errors.Is against a package's sentinels or
// errors.As to *Error; never by message text. Anything that is not an *Error
// is an internal failure.
package corebank
