package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/corebank/corebank/storage"
)

// Scans read in batches that start small, for the many scans that stop at
// the first key or few (the newest entry, one page), and double up to
// maxBatch, so a scan of the whole range makes few round trips.
const (
	firstBatch = 32
	maxBatch   = 1024
)

// queries holds the SQL of one table. Scan's statements are keyset range
// queries on the primary key, (bucket, key): their shape depends on which
// bounds a batch has, so each shape is one statement that pgx prepares once
// per connection.
type queries struct {
	get, put, del, delMany, empty string
	// buckets lists the table's distinct buckets by skipping from one to
	// the next on the primary key, one index seek per bucket, rather than
	// reading every row as SELECT DISTINCT would.
	buckets string
	// getMany is Prefetch's: the ordinals (from 1) of the keys found, with
	// their values; scanMany its first batch ($4 rows) of each range
	// [$2, $3) of a bucket ($1), by the range's ordinal, in key order.
	getMany, scanMany string
	shared, exclusive string // a group's lock (commit.go)
	locks             lockSQL
	scan              map[scanShape]string
	// queue is scan's, for a queue's scan: its rows whose key's lock it
	// could take at once (exclusively); requeue reads those again.
	queue   map[scanShape]string
	requeue [2]string
}

type scanShape struct {
	reverse bool
	lower   string // "", ">=" or ">"
	upper   bool   // key < upper bound
}

func newQueries(table string) queries {
	kv := pgx.Identifier(splitName(table)).Sanitize()
	meta := pgx.Identifier(splitName(table + "_schema")).Sanitize()
	q := queries{
		locks: newLockSQL(pgx.Identifier(splitName(table + "_scans")).Sanitize()),
		get:   `SELECT value FROM ` + kv + ` WHERE bucket = $1 AND key = $2`,
		getMany: `SELECT k.i, t.value FROM unnest($1::text[], $2::bytea[]) WITH ORDINALITY AS k(bucket, key, i)
			JOIN ` + kv + ` AS t ON t.bucket = k.bucket AND t.key = k.key`,
		scanMany: `SELECT p.i, t.key, t.value FROM unnest($1::text[], $2::bytea[], $3::bytea[]) WITH ORDINALITY AS p(bucket, lo, hi, i)
			CROSS JOIN LATERAL (SELECT key, value FROM ` + kv + `
				WHERE bucket = p.bucket AND key >= p.lo AND key < p.hi ORDER BY key LIMIT $4) AS t
			ORDER BY p.i, t.key`,
		put: `INSERT INTO ` + kv + ` (bucket, key, value)
			SELECT * FROM unnest($1::text[], $2::bytea[], $3::bytea[])
			ON CONFLICT (bucket, key) DO UPDATE SET value = EXCLUDED.value`,
		del: `DELETE FROM ` + kv + ` WHERE bucket = $1 AND key = $2`,
		// A join with the keys, which the planner answers with an index
		// lookup each on a table of any size.
		delMany: `DELETE FROM ` + kv + ` AS t USING unnest($1::text[], $2::bytea[]) AS d(bucket, key)
			WHERE t.bucket = d.bucket AND t.key = d.key`,
		empty:     `SELECT NOT EXISTS (SELECT 1 FROM ` + kv + `)`,
		shared:    `LOCK TABLE ` + meta + ` IN ROW SHARE MODE`,
		exclusive: `LOCK TABLE ` + meta + ` IN EXCLUSIVE MODE`,
		scan:      map[scanShape]string{},
		queue:     map[scanShape]string{},
		requeue: [2]string{
			`SELECT key, value FROM ` + kv + ` WHERE bucket = $1 AND key = ANY($2::bytea[]) ORDER BY key`,
			`SELECT key, value FROM ` + kv + ` WHERE bucket = $1 AND key = ANY($2::bytea[]) ORDER BY key DESC`,
		},
	}
	q.buckets = `WITH RECURSIVE b(bucket) AS (
			SELECT min(bucket) FROM ` + kv + `
			UNION ALL
			SELECT (SELECT min(t.bucket) FROM ` + kv + ` AS t WHERE t.bucket > b.bucket) FROM b WHERE b.bucket IS NOT NULL)
		SELECT bucket FROM b WHERE bucket IS NOT NULL`
	for _, reverse := range []bool{false, true} {
		for _, lower := range []string{"", ">=", ">"} {
			for _, upper := range []bool{false, true} {
				var b strings.Builder
				b.WriteString(`SELECT key, value FROM ` + kv + ` WHERE bucket = $1`)
				n := 1
				if lower != "" {
					n++
					b.WriteString(` AND key ` + lower + ` $` + strconv.Itoa(n))
				}
				if upper {
					n++
					b.WriteString(` AND key < $` + strconv.Itoa(n))
				}
				if reverse {
					b.WriteString(` ORDER BY key DESC`)
				} else {
					b.WriteString(` ORDER BY key`)
				}
				b.WriteString(` LIMIT $` + strconv.Itoa(n+1))
				q.scan[scanShape{reverse, lower, upper}] = b.String()
				order := ` ORDER BY key`
				if reverse {
					order += ` DESC`
				}
				// Every key of the window, and whether its lock was
				// taken: a window whose keys others hold is passed over,
				// not taken for the queue's end. The limit is inside, so
				// that no lock is tried beyond the window.
				q.queue[scanShape{reverse, lower, upper}] = `SELECT key, pg_try_advisory_xact_lock(` + sqlLockID(`$`+strconv.Itoa(n+2)+`::bytea || c.key`) + `)
					FROM (` + b.String() + `) AS c` + order
			}
		}
	}
	return q
}

