package postgres_test

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
	"github.com/corebank/corebank/storage/postgres"
)

var errBoom = errors.New("boom")

// TestGroupCommit holds the one leader in an Update while others queue,
// so that they run as one group: those that succeed commit together in one
// transaction, and one that returns an error, panics or calls
// runtime.Goexit is undone alone (its savepoint) and told its own outcome.
func TestGroupCommit(t *testing.T) {
	ctx := context.Background()
	db := MustOpen(t, &postgres.Options{Leaders: 1, Group: 16})
	release := make(chan struct{})
	started := make(chan struct{})
	var once sync.Once
	firstDone := make(chan error, 1)
	go func() {
		firstDone <- db.Update(ctx, func(tx storage.Tx) error {
			once.Do(func() { close(started) })
			<-release
			return tx.Put(benchBucket, []byte("first"), nil)
		})
	}()
	<-started
	before := postgres.Commits(db)

	const n = 12
	type outcome struct {
		err    error
		panic  any
		exited bool
	}
	outcomes := make([]outcome, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			exited := true
			defer func() {
				outcomes[i].exited = exited
				if r := recover(); r != nil {
					outcomes[i].panic, outcomes[i].exited = r, false
				}
				wg.Done()
			}()
			outcomes[i].err = db.Update(ctx, func(tx storage.Tx) error {
				if err := tx.Put(benchBucket, fmt.Appendf(nil, "k%02d", i), []byte("v")); err != nil {
					return err
				}
				switch i % 4 {
				case 1:
					return errBoom
				case 2:
					panic(fmt.Sprint("panic ", i))
				case 3:
					if i == 3 {
						runtime.Goexit()
					}
				}
				return nil
			})
			exited = false
		}()
	}
	deadline := time.Now().Add(10 * time.Second)
	for postgres.Queued(db) < n && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if got := postgres.Queued(db); got != n {
		t.Fatalf("%d Updates queued, want %d", got, n)
	}
	close(release)
	if err := <-firstDone; err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if got := postgres.Commits(db) - before; got != 2 {
		t.Errorf("%d transactions committed for the blocked Update and %d queued ones, want 2", got, n)
	}
	want := []string{"first"}
	for i, o := range outcomes {
		switch {
		case i == 3:
			if !o.exited {
				t.Errorf("Update %d: called Goexit but its goroutine went on: %+v", i, o)
			}
		case i%4 == 1:
			if !errors.Is(o.err, errBoom) {
				t.Errorf("Update %d = %v, want %v", i, o.err, errBoom)
			}
		case i%4 == 2:
			if o.panic != fmt.Sprint("panic ", i) {
				t.Errorf("Update %d: recovered %v, want its panic", i, o.panic)
			}
		default:
			if o.err != nil || o.panic != nil || o.exited {
				t.Errorf("Update %d = %+v, want success", i, o)
			}
			want = append(want, fmt.Sprintf("k%02d", i))
		}
	}
	var got []string
	if err := db.View(ctx, func(tx storage.Tx) error {
		return tx.Scan(benchBucket, storage.ScanOptions{}, func(k, _ []byte) error {
			got = append(got, string(k))
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("keys after the group (-want +got):\n%s", diff)
	}
}

// TestPriorityFirst holds the one leader while Updates queue: those whose
// context has storage.WithPriority run first, in their order, then the
// rest in theirs.
func TestPriorityFirst(t *testing.T) {
	ctx := context.Background()
	db := MustOpen(t, &postgres.Options{Leaders: 1})
	release, started := make(chan struct{}), make(chan struct{})
	var once sync.Once
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = db.Update(ctx, func(tx storage.Tx) error {
			once.Do(func() { close(started) })
			<-release
			return nil
		})
	}()
	<-started
	var (
		mu  sync.Mutex
		ran []string
	)
	for i, name := range []string{"request 1", "due 1", "request 2", "due 2", "request 3"} {
		c := ctx
		if name[:3] == "due" {
			c = storage.WithPriority(ctx)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := db.Update(c, func(tx storage.Tx) error {
				mu.Lock()
				ran = append(ran, name)
				mu.Unlock()
				return tx.Put(benchBucket, []byte(name), nil)
			}); err != nil {
				t.Error(err)
			}
		}()
		for postgres.Queued(db) != i+1 {
			time.Sleep(time.Millisecond)
		}
	}
	close(release)
	wg.Wait()
	want := []string{"due 1", "due 2", "request 1", "request 2", "request 3"}
	if diff := cmp.Diff(want, ran); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}
