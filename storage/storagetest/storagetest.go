package storagetest

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math/rand"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank/storage"
)

// Run runs the conformance suite against the backend returned by open, one
// subtest per behavior. open is called once per subtest and must return an
// empty backend; Run closes it when the subtest ends, possibly after the
// subtest already closed it, so Close must tolerate a second call.
func Run(t *testing.T, open func(t *testing.T) storage.Backend) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, db storage.Backend)
	}{
		{"ErrNotFound", testNotFound},
		{"PutGetOverwriteDelete", testPutGetOverwriteDelete},
		{"DeleteAbsent", testDeleteAbsent},
		{"EmptyValue", testEmptyValue},
		{"BucketsAreSeparate", testBucketsSeparate},
		{"Buckets", testBuckets},
		{"RollbackOnError", testRollbackOnError},
		{"RollbackOnPanic", testRollbackOnPanic},
		{"ErrReadOnly", testReadOnly},
		{"ErrEmptyKey", testEmptyKey},
		{"ByteOrder", testByteOrder},
		{"ScanOptions", testScanOptions},
		{"QueueScan", testQueueScan},
		{"Prefetch", testPrefetch},
		{"ScanStop", testScanStop},
		{"ScanWhileWriting", testScanWhileWriting},
		{"SliceAliasing", testAliasing},
		{"ReadsOwnWrites", testReadsOwnWrites},
		{"SnapshotIsolation", testSnapshot},
		{"ConcurrentIncrements", testIncrements},
		{"RandomOperations", testRandom},
		{"RandomOperationsLarge", testRandomLarge},
		{"ContextCancelled", testCancelled},
		{"ErrTxDone", testTxDone},
		{"ErrClosed", testClosed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := open(t)
			t.Cleanup(func() { _ = db.Close() })
			tt.fn(t, db)
		})
	}
}

// RunDurable checks that committed data survives closing and reopening a
// durable backend and that rolled-back data does not. open must open (or
// create) the backend stored at path; RunDurable closes what it opens.
func RunDurable(t *testing.T, open func(t *testing.T, path string) storage.Backend) {
	t.Helper()
	t.Run("ReopenKeepsCommits", func(t *testing.T) {
		path := t.TempDir() + "/db"
		db := open(t, path)
		mustUpdate(t, db, func(tx storage.Tx) error {
			for i := range 100 {
				if err := tx.Put(bucketA, fmt.Appendf(nil, "k%03d", i), fmt.Appendf(nil, "v%d", i)); err != nil {
					return err
				}
			}
			return tx.Put(bucketB, []byte("other"), []byte("bucket"))
		})
		mustUpdate(t, db, func(tx storage.Tx) error { return tx.Delete(bucketA, []byte("k050")) })
		err := db.Update(context.Background(), func(tx storage.Tx) error {
			if err := tx.Put(bucketA, []byte("rolled-back"), []byte("x")); err != nil {
				return err
			}
			return errBoom
		})
		if !errors.Is(err, errBoom) {
			t.Fatalf("Update = %v, want %v", err, errBoom)
		}
		if err := db.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}

		db = open(t, path)
		defer db.Close()
		var want []kv
		for i := range 100 {
			if i != 50 {
				want = append(want, kv{fmt.Sprintf("k%03d", i), fmt.Sprintf("v%d", i)})
			}
		}
		if diff := cmp.Diff(want, dump(t, db, bucketA)); diff != "" {
			t.Errorf("after reopen (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]kv{{"other", "bucket"}}, dump(t, db, bucketB)); diff != "" {
			t.Errorf("other bucket after reopen (-want +got):\n%s", diff)
		}
		mustView(t, db, func(tx storage.Tx) error {
			got, err := storage.Buckets(tx)
			if diff := cmp.Diff([]storage.Bucket{bucketA, bucketB}, got); diff != "" || err != nil {
				t.Errorf("Buckets after reopen: %v (-want +got):\n%s", err, diff)
			}
			return nil
		})
	})
}

const (
	bucketA storage.Bucket = "storagetest.a"
	bucketB storage.Bucket = "storagetest.b"
)

var errBoom = errors.New("storagetest: boom")

type kv struct{ K, V string }

func mustUpdate(tb testing.TB, db storage.Backend, fn func(storage.Tx) error) {
	tb.Helper()
	if err := db.Update(context.Background(), fn); err != nil {
		tb.Fatalf("Update: %v", err)
	}
}

func mustView(tb testing.TB, db storage.Backend, fn func(storage.Tx) error) {
	tb.Helper()
	if err := db.View(context.Background(), fn); err != nil {
		tb.Fatalf("View: %v", err)
	}
}

func mustPut(tb testing.TB, db storage.Backend, b storage.Bucket, pairs ...string) {
	tb.Helper()
	mustUpdate(tb, db, func(tx storage.Tx) error {
		for i := 0; i+1 < len(pairs); i += 2 {
			if err := tx.Put(b, []byte(pairs[i]), []byte(pairs[i+1])); err != nil {
				return err
			}
		}
		return nil
	})
}

// scan returns the key/value pairs a Scan visits.
func scan(tx storage.Tx, b storage.Bucket, o storage.ScanOptions) ([]kv, error) {
	var got []kv
	err := tx.Scan(b, o, func(k, v []byte) error {
		got = append(got, kv{string(k), string(v)})
		return nil
	})
	return got, err
}

// dump returns every pair in b, ascending.
func dump(tb testing.TB, db storage.Backend, b storage.Bucket) []kv {
	tb.Helper()
	var got []kv
	mustView(tb, db, func(tx storage.Tx) error {
		var err error
		got, err = scan(tx, b, storage.ScanOptions{})
		return err
	})
	return got
}

func get(tx storage.Tx, b storage.Bucket, k string) (string, error) {
	v, err := tx.Get(b, []byte(k))
	return string(v), err
}