// splitName splits a possibly schema-qualified table name.
func splitName(name string) []string { return strings.Split(name, ".") }

// tx is one run of a View's or an Update's function over one PostgreSQL
// transaction, whose statements give it read-your-writes.
type tx struct {
	ctx      context.Context
	q        *queries
	conn     *pgx.Conn
	writable bool
	done     bool
	// conflict is the first serialization failure or deadlock a statement
	// met: the transaction is lost, and Update runs the function again.
	conflict error
	// broken is the first other error a statement met: the transaction
	// cannot go on past it (a group rolls back to the function's savepoint).
	broken error
	// own are the function's buffered writes, base those of the functions
	// before it in its group (nil in a View): reads see them, and the
	// group's commit sends them.
	own, base writes
	// reads are the values (nil when absent) the transaction read from
	// the table: all its functions read one snapshot, so a key read once
	// is not read again.
	reads map[bucketKey][]byte
	// scans are the batches the transaction's scans read from the table,
	// by query (bucket, shape and bounds), kept for the same reason: a
	// later batch with the same bounds takes its rows from here when the
	// kept batch has as many or ended the range.
	scans map[scanKey]*cached
	// pre, shared by the functions of a group, holds the statements that
	// begin the transaction (BEGIN, the group's lock) until its first
	// statement sends them, in its round trip.
	pre *[]string
	// trips counts the DB's round trips.
	trips *atomic.Uint64
	// savepoint is set for a function of a group: its first statement goes
	// to the server after a SAVEPOINT, in the same round trip, and
	// savepointed records that it went.
	savepoint, savepointed bool

	// lk is the Update's locking (locks.go); nil in a View, which reads
	// one snapshot and takes no locks.
	lk *locking
	// added lists what this function added to the transaction's kept
	// reads, scans and prefix locks: a function rolled back to its
	// savepoint loses the locks it took, and what they guarded with them.
	added []any
}

// locking is what an Update's transaction locks with.
type locking struct {
	d *DB
	// hot are keys the transaction's earlier run wrote: it locks them
	// exclusively at once.
	hot map[bucketKey]bool
	// prefixes are the prefixes whose locks the transaction holds, or
	// will with its next statement (pending): a scan answered from kept
	// rows needs no query, and the next scan of its prefix that does
	// sends them first.
	prefixes map[prefixKey]bool
	pending  []stmt
	// buckets are the buckets whose lock the transaction holds, and how;
	// keys counts the keys it locked in each for reads.
	buckets map[storage.Bucket]lockMode
	keys    map[storage.Bucket]int
}

// lockMode is how a transaction holds a lock.
type lockMode int8

const (
	unlocked lockMode = iota
	shared
	exclusive
)

// bucketLock is a bucket's lock a function took, and how the transaction
// held it before.
type bucketLock struct {
	b    storage.Bucket
	prev lockMode
}

// bucket returns the statements that take b's lock in mode m unless the
// transaction holds it so already.
func (t *tx) bucket(b storage.Bucket, m lockMode) []stmt {
	prev := t.lk.buckets[b]
	if prev >= m {
		return nil
	}
	t.lk.buckets[b] = m
	t.added = append(t.added, bucketLock{b, prev})
	q := t.q.locks.shared
	if m == exclusive {
		q = t.q.locks.exclusive
	}
	return []stmt{{q, []any{lockID(t.lk.d.table, kindPrefix, b, nil)}}}
}

