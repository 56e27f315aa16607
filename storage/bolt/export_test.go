package bolt

// Batches returns how many bbolt transactions d has committed, so tests and
// benchmarks can report how many Updates shared each fsync.
func Batches(d *DB) uint64 { return d.batches.Load() }
