// Package storage is the seam between corebank's services and the bytes on
// disk: an ordered key-value Backend with serializable read-write
// transactions and snapshot reads, shaped after bbolt so that it maps onto
// bbolt, an in-memory tree, or SQL.
//
// # Backends
//
// storage/bolt stores on a bbolt file; storage/memory keeps everything in
// process for tests and sandboxes. Both pass storage/storagetest.Run, the one
// conformance suite. A backend's Scan finds its first key with
// ScanOptions.Start, so every backend reads Prefix and After alike. A
// backend that cannot reach its store (a database server that is down)
// returns errors wrapping ErrUnavailable, which callers answer as "retry
// later" rather than as a failure of the request.
//
// # Keys
//
// Every list is a prefix scan over keys, and secondary indexes are keys too
// ("by-entity/<entity>/<id>"), so a page resumes from a cursor with one seek
// and costs the same at item ten and at item ten million. Key and Prefix join
// string parts; AppendUint64 makes numeric parts sort numerically.
//
// # Transactions
//
// The rule: a function passed to Backend.Update may run more than once (the
// bolt backend re-runs a group commit's functions when one fails; the
// PostgreSQL backend re-runs transactions that deadlock), and only the last run
// commits. So it reads and writes only through its Tx, has no effect outside
// it, and returns its results instead of assigning them to variables
// declared outside: use the generic Update and View, which hand back what
// the committed run returned, so no caller resets anything by hand. Never
// start an Update inside a View on the same goroutine: bbolt deadlocks.
//
// Under a context from WithJournal (httpapi gives one to every request with
// an Idempotency-Key) each Update is a numbered step whose result is
// recorded in the transaction that commits it, and a retry of the request
// gets the recorded result instead of running the step again. So a service
// returns from its transaction what its caller answers, built inside the
// function (an ID or secret made before the transaction goes into the
// result there, not after), in a type that reads back from JSON as itself;
// and it writes only through the generic Update (Unjournaled finds a
// direct Backend.Update under a journal).
//
// # The toolkit every domain shares
//
//   - Lists: CheckList checks a page's limit and cursors; ReadPage reads one
//     page of an index (keys Prefix+position) in either direction, with
//     bounds, a filter and a cap on keys examined. httpapi signs the
//     positions into opaque cursors.
//   - Due work: a service schedules (kind, time, id) with Schedule in the
//     transaction that makes work due, and exposes its DueJobs; one Due runs
//     every registered kind in registration order with RunDue(ctx, asOf).
//     Several nodes over one store share the queue: a Tx job's transaction
//     is its claim, and a Batch job's items are leased in the store
//     (BucketDueLease) and settled under CheckLease ("Several nodes" on
//     Due); a runner may work on several claims of a Batch kind at once
//     (Workers).
//   - Sandbox time: SharedClock keeps a fake clock's time in the store, so
//     that an advance on one node moves every node's clock.
//   - Records: JSON through LoadJSON and PutJSON; the few records a benchmark
//     shows to be hot use the binary Encoder and Decoder, read without a
//     copy through Peek where the backend implements Peeker.
//   - Upgrades: each service lists its one-time data changes as Migrations;
//     Migrate runs each once, whole, when a store is opened.
//   - Integrity: each domain's VerifyStore reports to a Verifier what
//     breaks its rules, as Findings; VerifyIndexed checks an index against
//     its records both ways (the keys expected are what the domain's own
//     write puts, recorded by Writes), and VerifyDue the due queue against
//     the objects it names. bank/verify runs them all in one View.
//   - Whole stores: Buckets lists the buckets holding keys (every backend's
//     Tx implements BucketLister), so a View can read everything in one
//     snapshot: storage/snapshot writes backups so and reads them back.
package storage