// keyLocks returns the statements that lock key of b for a Get in an
// Update (none in a View): the bucket's lock shared, and the key's, shared
// or, when the key is likely to be written, exclusively; or, once the
// transaction has locked escalateAt keys of b, the bucket's exclusively,
// and no key's.
func (t *tx) keyLocks(b storage.Bucket, key []byte) []stmt {
	if t.lk == nil {
		return nil
	}
	if t.lk.buckets[b] == exclusive {
		return nil
	}
	if t.lk.keys[b] >= escalateAt {
		return t.bucket(b, exclusive)
	}
	t.lk.keys[b]++
	q := t.q.locks.shared
	if t.lk.hot[bucketKey{b, string(key)}] || t.lk.d.rmw.exclusive(b) {
		q = t.q.locks.exclusive
	}
	return append(t.bucket(b, shared), stmt{q, []any{lockID(t.lk.d.table, kindKey, b, key)}})
}

// stmt is a statement with its arguments.
type stmt struct {
	sql  string
	args []any
}

// query runs one statement of the transaction, after the statements that
// begin it, the function's savepoint and the lock the statement's read
// needs (lock, or else the scan's pending one) if they are pending, in the
// same round trip. At READ COMMITTED each statement reads a snapshot taken
// when it starts, after the statements before it ran: the lock is granted
// before the read's snapshot.
func (t *tx) query(locks []stmt, sql string, args ...any) (pgx.Rows, error) {
	t.trips.Add(1)
	var pre []stmt
	for _, p := range *t.pre {
		pre = append(pre, stmt{sql: p})
	}
	*t.pre = nil
	if t.savepoint {
		pre = append(pre, stmt{sql: "SAVEPOINT g"})
		t.savepoint, t.savepointed = false, true
	}
	if t.lk != nil {
		pre = append(pre, t.lk.pending...)
		t.lk.pending = t.lk.pending[:0]
	}
	pre = t.q.merge(append(pre, locks...))
	if len(pre) == 0 {
		return t.conn.Query(t.ctx, sql, args...)
	}
	b := &pgx.Batch{}
	for _, p := range pre {
		b.Queue(p.sql, p.args...)
	}
	b.Queue(sql, args...)
	br := t.conn.SendBatch(t.ctx, b)
	for range pre {
		if _, err := br.Exec(); err != nil {
			_ = br.Close()
			return nil, err
		}
	}
	rows, err := br.Query()
	if err != nil {
		_ = br.Close()
		return nil, err
	}
	return &batchRows{Rows: rows, br: br}, nil
}

// merge replaces each run of two or more single-lock statements in ss
// with one statement taking them all, in the same order: a statement
// costs the server as much to run as the lock it takes, and a
// transaction's reads lock several keys at a time.
func (q *queries) merge(ss []stmt) []stmt {
	out := ss[:0]
	for i := 0; i < len(ss); {
		j := i
		for j < len(ss) && q.single(ss[j]) {
			j++
		}
		if j-i < 2 {
			out = append(out, ss[i])
			i++
			continue
		}
		ids, modes := make([]int64, 0, j-i), make([]bool, 0, j-i)
		for _, l := range ss[i:j] {
			ids, modes = append(ids, l.args[0].(int64)), append(modes, l.sql == q.locks.exclusive)
		}
		out = append(out, stmt{q.locks.many, []any{ids, modes}})
		i = j
	}
	return out
}

// single reports whether s takes one lock.
func (q *queries) single(s stmt) bool {
	if (s.sql != q.locks.shared && s.sql != q.locks.exclusive) || len(s.args) != 1 {
		return false
	}
	_, ok := s.args[0].(int64)
	return ok
}

// batchRows closes the batch its rows came from with them.
type batchRows struct {
	pgx.Rows
	br pgx.BatchResults
}

func (r *batchRows) Close() {
	r.Rows.Close()
	_ = r.br.Close()
}

// batch is one Scan's rows: keys and values sharing arena. Each Scan has
// its own, since fn may scan too.
type batch struct {
	keys, vals [][]byte
	arena      []byte
	offs       []int
	last       []byte
	// window and windowLast are, for a queue's batch, how many keys the
	// read went over, locked or skipped, and the last of them.
	window     int
	windowLast []byte
}

