package storage_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/memory"
)

func TestMigrate(t *testing.T) {
	ctx := context.Background()
	db := memory.New()
	// An old due index: <ms><id>, plus a key under another prefix.
	err := db.Update(ctx, func(tx storage.Tx) error {
		for _, k := range [][]byte{
			append(storage.AppendInt64([]byte("t/"), 5), "x"...),
			append(storage.AppendInt64([]byte("t/"), 9), "y"...),
			append(storage.AppendInt64([]byte("q/"), 1), "z"...),
		} {
			if err := tx.Put("old.due", k, nil); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	runs := 0
	m := storage.Migration{Name: "test.move", Run: func(tx storage.Tx) error {
		runs++
		return storage.MoveToDue(tx, "old.due", []byte("t/"), "test.kind")
	}}
	boom := errors.New("boom")
	failing := storage.Migration{Name: "test.fail", Run: func(tx storage.Tx) error {
		if err := tx.Put("old.due", []byte("half"), nil); err != nil {
			return err
		}
		return boom
	}}
	if n, err := storage.Migrate(ctx, db, m, failing); n != 1 || !errors.Is(err, boom) {
		t.Fatalf("Migrate = %d, %v; want 1 and boom", n, err)
	}
	if n, err := storage.Migrate(ctx, db, m); n != 0 || err != nil || runs != 1 {
		t.Fatalf("second Migrate = %d, %v after %d runs; want 0, nil, 1 run", n, err, runs)
	}
	var ran []storage.DueItem
	d := storage.NewDue(db, clock.NewMock(), 0, storage.DueJob{Kind: "test.kind", Tx: func(_ storage.Tx, _ time.Time, it storage.DueItem) error {
		ran = append(ran, it)
		return nil
	}})
	if _, err := d.RunDue(ctx, time.UnixMilli(100)); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]storage.DueItem{{At: 5, ID: "x"}, {At: 9, ID: "y"}}, ran); diff != "" {
		t.Fatalf("moved items (-want +got)\n%s", diff)
	}
	left, _ := storage.View(ctx, db, func(tx storage.Tx) ([]string, error) {
		var keys []string
		err := tx.Scan("old.due", storage.ScanOptions{}, func(k, _ []byte) error { keys = append(keys, string(k[:2])); return nil })
		return keys, err
	})
	if diff := cmp.Diff([]string{"q/"}, left); diff != "" {
		t.Fatalf("old keys left (-want +got)\n%s (the failed migration must leave nothing)", diff)
	}
}

// TestDeleteMatching deletes the matching keys under the prefix and no
// other, every one under it when match is nil.
func TestDeleteMatching(t *testing.T) {
	const b = storage.Bucket("t")
	for _, tc := range []struct {
		name  string
		match func([]byte) bool
		want  []string
	}{
		{"nil", nil, []string{"a", "q/1"}},
		{"match", func(k []byte) bool { return k[len(k)-1] == '2' }, []string{"a", "p/1", "p/3", "q/1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := memory.New()
			defer db.Close()
			ctx := context.Background()
			var got []string
			err := db.Update(ctx, func(tx storage.Tx) error {
				for _, k := range []string{"a", "p/1", "p/2", "p/3", "q/1"} {
					if err := tx.Put(b, []byte(k), []byte{}); err != nil {
						return err
					}
				}
				if err := storage.DeleteMatching(tx, b, []byte("p/"), tc.match); err != nil {
					return err
				}
				return tx.Scan(b, storage.ScanOptions{}, func(k, _ []byte) error {
					got = append(got, string(k))
					return nil
				})
			})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("keys left (-want +got):\n%s", diff)
			}
		})
	}
}
