package bolt_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/bolt"
)

const bucket = storage.Bucket("test")

// TestGroupCommit runs concurrent Updates of which some fail and some panic:
// every caller gets its own outcome and exactly the successful ones persist.
func TestGroupCommit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	db := MustOpen(t, path)
	const callers, rounds = 16, 6
	var wg sync.WaitGroup
	var mu sync.Mutex
	want := map[string]bool{}
	for g := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				key := fmt.Sprintf("g%02d/%d", g, i)
				errOwn := fmt.Errorf("caller %s failed", key)
				mode := (g + i) % 4 // 0 fails, 1 panics, otherwise succeeds
				runs := 0
				var result string
				fn := func(tx storage.Tx) error {
					runs++
					if err := tx.Put(bucket, []byte(key), []byte("v")); err != nil {
						return err
					}
					switch mode {
					case 0:
						return errOwn
					case 1:
						panic(key)
					}
					result = key
					return nil
				}
				var err error
				recovered := func() (r any) {
					defer func() { r = recover() }()
					err = db.Update(context.Background(), fn)
					return nil
				}()
				switch mode {
				case 0:
					if !errors.Is(err, errOwn) || recovered != nil {
						t.Errorf("%s: Update = %v, panic %v; want its own error", key, err, recovered)
					}
				case 1:
					if recovered != key {
						t.Errorf("%s: recovered %v, want its own panic", key, recovered)
					}
				default:
					if err != nil || recovered != nil || result != key {
						t.Errorf("%s: Update = %v, panic %v, result %q", key, err, recovered, result)
					}
					mu.Lock()
					want[key] = true
					mu.Unlock()
				}
				if runs == 0 {
					t.Errorf("%s: fn never ran", key)
				}
			}
		}()
	}
	wg.Wait()
	got := map[string]bool{}
	if err := db.View(context.Background(), func(tx storage.Tx) error {
		return tx.Scan(bucket, storage.ScanOptions{}, func(k, v []byte) error {
			got[string(k)] = true
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("committed keys (-want +got):\n%s", diff)
	}
	t.Logf("%d successful Updates in %d log fsyncs", len(want), bolt.Batches(db))
}

// TestGoexit checks that an Update function that exits its goroutine (as
// t.FailNow does) neither commits nor wedges the commit queue.
func TestGoexit(t *testing.T) {
	db := MustOpen(t, filepath.Join(t.TempDir(), "db"))
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = db.Update(context.Background(), func(tx storage.Tx) error {
				if err := tx.Put(bucket, fmt.Appendf(nil, "k%d", i), nil); err != nil {
					return err
				}
				if i%2 == 0 {
					runtime.Goexit()
				}
				return nil
			})
		}()
	}
	wg.Wait()
	if err := db.Update(context.Background(), func(tx storage.Tx) error {
		return tx.Put(bucket, []byte("after"), nil)
	}); err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := db.View(context.Background(), func(tx storage.Tx) error {
		return tx.Scan(bucket, storage.ScanOptions{}, func(k, v []byte) error {
			got = append(got, string(k))
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
	// Odd callers may have been dropped only if they shared a round with a
	// Goexit on their own goroutine; here each caller runs on its own.
	for _, k := range got {
		if k != "after" && (k[1]-'0')%2 == 0 {
			t.Errorf("key %q of an exited Update was committed", k)
		}
	}
	if !strings.Contains(strings.Join(got, ","), "after") {
		t.Errorf("keys %v, want the Update after the exits", got)
	}
}

// TestErrLocked opens a file that this process already holds.
func TestErrLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	MustOpen(t, path)
	for _, opt := range []*bolt.Options{nil, {Timeout: 50 * time.Millisecond}} {
		db, err := bolt.Open(path, opt)
		if !errors.Is(err, bolt.ErrLocked) {
			if db != nil {
				db.Close()
			}
			t.Errorf("second Open(%+v) = %v, want ErrLocked", opt, err)
		}
	}
}

// TestErrLockedOtherProcess opens a file that a child process holds.
func TestErrLockedOtherProcess(t *testing.T) {
	if path := os.Getenv("COREBANK_BOLT_HOLD"); path != "" {
		db, err := bolt.Open(path, nil)
		if err != nil {
			fmt.Println("open:", err)
			os.Exit(1)
		}
		fmt.Println("holding")
		var b [1]byte
		_, _ = os.Stdin.Read(b[:]) // until the parent closes stdin
		db.Close()
		os.Exit(0)
	}
	path := filepath.Join(t.TempDir(), "db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestErrLockedOtherProcess$")
	cmd.Env = append(os.Environ(), "COREBANK_BOLT_HOLD="+path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		_ = cmd.Wait()
	}()
	line := make([]byte, 64)
	n, _ := stdout.Read(line)
	if !strings.HasPrefix(string(line[:n]), "holding") {
		t.Fatalf("child: %q", line[:n])
	}
	// TestErrLocked waits out the default timeout; a short one proves the
	// same here.
	db, err := bolt.Open(path, &bolt.Options{Timeout: 50 * time.Millisecond})
	if !errors.Is(err, bolt.ErrLocked) {
		if db != nil {
			db.Close()
		}
		t.Fatalf("Open of a file another process holds = %v, want ErrLocked", err)
	}
	t.Log(err)
}