// fail records a statement's error and returns it wrapped.
func (t *tx) fail(err error) error {
	switch {
	case retryable(err):
		if t.conflict == nil {
			t.conflict = err
		}
	case t.broken == nil:
		t.broken = err
	}
	return wrap(t.ctx, err)
}

// write is a buffered Put, or a Delete when deleted.
type write struct {
	value   []byte
	deleted bool
}

// writes are buffered writes by bucket and key: the last to each key.
type writes map[storage.Bucket]map[string]write

func (w writes) set(b storage.Bucket, key []byte, wr write) {
	m := w[b]
	if m == nil {
		m = map[string]write{}
		w[b] = m
	}
	m[string(key)] = wr
}

// merge adds from's writes to w, over w's own.
func (w writes) merge(from writes) {
	for b, m := range from {
		for k, wr := range m {
			w.set(b, []byte(k), wr)
		}
	}
}

// lookup returns the write of this function or, else, of the group's
// earlier ones to key, if there is one.
func (t *tx) lookup(b storage.Bucket, key []byte) (write, bool) {
	if wr, ok := t.own[b][string(key)]; ok {
		return wr, true
	}
	wr, ok := t.base[b][string(key)]
	return wr, ok
}

// Get returns a copy of the value under key, or storage.ErrNotFound. A key
// the transaction wrote is read from its buffer.
func (t *tx) Get(b storage.Bucket, key []byte) ([]byte, error) {
	if t.done {
		return nil, storage.ErrTxDone
	}
	if wr, ok := t.lookup(b, key); ok {
		if wr.deleted {
			return nil, storage.ErrNotFound
		}
		return append([]byte{}, wr.value...), nil
	}
	ck := bucketKey{b, string(key)}
	v, ok := t.reads[ck]
	if !ok {
		var err error
		if v, err = t.read(b, key); err != nil {
			return nil, err
		}
		t.reads[ck] = v
		t.added = append(t.added, ck)
	}
	if v == nil {
		return nil, storage.ErrNotFound
	}
	return append([]byte{}, v...), nil
}

// Prefetch reads keys as Gets would, locks included, in one round trip,
// and keeps the values for the Gets that follow. Keys the transaction
// wrote or read already are left out; the rest are locked in key order.
func (t *tx) Prefetch(keys []storage.Ref) error {
	if t.done {
		return storage.ErrTxDone
	}
	want := make([]bucketKey, 0, len(keys))
	seen := make(map[bucketKey]bool, len(keys))
	var prefixes []storage.Ref
	for _, r := range keys {
		if r.Prefix {
			prefixes = append(prefixes, r)
			continue
		}
		ck := bucketKey{r.Bucket, string(r.Key)}
		if _, ok := t.lookup(r.Bucket, r.Key); ok || seen[ck] {
			continue
		}
		if _, ok := t.reads[ck]; ok {
			continue
		}
		seen[ck] = true
		want = append(want, ck)
	}
	if err := t.prefetchScans(prefixes); err != nil {
		return err
	}
	if len(want) == 0 {
		return nil
	}
	slices.SortFunc(want, func(a, b bucketKey) int {
		if c := strings.Compare(string(a.b), string(b.b)); c != 0 {
			return c
		}
		return strings.Compare(a.key, b.key)
	})
	var locks []stmt
	buckets := make([]string, len(want))
	ks := make([][]byte, len(want))
	for i, ck := range want {
		locks = append(locks, t.keyLocks(ck.b, []byte(ck.key))...)
		buckets[i], ks[i] = string(ck.b), []byte(ck.key)
	}
	rows, err := t.query(locks, t.q.getMany, buckets, ks)
	if err != nil {
		return t.fail(err)
	}
	defer rows.Close()
	found := make([][]byte, len(want))
	for rows.Next() {
		var i int64
		v := []byte{}
		if err := rows.Scan(&i, &v); err != nil {
			return t.fail(err)
		}
		if i < 1 || int(i) > len(want) {
			return t.fail(fmt.Errorf("postgres: prefetch answered row %d of %d", i, len(want)))
		}
		if v == nil {
			v = []byte{}
		}
		found[i-1] = v
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return t.fail(err)
	}
	for i, ck := range want {
		t.reads[ck] = found[i] // nil: absent
		t.added = append(t.added, ck)
	}
	return nil
}

