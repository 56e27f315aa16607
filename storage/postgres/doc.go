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
// Update runs its function in a SERIALIZABLE transaction, so concurrent
// Updates on any number of nodes behave as if run one at a time. When
// PostgreSQL cannot keep that promise for a transaction it aborts it with a
// serialization failure (SQLSTATE 40001) or a deadlock (40P01), and Update
// runs the function again in a new transaction, after a jittered backoff
// that doubles from half a millisecond up to 50 ms, at most Options.Retries
// times (30 by default). This is the seam's rerun rule (storage/doc.go):
// only the run that commits counts. View runs in a REPEATABLE READ, READ
// ONLY transaction: one snapshot, which never blocks writers and is never
// aborted.
//
// Each Get, Put and Delete is one statement in the transaction, so reads
// see the transaction's own writes. A Scan is a keyset range query on the
// primary key, WHERE bucket = $1 AND key > $2 [AND key < $3] ORDER BY key
// [DESC] LIMIT n, with a prefix turned into the range [prefix,
// storage.PrefixEnd(prefix)) rather than a LIKE: an index seek, so a page
// costs the same at row ten and at row ten million. A scan without a
// limit reads batches of 32 rows doubling up to 1024, each resuming after
// the last key of the one before; a batch is read whole before the
// callback sees it, so the callback may write through the same transaction,
// and the next batch sees what it wrote.
//
// # Tuning
//
// Options.PoolSize bounds the connections (each running View or Update
// holds one; 20 by default), and Options.StatementTimeout sets the
// server's statement_timeout for them. Tests get a throwaway cluster from
// package pgtest.
package postgres
