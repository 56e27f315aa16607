// Package sim is a whole-bank simulator: driven by a seed, it builds a
// bank (bank.New over memory, over bolt on a file system that models power
// loss, or as two banks over one PostgreSQL database), gives it a mock
// clock and in-process webhook receivers, and runs a long random history
// through the REST API that mixes every domain, with faults, checking every
// invariant after every step. It is how corebank looks for the bugs nobody
// thought to write a test for, in the manner of TigerBeetle's VOPR and
// FoundationDB's simulation.
//
// # A history
//
// A run is Config.Steps steps. Each step draws one Op by weight (ops
// register themselves from the files of their domain: ops_core.go for
// entities, accounts and inflows, ops_payments.go, ops_funding.go,
// ops_acquiring.go, ops_cards.go, ops_capital.go, ops_webhooks.go), moves the
// clock up to 3 s, runs the op's requests, then the due work on one of the
// banks, then every check. Requests go through the whole HTTP stack in
// process (Sim.Do): about a third of POSTs carry an Idempotency-Key, and
// answered keyed requests are sent again, right away or many steps later,
// and must answer the same bytes, marked replayed. A "concurrent" step
// runs several ops at once on goroutines.
//
// # Faults
//
//   - Crashes: the process dies inside one of the next few storage
//     Updates, before or after it commits (on bolt, with the power cut in
//     the middle of its log writes, and the unsynced writes lost or torn
//     as storage/bolt's PowerFS does), or between two requests, or between
//     the two transactions of a capital confirmation. The simulator drops
//     the banks, reopens the store, builds new banks, checks that every
//     object acknowledged since the last crash is still there, and sends
//     the request that was in flight again if it had an Idempotency-Key.
//   - Clock jumps, from seconds to three months, directly or through
//     POST /sandbox/clock/advance.
//   - Webhook receivers that answer 500, time out, or answer while the
//     answer is lost (so the bank sends again), and recover.
//   - Providers that are down: FX (POST /sandbox/fx/outage, 503 allowed)
//     and payouts (checks fail and must simply be retried).
//
// # Invariants
//
// After every step: the ledger's own audit (ledger.Check: every journal
// entry balances, every currency sums to zero over all accounts, system
// accounts included, so the money held equals the money brought in minus
// the money sent out through the clearing accounts; no available balance
// below zero without an overdraft; each account's pending amounts equal
// its open holds; each account's history, which statements read, ends at
// its balance); every state change in the outbox is an edge of its
// object's machine (Machine, from SPEC.md); and each domain's own rules,
// fed by the outbox events (refunds within their charge, card limits,
// webhook deliveries until acknowledged and never after, and so on). No
// request may answer 5xx or panic.
//
// # Replay and shrinking
//
// A failure names the seed and the step. Every step draws its choices from
// a seed of its own derived from the run's, so
//
//	go test ./internal/sim -run '^TestSim$' -seed=N -steps=M
//
// replays the history, and Shrink cuts it to a short one that still fails
// (dropping runs of steps, each keeping its own choices), printed as a
// -keep list. A concurrent step's interleaving is the scheduler's: the
// requests replay, but their order, and so the IDs after them, may differ;
// -serial runs them one after another so that a seed replays exactly
// (TestReplay). Crashes, clock jumps and receivers are the simulator's
// own, so they replay too.
//
// # Running it
//
// TestSim (a few seeds of a few hundred steps), TestSimBolt, TestReplay and
// TestSimPostgres run in go test ./...; TestSimLong runs new seeds for
// -budget, which .ci/run sets. -only keeps some domains' ops; -steplog
// prints every step; COREBANK_SIM_VERBOSE=1 shows the bank's logs.
package sim
