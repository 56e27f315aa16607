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
// One leader runs at a time by default (Options.Leaders): a node runs one
// group transaction at a time. More may run at once, and then only as many
// as the conflicts allow: the number running moves as TCP's congestion
// window does, up by one at each commit, down by one at a serialization
// failure while failures are few, by half when they are many (commit.go,
// adapt). Isolation stays SERIALIZABLE, the seam's promise that every
// Update behaves as if run alone, rather than a weaker level with explicit
// row locks: every caller would have to name the rows it depends on,
// including the absent keys and ranges it read (an idempotency key not
// yet used, the end of a log, an empty index range), and PostgreSQL has no
// lock for an absent row; that audit of every caller is not done. The
// write path shares no key between unrelated transfers (the ledger keeps
// system accounts' balances as changes under keys of their own, the
// outbox marks events unread instead of minting IDs after the newest;
// bank's TestDisjointTransfersShareNoKeys audits it), yet concurrent
// groups still abort each other: serializable transactions lock the index
// pages their reads visit, present keys and absent ones alike, and an
// insert into a locked page by another transaction counts as a conflict,
// so on one table whose keys of a bucket sit side by side, any two
// transfers are likely to meet on some page. Measured on this project's
// 2-core machine (in-process, 16 callers posting book transfers over HTTP
// with a due runner settling): one leader, groups of 16, 278 transfers/s
// with no retries; 2 leaders 239/s with 0.13 retries per transfer; 4
// leaders of 4, 145/s with 0.5; 15 of 1, 122/s with 1.3. The same load
// at REPEATABLE READ, which takes no such locks, made 190/s through a
// 1 ms round trip against 43/s, with no retries: the next step is that
// level with a lock for each read and each absence it depends on.
//
// Nodes do run groups at once, one each. On a key that every Update of
// several nodes writes, a DB whose groups mostly fail takes the store's
// lock exclusively for each (see "Several nodes"), and the nodes take
// turns (TestTwoNodesContended: two nodes, 8 callers each, every Update
// appending to one log: ~10,000 Updates in 2 s with ~0.08 retries each,
// where every group of a node taking the lock for 2 s after a failure
// committed ~1,400).
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
// Nodes on one table run their groups at once. Every group takes a lock
// on the schema-version table first in its transaction, before its
// snapshot, in the round trip of its first statement: ROW SHARE, which
// groups share; EXCLUSIVE for a group lost three times in a row to
// serialization failures, so that a long group that loses to short ones
// is not starved until its retries run out, and for every group of a DB
// that is down to one group at a time and whose recent transactions
// mostly failed, so that the nodes writing one hot key take turns rather
// than abort each other. Before, every group of a node took it
// exclusively for two seconds after any failure, so that one conflict
// serialized the cluster. Views never wait for it. Writes go to the server
// in key order, so transactions that write some of the same rows lock
// them in the same order and wait rather than deadlock.
//
// # Tuning
//
// Options.PoolSize bounds the connections (each running View or Update
// holds one; 20 by default), and Options.StatementTimeout sets the
// server's statement_timeout for them. Tests get a throwaway cluster from
// package pgtest.
package postgres
