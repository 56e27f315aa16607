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
// buckets. So a commit is not a bbolt commit. Its writes are appended to a
// log as one checksummed record and fsynced once (the log is zero-filled
// ahead of the records, so that sync writes no file size), and they go into
// an in-memory overlay, a storage/memory DB whose values carry a live or
// deleted tag and the number of the commit round that wrote them. Reads
// look in the overlay first and then in the bbolt file; a Scan merges a
// bbolt cursor with the overlay's keys in the same range.
//
// When the log passes Options.CheckpointSize (8 MiB by default), the
// overlay is frozen and a new, empty one takes the commits that follow,
// logged in the other of the two log files, path-wal.0 and path-wal.1,
// while a goroutine folds the frozen overlay into the bbolt file in one
// ordinary bbolt commit, with both of its fsyncs. That commit also records
// the generation folded in (generation g is logged in file g%2). Until it
// lands, reads see the active overlay, then the frozen one, then bbolt.
// Overwrites of the same keys (balances, holds) between two checkpoints
// reach bbolt once, and commits never wait for a fold. A fold whose keys
// for a bucket all sort after the bucket's last key (an outbox keyed by
// time-ordered IDs) fills that bucket's pages to the brim (bbolt's
// FillPercent 1.0) instead of splitting them half full for inserts that
// never come.
//
// Open replays the generations the bbolt file does not hold, in order, each
// up to the first record that is short, fails its CRC or carries another
// generation. A torn tail is a commit whose caller was never told it was
// durable; records of an older generation are already in the bbolt file
// and a log file is rewritten only once its generation is. Open then folds
// what it replayed (see Power loss), and Close folds too. A crash at any point therefore
// loses nothing that Update acknowledged: the bbolt file changes only by
// whole bbolt commits, and the logs hold every commit since the last one.
// A failed log write or sync leaves the log in an unknown state, so every
// later Update fails until the DB is reopened.
//
// # Power loss
//
// A crash that kills the process keeps the operating system's page cache;
// power loss does not. What the log promises then rests on fdatasync
// alone: Update returns nil only after the fdatasync of the log file that
// covers its record has returned (a grown log is fsynced, size included,
// before records are written into the new space), and Open fsyncs the
// directory when it creates the bbolt file or a log file, since a file's
// own fsync does not make its directory entry durable. Writes not yet
// synced may be lost whole, in part, or by sectors in any order: replay
// stops at the first record that is short or fails its CRC, so a commit
// whose caller was not told it was durable is either whole or absent, and
// every acknowledged one lies before the first damage. Records after the
// damage may survive whole; so that no later record can come to lie next
// to them, each Open of an existing store folds what it replayed (even
// nothing) into bbolt and logs from the next generation but one, which no
// earlier life wrote. Nothing is renamed or deleted.
//
// The bbolt file stays on bbolt's own guarantees: a checkpoint is one
// bbolt commit, which writes its pages, fsyncs, writes the meta page and
// fsyncs again, and a torn commit leaves the previous meta page in force;
// a log file is reused only after that commit has returned. The backend
// never sets NoSync and does not second-guess bbolt's file or the disk
// (a disk that acknowledges a flush it has not made defeats both).
//
// TestPowerLoss checks the log's part: the log files live on a file
// system in memory that keeps what was synced apart from what was only
// written, cuts the power at a random write or sync under concurrent
// group commits and checkpoints, then keeps, drops, cuts short or tears by
// 512-byte sectors each unsynced write at random, and may drop the entry
// of a file whose directory was never synced. Over many seeds and several
// cuts per store, each reopen succeeds, shows every acknowledged commit
// with exactly its values, and no commit in part. TestPowerLossNewLog and
// TestPowerLossStaleRecord pin the directory sync and the fresh
// generation, which random cuts reach rarely or never. It does not cut the
// power inside bbolt: the bbolt file is a real file whose commits either
// landed before the cut or not, so bbolt's meta-page protocol and the
// disk's honesty are assumed, not tested.
//
// # Durability and locking
//
// Update returns only after its commit's log record is fsynced, and a View
// never sees a commit before that: a View that meets a value of a round
// still being fsynced waits for that fsync. Values already durable, which
// are nearly all of them, are read without waiting. NoSync is never set on
// bbolt. bbolt takes an exclusive flock on the file, so a second Open of
// the same file, from another process or from this one, fails after
// Options.Timeout (1 second by default) with an error wrapping ErrLocked
// instead of hanging; the logs are opened only under that lock.
//
// A View pairs snapshots of the overlays with a bbolt read transaction of
// the commit they lie on. Neither blocks commits. A fold commits to bbolt
// just before it drops the frozen overlay, so a View starting in between
// sees the two disagree (by bbolt's transaction ID) and takes them again.
// bbolt must remap the file to grow past its memory map, which waits for
// open read transactions, so Open maps 1 GiB of address space up front
// (Options.InitialMmapSize) and small databases never remap.
//
// # Group commit
//
// An fsync costs about as much as thousands of small transactions, so
// concurrent Updates share them. There is no timer and no sync thread. An
// Update joins a queue (storage/internal/writeq, the one storage/memory
// writes through); if no round is running its caller becomes the
// leader, takes everything queued, runs each function in turn inside one
// overlay transaction and writes their writes as one log record. It then
// hands leadership to the first Update that queued meanwhile, whose round
// runs while this one is fsynced, and waits until its record is durable:
// if no fsync is in flight it runs one itself, covering every record
// written so far, and otherwise it waits for the one in flight. Records
// written during one fsync share the next. One caller alone pays one
// fsync per Update with no added delay.
//
// If a function in a round returns an error or panics, the round is rolled
// back, that function gets a solo run whose outcome (error, panic or
// commit) is its caller's own, and the rest run again together. That is why
// storage.Backend allows an Update function to run more than once. Each run
// gets a fresh Tx that ends with the run, and a panic is re-raised on its
// caller's goroutine, never on the leader's. Every caller, whatever its
// outcome, returns only after every round written before it returned is
// fsynced, since its function may have read them.
//
// # Slices
//
// bbolt memory is valid only inside its transaction, so Get returns a copy
// and Put stores a copy; a Scan callback receives copies in buffers reused
// for the next entry.
package bolt