// prefetchScans reads the first batch of a Scan of each prefix of refs
// (storage.Ref.Prefix) in one round trip, taking the locks each Scan
// would, and keeps the batches as the Scans keep theirs: the Scans that
// follow are answered from them. Prefixes already kept and the empty
// prefix are left to their Scans.
func (t *tx) prefetchScans(refs []storage.Ref) error {
	if len(refs) == 0 || t.scans == nil {
		return nil
	}
	var (
		sks      []scanKey
		buckets  []string
		los, his [][]byte
		seen     = map[scanKey]bool{}
	)
	// The prefixes' locks in one order, whatever the caller's: two
	// transactions that prefetch some of the same prefixes (two claims
	// crediting the same accounts) otherwise each take one and wait for
	// the other's.
	refs = slices.SortedFunc(slices.Values(refs), func(a, b storage.Ref) int {
		if c := strings.Compare(string(a.Bucket), string(b.Bucket)); c != 0 {
			return c
		}
		return bytes.Compare(a.Key, b.Key)
	})
	for _, r := range refs {
		end, ok := storage.PrefixEnd(r.Key)
		if len(r.Key) == 0 || !ok {
			continue
		}
		sk := scanKey{b: r.Bucket, shape: scanShape{lower: ">=", upper: true}, lo: string(r.Key), hi: string(end)}
		if _, kept := t.scans[sk]; kept || seen[sk] {
			continue
		}
		if err := t.lockPrefix(r.Bucket, r.Key); err != nil {
			return err
		}
		seen[sk] = true
		sks = append(sks, sk)
		buckets, los, his = append(buckets, string(r.Bucket)), append(los, r.Key), append(his, end)
	}
	if len(sks) == 0 {
		return nil
	}
	rows, err := t.query(nil, t.q.scanMany, buckets, los, his, firstBatch)
	if err != nil {
		return t.fail(err)
	}
	defer rows.Close()
	got := make([]*cached, len(sks))
	for i := range got {
		got[i] = &cached{}
	}
	for rows.Next() {
		var i int64
		var k, v []byte
		if err := rows.Scan(&i, &k, &v); err != nil {
			return t.fail(err)
		}
		if i < 1 || int(i) > len(sks) {
			return t.fail(fmt.Errorf("postgres: prefetch answered prefix %d of %d", i, len(sks)))
		}
		if v == nil {
			v = []byte{}
		}
		c := got[i-1]
		c.keys, c.vals = append(c.keys, k), append(c.vals, v)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return t.fail(err)
	}
	for i, sk := range sks {
		got[i].complete = len(got[i].keys) < firstBatch
		t.scans[sk] = got[i]
		t.added = append(t.added, sk)
	}
	return nil
}

// read reads key's value from the table: nil when it is absent.
func (t *tx) read(b storage.Bucket, key []byte) ([]byte, error) {
	rows, err := t.query(t.keyLocks(b, key), t.q.get, string(b), key)
	if err != nil {
		return nil, t.fail(err)
	}
	defer rows.Close()
	if !rows.Next() {
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, t.fail(err)
		}
		return nil, nil
	}
	v := []byte{}
	if err := rows.Scan(&v); err != nil {
		return nil, t.fail(err)
	}
	if v == nil {
		v = []byte{}
	}
	return v, nil
}

// BucketNames returns the buckets of the table's rows, in the
// transaction's snapshot (a View's; an Update's statement's, without a
// lock), and those the transaction has buffered writes to
// (storage.BucketLister). A bucket whose rows the transaction deleted may
// be named, empty.
func (t *tx) BucketNames() ([]storage.Bucket, error) {
	if t.done {
		return nil, storage.ErrTxDone
	}
	rows, err := t.query(nil, t.q.buckets)
	if err != nil {
		return nil, t.fail(err)
	}
	defer rows.Close()
	var names []storage.Bucket
	for rows.Next() {
		var b string
		if err := rows.Scan(&b); err != nil {
			return nil, t.fail(err)
		}
		names = append(names, storage.Bucket(b))
	}
	if err := rows.Err(); err != nil {
		return nil, t.fail(err)
	}
	for _, w := range []writes{t.own, t.base} {
		for b := range w {
			names = append(names, b)
		}
	}
	return names, nil
}

// Put stores value under key: it buffers the write, which the group's
// commit sends.
func (t *tx) Put(b storage.Bucket, key, value []byte) error {
	if err := storage.CheckWrite(t.done, t.writable, key); err != nil {
		return err
	}
	t.own.set(b, key, write{value: append([]byte{}, value...)}) // never nil, which would be NULL
	return nil
}

