package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/memory"
	"github.com/corebank/corebank/storage/postgres"
)

// script returns an Update function that does random Puts, Deletes, Gets
// and Scans (forward and reverse, with prefixes, cursors and limits) over
// a few keys, and logs what each read saw.
func script(seed uint64, log *[]string) func(storage.Tx) error {
	return func(tx storage.Tx) error {
		r := rand.New(rand.NewPCG(seed, 1))
		key := func() []byte { return fmt.Appendf(nil, "%c%d", "ab"[r.IntN(2)], r.IntN(40)) }
		for i := range 60 {
			switch r.IntN(5) {
			case 0, 1:
				if err := tx.Put(benchBucket, key(), fmt.Appendf(nil, "%d.%d", seed, i)); err != nil {
					return err
				}
			case 2:
				if err := tx.Delete(benchBucket, key()); err != nil {
					return err
				}
			case 3:
				k := key()
				v, err := tx.Get(benchBucket, k)
				if err != nil && !errors.Is(err, storage.ErrNotFound) {
					return err
				}
				*log = append(*log, fmt.Sprintf("get %s = %q %v", k, v, err))
			case 4:
				o := storage.ScanOptions{Reverse: r.IntN(2) == 0, Limit: r.IntN(12)}
				if r.IntN(2) == 0 {
					o.Prefix = key()[:1]
				}
				if r.IntN(2) == 0 {
					o.After = key()
				}
				var got []string
				err := tx.Scan(benchBucket, o, func(k, v []byte) error {
					got = append(got, string(k)+"="+string(v))
					return nil
				})
				if err != nil {
					return err
				}
				*log = append(*log, fmt.Sprintf("scan %+v = %v", o, got))
			}
		}
		return nil
	}
}

// TestBufferedWrites checks that an Update reads its own buffered writes,
// in Gets and in Scans merged with the table, and those of the Updates
// before it in its group, as the memory backend does when the same
// Updates run one after another.
func TestBufferedWrites(t *testing.T) {
	ctx := context.Background()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	db := MustOpen(t, &postgres.Options{Leaders: 1, Group: 16})
	mem := memory.New()
	var want, got [][]string
	for _, s := range []uint64{seed, seed + 1} {
		var log []string
		if err := mem.Update(ctx, script(s, &log)); err != nil {
			t.Fatal(err)
		}
		want = append(want, log)
	}
	var log []string
	if err := db.Update(ctx, script(seed, &log)); err != nil {
		t.Fatal(err)
	}
	got = append(got, log)

	// A group: the leader is held while two Updates queue, in order.
	release, started := make(chan struct{}), make(chan struct{})
	done := make(chan error, 3)
	go func() {
		done <- db.Update(ctx, func(storage.Tx) error { close(started); <-release; return nil })
	}()
	<-started
	logs := make([][]string, 2)
	for i, s := range []uint64{seed + 1, seed + 2} {
		go func() { done <- db.Update(ctx, script(s, &logs[i])) }()
		for postgres.Queued(db) < i+1 {
			time.Sleep(time.Millisecond)
		}
	}
	close(release)
	for range 3 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	got = append(got, logs[0])
	var mlog []string
	if err := mem.Update(ctx, script(seed+2, &mlog)); err != nil {
		t.Fatal(err)
	}
	want = append(want, mlog)
	got = append(got, logs[1])
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reads (-memory +postgres):\n%s", diff)
	}
	dump := func(b storage.Backend) []string {
		var all []string
		if err := b.View(ctx, func(tx storage.Tx) error {
			return tx.Scan(benchBucket, storage.ScanOptions{}, func(k, v []byte) error {
				all = append(all, string(k)+"="+string(v))
				return nil
			})
		}); err != nil {
			t.Fatal(err)
		}
		return all
	}
	if diff := cmp.Diff(dump(mem), dump(db)); diff != "" {
		t.Errorf("committed (-memory +postgres):\n%s", diff)
	}
}
