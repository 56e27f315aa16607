// Package memory is an in-process storage.Backend: ordered, with snapshot
// Views and serialized Updates, for tests, sandboxes and embedders that keep
// their own durability elsewhere. It passes storagetest.Run.
//
//	db := memory.New()
//	defer db.Close()
//
// # MVCC snapshots
//
// The layout follows etcd's MVCC index. Each bucket is a google/btree of
// keys, for ordered scans, beside a hash index, so that a point read or the
// overwrite of an existing key costs the same in a store of a thousand keys
// and of ten million. The hash index maps a seeded 64-bit hash of the key to
// a chain of items (collisions compare the keys), so it holds no strings and
// grows without rehashing keys. A bucket gets its hash index, built from the
// tree in one pass, on the first point read, overwrite or delete an Update
// makes in it, or at the start of the first Update after a View's point read
// in it. Until then it has only been appended to, like a ledger's history
// that is read by scans alone, and a Put costs one tree insert (a View's
// point read there is a tree search). Every key holds a short chain
// of versions tagged with the commit sequence number that wrote them; a
// delete writes a tombstone. Overwriting an existing key appends a version
// and leaves the tree and the hash index alone.
//
// A View pins the last published sequence number and reads, for each key,
// the newest version at or below it. It takes a read lock only for a point
// read or for gathering one small batch of a scan, and calls the scan
// callback with no lock held, so a View never blocks an Update and an
// Update that commits while a View runs is invisible to it.
//
// # Updates
//
// Updates run one at a time. The running Update appends its writes to the
// version chains directly, tagged with the next sequence number, which no
// View can see yet; its own reads and scans take the newest version, so they
// see its writes without a separate buffer to merge. Commit is publishing the
// sequence number. Rollback (an error or a panic in fn) pops the appended
// versions, so a failed Update leaves no trace; a panic is re-raised after
// the rollback. fn runs exactly once.
//
// # Garbage collection
//
// A key that gained a second version or a tombstone is queued with the
// sequence number of its commit. At the start of each Update, entries that
// every open View has moved past are compacted: older versions are dropped
// and keys whose only version is a tombstone are removed. Memory therefore
// tracks the live data, and a long-lived View keeps alive only the versions
// it can still see.
//
// # Allocation
//
// A new key's item is carved from a slab of 32 and its value (up to 1 KB)
// from a shared 16 KB block, so inserting a key costs one heap allocation
// of its own (the key string) plus shares of slabs, blocks and tree nodes.
// A slab or block is freed once none of its items or values is live. To
// keep short-lived data from pinning them, the value of an overwrite
// (balances, counters) gets its own allocation, freed as soon as compaction
// drops it; so does every new value in a bucket where a key has been
// overwritten, and every new item too in one where a key has been deleted
// (queues, indexes of pending work).
//
// # Slices
//
// Put copies its key and value and Get returns a copy, so callers may reuse
// or mutate either. A Scan callback receives copies in buffers that are
// reused for the next entry: as storage.Tx says, copy them to keep them.
//
// A transaction also has Peek(bucket, key) ([]byte, error), reached by a type
// assertion: Get without the copy. It returns the stored value itself, which
// the caller must neither modify nor append to; stored values are never
// mutated, so it stays valid after the transaction. The ledger's decoders,
// which copy what they keep, use it to save an allocation per read.
package memory
