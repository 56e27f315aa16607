package storage

import (
	"errors"
	"slices"
)

// BucketLister is an optional interface a Tx may implement (as Peeker
// is), for code that reads a whole store without knowing its buckets:
// backups (storage/snapshot) and integrity checks. BucketNames returns, in
// any order and possibly with repeats, the names of buckets that may hold
// keys in the transaction's view: at least every bucket that holds one,
// the transaction's own writes included; a backend may also name buckets
// that are empty (bbolt and storage/memory keep a bucket once made).
// Buckets narrows that to exactly the buckets that hold keys.
//
// In an Update it takes no lock: a bucket another Update is creating may
// be missing from it, as a key being inserted is from a Queue scan. Use
// it in a View, or where nothing else writes (a restore into a new store).
//
// storage/memory, storage/bolt and storage/postgres implement it, and
// storagetest.Run checks it.
type BucketLister interface {
	BucketNames() ([]Bucket, error)
}

// ErrNoBucketList is returned by Buckets for a Tx that does not implement
// BucketLister.
var ErrNoBucketList = errors.New("storage: the backend cannot list its buckets")

// Buckets returns, in ascending byte order, every bucket that holds at
// least one key in tx's view, and no other. It returns ErrNoBucketList
// when tx does not implement BucketLister.
func Buckets(tx Tx) ([]Bucket, error) {
	l, ok := tx.(BucketLister)
	if !ok {
		return nil, ErrNoBucketList
	}
	names, err := l.BucketNames()
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	names = slices.Compact(names)
	out := names[:0]
	for _, b := range names {
		found := false
		err := tx.Scan(b, ScanOptions{Limit: 1}, func(_, _ []byte) error {
			found = true
			return nil
		})
		if err != nil {
			return nil, err
		}
		if found {
			out = append(out, b)
		}
	}
	return out, nil
}
