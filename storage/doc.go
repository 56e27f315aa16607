// Package storage is the seam between corebank's services and the bytes on
// disk: an ordered key-value Backend with serializable read-write
// transactions and snapshot reads, shaped after bbolt so that it maps onto
// bbolt, an in-memory tree, or SQL.
//
// # Backends
//
// storage/bolt stores on a bbolt file; storage/memory keeps everything in
// process for tests and sandboxes. Both pass storage/storagetest.Run, the one
// conformance suite. A backend's Scan finds its first key with
// ScanOptions.Start, so every backend reads Prefix and After alike.
//
// # Keys
//
// Every list is a prefix scan over keys, and secondary indexes are keys too
// ("by-entity/<entity>/<id>"), so a page resumes from a cursor with one seek
// and costs the same at item ten and at item ten million. Key and Prefix join
// string parts; AppendUint64 makes numeric parts sort numerically.
//
// # Transactions
//
// Update's function may run more than once when a backend groups concurrent
// commits, so it must only read and write through its Tx and set its own
// results. Never start an Update inside a View on the same goroutine: bbolt
// deadlocks.
package storage
