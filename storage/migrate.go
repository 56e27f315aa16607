package storage

import (
	"context"
	"fmt"
)

// BucketMigrations records which migrations a store has run: name -> empty.
const BucketMigrations = Bucket("storage.migrations")

// Migration is a one-time change to stored data, such as moving an index
// that an older release kept into the layout this one reads. Name is
// stable and unique ("ledger.due-queue"); Run does the whole change inside
// one transaction.
type Migration struct {
	Name string
	Run  func(tx Tx) error
}

// Migrate runs, in order, each migration db has not recorded yet, each in
// one transaction that also records it, so a migration runs once and whole
// even if the process dies part way. It returns how many ran. Call it once
// when a store is opened, before serving; a new store runs every migration
// and finds nothing to move.
func Migrate(ctx context.Context, db Backend, ms ...Migration) (int, error) {
	n := 0
	for _, m := range ms {
		ran, err := Update(ctx, db, func(tx Tx) (bool, error) {
			done, err := Exists(tx, BucketMigrations, []byte(m.Name))
			if err != nil || done {
				return false, err
			}
			if err := m.Run(tx); err != nil {
				return false, err
			}
			return true, tx.Put(BucketMigrations, []byte(m.Name), []byte{})
		})
		if err != nil {
			return n, fmt.Errorf("storage: migration %s: %w", m.Name, err)
		}
		if ran {
			n++
		}
	}
	return n, nil
}

// MoveTimeIndex empties bucket from, whose keys under prefix are a time
// (Unix milliseconds, as AppendInt64 writes it) then an ID, the layout every
// service kept its due work in before the shared queue, handing each (at,
// id) to fn, which schedules it anew.
func MoveTimeIndex(tx Tx, from Bucket, prefix []byte, fn func(at int64, id string) error) error {
	var keys [][]byte
	err := tx.Scan(from, ScanOptions{Prefix: prefix}, func(k, _ []byte) error {
		keys = append(keys, append([]byte(nil), k...))
		return nil
	})
	if err != nil {
		return err
	}
	for _, k := range keys {
		rest := k[len(prefix):]
		at, err := Uint64(rest)
		if err != nil {
			return ErrCorrupt
		}
		if err := fn(int64(at), string(rest[8:])); err != nil {
			return err
		}
		if err := tx.Delete(from, k); err != nil {
			return err
		}
	}
	return nil
}

// MoveToDue is MoveTimeIndex scheduling each item under kind at its time.
func MoveToDue(tx Tx, from Bucket, prefix []byte, kind string) error {
	return MoveTimeIndex(tx, from, prefix, func(at int64, id string) error {
		return Schedule(tx, kind, at, id)
	})
}

// DeleteMatching deletes the keys of bucket under prefix for which match
// reports true (every one when match is nil): for a migration that drops
// records or index keys a release no longer reads.
func DeleteMatching(tx Tx, bucket Bucket, prefix []byte, match func(k []byte) bool) error {
	var keys [][]byte
	err := tx.Scan(bucket, ScanOptions{Prefix: prefix}, func(k, _ []byte) error {
		if match == nil || match(k) {
			keys = append(keys, append([]byte(nil), k...))
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, k := range keys {
		if err := tx.Delete(bucket, k); err != nil {
			return err
		}
	}
	return nil
}
