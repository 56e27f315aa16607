package postgres

import (
	"context"
	"crypto/md5"
	"encoding/binary"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/corebank/corebank/storage"
)

// An Update's transaction runs at READ COMMITTED and takes PostgreSQL
// advisory locks, held to its end, on everything it reads and writes:
// strict two-phase locking (doc.go says why it keeps the seam's promise).
//
//   - A Get takes the key's lock, shared (exclusive when the key is likely
//     to be written, see rmw), in the statement before the read, in its
//     round trip; at READ COMMITTED the read's snapshot is taken after the
//     lock is granted, so it sees the last commit of every writer of the
//     key. The lock is on the key, present or absent.
//   - A Scan takes its prefix's lock exclusively the same way, after
//     registering the prefix's length for its bucket (shapes), so no key
//     with that prefix is written until its transaction ends.
//   - The commit takes, before its writes, the exclusive locks of every
//     key it writes, in lock order, and the shared lock of each of the
//     key's prefixes of a registered length: writers under one prefix
//     share its lock, a scan of it waits for them and they for it.
//   - A queue's Scan (storage.ScanOptions.Queue) takes no prefix lock: it
//     takes the locks of the keys it reads exclusively where it can at
//     once, skips the others, and reads those it locked again (batch).
//
// A lock is an advisory lock on the first 8 bytes of the MD5 of its tag:
// the table's name, a kind byte, the bucket and the key or prefix, so
// different stores on one database lock apart. The database computes the
// prefixes' tags itself, from the registered lengths, so a writer never
// misses a length another node registered; lockID computes the same here
// (TestLockIDsAgree).
const (
	kindKey    = 'k'
	kindPrefix = 'p'
	kindShapes = 'r'
)

// lockID is the advisory lock of a key or prefix of b.
func lockID(table string, kind byte, b storage.Bucket, key []byte) int64 {
	h := md5.New()
	h.Write(lockTag(table, kind, b))
	h.Write(key)
	var sum [md5.Size]byte
	return int64(binary.BigEndian.Uint64(h.Sum(sum[:0])))
}

// lockTag is what a lock's tag holds before the key or prefix: the table's
// name, the kind and the bucket (a key's lockBucket), each but the kind
// ended by a NUL.
func lockTag(table string, kind byte, b storage.Bucket) []byte {
	if kind == kindKey {
		b = lockBucket(b)
	}
	tag := append([]byte(table), 0, kind)
	return append(append(tag, b...), 0)
}

// sqlLockID is lockID in SQL, of the bytea expression tag (a lockTag and
// the key or prefix), for statements that lock keys the database finds.
func sqlLockID(tag string) string {
	return `('x' || left(md5(` + tag + `), 16))::bit(64)::bigint`
}

// lockBucket is the bucket whose lock a key of b shares. A due item's
// lease shares the item's, so that a claim, which takes the items' locks
// first (a queue's scan, skipping those held) and then reads their
// leases, and a job applying a claim, which reads the lease first and
// deletes the item at its commit, never hold one each and wait for the
// other's.
func lockBucket(b storage.Bucket) storage.Bucket {
	if b == storage.BucketDueLease {
		return storage.BucketDue
	}
	return b
}

// lockSQL are the statements of the locks (the table's tag is $1 where
// the database computes ids).
type lockSQL struct {
	shared, exclusive string // one lock: $1 the id
	// many takes several locks in one statement, in order: $1 the ids,
	// $2 for each whether exclusively.
	many string
	// prefixes takes the shared lock of each written key's prefix of each
	// registered length of its bucket: $1 the table's name and a NUL, $2
	// the buckets, $3 the keys.
	prefixes string
	// register adds a prefix length ($2) of a bucket ($1) to the shapes
	// table; shapesLoad reads them all.
	register, shapesLoad string
}

func newLockSQL(shapesTable string) lockSQL {
	return lockSQL{
		shared:    `SELECT pg_advisory_xact_lock_shared($1::bigint)`,
		exclusive: `SELECT pg_advisory_xact_lock($1::bigint)`,
		many: `SELECT CASE WHEN l.x THEN pg_advisory_xact_lock(l.id) ELSE pg_advisory_xact_lock_shared(l.id) END
			FROM unnest($1::bigint[], $2::bool[]) AS l(id, x)`,
		prefixes: `SELECT pg_advisory_xact_lock_shared(id) FROM (
			SELECT DISTINCT ` + sqlLockID(`$1::bytea || '\x70'::bytea || convert_to(w.b, 'UTF8') || '\x00'::bytea
				|| substring(w.k FROM 1 FOR s.len)`) + ` AS id
			FROM unnest($2::text[], $3::bytea[]) AS w(b, k)
			JOIN ` + shapesTable + ` AS s ON s.bucket = w.b AND s.len <= length(w.k)
			ORDER BY id OFFSET 0) AS l`,
		register:   `INSERT INTO ` + shapesTable + ` (bucket, len) VALUES ($1, $2) ON CONFLICT DO NOTHING`,
		shapesLoad: `SELECT bucket, len FROM ` + shapesTable,
	}
}

