package bolt_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/bolt"
)

var (
	powerIterations = flag.Int("bolt.powerloss", 40, "stores the power-loss property test runs, each through several cuts")
	powerSeed       = flag.Uint64("bolt.seed", 0, "seed of the power-loss property test's first store (0: time-based)")
)

// The second bucket makes a transaction span buckets.
const bucket2 = storage.Bucket("test2")

// writers and lives bound one store of TestPowerLoss: lives opens, each
// ended by a cut (or now and then a clean Close), with writers concurrent
// writers sharing group commits.
const (
	writers = 8
	lives   = 5
)

// txnValue is the value transaction i of writer w writes to part when run
// in life: the life is in it, so that a commit of an earlier life cannot
// pass for one of a later life.
func txnValue(life, w, i int, part string) string {
	return fmt.Sprintf("%d:%d/%06d/%s:%s", life, w, i, part, strings.Repeat("x", 16))
}

// txnKey is the key of part of transaction i of writer w.
func txnKey(w, i int, part string) []byte { return fmt.Appendf(nil, "w%d/%06d/%s", w, i, part) }

// txn is transaction i of writer w: two puts in two buckets, a put that
// transaction i+2 deletes, a delete of transaction i-2's, the writer's
// last index, and the shared count of transactions, read and rewritten.
func txn(life, w, i int) func(storage.Tx) error {
	return func(tx storage.Tx) error {
		if err := tx.Put(bucket, txnKey(w, i, "a"), []byte(txnValue(life, w, i, "a"))); err != nil {
			return err
		}
		if err := tx.Put(bucket2, txnKey(w, i, "b"), []byte(txnValue(life, w, i, "b"))); err != nil {
			return err
		}
		if err := tx.Put(bucket, txnKey(w, i, "tmp"), []byte(txnValue(life, w, i, "tmp"))); err != nil {
			return err
		}
		if i >= 2 {
			if err := tx.Delete(bucket, txnKey(w, i-2, "tmp")); err != nil {
				return err
			}
		}
		if err := tx.Put(bucket2, fmt.Appendf(nil, "last/w%d", w), fmt.Appendf(nil, "%06d", i)); err != nil {
			return err
		}
		n := 0
		switch v, err := tx.Get(bucket2, []byte("count")); {
		case err == nil:
			n, _ = strconv.Atoi(string(v))
		case !errors.Is(err, storage.ErrNotFound):
			return err
		}
		return tx.Put(bucket2, []byte("count"), fmt.Appendf(nil, "%06d", n+1))
	}
}

// powerModel is what the writers were told: acked[w][i] is the life in
// which Update of transaction i of writer w returned nil, or 0.
type powerModel struct {
	acked [writers]map[int]int
	next  [writers]int // the index each writer goes on from
}

