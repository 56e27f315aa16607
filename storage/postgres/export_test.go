package postgres

import "github.com/corebank/corebank/storage"

// Commits returns how many transactions Updates have committed.
func Commits(d *DB) uint64 { return d.commits.Load() }

// Queued returns how many Updates wait for a group.
func Queued(d *DB) int {
	d.qmu.Lock()
	defer d.qmu.Unlock()
	return len(d.queue)
}

// RoundTrips returns how many round trips Views and Updates have made.
func RoundTrips(d *DB) uint64 { return d.trips.Load() }

// PrefixLocksSQL is the statement with which a commit locks its keys'
// prefixes of the scanned lengths.
func PrefixLocksSQL(d *DB) string { return d.q.locks.prefixes }

// PrefixLock is the lock a Scan of prefix takes.
func PrefixLock(d *DB, b string, prefix []byte) int64 {
	return lockID(d.table, kindPrefix, storage.Bucket(b), prefix)
}

// KeyLock is the lock of key in b.
func KeyLock(d *DB, b string, key []byte) int64 {
	return lockID(d.table, kindKey, storage.Bucket(b), key)
}

// ShapesLock is the lock every commit holds shared while it reads the
// registered prefix lengths.
func ShapesLock(d *DB) int64 { return d.shapesLock }
