package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/postgres"
	"github.com/corebank/corebank/storage/postgres/pgtest"
)

// TestLockIDsAgree checks that the locks a commit takes on a key's
// prefixes of the scanned lengths, which the database computes, are the
// ones a Scan of such a prefix takes, which the DB computes: otherwise a
// scan would not keep writers of its range out.
func TestLockIDsAgree(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	db := openAt(t, dsn, &postgres.Options{Table: "locks.kv"})
	// Register the shapes: scans of a 2-byte and a 4-byte prefix.
	if err := db.Update(ctx, func(tx storage.Tx) error {
		for _, p := range []string{"ab", "abcd"} {
			if err := tx.Scan("b", storage.ScanOptions{Prefix: []byte(p)}, func(_, _ []byte) error { return nil }); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	conn := connect(t, dsn)
	for _, key := range []string{"a", "ab", "abc\x00\xff", "abcde"} {
		tx, err := conn.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, postgres.PrefixLocksSQL(db), append([]byte("locks.kv"), 0), []string{"b"}, [][]byte{[]byte(key)}); err != nil {
			t.Fatal(err)
		}
		rows, err := tx.Query(ctx, `SELECT (classid::bigint << 32) | objid::bigint FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid() ORDER BY 1`)
		if err != nil {
			t.Fatal(err)
		}
		got, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			t.Fatal(err)
		}
		var want []int64
		for _, n := range []int{2, 4} { // the registered lengths
			if n <= len(key) {
				want = append(want, postgres.PrefixLock(db, "b", []byte(key[:n])))
			}
		}
		if fmt.Sprint(sortInts(want)) != fmt.Sprint(sortInts(got)) {
			t.Errorf("key %q: the database locked %x, a scan locks %x", key, got, want)
		}
		_ = tx.Rollback(ctx)
	}
}

// TestQueueScanLocks checks that a queue's Scan holds the locks of the
// keys it returns, which the database computes, as a Get's are computed
// here, skips a key another transaction holds, and shares a due item's
// lock with its lease.
func TestQueueScanLocks(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	db := openAt(t, dsn, nil)
	if err := db.Update(ctx, func(tx storage.Tx) error {
		for _, k := range []string{"a", "b", "c"} {
			if err := tx.Put(storage.BucketDue, []byte(k), []byte("v")); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	other := connect(t, dsn)
	// Another transaction holds b.
	otx, err := other.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := otx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, postgres.KeyLock(db, string(storage.BucketDueLease), []byte("b"))); err != nil {
		t.Fatal(err)
	}
	probe := connect(t, dsn)
	var got []string
	if err := db.Update(ctx, func(tx storage.Tx) error {
		got = got[:0]
		if err := tx.Scan(storage.BucketDue, storage.ScanOptions{Queue: true}, func(k, _ []byte) error {
			got = append(got, string(k))
			return nil
		}); err != nil {
			return err
		}
		for _, k := range []string{"a", "c"} {
			var free bool
			if err := probe.QueryRow(ctx, `SELECT pg_try_advisory_lock_shared($1)`, postgres.KeyLock(db, string(storage.BucketDue), []byte(k))).Scan(&free); err != nil {
				return err
			}
			if free {
				t.Errorf("the lock of %q is free while the scan that returned it runs", k)
				_, _ = probe.Exec(ctx, `SELECT pg_advisory_unlock_all()`)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[a c]" {
		t.Errorf("the queue's scan returned %v, want [a c]: b is another's", got)
	}
	_ = otx.Rollback(ctx)
}

// TestQueueScanPassesHeld checks that a queue's Scan with a limit passes
// over a window of keys others hold to the free keys after it, rather than
// ending there as if the queue were empty: a node's claim must find the
// work another node's claims do not hold.
func TestQueueScanPassesHeld(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	db := openAt(t, dsn, nil)
	var keys []string
	for i := range 200 {
		keys = append(keys, fmt.Sprintf("k%03d", i))
	}
	if err := db.Update(ctx, func(tx storage.Tx) error {
		for _, k := range keys {
			if err := tx.Put(storage.BucketDue, []byte(k), []byte("v")); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// Another transaction holds the first 150, more than a batch.
	other := connect(t, dsn)
	otx, err := other.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = otx.Rollback(ctx) }()
	for _, k := range keys[:150] {
		if _, err := otx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, postgres.KeyLock(db, string(storage.BucketDue), []byte(k))); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	if err := db.Update(ctx, func(tx storage.Tx) error {
		got = got[:0]
		return tx.Scan(storage.BucketDue, storage.ScanOptions{Queue: true, Limit: 20}, func(k, _ []byte) error {
			got = append(got, string(k))
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(keys[150:170], got); diff != "" {
		t.Errorf("the queue's scan (-want +got):\n%s", diff)
	}
}

// TestScanShapeBusy checks that a Scan of a prefix length not registered
// yet, whose registration finds the shapes lock held (by commits), ends
// its transaction, registers the length once the lock is free, and runs
// again, to the same result.
func TestScanShapeBusy(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	db := openAt(t, dsn, nil)
	if err := db.Update(ctx, func(tx storage.Tx) error { return tx.Put("b", []byte("abc"), []byte("v")) }); err != nil {
		t.Fatal(err)
	}
	holder := connect(t, dsn)
	htx, err := holder.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := htx.Exec(ctx, `SELECT pg_advisory_xact_lock_shared($1)`, postgres.ShapesLock(db)); err != nil {
		t.Fatal(err)
	}
	released := make(chan struct{})
	time.AfterFunc(300*time.Millisecond, func() {
		_ = htx.Rollback(ctx)
		close(released)
	})
	defer func() { <-released }() // before holder's connection closes
	runs := 0
	got, err := storage.Update(ctx, db, func(tx storage.Tx) (int, error) {
		runs++
		n := 0
		err := tx.Scan("b", storage.ScanOptions{Prefix: []byte("ab")}, func(_, _ []byte) error { n++; return nil })
		return n, err
	})
	if err != nil || got != 1 {
		t.Fatalf("Update = %d, %v; want 1, nil", got, err)
	}
	if runs != 2 {
		t.Errorf("the function ran %d times, want 2: once meeting the busy lock, once after the registration", runs)
	}
}

// openAt opens a DB on dsn, closed when t ends.
func openAt(t *testing.T, dsn string, opt *postgres.Options) *postgres.DB {
	t.Helper()
	db, err := postgres.Open(context.Background(), dsn, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// connect opens a plain connection to dsn, closed when t ends: another
// session, to hold or probe locks beside a DB's.
func connect(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}

func sortInts(s []int64) []int64 {
	out := append([]int64(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if uint64(out[j]) < uint64(out[i]) {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// TestNoWriteSkew runs, on two nodes, pairs of Updates that each read what
// the other writes, every pair having read before either commits: under
// snapshot isolation both would commit (write skew); Updates that behave
// as if run alone never let both. The same with the read a Scan of a
// prefix, which finds no key, and each Update inserting a key of its own
// under the prefix (a phantom): one of the two must see the other's.
func TestNoWriteSkew(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	nodes := []*postgres.DB{openAt(t, dsn, nil), openAt(t, dsn, nil)}
	for round := range 5 {
		for _, phantom := range []bool{false, true} {
			x, y := fmt.Appendf(nil, "x%d", round), fmt.Appendf(nil, "y%d", round)
			prefix := fmt.Appendf(nil, "p%d/", round)
			if err := nodes[0].Update(ctx, func(tx storage.Tx) error {
				if err := tx.Put("skew", x, []byte("on")); err != nil {
					return err
				}
				return tx.Put("skew", y, []byte("on"))
			}); err != nil {
				t.Fatal(err)
			}
			// Both read before either writes, the first run only: a run
			// that loses is run again, and then reads alone.
			var read sync.WaitGroup
			read.Add(2)
			var once [2]sync.Once
			var wg sync.WaitGroup
			errs := make([]error, 2)
			for i := range 2 {
				mine, other := x, y
				if i == 1 {
					mine, other = y, x
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs[i] = nodes[i].Update(ctx, func(tx storage.Tx) error {
						free := false
						if phantom {
							n := 0
							if err := tx.Scan("skew", storage.ScanOptions{Prefix: prefix}, func(_, _ []byte) error { n++; return nil }); err != nil {
								return err
							}
							free = n == 0
						} else {
							v, err := tx.Get("skew", other)
							if err != nil {
								return err
							}
							free = string(v) == "on"
						}
						once[i].Do(func() {
							read.Done()
							done := make(chan struct{})
							go func() { read.Wait(); close(done) }()
							// The wait is for the other's read, which a
							// prefix scan's lock holds back until this one
							// ends (phantom): then it runs out, and this
							// writes first. 5 s here cost the package 25 s.
							select {
							case <-done:
							case <-time.After(500 * time.Millisecond):
							}
						})
						if !free {
							return nil
						}
						if phantom {
							return tx.Put("skew", append(append([]byte{}, prefix...), mine...), []byte("taken"))
						}
						return tx.Put("skew", mine, []byte("off"))
					})
				}()
			}
			wg.Wait()
			for _, err := range errs {
				if err != nil && !errors.Is(err, postgres.ErrRetriesExhausted) {
					t.Fatal(err)
				}
			}
			err := nodes[0].View(ctx, func(tx storage.Tx) error {
				if phantom {
					n := 0
					err := tx.Scan("skew", storage.ScanOptions{Prefix: prefix}, func(_, _ []byte) error { n++; return nil })
					if err == nil && n != 1 {
						t.Errorf("round %d: %d keys under the prefix, want 1: both Updates saw it empty", round, n)
					}
					return err
				}
				vx, _ := tx.Get("skew", x)
				vy, _ := tx.Get("skew", y)
				if string(vx) == "off" && string(vy) == "off" {
					t.Errorf("round %d: both keys off: each Update read the other's key as on (write skew)", round)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
}