func testNotFound(t *testing.T, db storage.Backend) {
	mustView(t, db, func(tx storage.Tx) error {
		if _, err := tx.Get(bucketA, []byte("missing")); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("Get in missing bucket = %v, want ErrNotFound", err)
		}
		got, err := scan(tx, bucketA, storage.ScanOptions{})
		if err != nil || len(got) != 0 {
			t.Errorf("Scan of missing bucket = %v, %v; want nothing", got, err)
		}
		return nil
	})
	mustPut(t, db, bucketA, "present", "1")
	mustView(t, db, func(tx storage.Tx) error {
		if _, err := tx.Get(bucketA, []byte("missing")); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("Get = %v, want ErrNotFound", err)
		}
		if _, err := tx.Get(bucketA, []byte("presen")); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("Get of a prefix of a key = %v, want ErrNotFound", err)
		}
		return nil
	})
	mustUpdate(t, db, func(tx storage.Tx) error {
		if _, err := tx.Get(bucketA, []byte("missing")); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("Get in Update = %v, want ErrNotFound", err)
		}
		return nil
	})
}

func testPutGetOverwriteDelete(t *testing.T, db storage.Backend) {
	mustPut(t, db, bucketA, "k", "v1")
	check := func(want string, wantErr error) {
		t.Helper()
		mustView(t, db, func(tx storage.Tx) error {
			got, err := get(tx, bucketA, "k")
			if !errors.Is(err, wantErr) || got != want {
				t.Errorf("Get = %q, %v; want %q, %v", got, err, want, wantErr)
			}
			return nil
		})
	}
	check("v1", nil)
	mustPut(t, db, bucketA, "k", "v2")
	check("v2", nil)
	mustUpdate(t, db, func(tx storage.Tx) error { return tx.Delete(bucketA, []byte("k")) })
	check("", storage.ErrNotFound)
	mustPut(t, db, bucketA, "k", "v3")
	check("v3", nil)
	// Several writes to one key in one Update: the last one wins.
	mustUpdate(t, db, func(tx storage.Tx) error {
		for _, v := range []string{"a", "b", "c"} {
			if err := tx.Put(bucketA, []byte("k"), []byte(v)); err != nil {
				return err
			}
		}
		return nil
	})
	check("c", nil)
	mustUpdate(t, db, func(tx storage.Tx) error {
		if err := tx.Delete(bucketA, []byte("k")); err != nil {
			return err
		}
		return tx.Put(bucketA, []byte("k"), []byte("again"))
	})
	check("again", nil)
	mustUpdate(t, db, func(tx storage.Tx) error {
		if err := tx.Put(bucketA, []byte("k"), []byte("gone")); err != nil {
			return err
		}
		return tx.Delete(bucketA, []byte("k"))
	})
	check("", storage.ErrNotFound)
	if diff := cmp.Diff([]kv(nil), dump(t, db, bucketA)); diff != "" {
		t.Errorf("scan after delete (-want +got):\n%s", diff)
	}
}

func testDeleteAbsent(t *testing.T, db storage.Backend) {
	mustUpdate(t, db, func(tx storage.Tx) error {
		if err := tx.Delete(bucketA, []byte("never")); err != nil {
			t.Errorf("Delete in missing bucket = %v, want nil", err)
		}
		if err := tx.Put(bucketA, []byte("k"), []byte("v")); err != nil {
			return err
		}
		if err := tx.Delete(bucketA, []byte("never")); err != nil {
			t.Errorf("Delete of absent key = %v, want nil", err)
		}
		return nil
	})
	mustUpdate(t, db, func(tx storage.Tx) error {
		for range 2 {
			if err := tx.Delete(bucketA, []byte("k")); err != nil {
				t.Errorf("Delete = %v, want nil", err)
			}
		}
		return nil
	})
	if got := dump(t, db, bucketA); len(got) != 0 {
		t.Errorf("bucket = %v, want empty", got)
	}
}

func testEmptyValue(t *testing.T, db storage.Backend) {
	mustUpdate(t, db, func(tx storage.Tx) error {
		if err := tx.Put(bucketA, []byte("nil"), nil); err != nil {
			return err
		}
		return tx.Put(bucketA, []byte("empty"), []byte{})
	})
	mustView(t, db, func(tx storage.Tx) error {
		for _, k := range []string{"nil", "empty"} {
			v, err := tx.Get(bucketA, []byte(k))
			if err != nil || len(v) != 0 {
				t.Errorf("Get(%q) = %q, %v; want empty value", k, v, err)
			}
		}
		return nil
	})
	if diff := cmp.Diff([]kv{{"empty", ""}, {"nil", ""}}, dump(t, db, bucketA)); diff != "" {
		t.Errorf("scan (-want +got):\n%s", diff)
	}
}