// shape is a prefix length scanned in a bucket.
type shape struct {
	b   storage.Bucket
	len int
}

// shapes are the registered prefix lengths this DB knows of: the table
// only grows, so one seen here is registered for good.
type shapes struct {
	mu sync.RWMutex
	m  map[shape]bool
}

func (s *shapes) has(sh shape) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.m[sh]
}

func (s *shapes) add(sh shape) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[shape]bool{}
	}
	s.m[sh] = true
}

// loadShapes reads the registered shapes.
func (d *DB) loadShapes(ctx context.Context) error {
	rows, err := d.pool.Query(ctx, d.q.locks.shapesLoad)
	if err != nil {
		return err
	}
	var (
		b string
		n int
	)
	_, err = pgx.ForEachRow(rows, []any{&b, &n}, func() error {
		d.shapes.add(shape{storage.Bucket(b), n})
		return nil
	})
	return err
}

// register makes sh known to every writer before a scan of that shape
// reads: it inserts it under the exclusive shapes lock, which every
// commit holds shared while it reads the shapes and takes their locks, so
// the insert commits between commits, and every later commit takes the
// new shape's locks. It runs on a connection of its own, and gives up
// waiting for the lock after registerWait: the commits it waits for may
// wait for locks of the scan's transaction. A scan's transaction calls it
// once (the commits before it are short), and when that fails ends, and
// calls it again until it succeeds, holding no locks (lockPrefix).
func (d *DB) register(ctx context.Context, sh shape, once bool) error {
	if d.shapes.has(sh) {
		return nil
	}
	cfg := d.pool.Config().ConnConfig.Copy()
	cfg.RuntimeParams["lock_timeout"] = strconv.FormatInt(registerWait.Milliseconds(), 10)
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	for attempt := 0; ; attempt++ {
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, d.q.locks.exclusive, d.shapesLock); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, d.q.locks.register, string(sh.b), sh.len)
			return err
		})
		var pe *pgconn.PgError
		if errors.As(err, &pe) && (pe.Code == "55P03" || retryable(err)) {
			if once {
				return errRegisterBusy
			}
			if err := sleep(ctx, backoff(attempt)); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		d.shapes.add(sh)
		return nil
	}
}

// errRegisterBusy is register's error when it tried once and the commits
// before it did not end in time.
var errRegisterBusy = errors.New("storage/postgres: the shapes lock is busy")

// registerWait bounds each wait of register for the shapes lock.
const registerWait = 50 * time.Millisecond

// rmw learns, per bucket, how often an Update writes a key it read: a Get
// of a bucket whose keys mostly are takes the key's lock exclusively at
// once, so that two Updates reading and then writing one key (a balance,
// an idempotency record) wait for each other at the read instead of both
// holding it shared and deadlocking when each wants it exclusively.
type rmw struct {
	mu sync.RWMutex
	m  map[storage.Bucket]float64 // share of keys read that were written, weighted towards the latest
}

// rmwShare is the share above which a bucket's Gets lock exclusively.
const rmwShare = 0.25

func (r *rmw) exclusive(b storage.Bucket) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.m[b] > rmwShare
}

// learn folds one transaction's reads and writes in.
func (r *rmw) learn(reads map[bucketKey][]byte, w writes) {
	type count struct{ read, written int }
	per := map[storage.Bucket]*count{}
	for k := range reads {
		c := per[k.b]
		if c == nil {
			c = &count{}
			per[k.b] = c
		}
		c.read++
		if _, ok := w[k.b][k.key]; ok {
			c.written++
		}
	}
	if len(per) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = map[storage.Bucket]float64{}
	}
	for b, c := range per {
		share := float64(c.written) / float64(c.read)
		old, ok := r.m[b]
		if !ok {
			r.m[b] = share
			continue
		}
		r.m[b] = old + (share-old)/failWeight
	}
}
