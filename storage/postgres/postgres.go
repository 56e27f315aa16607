package postgres

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/corebank/corebank/storage"
)

var _ storage.Backend = (*DB)(nil)

// ErrNewerSchema is wrapped by the error Open returns when the table was
// migrated by a newer release than this one.
var ErrNewerSchema = errors.New("storage/postgres: table has a newer schema version than this release knows")

// ErrRetriesExhausted is wrapped by the error Update returns when every
// run of its function met a serialization failure or a deadlock.
var ErrRetriesExhausted = errors.New("storage/postgres: serialization retries exhausted")

// Options tunes Open. A nil *Options means every default.
type Options struct {
	// Table is the key-value table's name: one table per store, so several
	// stores may share a database. It is a plain identifier (letters,
	// digits and underscores, not starting with a digit), optionally
	// schema-qualified ("corebank.kv", the schema created if absent). Its
	// schema version is kept in the table named Table+"_schema". Empty
	// means "corebank_kv".
	Table string
	// PoolSize is the most connections the pool opens. Every running View
	// and Update holds one. Zero means 20.
	PoolSize int
	// StatementTimeout bounds each statement on the server
	// (statement_timeout). Zero leaves the server's setting.
	StatementTimeout time.Duration
	// Group is the most Updates that share one transaction. Concurrent
	// Updates queue, and each leader takes up to Group of them, runs their
	// functions one after another in one transaction (each after a
	// savepoint, so that one that fails is undone alone) and commits them
	// together: Updates in a group never conflict with each other, and
	// share its commit. But a group holds the locks of all its Updates
	// until its commit, so that unrelated Updates wait for each other, and
	// groups lock in the order of their Updates, so that two groups
	// deadlock more often than two Updates. Zero means 1: every Update in
	// its own transaction, PostgreSQL sharing the commits' flushes.
	Group int
	// Leaders is the most Update transactions a DB runs at once, each on
	// its own connection, and at most PoolSize. Zero means half of
	// PoolSize (at least 1): the rest stay for Views, and under load the
	// Updates beyond it queue in the DB, where due work goes first (see
	// the package documentation, Tuning), rather than in the database,
	// where it does not. Only Updates
	// that share a key wait for each other (see the package
	// documentation), and DB adapts how many run at once to the deadlocks
	// they meet.
	Leaders int
	// Retries is how many times Update re-runs its function after a
	// serialization failure (SQLSTATE 40001) or a deadlock (40P01), each
	// after a jittered, doubling backoff. Zero means 30; negative means
	// none.
	Retries int
}

const (
	defaultTable    = "corebank_kv"
	defaultPoolSize = 20
	defaultRetries  = 30
	defaultGroup    = 1

	// backoffBase and backoffMax bound the sleep before a retry: attempt n
	// sleeps a uniformly random time up to min(backoffMax, backoffBase<<n).
	backoffBase = 500 * time.Microsecond
	backoffMax  = 50 * time.Millisecond
)