func testBucketsSeparate(t *testing.T, db storage.Backend) {
	mustPut(t, db, bucketA, "k", "a")
	mustPut(t, db, bucketB, "k", "b", "only-b", "b")
	if diff := cmp.Diff([]kv{{"k", "a"}}, dump(t, db, bucketA)); diff != "" {
		t.Errorf("bucket a (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]kv{{"k", "b"}, {"only-b", "b"}}, dump(t, db, bucketB)); diff != "" {
		t.Errorf("bucket b (-want +got):\n%s", diff)
	}
}

// testBuckets checks storage.Buckets, through the backend's
// storage.BucketLister: exactly the buckets holding keys, in byte order,
// in a View (a snapshot, blind to a bucket made after it began) and in an
// Update (its own writes and deletes included, gone on rollback).
func testBuckets(t *testing.T, db storage.Backend) {
	buckets := func(tx storage.Tx) []storage.Bucket {
		t.Helper()
		got, err := storage.Buckets(tx)
		if err != nil {
			t.Fatalf("Buckets: %v", err)
		}
		return got
	}
	view := func() []storage.Bucket {
		t.Helper()
		var got []storage.Bucket
		mustView(t, db, func(tx storage.Tx) error {
			got = buckets(tx)
			return nil
		})
		return got
	}
	if got := view(); len(got) != 0 {
		t.Fatalf("an empty store lists buckets %q", got)
	}
	const (
		// Byte order, not a collation's: "A" < "a" < "é". (PostgreSQL
		// stores bucket names as text: no NUL, valid UTF-8.)
		low  storage.Bucket = "storagetest.A"
		high storage.Bucket = "storagetest.é"
		gone storage.Bucket = "storagetest.gone"
		made storage.Bucket = "storagetest.made"
	)
	mustPut(t, db, high, "k", "v")
	mustPut(t, db, bucketB, "k1", "v", "k2", "v")
	mustPut(t, db, low, "k", "")
	mustPut(t, db, gone, "k", "v")
	mustPut(t, db, bucketA, "k", "v")
	mustUpdate(t, db, func(tx storage.Tx) error { return tx.Delete(gone, []byte("k")) })
	want := []storage.Bucket{low, bucketA, bucketB, high}
	if diff := cmp.Diff(want, view()); diff != "" {
		t.Fatalf("View (-want +got):\n%s", diff)
	}

	err := db.Update(context.Background(), func(tx storage.Tx) error {
		if err := tx.Put(made, []byte("k"), []byte("v")); err != nil {
			return err
		}
		if err := tx.Delete(bucketA, []byte("k")); err != nil {
			return err
		}
		if err := tx.Delete(bucketB, []byte("k1")); err != nil {
			return err
		}
		if diff := cmp.Diff([]storage.Bucket{low, bucketB, made, high}, buckets(tx)); diff != "" {
			t.Errorf("Update sees its own writes (-want +got):\n%s", diff)
		}
		return errBoom
	})
	if !errors.Is(err, errBoom) {
		t.Fatalf("Update = %v, want errBoom", err)
	}
	if diff := cmp.Diff(want, view()); diff != "" {
		t.Fatalf("after a rollback (-want +got):\n%s", diff)
	}

	mustView(t, db, func(tx storage.Tx) error {
		// A View's snapshot may be taken at its first read (PostgreSQL's
		// REPEATABLE READ), so read first.
		if diff := cmp.Diff(want, buckets(tx)); diff != "" {
			t.Errorf("View (-want +got):\n%s", diff)
		}
		// On another goroutine: an Update inside a View deadlocks bbolt.
		committed := make(chan error, 1)
		go func() {
			committed <- db.Update(context.Background(), func(tx storage.Tx) error { return tx.Put(made, []byte("k"), []byte("v")) })
		}()
		select {
		case err := <-committed:
			if err != nil {
				t.Fatalf("concurrent Update: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("an Update could not commit while a View was open")
		}
		if diff := cmp.Diff(want, buckets(tx)); diff != "" {
			t.Errorf("a View lists a bucket made after it began (-want +got):\n%s", diff)
		}
		return nil
	})
	if diff := cmp.Diff([]storage.Bucket{low, bucketA, bucketB, made, high}, view()); diff != "" {
		t.Errorf("after a commit (-want +got):\n%s", diff)
	}
}

// failingWrites writes over existing state: an overwrite, a delete, a new key
// and a new bucket.
func failingWrites(tx storage.Tx) error {
	if err := tx.Put(bucketA, []byte("keep"), []byte("changed")); err != nil {
		return err
	}
	if err := tx.Delete(bucketA, []byte("doomed")); err != nil {
		return err
	}
	if err := tx.Put(bucketA, []byte("new"), []byte("x")); err != nil {
		return err
	}
	return tx.Put(bucketB, []byte("new-bucket"), []byte("x"))
}

func checkUntouched(t *testing.T, db storage.Backend) {
	t.Helper()
	if diff := cmp.Diff([]kv{{"doomed", "2"}, {"keep", "1"}}, dump(t, db, bucketA)); diff != "" {
		t.Errorf("bucket a after rollback (-want +got):\n%s", diff)
	}
	if got := dump(t, db, bucketB); len(got) != 0 {
		t.Errorf("bucket b after rollback = %v, want empty", got)
	}
}

func testRollbackOnError(t *testing.T, db storage.Backend) {
	mustPut(t, db, bucketA, "keep", "1", "doomed", "2")
	err := db.Update(context.Background(), func(tx storage.Tx) error {
		if err := failingWrites(tx); err != nil {
			return err
		}
		return fmt.Errorf("wrapped: %w", errBoom)
	})
	if !errors.Is(err, errBoom) {
		t.Fatalf("Update = %v, want %v", err, errBoom)
	}
	checkUntouched(t, db)
	// The backend still works after a rollback.
	mustPut(t, db, bucketA, "after", "ok")
}

func testRollbackOnPanic(t *testing.T, db storage.Backend) {
	mustPut(t, db, bucketA, "keep", "1", "doomed", "2")
	got := func() (r any) {
		defer func() { r = recover() }()
		_ = db.Update(context.Background(), func(tx storage.Tx) error {
			if err := failingWrites(tx); err != nil {
				return err
			}
			panic("storagetest panic")
		})
		return nil
	}()
	if got != "storagetest panic" {
		t.Fatalf("recovered %v, want the panic value", got)
	}
	checkUntouched(t, db)
	mustPut(t, db, bucketA, "after", "ok")
}

func testReadOnly(t *testing.T, db storage.Backend) {
	mustPut(t, db, bucketA, "k", "v")
	mustView(t, db, func(tx storage.Tx) error {
		if err := tx.Put(bucketA, []byte("k"), []byte("w")); !errors.Is(err, storage.ErrReadOnly) {
			t.Errorf("Put in View = %v, want ErrReadOnly", err)
		}
		if err := tx.Put(bucketB, []byte("k"), []byte("w")); !errors.Is(err, storage.ErrReadOnly) {
			t.Errorf("Put to a new bucket in View = %v, want ErrReadOnly", err)
		}
		if err := tx.Delete(bucketA, []byte("k")); !errors.Is(err, storage.ErrReadOnly) {
			t.Errorf("Delete in View = %v, want ErrReadOnly", err)
		}
		return nil
	})
	if diff := cmp.Diff([]kv{{"k", "v"}}, dump(t, db, bucketA)); diff != "" {
		t.Errorf("after View writes (-want +got):\n%s", diff)
	}
}

func testEmptyKey(t *testing.T, db storage.Backend) {
	mustUpdate(t, db, func(tx storage.Tx) error {
		for _, k := range [][]byte{nil, {}} {
			if err := tx.Put(bucketA, k, []byte("v")); !errors.Is(err, storage.ErrEmptyKey) {
				t.Errorf("Put(%#v) = %v, want ErrEmptyKey", k, err)
			}
		}
		return nil
	})
	if got := dump(t, db, bucketA); len(got) != 0 {
		t.Errorf("bucket = %v, want empty", got)
	}
}

// orderKeys are byte strings whose order depends on 0x00 and 0xff bytes and
// on keys being prefixes of each other.
var orderKeys = []string{
	"\x00", "\x00\x00", "\x00\xff", "\x01", "\x7f", "\x80", "\xff", "\xff\x00", "\xff\xff", "\xff\xff\xff",
	"a", "a\x00", "a\xff", "a\xff\x00", "a\xff\xff", "ab", "abc", "abd", "b", "b\x00",
}

func putShuffled(t *testing.T, db storage.Backend, keys []string) {
	t.Helper()
	r := rand.New(rand.NewSource(1))
	shuffled := slices.Clone(keys)
	r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	// Two Updates so that keys come from more than one commit.
	half := len(shuffled) / 2
	for _, part := range [][]string{shuffled[:half], shuffled[half:]} {
		mustUpdate(t, db, func(tx storage.Tx) error {
			for _, k := range part {
				if err := tx.Put(bucketA, []byte(k), []byte("v"+k)); err != nil {
					return err
				}
			}
			return nil
		})
	}
}

func testByteOrder(t *testing.T, db storage.Backend) {
	putShuffled(t, db, orderKeys)
	want := slices.Clone(orderKeys)
	slices.SortFunc(want, func(a, b string) int { return bytes.Compare([]byte(a), []byte(b)) })
	keysOf := func(o storage.ScanOptions) []string {
		var got []string
		mustView(t, db, func(tx storage.Tx) error {
			return tx.Scan(bucketA, o, func(k, _ []byte) error {
				got = append(got, string(k))
				return nil
			})
		})
		return got
	}
	if diff := cmp.Diff(want, keysOf(storage.ScanOptions{})); diff != "" {
		t.Errorf("ascending (-want +got):\n%s", diff)
	}
	slices.Reverse(want)
	if diff := cmp.Diff(want, keysOf(storage.ScanOptions{Reverse: true})); diff != "" {
		t.Errorf("descending (-want +got):\n%s", diff)
	}
}

// model is the reference Scan over a sorted map of committed pairs.
func model(state map[string]string, o storage.ScanOptions) []kv {
	keys := make([]string, 0, len(state))
	for k := range state {
		if bytes.HasPrefix([]byte(k), o.Prefix) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	if o.Reverse {
		slices.Reverse(keys)
	}
	var out []kv
	for _, k := range keys {
		if len(o.After) > 0 {
			c := bytes.Compare([]byte(k), o.After)
			if (!o.Reverse && c <= 0) || (o.Reverse && c >= 0) {
				continue
			}
		}
		out = append(out, kv{k, state[k]})
		if o.Limit > 0 && len(out) == o.Limit {
			break
		}
	}
	return out
}

// scanCases returns every combination of prefix, After cursor, direction
// and limit worth checking over keys.
func scanCases(keys []string) []storage.ScanOptions {
	prefixes := []string{"", "\x00", "\xff", "\xff\xff", "\xff\xff\xff\xff", "a", "a\xff", "ab", "abc", "abz", "b", "zz"}
	afters := []string{"", "\x00\x00\x00", "a\x01", "aa", "abcd", "c", "\xff\xff\xff\xff"}
	afters = append(afters, keys...)
	var cases []storage.ScanOptions
	for _, p := range prefixes {
		for _, a := range afters {
			for _, rev := range []bool{false, true} {
				for _, lim := range []int{0, 1, 2} {
					o := storage.ScanOptions{Reverse: rev, Limit: lim}
					if p != "" {
						o.Prefix = []byte(p)
					}
					if a != "" {
						o.After = []byte(a)
					}
					cases = append(cases, o)
				}
			}
		}
	}
	return cases
}

func describe(o storage.ScanOptions) string {
	return fmt.Sprintf("Prefix=%q After=%q Reverse=%v Limit=%d", o.Prefix, o.After, o.Reverse, o.Limit)
}

func testScanOptions(t *testing.T, db storage.Backend) {
	putShuffled(t, db, orderKeys)
	state := map[string]string{}
	for _, k := range orderKeys {
		state[k] = "v" + k
	}
	mustView(t, db, func(tx storage.Tx) error {
		for _, o := range scanCases(orderKeys) {
			got, err := scan(tx, bucketA, o)
			if err != nil {
				t.Fatalf("Scan(%s): %v", describe(o), err)
			}
			if diff := cmp.Diff(model(state, o), got); diff != "" {
				t.Errorf("Scan(%s) (-want +got):\n%s", describe(o), diff)
			}
		}
		return nil
	})
}

// testQueueScan checks that a queue's Scan (ScanOptions.Queue), alone,
// visits what any Scan does, in an Update with buffered writes too.
func testQueueScan(t *testing.T, db storage.Backend) {
	putShuffled(t, db, orderKeys)
	state := map[string]string{}
	for _, k := range orderKeys {
		state[k] = "v" + k
	}
	err := db.Update(context.Background(), func(tx storage.Tx) error {
		want := maps.Clone(state)
		for i, k := range orderKeys {
			if i%3 == 0 {
				if err := tx.Delete(bucketA, []byte(k)); err != nil {
					return err
				}
				delete(want, k)
			}
		}
		if err := tx.Put(bucketA, []byte("b\x00new"), []byte("new")); err != nil {
			return err
		}
		want["b\x00new"] = "new"
		for _, o := range scanCases(orderKeys) {
			o.Queue = true
			got, err := scan(tx, bucketA, o)
			if err != nil {
				return fmt.Errorf("Scan(%s): %w", describe(o), err)
			}
			if diff := cmp.Diff(model(want, o), got); diff != "" {
				t.Errorf("queue's Scan(%s) (-want +got):\n%s", describe(o), diff)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// testPrefetch checks that Gets and Scans after a Prefetch answer what
// they would without it: stored values, absent keys and empty prefixes,
// the transaction's own writes before and after the Prefetch, duplicates
// and another bucket's keys.
func testPrefetch(t *testing.T, db storage.Backend) {
	mustPut(t, db, bucketA, "a", "1", "b", "2", "c", "3")
	mustPut(t, db, bucketB, "a", "b1")
	ref := func(b storage.Bucket, k string) storage.Ref { return storage.Ref{Bucket: b, Key: []byte(k)} }
	prefix := func(b storage.Bucket, p string) storage.Ref {
		return storage.Ref{Bucket: b, Key: []byte(p), Prefix: true}
	}
	refs := []storage.Ref{ref(bucketA, "a"), ref(bucketA, "b"), ref(bucketA, "c"), ref(bucketA, "none"),
		ref(bucketA, "a"), ref(bucketB, "a"), ref(bucketB, "b"), ref(bucketA, "new"),
		prefix(bucketA, "b"), prefix(bucketA, "c"), prefix(bucketA, "n"), prefix(bucketB, "a"), prefix(bucketA, "b")}
	read := func(tx storage.Tx) []string {
		var out []string
		for _, r := range refs {
			if r.Prefix {
				kvs, err := scan(tx, r.Bucket, storage.ScanOptions{Prefix: r.Key})
				out = append(out, fmt.Sprintf("%s/%s*=%v %v", r.Bucket, r.Key, kvs, err))
				continue
			}
			v, err := get(tx, r.Bucket, string(r.Key))
			out = append(out, fmt.Sprintf("%s/%s=%s %v", r.Bucket, r.Key, v, err))
		}
		return out
	}
	var want, got []string
	mustView(t, db, func(tx storage.Tx) error { want = read(tx); return nil })
	mustView(t, db, func(tx storage.Tx) error {
		if err := storage.Prefetch(tx, refs...); err != nil {
			return err
		}
		got = read(tx)
		return nil
	})
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("View: Gets after Prefetch (-without +with):\n%s", diff)
	}
	write := func(tx storage.Tx) error {
		if err := tx.Put(bucketA, []byte("b"), []byte("own")); err != nil {
			return err
		}
		return tx.Delete(bucketA, []byte("c"))
	}
	err := db.Update(context.Background(), func(tx storage.Tx) error {
		if err := write(tx); err != nil {
			return err
		}
		want = read(tx)
		return errors.New("rolled back")
	})
	if err == nil {
		t.Fatal("the Update did not fail")
	}
	mustUpdate(t, db, func(tx storage.Tx) error {
		if err := tx.Put(bucketA, []byte("b"), []byte("own")); err != nil {
			return err
		}
		if err := storage.Prefetch(tx, refs...); err != nil {
			return err
		}
		if err := tx.Delete(bucketA, []byte("c")); err != nil {
			return err
		}
		got = read(tx)
		return nil
	})
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Update: Gets after Prefetch (-without +with):\n%s", diff)
	}
}

func testScanStop(t *testing.T, db storage.Backend) {
	putShuffled(t, db, orderKeys)
	for _, rev := range []bool{false, true} {
		mustView(t, db, func(tx storage.Tx) error {
			n := 0
			err := tx.Scan(bucketA, storage.ScanOptions{Reverse: rev}, func(k, v []byte) error {
				n++
				if n == 3 {
					return storage.ErrStop
				}
				return nil
			})
			if err != nil || n != 3 {
				t.Errorf("Scan with ErrStop (reverse %v) = %v after %d calls; want nil after 3", rev, err, n)
			}
			n = 0
			err = tx.Scan(bucketA, storage.ScanOptions{Reverse: rev}, func(k, v []byte) error {
				n++
				if n == 2 {
					return fmt.Errorf("wrapped: %w", errBoom)
				}
				return nil
			})
			if !errors.Is(err, errBoom) || n != 2 {
				t.Errorf("Scan with error (reverse %v) = %v after %d calls; want %v after 2", rev, err, n, errBoom)
			}
			return nil
		})
	}
}

// testScanWhileWriting writes through the Tx from inside a Scan callback,
// which services do when they expire or move what they scan.
func testScanWhileWriting(t *testing.T, db storage.Backend) {
	var keys []string
	for i := range 300 {
		keys = append(keys, fmt.Sprintf("due/%04d", i))
	}
	putShuffled(t, db, keys)
	mustPut(t, db, bucketA, "zz-last", "x")
	// Delete a long run of keys, then scan across the gap in the same
	// Update (a B+tree backend has emptied leaves that it rebalances only on
	// commit).
	err := db.Update(context.Background(), func(tx storage.Tx) error {
		state := map[string]string{"zz-last": "x"}
		for i, k := range keys {
			if i >= 20 && i < 280 {
				if err := tx.Delete(bucketA, []byte(k)); err != nil {
					return err
				}
				continue
			}
			state[k] = "v" + k
		}
		for _, o := range []storage.ScanOptions{{}, {Reverse: true}, {Prefix: []byte("due/")}, {Prefix: []byte("due/"), Reverse: true},
			{Prefix: []byte("due/"), After: []byte("due/0200")}, {Prefix: []byte("due/"), After: []byte("due/0200"), Reverse: true}} {
			got, err := scan(tx, bucketA, o)
			if err != nil {
				return err
			}
			if diff := cmp.Diff(model(state, o), got); diff != "" {
				t.Errorf("Scan(%s) across deleted keys (-want +got):\n%s", describe(o), diff)
			}
		}
		return errBoom
	})
	if !errors.Is(err, errBoom) {
		t.Fatalf("Update = %v, want %v", err, errBoom)
	}
	for _, rev := range []bool{false, true} {
		var seen []string
		mustUpdate(t, db, func(tx storage.Tx) error {
			seen = nil
			return tx.Scan(bucketA, storage.ScanOptions{Prefix: []byte("due/"), Reverse: rev}, func(k, v []byte) error {
				seen = append(seen, string(k))
				if err := tx.Delete(bucketA, k); err != nil {
					return err
				}
				// A key inside the range being scanned, and one in another bucket.
				if err := tx.Put(bucketA, append([]byte("done/"), k...), v); err != nil {
					return err
				}
				return tx.Put(bucketB, k, v)
			})
		})
		want := slices.Clone(keys)
		if rev {
			slices.Reverse(want)
		}
		if diff := cmp.Diff(want, seen); diff != "" {
			t.Errorf("keys visited while deleting (reverse %v) (-want +got):\n%s", rev, diff)
		}
		if got := len(dump(t, db, bucketB)); got != len(keys) {
			t.Errorf("bucket b has %d keys, want %d", got, len(keys))
		}
		// Move them back for the next direction.
		mustUpdate(t, db, func(tx storage.Tx) error {
			return tx.Scan(bucketA, storage.ScanOptions{Prefix: []byte("done/")}, func(k, v []byte) error {
				if err := tx.Delete(bucketA, k); err != nil {
					return err
				}
				return tx.Put(bucketA, bytes.TrimPrefix(k, []byte("done/")), v)
			})
		})
	}
}

func testAliasing(t *testing.T, db storage.Backend) {
	key := []byte("key")
	val := []byte("value")
	mustUpdate(t, db, func(tx storage.Tx) error {
		if err := tx.Put(bucketA, key, val); err != nil {
			return err
		}
		key[0], val[0] = 'X', 'X'
		got, err := tx.Get(bucketA, []byte("key"))
		if err != nil || string(got) != "value" {
			t.Errorf("Get after mutating Put's slices in the same Update = %q, %v", got, err)
		}
		got[0] = 'Y'
		return nil
	})
	key[1], val[1] = 'X', 'X'
	mustView(t, db, func(tx storage.Tx) error {
		got, err := tx.Get(bucketA, []byte("key"))
		if err != nil || string(got) != "value" {
			t.Fatalf("Get = %q, %v; want \"value\"", got, err)
		}
		got[0] = 'Z'
		if got, _ := tx.Get(bucketA, []byte("key")); string(got) != "value" {
			t.Errorf("Get after mutating a returned slice = %q", got)
		}
		return tx.Scan(bucketA, storage.ScanOptions{}, func(k, v []byte) error {
			k[0], v[0] = 'Q', 'Q'
			return nil
		})
	})
	mustUpdate(t, db, func(tx storage.Tx) error {
		return tx.Scan(bucketA, storage.ScanOptions{}, func(k, v []byte) error {
			k[0], v[0] = 'R', 'R'
			return nil
		})
	})
	if diff := cmp.Diff([]kv{{"key", "value"}}, dump(t, db, bucketA)); diff != "" {
		t.Errorf("after mutating slices (-want +got):\n%s", diff)
	}
}

func testReadsOwnWrites(t *testing.T, db storage.Backend) {
	putShuffled(t, db, orderKeys)
	state := map[string]string{}
	for _, k := range orderKeys {
		state[k] = "v" + k
	}
	extra := []string{"\x00\x01", "a\x01", "ab\x00", "abc\xff", "b\x01", "\xff\xff\x01", "zz", "c"}
	candidates := append(slices.Clone(orderKeys), extra...)
	err := db.Update(context.Background(), func(tx storage.Tx) error {
		// Update may run fn more than once: start each run afresh.
		r := rand.New(rand.NewSource(2))
		state := maps.Clone(state)
		for i := range 40 {
			k := candidates[r.Intn(len(candidates))]
			if r.Intn(3) == 0 {
				delete(state, k)
				if err := tx.Delete(bucketA, []byte(k)); err != nil {
					return err
				}
			} else {
				v := fmt.Sprintf("w%d", i)
				state[k] = v
				if err := tx.Put(bucketA, []byte(k), []byte(v)); err != nil {
					return err
				}
			}
			for _, c := range candidates {
				got, err := get(tx, bucketA, c)
				want, ok := state[c]
				if ok != (err == nil) || got != want || (!ok && !errors.Is(err, storage.ErrNotFound)) {
					t.Fatalf("step %d: Get(%q) = %q, %v; want %q (present %v)", i, c, got, err, want, ok)
				}
			}
		}
		for _, o := range scanCases(candidates) {
			got, err := scan(tx, bucketA, o)
			if err != nil {
				t.Fatalf("Scan(%s): %v", describe(o), err)
			}
			if diff := cmp.Diff(model(state, o), got); diff != "" {
				t.Errorf("Scan(%s) inside Update (-want +got):\n%s", describe(o), diff)
			}
		}
		return errBoom // roll back: the committed data must be untouched
	})
	if !errors.Is(err, errBoom) {
		t.Fatalf("Update = %v, want %v", err, errBoom)
	}
	want := model(state, storage.ScanOptions{})
	if diff := cmp.Diff(want, dump(t, db, bucketA)); diff != "" {
		t.Errorf("after rolled-back Update (-want +got):\n%s", diff)
	}
}

// testSnapshot holds a View open while another goroutine commits.
func testSnapshot(t *testing.T, db storage.Backend) {
	mustPut(t, db, bucketA, "changed", "old", "deleted", "old", "same", "old")
	before := []kv{{"changed", "old"}, {"deleted", "old"}, {"same", "old"}}
	after := []kv{{"added", "new"}, {"changed", "new"}, {"same", "old"}}

	inView := make(chan struct{})
	committed := make(chan error, 1)
	go func() {
		<-inView
		committed <- db.Update(context.Background(), func(tx storage.Tx) error {
			if err := tx.Put(bucketA, []byte("changed"), []byte("new")); err != nil {
				return err
			}
			if err := tx.Put(bucketA, []byte("added"), []byte("new")); err != nil {
				return err
			}
			return tx.Delete(bucketA, []byte("deleted"))
		})
	}()
	read := func(tx storage.Tx) []kv {
		got, err := scan(tx, bucketA, storage.ScanOptions{})
		if err != nil {
			t.Fatalf("Scan: %v", err)
		}
		rev, err := scan(tx, bucketA, storage.ScanOptions{Reverse: true})
		if err != nil {
			t.Fatalf("Scan: %v", err)
		}
		slices.Reverse(rev)
		if diff := cmp.Diff(got, rev); diff != "" {
			t.Errorf("reverse scan disagrees (-asc +desc):\n%s", diff)
		}
		for _, p := range got {
			if v, err := get(tx, bucketA, p.K); err != nil || v != p.V {
				t.Errorf("Get(%q) = %q, %v; scan saw %q", p.K, v, err, p.V)
			}
		}
		for _, k := range []string{"added", "deleted"} {
			_, err := tx.Get(bucketA, []byte(k))
			if present := slices.ContainsFunc(got, func(p kv) bool { return p.K == k }); present == errors.Is(err, storage.ErrNotFound) {
				t.Errorf("Get(%q) = %v disagrees with scan %v", k, err, got)
			}
		}
		return got
	}
	mustView(t, db, func(tx storage.Tx) error {
		if diff := cmp.Diff(before, read(tx)); diff != "" {
			t.Errorf("View before commit (-want +got):\n%s", diff)
		}
		close(inView)
		select {
		case err := <-committed:
			if err != nil {
				t.Fatalf("concurrent Update: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("an Update could not commit while a View was open")
		}
		if diff := cmp.Diff(before, read(tx)); diff != "" {
			t.Errorf("open View after a concurrent commit (-want +got):\n%s", diff)
		}
		return nil
	})
	mustView(t, db, func(tx storage.Tx) error {
		if diff := cmp.Diff(after, read(tx)); diff != "" {
			t.Errorf("View after commit (-want +got):\n%s", diff)
		}
		return nil
	})
}

// testIncrements runs concurrent read-modify-write Updates on two keys that
// always hold the same count, while Views check that they agree.
func testIncrements(t *testing.T, db storage.Backend) {
	const workers, each = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, workers+1)
	stop := make(chan struct{})
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		for {
			select {
			case <-stop:
				return
			default:
			}
			err := db.View(context.Background(), func(tx storage.Tx) error {
				a, errA := tx.Get(bucketA, []byte("a"))
				b, errB := tx.Get(bucketA, []byte("b"))
				if errA != nil || errB != nil {
					if errors.Is(errA, storage.ErrNotFound) && errors.Is(errB, storage.ErrNotFound) {
						return nil
					}
					return fmt.Errorf("get a and b: %v, %v", errA, errB)
				}
				if !bytes.Equal(a, b) {
					return fmt.Errorf("a View saw a=%x b=%x", a, b)
				}
				return nil
			})
			if err != nil {
				errs <- err
				return
			}
		}
	}()
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				var got uint64
				err := db.Update(context.Background(), func(tx storage.Tx) error {
					n := uint64(0)
					v, err := tx.Get(bucketA, []byte("a"))
					switch {
					case err == nil:
						n = binary.BigEndian.Uint64(v)
					case !errors.Is(err, storage.ErrNotFound):
						return err
					}
					n++
					v = binary.BigEndian.AppendUint64(nil, n)
					if err := tx.Put(bucketA, []byte("a"), v); err != nil {
						return err
					}
					if err := tx.Put(bucketA, []byte("b"), v); err != nil {
						return err
					}
					got = n
					return tx.Put(bucketB, fmt.Appendf(nil, "w%d/%d", w, n), nil)
				})
				if err != nil {
					errs <- err
					return
				}
				if got == 0 {
					errs <- errors.New("an Update did not set its result")
					return
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	<-readerDone
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	mustView(t, db, func(tx storage.Tx) error {
		v, err := tx.Get(bucketA, []byte("a"))
		if err != nil {
			return err
		}
		if got := binary.BigEndian.Uint64(v); got != workers*each {
			t.Errorf("counter = %d, want %d", got, workers*each)
		}
		return nil
	})
	if got := len(dump(t, db, bucketB)); got != workers*each {
		t.Errorf("%d marker keys, want %d (each commit writes one)", got, workers*each)
	}
}

func testCancelled(t *testing.T, db storage.Backend) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	called := false
	fn := func(storage.Tx) error { called = true; return nil }
	if err := db.View(ctx, fn); !errors.Is(err, context.Canceled) {
		t.Errorf("View = %v, want context.Canceled", err)
	}
	if err := db.Update(ctx, fn); !errors.Is(err, context.Canceled) {
		t.Errorf("Update = %v, want context.Canceled", err)
	}
	if called {
		t.Error("fn was called with a cancelled context")
	}
}

func testTxDone(t *testing.T, db storage.Backend) {
	mustPut(t, db, bucketA, "k", "v")
	var viewTx, updateTx storage.Tx
	mustView(t, db, func(tx storage.Tx) error { viewTx = tx; return nil })
	mustUpdate(t, db, func(tx storage.Tx) error { updateTx = tx; return nil })
	_ = db.Update(context.Background(), func(tx storage.Tx) error { return errBoom })
	for name, tx := range map[string]storage.Tx{"View": viewTx, "Update": updateTx} {
		if _, err := tx.Get(bucketA, []byte("k")); !errors.Is(err, storage.ErrTxDone) {
			t.Errorf("%s: Get after return = %v, want ErrTxDone", name, err)
		}
		if err := tx.Put(bucketA, []byte("k"), []byte("w")); !errors.Is(err, storage.ErrTxDone) {
			t.Errorf("%s: Put after return = %v, want ErrTxDone", name, err)
		}
		if err := tx.Delete(bucketA, []byte("k")); !errors.Is(err, storage.ErrTxDone) {
			t.Errorf("%s: Delete after return = %v, want ErrTxDone", name, err)
		}
		err := tx.Scan(bucketA, storage.ScanOptions{}, func(k, v []byte) error { return nil })
		if !errors.Is(err, storage.ErrTxDone) {
			t.Errorf("%s: Scan after return = %v, want ErrTxDone", name, err)
		}
	}
	if diff := cmp.Diff([]kv{{"k", "v"}}, dump(t, db, bucketA)); diff != "" {
		t.Errorf("after using ended transactions (-want +got):\n%s", diff)
	}
}

func testClosed(t *testing.T, db storage.Backend) {
	mustPut(t, db, bucketA, "k", "v")
	if err := db.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	fn := func(storage.Tx) error { t.Error("fn called after Close"); return nil }
	if err := db.View(context.Background(), fn); !errors.Is(err, storage.ErrClosed) {
		t.Errorf("View after Close = %v, want ErrClosed", err)
	}
	if err := db.Update(context.Background(), fn); !errors.Is(err, storage.ErrClosed) {
		t.Errorf("Update after Close = %v, want ErrClosed", err)
	}
}

// testRandom applies random Updates (puts, deletes, some rolled back) and
// checks the backend against a model after every step, while Views opened
// along the way stay open and must still see the state of their moment.
// testRandom runs random Updates (some rolled back) over a few short keys
// full of edge bytes, checking a random Scan after each against a model and
// Views held open across many of them.
func testRandom(t *testing.T, db storage.Backend) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewSource(seed))
	keys := make([]string, 60)
	for i := range keys {
		keys[i] = string([]byte{"a\x00\xff"[r.Intn(3)], byte(r.Intn(4)), byte(0xfe + r.Intn(2))})[:1+r.Intn(3)]
	}
	randomOps(t, db, r, keys, randomShape{steps: 120, ops: 8, limit: 4, viewEvery: 15})
}

// testRandomLarge does the same over thousands of keys shaped like a
// ledger's (ranges appended to in order, then overwritten and deleted), so
// that tree nodes split and merge, with point reads inside Updates too.
func testRandomLarge(t *testing.T, db storage.Backend) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewSource(seed))
	var keys []string
	for a := range 8 {
		for i := range 400 {
			keys = append(keys, fmt.Sprintf("acct%d/%06d", a, i))
		}
	}
	randomOps(t, db, r, keys, randomShape{steps: 300, ops: 64, limit: 150, viewEvery: 25, reads: true, inOrder: true})
}

type randomShape struct {
	steps, ops, limit, viewEvery int
	reads                        bool // Updates also Get random keys and check them
	inOrder                      bool // puts mostly walk the keys in order, as appends do
}

func randomOps(t *testing.T, db storage.Backend, r *rand.Rand, keys []string, shape randomShape) {
	state := map[string]string{}
	cursor := 0
	type pinned struct {
		want    map[string]string
		check   chan struct{}
		checked chan []kv
	}
	var views []pinned
	var viewSteps []int
	for step := range shape.steps {
		ops := r.Intn(shape.ops)
		fail := r.Intn(5) == 0
		next := maps.Clone(state)
		type op struct {
			del  bool
			k, v string
		}
		var plan []op
		for i := range ops {
			o := op{del: r.Intn(3) == 0, k: keys[r.Intn(len(keys))], v: fmt.Sprintf("%d.%d", step, i)}
			if shape.inOrder && !o.del && r.Intn(2) == 0 {
				o.k = keys[cursor%len(keys)]
				cursor++
			}
			plan = append(plan, o)
			if o.del {
				delete(next, o.k)
			} else {
				next[o.k] = o.v
			}
		}
		reads := map[string]string{}
		if shape.reads {
			for range 4 {
				k := keys[r.Intn(len(keys))]
				reads[k] = state[k]
			}
		}
		err := db.Update(context.Background(), func(tx storage.Tx) error {
			for k, want := range reads {
				got, err := tx.Get(bucketA, []byte(k))
				if errors.Is(err, storage.ErrNotFound) {
					err, got = nil, nil
				}
				if err != nil {
					return err
				}
				if string(got) != want {
					t.Errorf("step %d: Get(%q) in Update = %q, want %q", step, k, got, want)
				}
			}
			for _, o := range plan {
				var err error
				if o.del {
					err = tx.Delete(bucketA, []byte(o.k))
				} else {
					err = tx.Put(bucketA, []byte(o.k), []byte(o.v))
				}
				if err != nil {
					return err
				}
			}
			if fail {
				return errBoom
			}
			return nil
		})
		if fail != errors.Is(err, errBoom) || (!fail && err != nil) {
			t.Fatalf("step %d: Update = %v (fail %v)", step, err, fail)
		}
		if !fail {
			state = next
		}
		o := storage.ScanOptions{Reverse: r.Intn(2) == 0, Limit: r.Intn(shape.limit)}
		if r.Intn(2) == 0 {
			o.Prefix = []byte(keys[r.Intn(len(keys))])[:1]
		}
		if r.Intn(2) == 0 {
			o.After = []byte(keys[r.Intn(len(keys))])
		}
		mustView(t, db, func(tx storage.Tx) error {
			got, err := scan(tx, bucketA, o)
			if err != nil {
				return err
			}
			if diff := cmp.Diff(model(state, o), got); diff != "" {
				t.Fatalf("step %d: Scan(%s) (-want +got):\n%s", step, describe(o), diff)
			}
			return nil
		})
		if step%shape.viewEvery == 0 {
			viewSteps = append(viewSteps, step)
			p := pinned{want: maps.Clone(state), check: make(chan struct{}), checked: make(chan []kv, 1)}
			opened := make(chan struct{})
			go func() {
				_ = db.View(context.Background(), func(tx storage.Tx) error {
					_, _ = tx.Get(bucketA, []byte("x"))
					close(opened)
					<-p.check
					got, err := scan(tx, bucketA, storage.ScanOptions{})
					if err != nil {
						got = []kv{{"error", err.Error()}}
					}
					p.checked <- got
					return nil
				})
			}()
			<-opened
			views = append(views, p)
		}
	}
	for i, p := range views {
		close(p.check)
		if diff := cmp.Diff(model(p.want, storage.ScanOptions{}), <-p.checked); diff != "" {
			t.Errorf("View %d opened at step %d, read at the end (-want +got):\n%s", i, viewSteps[i], diff)
		}
	}
}
