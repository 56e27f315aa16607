// Package postgres is the storage.Backend for several corebank nodes on one
// PostgreSQL database, on github.com/jackc/pgx/v5 and its pool. It passes
// storagetest.Run.
//
//	db, err := postgres.Open(ctx, "postgres://corebank@db.internal/corebank", nil)
//	if err != nil {
//		return err
//	}
//	defer db.Close()
//
// # Layout
//
// A store is one table (Options.Table, "corebank_kv" by default) of
// (bucket text, key bytea, value bytea) with the primary key (bucket, key),
// so the primary key's B-tree is the ordered key-value store: bytea compares
// as bytes, which is the order storage.Tx.Scan promises. Open creates the
// table and a one-row table of its schema version (Table+"_schema") and
// migrates an older one, under an advisory lock so that nodes starting
// together do it once; a table of a newer release is refused
// (ErrNewerSchema).
//
// # Transactions
//
// Update runs its function in a READ COMMITTED transaction under strict
// two-phase locking (locks.go), so that concurrent Updates on any number of
// nodes behave as if run one at a time in the order they commit, and only
// Updates that share a key wait for each other. Every read and write takes
// a PostgreSQL advisory lock, held until the transaction ends:
//
//   - A Get locks its key (present or absent), shared, in the statement
//     before the read and in its round trip. At READ COMMITTED each
//     statement reads a snapshot taken when it starts, so the read sees the
//     last commit of every writer of the key, and PostgreSQL makes a commit
//     visible before it releases the commit's locks.
//   - A Scan locks its prefix exclusively. Writers lock every prefix of
//     their keys whose length some Scan of the bucket used (the lengths
//     are registered in the table Table+"_scans" before such a Scan
//     reads, under a lock every commit holds while it reads them), shared:
//     a scan keeps out every insert, update and delete in its range,
//     including of keys that were absent, while writers under one prefix do
//     not wait for each other.
//   - Each bucket has a lock that every Get, Scan and commit in the bucket
//     takes shared, and a Scan of the whole bucket exclusively; a
//     transaction that locks more than 256 keys of a bucket takes it
//     exclusively instead of more key locks, so that large transactions
//     (migrations, the ledger's folds) do not fill PostgreSQL's lock table.
//   - The commit locks the keys it writes exclusively, in one round trip
//     with the writes and the COMMIT, in lock order, so that two commits
//     writing some of the same keys wait rather than deadlock.
//
// This keeps the seam's promise (storage/doc.go) for every caller, without
// any caller naming what it depends on: every read goes through Get or
// Scan, and so is locked; a lock is held from before the read to the end
// of the transaction, and a writer's exclusive lock conflicts with every
// shared lock on what it changes (the key, every registered prefix of it,
// its bucket); so two transactions that conflict are ordered by a lock,
// with no cycle among them (two-phase locking), and their order is their
// commit order. A View (REPEATABLE READ, READ ONLY: one snapshot, which
// takes no lock and is never aborted) sees the commits before its
// snapshot, which is a prefix of that order. The values a transaction
// keeps (a key read once is not read again) stay true while it holds their
// locks; a function of a group rolled back to its savepoint loses the
// locks it took, and the group forgets what they guarded. One weaker read
// is there on request: a Scan marked storage.ScanOptions.Queue (due work,
// the outbox's unread events, the ledger's pending changes) locks only the
// rows it returns, FOR SHARE, and lets other transactions insert into its
// range meanwhile: its reader may miss a key inserted while it runs, and
// the next scan finds it.
//
// SERIALIZABLE, which this package used before, keeps the same promise
// with no locks of its own, but PostgreSQL's serializable transactions
// lock the B-tree pages their reads visit, present keys and absent ones
// alike, and an insert into such a page by another transaction counts as
// a conflict: on one table, where the keys of a bucket sit side by side,
// unrelated transfers met on some page and aborted each other, so that a
// node ran best one transaction at a time (measured on this project's
// 2-core machine: 278 transfers/s, and 122/s with 1.3 retries per transfer
// at 15 at once), and a 1 ms round trip to the database cut that tenfold.
//
// Two transactions that each hold a lock the other waits for deadlock;
// PostgreSQL detects it after deadlock_timeout (1 s by default; lower it
// for corebank's database, ALTER DATABASE ... SET deadlock_timeout =
// '100ms') and aborts one with SQLSTATE 40P01, and Update runs the
// functions again in a new transaction, after a jittered backoff that
// doubles from half a millisecond up to 50 ms, at most Options.Retries
// times (30 by default). This is the seam's rerun rule (storage/doc.go):
// only the run that commits counts. The commonest deadlock, two
// transactions reading one key shared and then each wanting it
// exclusively to write it, is avoided: a run that lost a deadlock locks
// what it wrote exclusively at its first read when it runs again, and a
// DB learns, per bucket, how often Updates write the keys they read, and
// locks the keys of a bucket where they mostly do exclusively at once
// (balances, idempotency records).
//
// All the nodes on a table must run a release of the same schema version:
// a node of version 1 (serializable, no locks) would not take the locks
// the others rely on. Open refuses a newer table, and migrates an older
// one.
//
// Every statement is planned for its arguments when it runs
// (plan_cache_mode force_custom_plan on the pool's connections): plans
// kept from when the table was small made reads a hundred times slower
// once a load had grown it, until an ANALYZE (postgres.go, Open).
//
// # Concurrency
//
// A DB runs up to Options.Leaders (by default half of Options.PoolSize) Update
// transactions at once, each on its own connection, and so does every
// node: only Updates that share a key wait for each other. The number
// running moves as TCP's congestion window does, up by one at each
// commit, down by one at a deadlock while they are few, by half when they
// are many (commit.go, adapt). Updates beyond that wait in arrival
// order, except those whose context has storage.WithPriority (the due
// runner's: settlement), which go first, so that under load the backlog
// of accepted work does not grow for as long as the load lasts.
// Concurrent Updates may also share
// transactions (Options.Group, 1 by default): a leader takes up to Group
// queued Updates and hands one transaction to each caller in turn, so
// every function still runs on its own goroutine, sees the writes of those
// before it, and the group commits once. Each function of a group runs
// after a savepoint, sent with its first statement in the same round
// trip; one that returns an error, panics or calls runtime.Goexit is
// rolled back to it alone, and its outcome stands once the transaction
// commits. A deadlock anywhere re-runs the whole group. A group holds
// every lock of its functions until it commits, so on PostgreSQL groups
// make unrelated Updates wait for each other: they pay only where round
// trips are scarce and conflicts are none.
//
// A transaction's BEGIN (and its group's lock, see "Several nodes") goes
// to the server with its first statement, in the same round trip, and so
// do the locks of each read, before it. Puts and Deletes are buffered in
// the transaction and sent with their locks and the COMMIT in one round
// trip (every Put in one INSERT ... SELECT FROM unnest(...) ON CONFLICT DO
// UPDATE, every Delete in one DELETE joined with the keys), so a
// transaction costs its reads' round trips and one more (a View's alone:
// its ROLLBACK goes out after View returns, and its connection back to the
// pool once that is done); reads see the
// buffer, so a function reads its own writes and those of the functions
// before it in its group. A Get not answered by the buffer is one
// statement, and the value is kept for the transaction: its functions
// hold the key's lock, so a key is read from the table once per
// transaction. storage.Prefetch reads many keys so, locks included, in
// one round trip (the keys in order), and the first batches of many
// prefix Scans in another, for callers that know what they will read: a
// transfer's acceptance and a claim's settlement read in two or three
// round trips what took eight to twelve, or one per transfer. The locks a round
// trip takes go in one statement, whatever their number. A Scan is a keyset range query on the primary key, WHERE
// bucket = $1 AND key > $2 [AND key < $3] ORDER BY key [DESC] LIMIT n,
// with a prefix turned into the range [prefix, storage.PrefixEnd(prefix))
// rather than a LIKE: an index seek, so a page costs the same at row ten
// and at row ten million. A scan without a limit reads batches of 32 rows
// doubling up to 1024, each resuming after the last key of the one
// before, and a scan with one reads no more than it needs (its limit, plus
// one row for each buffered delete in the bucket, which may hide one);
// each batch is merged with the buffered writes in its part of the range,
// and read whole before the callback sees it, so the callback may write
// through the same transaction, and the next batch sees what it wrote.
// Batches are kept for the transaction like Gets' values: a later batch
// with the same bounds (the newest entry of a log, an index range found
// empty) is answered from the kept one when that holds as many rows or
// ended the range.
//
// # Several nodes
//
// Nodes on one table run their transactions at once, and lock each
// other's keys as they lock their own. Every Update transaction also
// takes a lock on the schema-version table first, before its first read,
// in the round trip of its first statement: ROW SHARE, which transactions
// share; EXCLUSIVE for one lost three times in a row to deadlocks, so that
// a long transaction that loses to short ones is not starved until its
// retries run out, and for every transaction of a DB that is down to one
// at a time and whose recent transactions mostly failed, so that the
// nodes then take turns rather than abort each other. Views never wait
// for it.
//
// # When the database goes away
//
// A View or Update that cannot reach the database (refused or timed-out
// connections, 5 s unless the DSN sets connect_timeout; SQLSTATE class 08;
// 57P01-57P03 while it shuts down, crashes or starts; a connection that
// broke), or whose statement the database gave up on (57014 at
// Options.StatementTimeout, 55P03 at a lock_timeout, class 53 when it runs
// out of memory, disk or connections; the transaction rolled back) returns
// an error wrapping storage.ErrUnavailable, and an Update
// whose connection broke after its COMMIT was sent wraps
// storage.ErrOutcomeUnknown too: it may have committed. Any other error of
// the database's stays as it is. Nothing gives up for good: a broken
// connection is dropped when released, and the pool opens new ones once
// the database accepts them.
//
// # Tuning
//
// Options.PoolSize bounds the connections (each running View or Update
// holds one; 20 by default), and Options.StatementTimeout sets the
// server's statement_timeout for them. A node's transactions hold a few
// dozen advisory locks each (its keys, their registered prefixes, its
// buckets), from PostgreSQL's lock table of max_locks_per_transaction (64)
// times max_connections entries. Tests get a throwaway cluster from
// package pgtest.
//
// The nodes' Leaders together bound how many Update transactions run at
// once, and with them how long a settlement waits: a share of due work
// locks the accounts of its transfers, and waits for every transaction in
// flight on one of them. Within a node, Updates beyond its Leaders queue,
// and due work goes first in that queue (storage.WithPriority); in the
// database no such order holds, so a node that sends every Update at once
// leaves settlement to compete with acceptance for the database's CPU and
// locks. Hence Leaders defaults to half the pool. Measured with bank
// TestPostgresLoad (64 clients each sending transfers between its own two
// accounts, 10 s, 20 connections a node; seven runs each on one node,
// four on four nodes, two on two), Leaders 20 against 10:
//
//	                            settled ÷ acknowledged   pending at the end
//	1 node, direct              0.88-0.96 / 0.99-1.00    315-1754 / 22-63
//	2 nodes, 1 ms round trip    0.95-0.97 / 0.97-0.98    123-291 / 24-56
//	4 nodes, 1 ms round trip    0.84-0.88 / 0.95-0.97    767-1197 / 199-353
//
// Settlement's pace is acceptance's now, where it trailed. Over seven
// interleaved pairs of runs of one node direct, settled/s stayed within
// the noise (a mean of 404 against 394), and acknowledged/s fell from a
// mean of 438 to 397: with 20, the node acknowledged more by leaving
// settlement for after the load. With 4 nodes through the 1 ms round
// trip, acknowledged/s stayed the same and settled/s rose. Fewer still
// cost acceptance: at 6 a node, one node through the
// 1 ms round trip acknowledged a quarter fewer; at 5 a node, four nodes
// 17% fewer (an earlier measurement, when every connection could run an
// Update). A database with many cores, or further away, may want more:
// raise PoolSize, or set Leaders.
package postgres
