// Package storagetest is the conformance suite for storage.Backend
// implementations, in the manner of testing/fstest.TestFS: a backend's own
// test calls Run with a function that opens a fresh, empty instance.
//
//	func TestConformance(t *testing.T) {
//		storagetest.Run(t, func(t *testing.T) storage.Backend { return memory.New() })
//	}
//
// # What it checks
//
// Run covers the whole storage.Backend contract: absent keys, overwrite and
// delete, rollback on error and on panic, read-only Views, byte order with
// 0x00 and 0xff bytes, every combination of Prefix, After, Reverse and Limit
// against a reference model (committed data, and pending writes seen from
// inside an Update), early stop, writes from inside a Scan callback, slice
// aliasing, the bucket list (storage.Buckets, through
// storage.BucketLister), snapshot isolation across goroutines, concurrent
// read-modify-write counts, cancelled contexts, transactions used after
// they ended, and use after Close.
//
// RunDurable adds the checks only a durable backend can pass: data committed
// before Close is there after reopening, and rolled-back data is not.
//
// # Timing
//
// No check measures time. The only timeout is a generous guard that turns a
// backend whose Updates block behind an open View into a failure instead of a
// hung test.
package storagetest
