package bolt_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/bolt"
)

func put(t *testing.T, db *bolt.DB, kv ...string) {
	t.Helper()
	if err := db.Update(context.Background(), func(tx storage.Tx) error {
		for i := 0; i < len(kv); i += 2 {
			if err := tx.Put(bucket, []byte(kv[i]), []byte(kv[i+1])); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

func del(t *testing.T, db *bolt.DB, k string) {
	t.Helper()
	if err := db.Update(context.Background(), func(tx storage.Tx) error {
		return tx.Delete(bucket, []byte(k))
	}); err != nil {
		t.Fatal(err)
	}
}

func contents(t *testing.T, db *bolt.DB) map[string]string {
	t.Helper()
	got := map[string]string{}
	if err := db.View(context.Background(), func(tx storage.Tx) error {
		return tx.Scan(bucket, storage.ScanOptions{}, func(k, v []byte) error {
			got[string(k)] = string(v)
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
	return got
}

func open(t *testing.T, path string, opt *bolt.Options) *bolt.DB {
	t.Helper()
	db, err := bolt.Open(path, opt)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// TestReplay leaves commits only in the log, some after a checkpoint, and
// reopens: every commit is back, deletes included, and Open folded them in.
func TestReplay(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	db := open(t, path, nil)
	put(t, db, "a", "1", "b", "2", "c", "3")
	del(t, db, "b")
	put(t, db, "a", "4", "d", "")
	bolt.Crash(db)

	db = open(t, path, nil)
	want := map[string]string{"a": "4", "c": "3", "d": ""}
	if diff := cmp.Diff(want, contents(t, db)); diff != "" {
		t.Errorf("after replay (-want +got):\n%s", diff)
	}
	if n := bolt.Checkpoints(db); n != 1 {
		t.Errorf("Open made %d checkpoints, want 1", n)
	}
	if off := bolt.LogOffset(db); off != 0 {
		t.Errorf("log offset after Open = %d, want 0", off)
	}
	// Records of the absorbed generation are still in the file; another
	// crash and reopen must not replay them over newer commits.
	put(t, db, "a", "5")
	bolt.Crash(db)
	db = open(t, path, nil)
	defer db.Close()
	want["a"] = "5"
	if diff := cmp.Diff(want, contents(t, db)); diff != "" {
		t.Errorf("after second replay (-want +got):\n%s", diff)
	}
}

// TestTornLog damages the log's tail in the ways a crash mid-write can:
// only the commits before the damage come back.
func TestTornLog(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, f *os.File, last, end int64)
	}{
		{"TruncatedRecord", func(t *testing.T, f *os.File, last, end int64) {
			if err := f.Truncate(end - 3); err != nil {
				t.Fatal(err)
			}
		}},
		{"FlippedByte", func(t *testing.T, f *os.File, last, end int64) {
			b := make([]byte, 1)
			if _, err := f.ReadAt(b, end-1); err != nil {
				t.Fatal(err)
			}
			b[0] ^= 0x40
			if _, err := f.WriteAt(b, end-1); err != nil {
				t.Fatal(err)
			}
		}},
		{"HugeLength", func(t *testing.T, f *os.File, last, end int64) {
			if _, err := f.WriteAt(binary.LittleEndian.AppendUint32(nil, 1<<31), last); err != nil {
				t.Fatal(err)
			}
		}},
		{"GarbageAfter", func(t *testing.T, f *os.File, last, end int64) {
			if _, err := f.WriteAt([]byte("garbage that is not a record at all"), end); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "db")
			db := open(t, path, nil)
			put(t, db, "a", "1")
			put(t, db, "b", "2")
			last := bolt.LogOffset(db)
			put(t, db, "c", "3")
			end := bolt.LogOffset(db)
			bolt.Crash(db)
			f, err := os.OpenFile(path+"-wal.0", os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			tc.damage(t, f, last, end)
			f.Close()

			db = open(t, path, nil)
			defer db.Close()
			want := map[string]string{"a": "1", "b": "2"}
			if tc.name == "GarbageAfter" {
				want["c"] = "3"
			}
			if diff := cmp.Diff(want, contents(t, db)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestCheckpointSnapshots moves value between keys with a checkpoint after
// almost every round while readers check that each View sees the same
// total: a View never mixes an overlay with a checkpoint it does not lie on.
func TestCheckpointSnapshots(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	db := open(t, path, &bolt.Options{CheckpointSize: 256})
	defer db.Close()
	const keys, total = 10, 1000
	var kv []string
	for i := range keys {
		kv = append(kv, fmt.Sprintf("k%d", i), strconv.Itoa(total/keys))
	}
	put(t, db, kv...)
	ctx := context.Background()
	var stop atomic.Bool
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 300; i++ {
				from, to := fmt.Sprintf("k%d", (w+i)%keys), fmt.Sprintf("k%d", (w+2*i+1)%keys)
				err := db.Update(ctx, func(tx storage.Tx) error {
					a, err := tx.Get(bucket, []byte(from))
					if err != nil {
						return err
					}
					b, err := tx.Get(bucket, []byte(to))
					if err != nil {
						return err
					}
					x, _ := strconv.Atoi(string(a))
					y, _ := strconv.Atoi(string(b))
					if from == to || x == 0 {
						return nil
					}
					if err := tx.Put(bucket, []byte(from), []byte(strconv.Itoa(x-1))); err != nil {
						return err
					}
					return tx.Put(bucket, []byte(to), []byte(strconv.Itoa(y+1)))
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	var readers sync.WaitGroup
	for range 2 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for !stop.Load() {
				sum, n := 0, 0
				if err := db.View(ctx, func(tx storage.Tx) error {
					return tx.Scan(bucket, storage.ScanOptions{}, func(k, v []byte) error {
						x, _ := strconv.Atoi(string(v))
						sum += x
						n++
						return nil
					})
				}); err != nil {
					t.Error(err)
					return
				}
				if sum != total || n != keys {
					t.Errorf("View saw %d keys summing to %d, want %d summing to %d", n, sum, keys, total)
					return
				}
			}
		}()
	}
	wg.Wait()
	stop.Store(true)
	readers.Wait()
	if bolt.Checkpoints(db) < 10 {
		t.Errorf("%d checkpoints, want many", bolt.Checkpoints(db))
	}
}

// TestKill commits from a child process that is killed with SIGKILL in
// the middle of its writes: every commit it reported before dying is there
// after reopening.
func TestKill(t *testing.T) {
	if path := os.Getenv("COREBANK_BOLT_KILL"); path != "" {
		db, err := bolt.Open(path, &bolt.Options{CheckpointSize: 64 << 10})
		if err != nil {
			fmt.Println("open:", err)
			os.Exit(1)
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		for g := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ; i++ {
					k := fmt.Sprintf("g%d/%06d", g, i)
					if err := db.Update(context.Background(), func(tx storage.Tx) error {
						return tx.Put(bucket, []byte(k), []byte(strings.Repeat("v", i%300)))
					}); err != nil {
						fmt.Println("update:", err)
						os.Exit(1)
					}
					mu.Lock()
					fmt.Println(k)
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
	}
	path := filepath.Join(t.TempDir(), "db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestKill$")
	cmd.Env = append(os.Environ(), "COREBANK_BOLT_KILL="+path)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	acked := map[string]bool{}
	sc := bufio.NewScanner(stdout)
	for sc.Scan() && len(acked) < 3000 {
		line := sc.Text()
		if !strings.HasPrefix(line, "g") {
			t.Fatalf("child: %s", line)
		}
		acked[line] = true
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for sc.Scan() { // lines already written before the kill
		acked[sc.Text()] = true
	}
	_ = cmd.Wait()

	db := open(t, path, nil)
	defer db.Close()
	got := contents(t, db)
	for k := range acked {
		if _, ok := got[k]; !ok {
			t.Errorf("acknowledged key %s lost", k)
		}
	}
	for k, v := range got {
		i, _ := strconv.Atoi(k[strings.IndexByte(k, '/')+1:])
		if v != strings.Repeat("v", i%300) {
			t.Errorf("key %s has a %d-byte value, want %d", k, len(v), i%300)
		}
	}
	t.Logf("%d acknowledged, %d recovered", len(acked), len(got))
}

// TestCrashCycles crashes and reopens many times with checkpoints running
// in the background, so that both log files and several generations are
// replayed: the contents always match a model of the acknowledged commits.
func TestCrashCycles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	rng := rand.New(rand.NewPCG(1, 2))
	want := map[string]string{}
	for cycle := range 25 {
		db := open(t, path, &bolt.Options{CheckpointSize: 512})
		if diff := cmp.Diff(want, contents(t, db)); diff != "" {
			t.Fatalf("cycle %d: after reopen (-want +got):\n%s", cycle, diff)
		}
		for range rng.IntN(40) {
			k := fmt.Sprintf("k%02d", rng.IntN(30))
			if rng.IntN(4) == 0 {
				del(t, db, k)
				delete(want, k)
				continue
			}
			v := strings.Repeat(strconv.Itoa(cycle), rng.IntN(20))
			put(t, db, k, v)
			want[k] = v
		}
		if cycle%3 == 1 {
			// Leave a frozen overlay unfolded, so that the crash leaves
			// two generations in the two log files.
			bolt.FailFolds(db, true)
			for i := range 20 {
				k := fmt.Sprintf("k%02d", i)
				put(t, db, k, "frozen")
				want[k] = "frozen"
			}
			if !bolt.Frozen(db) {
				t.Fatalf("cycle %d: no frozen overlay after failed folds", cycle)
			}
			put(t, db, "k00", "active")
			want["k00"] = "active"
		}
		if cycle%5 == 4 {
			bolt.FailFolds(db, false)
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			continue
		}
		bolt.Crash(db)
	}
}

// TestViewWaitsForSync holds a commit's fsync: a View that reads the commit
// waits for it, while a View of data already durable does not.
func TestViewWaitsForSync(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "db"), nil)
	defer db.Close()
	put(t, db, "old", "durable")
	entered, release := bolt.BlockSyncs(db)
	ctx := context.Background()
	committed := make(chan error, 1)
	go func() {
		committed <- db.Update(ctx, func(tx storage.Tx) error {
			return tx.Put(bucket, []byte("new"), []byte("pending"))
		})
	}()
	<-entered // the record is written and its fsync is held

	var old []byte
	if err := db.View(ctx, func(tx storage.Tx) error {
		var err error
		old, err = tx.Get(bucket, []byte("old"))
		return err
	}); err != nil || string(old) != "durable" {
		t.Fatalf("durable key = %q, %v while another commit syncs", old, err)
	}
	var released atomic.Bool
	read := make(chan string, 1)
	go func() {
		var v []byte
		err := db.View(ctx, func(tx storage.Tx) error {
			var err error
			v, err = tx.Get(bucket, []byte("new"))
			if err == nil && !released.Load() {
				t.Error("View saw a commit before its fsync")
			}
			return err
		})
		if err != nil {
			t.Error(err)
		}
		read <- string(v)
	}()
	runtime.Gosched()
	released.Store(true)
	release()
	if err := <-committed; err != nil {
		t.Fatal(err)
	}
	if v := <-read; v != "pending" {
		t.Errorf("View read %q, want the commit's value", v)
	}
}

// TestPageSizeOfExistingFile reopens a file made with 4 KiB pages under the
// default options: bbolt keeps the file's own page size and the data.
func TestPageSizeOfExistingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	db := open(t, path, &bolt.Options{PageSize: 4096})
	put(t, db, "a", "1")
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = open(t, path, nil)
	defer db.Close()
	put(t, db, "b", "2")
	if diff := cmp.Diff(map[string]string{"a": "1", "b": "2"}, contents(t, db)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
