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
// Update runs its function in a SERIALIZABLE transaction (shared with
// other Updates of the same DB, see Group commit), so concurrent Updates
// on any number of nodes behave as if run one at a time. When
// PostgreSQL cannot keep that promise for a transaction it aborts it with a
// serialization failure (SQLSTATE 40001) or a deadlock (40P01), and Update
// runs the functions again in a new transaction, after a jittered backoff
// that doubles from half a millisecond up to 50 ms, at most Options.Retries
// times (30 by default). This is the seam's rerun rule (storage/doc.go):
// only the run that commits counts. View runs in a REPEATABLE READ, READ
// ONLY transaction: one snapshot, which never blocks writers and is never
// aborted.
//
// # Group commit
//
// Concurrent Updates of one DB share transactions, as storage/bolt's share
// commits: an Update queues, and a leader takes up to Options.Group (16)
// queued Updates and hands one SERIALIZABLE transaction to each caller in
// turn, so every function still runs on its own goroutine, sees the writes
// of those before it, and the group commits once. Each function of a group
// runs after a savepoint, sent with its first statement in the same round
// trip; one that returns an error, panics or calls runtime.Goexit is rolled
// back to it alone, and its outcome stands once the transaction commits
// (it was decided on the state the commit makes real). A serialization
// failure anywhere re-runs the whole group. Isolation is unchanged: the
// group is one serializable transaction, its functions in queue order.
//
// One leader runs at a time by default (Options.Leaders), so a node's
// Updates never conflict with each other: on a key every Update writes (a
// hot account) separate transactions abort each other whole, over and
// over, where a group runs them one after another. Measured on this
// project's 2-core machine with PostgreSQL 15 (BenchmarkUpdate, and the
// ledger's TestConcurrentMovements with 16 writers over 12 accounts):
// grouped, 16 callers on one counter commit ~3,300-3,500 Updates/s with no
// retries, against ~1,150-1,600/s and 1.2-1.4 retries per Update each in
// its own transaction, where a bounded retry budget was also seen to run
// out; the ledger test makes 920-975 movements in 2 s grouped against
// 55-154. Updates on disjoint keys lose: ~2,500-3,200/s grouped against
// ~6,100-8,800/s for 16 separate transactions at once, which Options
// (Group 1, Leaders up to PoolSize) restores for such a load.
//
// A transaction's BEGIN (and a group's lock) goes to the server with its
// first statement, in the same round trip. Puts and Deletes are buffered
// in the transaction and sent with its COMMIT in one round trip (every
// Put in one INSERT ... SELECT FROM unnest(...) ON CONFLICT DO UPDATE), so
// a group costs its reads' round trips and one more; reads see the buffer, so a function reads its
// own writes and those of the functions before it in its group. A Get
// not answered by the buffer is one statement, and the value is kept for
// the transaction: its functions read one snapshot, so a key is read from
// the table once per group. A Scan is a keyset range query on the
// primary key, WHERE bucket = $1 AND key > $2 [AND key < $3] ORDER BY key
// [DESC] LIMIT n, with a prefix turned into the range [prefix,
// storage.PrefixEnd(prefix)) rather than a LIKE: an index seek, so a page
// costs the same at row ten and at row ten million. A scan without a
// limit reads batches of 32 rows doubling up to 1024, each resuming after
// the last key of the one before, and a scan with one reads no more than
// it needs (its limit, plus one row for each buffered delete in the
// bucket, which may hide one); each batch is merged with the buffered
// writes in its part of the range, and read whole before the callback
// sees it, so the callback may write through the same transaction, and
// the next batch sees what it wrote. Batches are kept for the
// transaction like Gets' values: a later batch with the same bounds (the
// newest entry of a log, an index range found empty) is answered from the
// kept one when that holds as many rows or ended the range.
//
// # Several nodes
//
// Nodes on one table share keys every Update writes (the ledger's newest
// event), so their groups, each run whole before its commit, abort each
// other; a long group can lose to shorter ones until its retries run out.
// Every group therefore takes a lock on the schema-version table first in
// its transaction, before its snapshot, in the round trip of its first
// statement: ROW SHARE, which groups share, and for two seconds after one
// of the DB's groups was lost to a serialization failure, EXCLUSIVE. A
// contended node's groups then run alone, and every node's groups wait
// for them and see their commits. Views never wait for it.
//
// # Tuning
//
// Options.PoolSize bounds the connections (each running View or Update
// holds one; 20 by default), and Options.StatementTimeout sets the
// server's statement_timeout for them. Tests get a throwaway cluster from
// package pgtest.
package postgres
