// Package memory is an in-process storage.Backend: ordered, with snapshot
// Views and serialized Updates, for tests, sandboxes and embedders that keep
// their own durability elsewhere. It passes storagetest.Run.
//
//	db := memory.New()
//	defer db.Close()
//
// # MVCC snapshots
//
// The layout follows etcd's MVCC index. Each bucket is an ordered tree of
// keys (a B+tree, see below), for scans, beside a hash index, so that a
// point read or the overwrite of an existing key costs the same in a store
// of a thousand keys and of ten million. The hash index maps a seeded 64-bit hash of the key to
// its item (a rare collision goes to a side map), so it holds no strings and
// grows without rehashing keys. Every key holds a short chain of versions
// tagged with the commit sequence number that wrote them: the newest inline
// in its item, older ones, which exist only until compaction, in a list the
// item borrows; a delete writes a tombstone. Overwriting an existing key
// adds a version and leaves the tree and the hash index alone.
//
// A bucket gets its hash index on the first point read, overwrite or delete
// an Update makes in it, or at the start of the first batch of Updates after a View's
// point read in it. Until then it has only been appended to, like a
// ledger's history that is read by scans alone, and it is a log: each key
// is one entry, its key, value and sequence number carved side by side from
// a pointer-free block and held by one word in the tree. Hashing the bucket
// turns its entries into items, once.
//
// The tree is a B+tree shaped for appends to many interleaved key ranges,
// which is how a store mostly grows (per-account histories, time-ordered
// IDs): an insert next to a recent one in a range costs a few comparisons
// instead of a descent, leaves filled by appends stay full, and deletes
// merge thinned leaves rather than rebalance.
//
// A View pins the last published sequence number and reads, for each key,
// the newest version at or below it. It takes a read lock only for a point
// read or for gathering one small batch of a scan, and calls the scan
// callback with no lock held, so a View never blocks an Update and an
// Update that commits while a View runs is invisible to it.
//
// # Updates
//
// Updates run one at a time, in the order they arrive, each on whichever
// goroutine leads the writer at the time (see writer.go): no lock passes
// from one Update's goroutine to the next. The running Update adds its writes to the
// version chains directly, tagged with the next sequence number, which no
// View can see yet; its own reads and scans take the newest version, so they
// see its writes without a separate buffer to merge. Commit is publishing the
// sequence number. Rollback (an error or a panic in fn) pops the added
// versions and unlinks the keys it created, so a failed Update leaves no
// trace; a panic is re-raised after the rollback. fn runs exactly once.
//
// # Garbage collection
//
// A key that gained a second version or a tombstone is queued with the
// sequence number of its commit. At the start of each batch of Updates, entries that
// every open View has moved past are compacted: older versions are dropped
// and keys whose only version is a tombstone are removed. Memory therefore
// tracks the live data, and a long-lived View keeps alive only the versions
// it can still see.
//
// # Allocation
//
// A store's memory is mostly keys written once, and the cost of a growing
// Go heap (fresh pages, zeroing, marking) grows with every byte and pointer
// it keeps, so a kept key is made as small and as pointer-free as it can
// be. Keys and values are stored as records (a uvarint length, then the
// bytes) addressed by one pointer. The records of a new key (up to 1 KB)
// are carved from shared 16 KB blocks, with no pointers for the garbage
// collector to scan, so a key costs no allocation of its own; a log entry
// is its records alone, and an item is four words carved from a slab of 64.
// A block or slab is freed once none of its records or items is live. To
// keep short-lived data from pinning them, the value of an overwrite
// (balances, counters) gets its own allocation, freed as soon as compaction
// drops it; so does every new value in a bucket where a key has been
// overwritten, and every new item and key too in one where a key has been
// deleted (queues, indexes of pending work).
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