// Delete removes key; an absent (or empty) key is not an error. It
// buffers the delete, which the group's commit sends.
func (t *tx) Delete(b storage.Bucket, key []byte) error {
	if err := storage.CheckWrite(t.done, t.writable, key); err != nil {
		if errors.Is(err, storage.ErrEmptyKey) {
			return nil
		}
		return err
	}
	t.own.set(b, key, write{deleted: true})
	return nil
}

// scanKey is one batch query: its bucket, shape and bounds.
type scanKey struct {
	b      storage.Bucket
	shape  scanShape
	lo, hi string
}

// cached is a batch read from the table: its first rows in the query's
// order, and all of them when complete.
type cached struct {
	keys, vals [][]byte
	complete   bool
}

type bucketKey struct {
	b   storage.Bucket
	key string
}

// prefixKey is a Scan's prefix in its bucket.
type prefixKey bucketKey

// pending is a buffered write a Scan merges into a batch.
type pending struct {
	key string
	write
}

// Scan reads the range o selects in batches, each a keyset query resuming
// after the last key of the one before, merged with the transaction's
// buffered writes in the batch's part of the range, and passes each batch
// to fn only once it is read whole: fn may then write through the same
// transaction, and the next batch sees what it wrote.
func (t *tx) Scan(b storage.Bucket, o storage.ScanOptions, fn func(key, value []byte) error) error {
	if t.done {
		return storage.ErrTxDone
	}
	var (
		shape  = scanShape{reverse: o.Reverse}
		lo, hi []byte
	)
	from, exclusive, bounded := o.Start()
	if !o.Reverse {
		if len(from) > 0 {
			lo, shape.lower = from, ">="
			if exclusive {
				shape.lower = ">"
			}
		}
		if end, ok := storage.PrefixEnd(o.Prefix); ok {
			hi, shape.upper = end, true
		}
	} else {
		// A descending start is exclusive whenever it is bounded.
		if bounded {
			hi, shape.upper = from, true
		}
		if len(o.Prefix) > 0 {
			lo, shape.lower = o.Prefix, ">="
		}
	}
	queue := o.Queue && t.lk != nil
	if queue {
		// Writers that lock the whole bucket lock no key of it.
		t.lk.pending = append(t.lk.pending, t.bucket(b, shared)...)
	} else if err := t.lockPrefix(b, o.Prefix); err != nil {
		return err
	}
	feed := storage.Feed{Limit: o.Limit}
	remaining := o.Limit
	size := firstBatch
	var (
		bt  batch
		buf []pending
	)
	for {
		n := size
		if o.Limit > 0 {
			// Buffered deletes may hide rows of the batch.
			n = min(n, remaining+t.deletes(b))
		}
		got, err := t.batch(&bt, b, shape, lo, hi, n, queue)
		if err != nil {
			return err
		}
		// The batch covers the range up to its last key when it is full,
		// and to the range's end when it is not. A queue's batch covers
		// the keys it went over, those others hold included.
		full := got == n
		if queue {
			full = bt.window == n
		}
		var last []byte
		switch {
		case full && queue:
			last = bt.windowLast
		case full:
			last = bt.keys[got-1]
		}
		buf = t.pending(buf[:0], b, shape, lo, hi, last)
		i, j := 0, 0
		for i < got || j < len(buf) {
			var k, v []byte
			switch {
			case j == len(buf) || i < got && before(bt.keys[i], []byte(buf[j].key), o.Reverse):
				k, v = bt.keys[i], bt.vals[i]
				i++
			default:
				if i < got && string(bt.keys[i]) == buf[j].key {
					i++
				}
				p := buf[j]
				j++
				if p.deleted {
					continue
				}
				k, v = []byte(p.key), p.value
			}
			more, err := feed.Send(fn, k, v)
			if !more {
				return err
			}
			remaining--
		}
		if !full {
			return nil
		}
		bt.last = append(bt.last[:0], last...)
		if o.Reverse {
			hi, shape.upper = bt.last, true
		} else {
			lo, shape.lower = bt.last, ">"
		}
		size = min(2*size, maxBatch)
	}
}

// before reports whether a comes before b in the scan's order.
func before(a, b []byte, reverse bool) bool {
	if reverse {
		return bytes.Compare(a, b) > 0
	}
	return bytes.Compare(a, b) < 0
}