// check reads the reopened store and compares it with m: each writer's
// transactions up to its last index are there whole, with the values of
// the life that acknowledged them, and none after it; the shared count is
// their number. It sets where each writer goes on from.
func (m *powerModel) check(t *testing.T, db *bolt.DB) {
	t.Helper()
	got := map[storage.Bucket]map[string]string{bucket: {}, bucket2: {}}
	if err := db.View(context.Background(), func(tx storage.Tx) error {
		for b, kv := range got {
			if err := tx.Scan(b, storage.ScanOptions{}, func(k, v []byte) error {
				kv[string(k)] = string(v)
				return nil
			}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Errorf("reading the reopened store: %v", err)
		return
	}
	want := map[storage.Bucket]map[string]string{bucket: {}, bucket2: {}}
	total := 0
	for w := range writers {
		last := -1
		if v, ok := got[bucket2][fmt.Sprintf("last/w%d", w)]; ok {
			last, _ = strconv.Atoi(v)
			want[bucket2][fmt.Sprintf("last/w%d", w)] = v
		}
		for i := range m.acked[w] {
			if i > last {
				t.Errorf("writer %d: acknowledged transaction %d lost (last is %d)", w, i, last)
			}
		}
		for i := 0; i <= last; i++ {
			// The life that wrote i: the acknowledging one, else the one
			// its value names (a commit whose caller was never told).
			life := m.acked[w][i]
			if life == 0 {
				v := got[bucket][string(txnKey(w, i, "a"))]
				life, _ = strconv.Atoi(v[:max(0, strings.IndexByte(v, ':'))])
			}
			want[bucket][string(txnKey(w, i, "a"))] = txnValue(life, w, i, "a")
			want[bucket2][string(txnKey(w, i, "b"))] = txnValue(life, w, i, "b")
			if i >= last-1 {
				want[bucket][string(txnKey(w, i, "tmp"))] = txnValue(life, w, i, "tmp")
			}
		}
		total += last + 1
		m.next[w] = last + 1
	}
	if total > 0 {
		want[bucket2]["count"] = fmt.Sprintf("%06d", total)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("store after reopening (-want +got):\n%s", diff)
	}
}

// TestPowerLoss is a property test of durability under power loss: the
// log files live on a PowerFS, and each store goes through several lives
// of concurrent writers (sharing group commits, with a checkpoint every
// few rounds) that end with the power cut at a random write or sync, the
// unsynced writes then kept, dropped, cut short or torn by sectors at
// random, and files whose entry was never synced perhaps gone. Each
// reopen must succeed and show every acknowledged transaction with
// exactly its values and no transaction in part. The bbolt file is an
// ordinary file: bbolt's own guarantees are not under test.
func TestPowerLoss(t *testing.T) {
	seed := *powerSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	iterations := *powerIterations
	t.Logf("seed %d, %d stores (replay one with -bolt.seed=<its seed> -bolt.powerloss=1)", seed, iterations)
	var total powerStats
	for it := range iterations {
		s := seed + uint64(it)
		st := powerLossStore(t, s)
		if t.Failed() {
			t.Fatalf("store seed %d failed (replay with -bolt.seed=%d -bolt.powerloss=1)", s, s)
		}
		total.cuts += st.cuts
		total.acked += st.acked
		total.checkpoints += st.checkpoints
	}
	t.Logf("%d power cuts, %d checkpoints, %d acknowledged transactions checked", total.cuts, total.checkpoints, total.acked)
}

type powerStats struct{ cuts, acked, checkpoints int }

// powerLossStore runs one store through its lives and counts what it did.
func powerLossStore(t *testing.T, seed uint64) (st powerStats) {
	rng := rand.New(rand.NewPCG(seed, seed>>32|1))
	path := filepath.Join(t.TempDir(), "db")
	opt := &bolt.Options{CheckpointSize: 3 << 10, PageSize: 4096}
	fs := bolt.NewPowerFS()
	m := &powerModel{}
	for w := range writers {
		m.acked[w] = map[int]int{}
	}
	for life := 1; life <= lives; life++ {
		db, err := bolt.OpenOn(path, opt, fs)
		if err != nil {
			t.Errorf("life %d: open: %v", life, err)
			return
		}
		m.check(t, db)
		if t.Failed() {
			bolt.Crash(db)
			return
		}
		clean := rng.IntN(6) == 0
		if !clean {
			fs.CutAfter(1 + rng.IntN(60))
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := m.next[w]; i < m.next[w]+12; i++ {
					for range (w + i) % 3 {
						runtime.Gosched()
					}
					if err := db.Update(context.Background(), txn(life, w, i)); err != nil {
						if !fs.IsCut() {
							t.Errorf("life %d: writer %d: %v", life, w, err)
						}
						return
					}
					mu.Lock()
					m.acked[w][i] = life
					st.acked++
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		st.checkpoints += int(bolt.Checkpoints(db))
		if clean {
			if err := db.Close(); err != nil {
				t.Errorf("life %d: close: %v", life, err)
				return
			}
		} else {
			fs.Cut()
			bolt.Crash(db)
			st.cuts++
		}
		fs = fs.Reboot(bolt.RandomLoss(rng))
	}
	db, err := bolt.OpenOn(path, opt, fs)
	if err != nil {
		t.Errorf("last open: %v", err)
		return
	}
	defer db.Close()
	m.check(t, db)
	return st
}

// allOf keeps every unsynced write whole and every unsynced entry.
var allOf = bolt.Loss{
	Unlink: func(string) bool { return false },
	Keep:   func(_ string, _ int64, n int) [][2]int { return [][2]int{{0, n}} },
}

// TestPowerLossNewLog cuts the power after the first commit of a new store
// and loses every directory entry never synced: the log files were created
// by Open, and the commit is still there.
func TestPowerLossNewLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	fs := bolt.NewPowerFS()
	db := openOn(t, path, nil, fs)
	put(t, db, "k", "acknowledged")
	fs.Cut()
	bolt.Crash(db)
	loss := allOf
	loss.Unlink = func(string) bool { return true }
	db = openOn(t, path, nil, fs.Reboot(loss))
	defer db.Close()
	if diff := cmp.Diff(map[string]string{"k": "acknowledged"}, contents(t, db)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestPowerLossStaleRecord loses the first of two unsynced commits and
// keeps the second, whole and valid, after it. Replay stops at the first:
// the second was never acknowledged. The next life writes a commit of the
// same size over the first and is acknowledged; the power goes again. The
// stale commit now lies right after an acknowledged one, and must not be
// replayed over it (it was, while a life went on logging the generation
// its replay stopped in).
func TestPowerLossStaleRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	wal0 := path + "-wal.0"
	fs := bolt.NewPowerFS()
	db := openOn(t, path, nil, fs)
	entered, release := bolt.BlockSyncs(db)
	lost := make(chan error, 2)
	go func() { lost <- db.Update(context.Background(), putFn("k", "lost")) }()
	<-entered // its record is written, its fsync held
	go func() { lost <- db.Update(context.Background(), putFn("k", "stale")) }()
	for fs.Pending(wal0) < 2 {
		runtime.Gosched()
	}
	fs.Cut()
	release()
	for range 2 {
		if err := <-lost; !errors.Is(err, bolt.ErrPowerCut) {
			t.Fatalf("Update during the cut = %v, want ErrPowerCut", err)
		}
	}
	bolt.Crash(db)
	first := true
	loss := allOf
	loss.Keep = func(path string, off int64, n int) [][2]int {
		if path == wal0 && first {
			first = false
			return nil
		}
		return [][2]int{{0, n}}
	}
	fs = fs.Reboot(loss)

	db = openOn(t, path, nil, fs)
	if diff := cmp.Diff(map[string]string{}, contents(t, db)); diff != "" {
		t.Fatalf("after the first cut (-want +got):\n%s", diff)
	}
	put(t, db, "k", "acks")
	fs.Cut()
	bolt.Crash(db)

	db = openOn(t, path, nil, fs.Reboot(allOf))
	defer db.Close()
	if diff := cmp.Diff(map[string]string{"k": "acks"}, contents(t, db)); diff != "" {
		t.Errorf("after the second cut (-want +got):\n%s", diff)
	}
}

// openOn opens the store at path with its logs on fs.
func openOn(t *testing.T, path string, opt *bolt.Options, fs *bolt.PowerFS) *bolt.DB {
	t.Helper()
	db, err := bolt.OpenOn(path, opt, fs)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func putFn(k, v string) func(storage.Tx) error {
	return func(tx storage.Tx) error { return tx.Put(bucket, []byte(k), []byte(v)) }
}