var tableName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$`)

// DB is a storage.Backend on one table of a PostgreSQL database. It is safe
// for concurrent use, also by several processes on one database.
type DB struct {
	pool    *pgxpool.Pool
	q       queries
	retries int

	// Locking (locks.go): the table's name in lock tags, the lock of the
	// shapes table, the shapes known and what Gets lock exclusively.
	table      string
	shapesLock int64
	shapes     shapes
	rmw        rmw

	mu     sync.Mutex // guards closed transitions against enter
	closed atomic.Bool
	active sync.WaitGroup // Views and Updates running

	retried atomic.Uint64 // runs retried after a serialization failure, for tests and benchmarks
	commits atomic.Uint64 // transactions Update committed, for tests and benchmarks
	trips   atomic.Uint64 // round trips of Views' and Updates' statements, for tests

	// The group commit's (commit.go).
	group, maxLeaders int
	// limit is how many groups may run at once now, and fail the share of
	// group transactions lost to serialization failures, weighted towards
	// the latest (adapt, commit.go).
	limit int
	fail  float64
	qmu   sync.Mutex
	queue []*call // Updates waiting for a group
	// urgent counts the queue's first calls, those with
	// storage.WithPriority, which go ahead of the rest in their order.
	urgent  int
	leaders int // groups running
}

// Open connects to the database named by dsn (a postgres:// URL or a
// key=value string, as libpq reads them), creates the table if it is absent
// and migrates it to this release's schema. Several processes may Open the
// same table at once: the schema change is serialized by an advisory lock.
func Open(ctx context.Context, dsn string, opt *Options) (*DB, error) {
	var o Options
	if opt != nil {
		o = *opt
	}
	if o.Table == "" {
		o.Table = defaultTable
	}
	if !tableName.MatchString(o.Table) {
		return nil, fmt.Errorf("storage/postgres: table name %q is not an identifier", o.Table)
	}
	if o.PoolSize <= 0 {
		o.PoolSize = defaultPoolSize
	}
	if o.Group <= 0 {
		o.Group = defaultGroup
	}
	if o.Leaders <= 0 {
		o.Leaders = max(1, o.PoolSize/2)
	}
	o.Leaders = min(o.Leaders, o.PoolSize)
	switch {
	case o.Retries == 0:
		o.Retries = defaultRetries
	case o.Retries < 0:
		o.Retries = 0
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("storage/postgres: %w", err)
	}
	cfg.MaxConns = int32(o.PoolSize)
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = defaultConnectTimeout
	}
	// Plan each statement for its arguments and the table as it is now.
	// pgx prepares the statements it sends, and PostgreSQL soon keeps one
	// generic plan per statement and connection, made for the table's size
	// then, until an ANALYZE of the table drops it. A store opened nearly
	// empty kept its plans while a load grew the table: for about eight
	// seconds after a 15 s load (examples/server), until autoanalyze ran,
	// each Prefetch statement of a read took 7-10 ms, and reading 200
	// accounts 1.5-2.4 s; planned per execution, 40 ms.
	cfg.ConnConfig.RuntimeParams["plan_cache_mode"] = "force_custom_plan"
	if o.StatementTimeout > 0 {
		cfg.ConnConfig.RuntimeParams["statement_timeout"] = strconv.FormatInt(o.StatementTimeout.Milliseconds(), 10)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, wrap(ctx, err)
	}
	d := &DB{pool: pool, q: newQueries(o.Table), retries: o.Retries, group: o.Group, maxLeaders: o.Leaders, limit: o.Leaders,
		table: o.Table, shapesLock: lockID(o.Table, kindShapes, "", nil)}
	if err := d.migrate(ctx, o.Table); err != nil {
		pool.Close()
		return nil, err
	}
	if err := d.loadShapes(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("storage/postgres: open %s: %w", o.Table, err)
	}
	return d, nil
}

// Close closes the pool once running Views and Updates return. Later calls
// return storage.ErrClosed; a second Close returns nil.
func (d *DB) Close() error {
	d.mu.Lock()
	if d.closed.Load() {
		d.mu.Unlock()
		return nil
	}
	d.closed.Store(true)
	d.mu.Unlock()
	d.active.Wait()
	d.pool.Close()
	return nil
}

// enter admits a call unless the DB is closed (storage.ErrClosed) or ctx
// is done (its error); leave must follow an admitted call.
func (d *DB) enter(ctx context.Context) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed.Load() {
		return storage.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	d.active.Add(1)
	return nil
}

func (d *DB) leave() { d.active.Done() }

// View runs fn in a REPEATABLE READ, READ ONLY transaction: one snapshot,
// taken at its first read. Writes fail with storage.ErrReadOnly. View
// returns storage.ErrClosed after Close, ctx.Err() if ctx is already done,
// and otherwise fn's error or the database's. A panic in fn propagates.
func (d *DB) View(ctx context.Context, fn func(storage.Tx) error) error {
	if err := d.enter(ctx); err != nil {
		return err
	}
	defer d.leave()
	conn, err := d.pool.Acquire(ctx)
	if err != nil {
		return wrap(ctx, err)
	}
	// BEGIN goes to the server with the first statement, in its round trip.
	pre := []string{"BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"}
	defer func() {
		if len(pre) != 0 { // nothing was sent
			conn.Release()
			return
		}
		// The read-only transaction ends after View returns: its
		// ROLLBACK changes nothing the caller waits for, and its round
		// trip was one of every View's two (most read one key), on the
		// path of every keyed request (its key's check). The connection
		// goes back to the pool once it is done, or is destroyed if it
		// failed and left the connection in a transaction.
		d.trips.Add(1)
		go func() {
			_, _ = conn.Exec(context.Background(), "ROLLBACK")
			conn.Release()
		}()
	}()
	t := &tx{ctx: ctx, q: &d.q, conn: conn.Conn(), reads: map[bucketKey][]byte{}, scans: map[scanKey]*cached{}, pre: &pre, trips: &d.trips}
	defer func() { t.done = true }()
	return fn(t)
}

// retryable reports a serialization failure or a deadlock.
func retryable(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == "40001" || pe.Code == "40P01"
	}
	return false
}

func backoff(attempt int) time.Duration {
	limit := backoffMax
	if attempt < 16 && backoffBase<<attempt < limit {
		limit = backoffBase << attempt
	}
	return rand.N(limit) + 1
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// wrap returns ctx's error when ctx ended the call, and otherwise err
// marked as this package's, and as storage.ErrUnavailable when the
// database was out of reach (unavailable).
func wrap(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	if errors.Is(err, storage.ErrUnavailable) {
		return err // wrapped already (a statement's error, returned by fn)
	}
	err = fmt.Errorf("storage/postgres: %w", err)
	if unavailable(err) {
		return storage.Unavailable(err)
	}
	return err
}

// Empty reports whether the store holds no key at all: a server checks it
// before it makes a new sealing key for a store.
func (d *DB) Empty(ctx context.Context) (bool, error) {
	if err := d.enter(ctx); err != nil {
		return false, err
	}
	defer d.leave()
	var empty bool
	if err := d.pool.QueryRow(ctx, d.q.empty).Scan(&empty); err != nil {
		return false, wrap(ctx, err)
	}
	return empty, nil
}

// Retries returns how many times Updates re-ran their function after a
// serialization failure or a deadlock since Open.
func (d *DB) Retries() uint64 { return d.retried.Load() }

// Stats counts a DB's work since Open, for metrics and benchmarks.
type Stats struct {
	// Commits is how many transactions Updates committed (a group of
	// Updates sharing one counts once).
	Commits uint64
	// Retries is how many transactions were lost to a serialization
	// failure or a deadlock and run again.
	Retries uint64
	// RoundTrips is how many round trips to the server Views and Updates
	// made.
	RoundTrips uint64
}

// Stats returns the DB's counters.
func (d *DB) Stats() Stats {
	return Stats{Commits: d.commits.Load(), Retries: d.retried.Load(), RoundTrips: d.trips.Load()}
}

// schemaVersion is the version of the table this release writes;
// migrations[v] takes a table from version v to v+1. %[1]s is the table.
const schemaVersion = 2

var migrations = []string{
	`CREATE TABLE IF NOT EXISTS %[1]s (
		bucket text COLLATE "C" NOT NULL,
		key bytea NOT NULL,
		value bytea NOT NULL,
		PRIMARY KEY (bucket, key)
	)`,
	// The prefix lengths Updates scan, per bucket (locks.go). Version 2
	// runs Updates at READ COMMITTED under locks: servers of version 1
	// (SERIALIZABLE, no locks) must not run beside it.
	`CREATE TABLE IF NOT EXISTS %[2]s (
		bucket text COLLATE "C" NOT NULL,
		len int NOT NULL,
		PRIMARY KEY (bucket, len)
	)`,
}

// migrate creates the schema-version table (one row) and brings the
// key-value table to schemaVersion, under an advisory lock so that nodes
// opening at once do it one at a time.
func (d *DB) migrate(ctx context.Context, table string) error {
	kv := pgx.Identifier(splitName(table)).Sanitize()
	meta := pgx.Identifier(splitName(table + "_schema")).Sanitize()
	scans := pgx.Identifier(splitName(table + "_scans")).Sanitize()
	err := pgx.BeginFunc(ctx, d.pool, func(ptx pgx.Tx) error {
		if _, err := ptx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, "corebank/storage/postgres:"+table); err != nil {
			return err
		}
		if parts := splitName(table); len(parts) == 2 {
			if _, err := ptx.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS `+pgx.Identifier(parts[:1]).Sanitize()); err != nil {
				return err
			}
		}
		if _, err := ptx.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+meta+` (
			id int PRIMARY KEY CHECK (id = 1),
			version int NOT NULL
		)`); err != nil {
			return err
		}
		var version int
		err := ptx.QueryRow(ctx, `SELECT version FROM `+meta+` WHERE id = 1`).Scan(&version)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		if version > schemaVersion {
			return fmt.Errorf("%w: %s is at version %d, this release knows %d", ErrNewerSchema, table, version, schemaVersion)
		}
		for ; version < schemaVersion; version++ {
			if _, err := ptx.Exec(ctx, fmt.Sprintf(migrations[version], kv, scans)); err != nil {
				return fmt.Errorf("migrate %s to version %d: %w", table, version+1, err)
			}
		}
		_, err = ptx.Exec(ctx, `INSERT INTO `+meta+` (id, version) VALUES (1, $1)
			ON CONFLICT (id) DO UPDATE SET version = EXCLUDED.version`, version)
		return err
	})
	if err != nil && !errors.Is(err, ErrNewerSchema) {
		return fmt.Errorf("storage/postgres: open %s: %w", table, err)
	}
	return err
}