// pending appends to buf, in the scan's order, the buffered writes to b
// within the bounds of a batch's query (shape, lo and hi) and, when last
// is not nil, up to last: this function's writes over the group's.
func (t *tx) pending(buf []pending, b storage.Bucket, shape scanShape, lo, hi, last []byte) []pending {
	in := func(k string) bool {
		switch {
		case shape.lower == ">=" && k < string(lo),
			shape.lower == ">" && k <= string(lo),
			shape.upper && k >= string(hi),
			last != nil && !shape.reverse && k > string(last),
			last != nil && shape.reverse && k < string(last):
			return false
		}
		return true
	}
	for k, wr := range t.own[b] {
		if in(k) {
			buf = append(buf, pending{k, wr})
		}
	}
	for k, wr := range t.base[b] {
		if _, mine := t.own[b][k]; !mine && in(k) {
			buf = append(buf, pending{k, wr})
		}
	}
	slices.SortFunc(buf, func(x, y pending) int {
		if shape.reverse {
			return strings.Compare(y.key, x.key)
		}
		return strings.Compare(x.key, y.key)
	})
	return buf
}

// deletes counts the buffered deletes in b: each may hide a row of a
// batch, which must then hold one more for a scan's limit.
func (t *tx) deletes(b storage.Bucket) int {
	n := 0
	for _, wr := range t.own[b] {
		if wr.deleted {
			n++
		}
	}
	for k, wr := range t.base[b] {
		if _, mine := t.own[b][k]; !mine && wr.deleted {
			n++
		}
	}
	return n
}

// batch reads into bt the first n rows of the query that shape, lo and hi
// make on b, from the transaction's kept batches when one answers it
// (every statement of the transaction reads one snapshot, and its writes
// are buffered until its commit, so the table it reads does not change),
// and otherwise from the table, keeping what it read (in a View, a first
// batch only). It returns how many rows it read.
//
// A queue's batch (storage.ScanOptions.Queue) is read twice, and neither
// kept nor answered from the kept ones: its rows whose keys' locks the
// transaction takes at once, exclusively, skipping those another holds
// (as SELECT ... FOR UPDATE SKIP LOCKED does with rows: concurrent readers
// of a queue take different keys, and never wait for each other or for a
// writer, nor it for them); then, holding them, those rows again, since a
// writer may have committed between the read and the lock.
func (t *tx) batch(bt *batch, b storage.Bucket, shape scanShape, lo, hi []byte, n int, queue bool) (int, error) {
	sk := scanKey{b: b, shape: shape}
	args := []any{string(b)}
	if shape.lower != "" {
		sk.lo, args = string(lo), append(args, lo)
	}
	if shape.upper {
		sk.hi, args = string(hi), append(args, hi)
	}
	if queue {
		return t.fetchQueue(bt, b, shape, append(args, n))
	}
	if c, ok := t.scans[sk]; ok && (len(c.keys) >= n || c.complete) {
		m := min(n, len(c.keys))
		bt.keys = append(bt.keys[:0], c.keys[:m]...)
		bt.vals = append(bt.vals[:0], c.vals[:m]...)
		return m, nil
	}
	got, err := t.fetch(bt, t.q.scan[shape], append(args, n))
	// A View keeps only first batches (n is at most firstBatch): a View
	// that reads a whole store (storage/snapshot's backup) would otherwise
	// hold all of it, and a later scan from the same start is the one the
	// kept batches serve. An Update keeps every batch it read under its
	// locks.
	if err != nil || t.scans == nil || !t.writable && n > firstBatch {
		return got, err
	}
	c := &cached{keys: make([][]byte, got), vals: make([][]byte, got), complete: got < n}
	arena := append([]byte{}, bt.arena...) // the rows' bytes, in bt.keys' and bt.vals' order
	off := 0
	for i := range got {
		c.keys[i] = arena[off : off+len(bt.keys[i]) : off+len(bt.keys[i])]
		off += len(bt.keys[i])
		c.vals[i] = arena[off : off+len(bt.vals[i]) : off+len(bt.vals[i])]
		off += len(bt.vals[i])
	}
	t.scans[sk] = c
	t.added = append(t.added, sk)
	return got, nil
}

