package memory

import (
	"context"
	"fmt"
	"testing"

	"github.com/corebank/corebank/storage"
)

// versions counts keys and versions held in b, including tombstones.
func (d *DB) versions(b storage.Bucket) (keys, versions int) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	bk := d.buckets[b]
	if bk == nil {
		return 0, 0
	}
	bk.tree.Ascend(func(r ref) bool {
		keys++
		versions += len(r.it.versions)
		return true
	})
	if len(bk.index) != keys {
		panic(fmt.Sprintf("index has %d keys, tree %d", len(bk.index), keys))
	}
	return keys, versions
}

func update(t *testing.T, d *DB, fn func(storage.Tx) error) {
	t.Helper()
	if err := d.Update(context.Background(), fn); err != nil {
		t.Fatal(err)
	}
}

// TestCompaction checks that old versions and tombstones are dropped once no
// View can read them, and kept while one can.
func TestCompaction(t *testing.T) {
	const b = storage.Bucket("gc")
	d := New()
	write := func(i int) {
		update(t, d, func(tx storage.Tx) error {
			for k := range 10 {
				key := fmt.Appendf(nil, "k%d", k)
				if (i+k)%3 == 0 {
					if err := tx.Delete(b, key); err != nil {
						return err
					}
					continue
				}
				if err := tx.Put(b, key, fmt.Appendf(nil, "%d", i)); err != nil {
					return err
				}
			}
			return nil
		})
	}
	for i := range 100 {
		write(i)
	}
	// The next Update collects what the last one left behind.
	update(t, d, func(tx storage.Tx) error { return nil })
	keys, versions := d.versions(b)
	if keys != versions || keys > 10 {
		t.Fatalf("after 100 Updates with no View: %d keys, %d versions; want one version per live key", keys, versions)
	}
	live := keys

	// A View pins its snapshot: versions it can see survive later Updates.
	release := make(chan struct{})
	pinned := make(chan struct{})
	done := make(chan error)
	var seen string
	go func() {
		done <- d.View(context.Background(), func(tx storage.Tx) error {
			close(pinned)
			<-release
			v, err := tx.Get(b, []byte("k1"))
			seen = string(v)
			if err != nil {
				seen = err.Error()
			}
			return nil
		})
	}()
	<-pinned
	var want string
	if err := d.View(context.Background(), func(tx storage.Tx) error {
		v, err := tx.Get(b, []byte("k1"))
		want = string(v)
		if err != nil {
			want = err.Error()
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for i := 100; i < 200; i++ {
		write(i)
	}
	if _, versions := d.versions(b); versions <= live {
		t.Errorf("only %d versions while a View is pinned; old versions were dropped", versions)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if seen != want {
		t.Errorf("pinned View read k1 = %q, want %q", seen, want)
	}
	update(t, d, func(tx storage.Tx) error { return nil })
	if keys, versions := d.versions(b); keys != versions || keys > 10 {
		t.Errorf("after the View ended: %d keys, %d versions; want one version per live key", keys, versions)
	}

	// Deleting everything leaves nothing behind.
	update(t, d, func(tx storage.Tx) error {
		for k := range 10 {
			if err := tx.Delete(b, fmt.Appendf(nil, "k%d", k)); err != nil {
				return err
			}
		}
		return nil
	})
	update(t, d, func(tx storage.Tx) error { return nil })
	if keys, versions := d.versions(b); keys != 0 || versions != 0 {
		t.Errorf("after deleting every key: %d keys, %d versions; want none", keys, versions)
	}
}
