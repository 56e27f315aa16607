package memory

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank/storage"
)

const testBucket = storage.Bucket("test")

// queued returns how many Updates wait in d's queue.
func queued(d *DB) int { return d.writes.Len() }

// stallLeader starts an Update that leads and blocks in its function until
// release is closed, and returns once it is running. It writes "leader".
func stallLeader(t *testing.T, d *DB, release chan struct{}, then func() error) chan error {
	t.Helper()
	entered := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- d.Update(context.Background(), func(tx storage.Tx) error {
			if err := tx.Put(testBucket, []byte("leader"), nil); err != nil {
				return err
			}
			close(entered)
			<-release
			return then()
		})
	}()
	<-entered
	return done
}

// outcomes are what queued Updates returned: the error, a recovered
// panic, and whether Update returned at all (its goroutine may exit).
type outcomes struct {
	wg       sync.WaitGroup
	errs     []error
	panics   []any
	returned []bool
}

// queueUpdates starts one Update per fn, each queued behind the ones
// before (in that order).
func queueUpdates(t *testing.T, d *DB, fns ...func(storage.Tx) error) *outcomes {
	t.Helper()
	o := &outcomes{errs: make([]error, len(fns)), panics: make([]any, len(fns)), returned: make([]bool, len(fns))}
	for i, fn := range fns {
		before := queued(d)
		o.wg.Add(1)
		go func() {
			defer o.wg.Done()
			defer func() { o.panics[i] = recover() }()
			o.errs[i] = d.Update(context.Background(), fn)
			o.returned[i] = true
		}()
		for queued(d) == before {
			time.Sleep(50 * time.Microsecond)
		}
	}
	return o
}

func keys(t *testing.T, d *DB) []string {
	t.Helper()
	var got []string
	if err := d.View(context.Background(), func(tx storage.Tx) error {
		return tx.Scan(testBucket, storage.ScanOptions{}, func(k, _ []byte) error {
			got = append(got, string(k))
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
	return got
}

// TestWriterOutcomes: Updates queued behind a leader run in arrival order,
// each on its own: an error or a panic (re-raised on its caller's
// goroutine, not the leader's) undoes only its own writes.
func TestWriterOutcomes(t *testing.T) {
	d := New()
	defer d.Close()
	release := make(chan struct{})
	leader := stallLeader(t, d, release, func() error { return nil })
	var order []int
	errOwn := errors.New("own")
	put := func(i int, outcome func() error) func(storage.Tx) error {
		return func(tx storage.Tx) error {
			order = append(order, i) // the writer runs one at a time
			if err := tx.Put(testBucket, fmt.Appendf(nil, "k%d", i), nil); err != nil {
				return err
			}
			return outcome()
		}
	}
	ok := func() error { return nil }
	o := queueUpdates(t, d,
		put(0, ok),
		put(1, func() error { return errOwn }),
		put(2, func() error { panic("two") }),
		put(3, ok),
	)
	close(release)
	o.wg.Wait()
	errs, panics := o.errs, o.panics
	if err := <-leader; err != nil {
		t.Fatalf("leader: %v", err)
	}
	if diff := cmp.Diff([]int{0, 1, 2, 3}, order); diff != "" {
		t.Errorf("run order (-want +got):\n%s", diff)
	}
	if errs[0] != nil || !errors.Is(errs[1], errOwn) || errs[3] != nil {
		t.Errorf("outcomes %v, want nil, own error, -, nil", errs)
	}
	if panics[2] != "two" || panics[0] != nil || panics[1] != nil || panics[3] != nil {
		t.Errorf("panics %v, want only the third caller's own", panics)
	}
	if diff := cmp.Diff([]string{"k0", "k3", "leader"}, keys(t, d)); diff != "" {
		t.Errorf("committed keys (-want +got):\n%s", diff)
	}
}

// TestWriterGoexit: the leader's own function exits its goroutine (as
// t.FailNow does) with Updates queued behind it: its writes are undone,
// and the queued Updates still run, under a new leader.
func TestWriterGoexit(t *testing.T) {
	d := New()
	defer d.Close()
	release := make(chan struct{})
	leader := stallLeader(t, d, release, func() error { runtime.Goexit(); return nil })
	o := queueUpdates(t, d,
		func(tx storage.Tx) error { return tx.Put(testBucket, []byte("a"), nil) },
		func(tx storage.Tx) error { return tx.Put(testBucket, []byte("b"), nil) },
	)
	close(release)
	o.wg.Wait()
	errs := o.errs
	select {
	case err := <-leader:
		t.Fatalf("the exited leader's Update returned %v", err)
	default:
	}
	if errs[0] != nil || errs[1] != nil {
		t.Fatalf("queued Updates: %v", errs)
	}
	if diff := cmp.Diff([]string{"a", "b"}, keys(t, d)); diff != "" {
		t.Errorf("committed keys (-want +got):\n%s", diff)
	}
	if err := d.Update(context.Background(), func(tx storage.Tx) error { return nil }); err != nil {
		t.Errorf("Update after the exit: %v", err)
	}
}

// TestWriterGoexitQueued: in a batch of queued Updates, one function
// exits the goroutine that runs it, the batch leader's: that Update fails
// with errGoexit on its own goroutine, the ones after it still run, and
// the leader's goroutine exits (its own Update had committed).
func TestWriterGoexitQueued(t *testing.T) {
	d := New()
	defer d.Close()
	release := make(chan struct{})
	leader := stallLeader(t, d, release, func() error { return nil })
	put := func(k string) func(storage.Tx) error {
		return func(tx storage.Tx) error { return tx.Put(testBucket, []byte(k), nil) }
	}
	o := queueUpdates(t, d,
		put("a"), // leads the batch of the three
		func(tx storage.Tx) error {
			if err := tx.Put(testBucket, []byte("b"), nil); err != nil {
				return err
			}
			runtime.Goexit()
			return nil
		},
		put("c"),
	)
	close(release)
	o.wg.Wait()
	if err := <-leader; err != nil {
		t.Fatalf("leader: %v", err)
	}
	if diff := cmp.Diff([]bool{false, true, true}, o.returned); diff != "" {
		t.Errorf("Updates returned (-want +got):\n%s", diff)
	}
	if !errors.Is(o.errs[1], errGoexit) || o.errs[2] != nil {
		t.Errorf("outcomes %v, want -, errGoexit, nil", o.errs)
	}
	if diff := cmp.Diff([]string{"a", "c", "leader"}, keys(t, d)); diff != "" {
		t.Errorf("committed keys (-want +got):\n%s", diff)
	}
}
