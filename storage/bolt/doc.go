// Package bolt is the durable storage.Backend, on a single bbolt file
// (go.etcd.io/bbolt). It passes storagetest.Run and storagetest.RunDurable.
//
//	db, err := bolt.Open(filepath.Join(dir, "corebank.db"), nil)
//	if err != nil {
//		return err // wraps bolt.ErrLocked if another process holds the file
//	}
//	defer db.Close()
//
// # Layout
//
// Each storage.Bucket is one top-level bbolt bucket, created by its first
// write; a View of a bucket never written reads as empty. Keys and values
// are stored as given, so bbolt's byte order is the Scan order. Scan walks a
// bbolt cursor: Seek to the prefix or past the After cursor, or for Reverse
// seek to the end of the prefix range and step back.
//
// # Durability and locking
//
// Every commit is fsynced before Update returns; NoSync is never set. bbolt
// takes an exclusive flock on the file, so a second Open of the same file,
// from another process or from this one, fails after Options.Timeout (1
// second by default) with an error wrapping ErrLocked instead of hanging.
//
// Views are bbolt read transactions: consistent snapshots that do not block
// commits. bbolt must remap the file to grow past its memory map, which waits
// for open read transactions, so Open maps 1 GiB of address space up front
// (Options.InitialMmapSize) and small databases never remap.
//
// # Group commit
//
// An fsync costs about as much as thousands of small transactions, so
// concurrent Updates share commits. There is no timer. An Update joins a
// queue; if no commit is in flight its caller becomes the leader, takes
// everything queued, runs each function in turn inside one bbolt
// transaction and commits it with one fsync. Updates that arrive meanwhile
// queue, and when the commit is done the first of them leads the next round
// with all of them. One caller alone pays one fsync per Update with no added
// delay; N callers share roughly one fsync per round.
//
// If a function in a round returns an error or panics, the bbolt
// transaction is rolled back, that function gets a solo run whose outcome
// (error, panic or commit) is its caller's own, and the rest run again
// together in a new transaction. That is why storage.Backend allows an
// Update function to run more than once. Each run gets a fresh Tx that ends
// with the run, and a panic is re-raised on its caller's goroutine, never on
// the leader's. Every caller returns only after the commit that holds its
// writes is fsynced.
//
// # Slices
//
// bbolt memory is valid only inside its transaction, so Get returns a copy
// and Put stores a copy; a Scan callback receives copies in buffers reused
// for the next entry.
package bolt
