package memory

import (
	"context"
	"errors"
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
	if bk.log != nil {
		return bk.log.Len(), bk.log.Len()
	}
	bk.tree.Ascend(func(e entry) bool {
		it := (*item)(e)
		keys++
		versions += 1 + it.olderLen()
		return true
	})
	if bk.index != nil {
		indexed := len(bk.index)
		for _, list := range bk.coll {
			indexed += len(list)
		}
		if indexed != keys {
			panic(fmt.Sprintf("index has %d keys, tree %d", indexed, keys))
		}
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

// TestLazyIndex checks buckets without a hash index: View reads there, the
// index a View's read asks for, and an index built in the middle of an
// Update that then rolls back.
func TestLazyIndex(t *testing.T) {
	const viewed, rolled = storage.Bucket("viewed"), storage.Bucket("rolled")
	d := New()
	update(t, d, func(tx storage.Tx) error {
		if err := tx.Put(viewed, []byte("k0"), []byte("v0")); err != nil {
			return err
		}
		return tx.Put(rolled, []byte("k0"), []byte("v0"))
	})
	get := func(b storage.Bucket, key string) string {
		var out string
		if err := d.View(context.Background(), func(tx storage.Tx) error {
			v, err := tx.Get(b, []byte(key))
			out = string(v)
			if err != nil {
				out = err.Error()
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	if d.buckets[viewed].index != nil || d.buckets[rolled].index != nil {
		t.Fatal("appends built an index")
	}
	if got := get(viewed, "k0"); got != "v0" {
		t.Fatalf("View Get without an index = %q", got)
	}
	update(t, d, func(tx storage.Tx) error { return nil })
	if d.buckets[viewed].index == nil {
		t.Fatal("the Update after a View's point read did not build the index")
	}
	if d.buckets[rolled].index != nil {
		t.Fatal("an index was built for a bucket nobody read")
	}

	boom := errors.New("boom")
	err := d.Update(context.Background(), func(tx storage.Tx) error {
		if err := tx.Put(rolled, []byte("k1"), []byte("v1")); err != nil {
			return err
		}
		if v, err := tx.Get(rolled, []byte("k0")); err != nil || string(v) != "v0" {
			t.Errorf("Get in Update = %q, %v", v, err)
		}
		if v, err := tx.Get(rolled, []byte("k1")); err != nil || string(v) != "v1" {
			t.Errorf("Get of own write after hashing = %q, %v", v, err)
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Update = %v, want boom", err)
	}
	if d.buckets[rolled].index == nil {
		t.Fatal("a point read in an Update did not build the index")
	}
	if keys, _ := d.versions(rolled); keys != 1 {
		t.Errorf("after rollback: %d keys, want 1", keys)
	}
	if got := get(rolled, "k1"); got != storage.ErrNotFound.Error() {
		t.Errorf("rolled-back key reads %q", got)
	}
	update(t, d, func(tx storage.Tx) error {
		if err := tx.Put(rolled, []byte("k0"), []byte("w0")); err != nil {
			return err
		}
		return tx.Put(rolled, []byte("k2"), []byte("v2"))
	})
	if got := get(rolled, "k0") + get(rolled, "k2"); got != "w0v2" {
		t.Errorf("after overwrite and insert: %q", got)
	}
	if keys, _ := d.versions(rolled); keys != 2 {
		t.Errorf("%d keys, want 2", keys)
	}
}