// fetch runs one batch's query, reads its rows whole into bt (the
// connection serves one statement at a time, and fn may run others) and
// returns how many it read.
func (t *tx) fetch(bt *batch, sql string, args []any) (int, error) {
	rows, err := t.query(nil, sql, args...)
	if err != nil {
		return 0, t.fail(err)
	}
	defer rows.Close()
	bt.arena, bt.offs = bt.arena[:0], bt.offs[:0]
	var k, v pgtype.DriverBytes
	for rows.Next() {
		if err := rows.Scan(&k, &v); err != nil {
			return 0, t.fail(err)
		}
		bt.arena = append(bt.arena, k...)
		bt.offs = append(bt.offs, len(bt.arena))
		bt.arena = append(bt.arena, v...)
		bt.offs = append(bt.offs, len(bt.arena))
	}
	if err := rows.Err(); err != nil {
		return 0, t.fail(err)
	}
	bt.keys, bt.vals = bt.keys[:0], bt.vals[:0]
	start := 0
	for i := 0; i < len(bt.offs); i += 2 {
		bt.keys = append(bt.keys, bt.arena[start:bt.offs[i]:bt.offs[i]])
		bt.vals = append(bt.vals, bt.arena[bt.offs[i]:bt.offs[i+1]:bt.offs[i+1]])
		start = bt.offs[i+1]
	}
	return len(bt.keys), nil
}

// errShape is a Scan's transaction's conflict when its prefix's length
// could not be registered at once (locks.go): the transaction ends, the
// length is registered, and the transaction runs again.
type errShape struct{ shape }

func (e *errShape) Error() string {
	return fmt.Sprintf("storage/postgres: scans of %d-byte prefixes of %s are not registered yet", e.len, e.b)
}

// lockPrefix makes a Scan of an Update hold its prefix's lock exclusively
// from its first query to the transaction's end (a scan answered from
// rows the transaction kept read them under the lock of a prefix whose
// range holds them), once every commit writing under the prefix takes it
// (its length is registered).
func (t *tx) lockPrefix(b storage.Bucket, prefix []byte) error {
	if t.lk == nil || t.lk.buckets[b] == exclusive {
		return nil
	}
	if len(prefix) == 0 {
		t.lk.pending = append(t.lk.pending, t.bucket(b, exclusive)...)
		return nil
	}
	pk := prefixKey{b, string(prefix)}
	if t.lk.prefixes[pk] {
		return nil
	}
	if sh := (shape{b, len(prefix)}); !t.lk.d.shapes.has(sh) {
		err := t.lk.d.register(t.ctx, sh, true)
		switch {
		case errors.Is(err, errRegisterBusy):
			if t.conflict == nil {
				t.conflict = &errShape{sh}
			}
			return t.conflict
		case err != nil:
			return t.fail(err)
		}
	}
	t.lk.pending = append(t.lk.pending, t.bucket(b, shared)...)
	t.lk.pending = append(t.lk.pending, stmt{t.q.locks.exclusive, []any{lockID(t.lk.d.table, kindPrefix, b, prefix)}})
	t.lk.prefixes[pk] = true
	t.added = append(t.added, pk)
	return nil
}

// forget drops from the transaction what function t added to it: its
// savepoint was rolled back, and the locks with it.
func (t *tx) forget() {
	for _, a := range t.added {
		switch a := a.(type) {
		case bucketKey:
			delete(t.reads, a)
		case prefixKey:
			delete(t.lk.prefixes, a)
		case bucketLock:
			t.lk.buckets[a.b] = min(t.lk.buckets[a.b], a.prev)
		case scanKey:
			delete(t.scans, a)
		}
	}
}

// fetchQueue reads a queue's batch (see batch).
func (t *tx) fetchQueue(bt *batch, b storage.Bucket, shape scanShape, args []any) (int, error) {
	rows, err := t.query(nil, t.q.queue[shape], append(args, lockTag(t.lk.d.table, kindKey, b))...)
	if err != nil {
		return 0, t.fail(err)
	}
	var keys [][]byte
	bt.window = 0
	for rows.Next() {
		var k []byte
		var locked bool
		if err := rows.Scan(&k, &locked); err != nil {
			rows.Close()
			return 0, t.fail(err)
		}
		bt.window++
		bt.windowLast = append(bt.windowLast[:0], k...)
		if locked {
			keys = append(keys, k)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, t.fail(err)
	}
	if len(keys) == 0 {
		bt.keys, bt.vals = bt.keys[:0], bt.vals[:0]
		return 0, nil
	}
	i := 0
	if shape.reverse {
		i = 1
	}
	return t.fetch(bt, t.q.requeue[i], []any{string(b), keys})
}
