// Package bolt is the durable storage.Backend: a bbolt file
// (go.etcd.io/bbolt) with a write-ahead log beside it. It passes
// storagetest.Run and storagetest.RunDurable.
//
//	db, err := bolt.Open(filepath.Join(dir, "corebank.db"), nil)
//	if err != nil {
//		return err // wraps bolt.ErrLocked if another process holds the file
//	}
//	defer db.Close()
//
// # Layout
//
// Each storage.Bucket is one top-level bbolt bucket. Keys and values are
// stored as given, so bbolt's byte order is the Scan order. The backend
// keeps its own records (the checkpoint generation) in a bucket whose name
// starts with a NUL byte.
//
// # Log, overlay and checkpoints
//
// A bbolt commit costs two fsyncs (pages, then the meta page) plus a write
// per dirty page, about a millisecond here for a payout that touches ten
// buckets. So a commit is not a bbolt commit. Its writes are appended to
// the log, path+"-wal", as one checksummed record and fsynced once (the log
// is zero-filled ahead of the records, so that sync writes no file size),
// and they go into an in-memory overlay, a storage/memory DB whose values
// are tagged live or deleted. Reads look in the overlay first and then in
// the bbolt file; a Scan merges a bbolt cursor with the overlay's keys in
// the same range.
//
// When the log passes Options.CheckpointSize (8 MiB by default), the commit
// leader folds the overlay into the bbolt file in one ordinary bbolt commit,
// with both of its fsyncs, which also bumps a generation number stored in
// the file. Then it starts an empty overlay and writes the log again from
// its start, stamping records with the new generation. Overwrites of the
// same keys (balances, holds) between two checkpoints reach bbolt once.
//
// Open replays the log: records of the current generation, in order, up to
// the first one that is short, fails its CRC or carries another generation.
// A torn tail is a commit whose caller was never told it was durable;
// records of an older generation are already in the bbolt file. Open then
// checkpoints what it replayed, and Close checkpoints too. A crash at any
// point therefore loses nothing that Update acknowledged: the bbolt file is
// only ever changed by full bbolt commits, and the log holds every commit
// since the last one. A failed log write leaves the log in an unknown
// state, so every later Update fails until the DB is reopened.
//
// # Durability and locking
//
// Update returns only after its commit's log record is fsynced, and a View
// never sees a commit before that: the overlay transaction is published
// after the sync. NoSync is never set on bbolt. bbolt takes an exclusive
// flock on the file, so a second Open of the same file, from another
// process or from this one, fails after Options.Timeout (1 second by
// default) with an error wrapping ErrLocked instead of hanging; the log is
// opened only under that lock.
//
// A View pairs a snapshot of the overlay with a bbolt read transaction of
// the checkpoint that overlay lies on. Neither blocks commits. A checkpoint
// commits to bbolt just before it replaces the overlay, so a View starting
// in between sees the two disagree (by bbolt's transaction ID) and takes
// them again. bbolt must remap the file to grow past its memory map, which
// waits for open read transactions, so Open maps 1 GiB of address space up
// front (Options.InitialMmapSize) and small databases never remap.
//
// # Group commit
//
// An fsync costs about as much as thousands of small transactions, so
// concurrent Updates share commits. There is no timer. An Update joins a
// queue; if no commit is in flight its caller becomes the leader, takes
// everything queued, runs each function in turn inside one overlay
// transaction and logs their writes as one record with one fsync. Updates
// that arrive meanwhile queue, and when the commit is done the first of them
// leads the next round with all of them. One caller alone pays one fsync
// per Update with no added delay; N callers share roughly one fsync per
// round.
//
// If a function in a round returns an error or panics, the round is rolled
// back, that function gets a solo run whose outcome (error, panic or
// commit) is its caller's own, and the rest run again together. That is why
// storage.Backend allows an Update function to run more than once. Each run
// gets a fresh Tx that ends with the run, and a panic is re-raised on its
// caller's goroutine, never on the leader's. Every caller returns only
// after the log record that holds its writes is fsynced.
//
// # Slices
//
// bbolt memory is valid only inside its transaction, so Get returns a copy
// and Put stores a copy; a Scan callback receives copies in buffers reused
// for the next entry.
package bolt
