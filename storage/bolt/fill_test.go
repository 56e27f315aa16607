package bolt_test

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	bbolt "go.etcd.io/bbolt"

	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/bolt"
)

// TestFillAppends: a bucket that only ever receives keys after its last
// one (an outbox, a history) is folded into full leaf pages, not the half
// full ones bbolt leaves by default.
func TestFillAppends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	db, err := bolt.Open(path, &bolt.Options{CheckpointSize: 1, PageSize: 4096})
	if err != nil {
		t.Fatal(err)
	}
	var seq uint64
	for range 20 { // each round is folded on its own
		err := db.Update(context.Background(), func(tx storage.Tx) error {
			for range 100 {
				seq++
				if err := tx.Put("seq", storage.AppendUint64(nil, seq), bytes.Repeat([]byte{'v'}, 100)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	bdb, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer bdb.Close()
	err = bdb.View(func(tx *bbolt.Tx) error {
		st := tx.Bucket([]byte("seq")).Stats()
		if st.KeyN != int(seq) {
			t.Errorf("keys = %d, want %d", st.KeyN, seq)
		}
		if fill := float64(st.LeafInuse) / float64(st.LeafAlloc); fill < 0.9 {
			t.Errorf("leaf pages %.0f%% full (%d pages), want at least 90%%", 100*fill, st.LeafPageN)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
