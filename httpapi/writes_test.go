package httpapi_test

import (
	"context"

	"github.com/corebank/corebank/storage"
)

// write is one Put or Delete of an Update's function.
type write struct {
	b        storage.Bucket
	key      string
	valueLen int
	deleted  bool
}

// recordUpdate runs fn in an Update of db and, if it committed, hands the
// writes of the run that committed to done. A backend may run fn more
// than once and commits only the last run, so each run records into a
// fresh list and only the list of the last is handed on, after Update
// returns nil.
func recordUpdate(ctx context.Context, db storage.Backend, fn func(storage.Tx) error, done func([]write)) error {
	var run []write
	err := db.Update(ctx, func(tx storage.Tx) error {
		run = run[:0] // this run replaces any earlier one
		return fn(&recordingTx{Tx: tx, writes: &run})
	})
	if err == nil {
		done(run)
	}
	return err
}

// recordingTx records each Put and Delete of one run of an Update's
// function.
type recordingTx struct {
	storage.Tx
	writes *[]write
}

func (t *recordingTx) Put(b storage.Bucket, key, value []byte) error {
	if err := t.Tx.Put(b, key, value); err != nil {
		return err
	}
	*t.writes = append(*t.writes, write{b: b, key: string(key), valueLen: len(value)})
	return nil
}

func (t *recordingTx) Delete(b storage.Bucket, key []byte) error {
	if err := t.Tx.Delete(b, key); err != nil {
		return err
	}
	*t.writes = append(*t.writes, write{b: b, key: string(key), deleted: true})
	return nil
}

// Peek keeps the wrapped Tx's copy-free reads.
func (t *recordingTx) Peek(b storage.Bucket, key []byte) ([]byte, error) {
	return storage.Peek(t.Tx, b, key)
}
