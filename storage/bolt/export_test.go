package bolt

// Batches returns how many commit rounds d has logged, each with one
// fsync, so tests and benchmarks can report how many Updates shared each.
func Batches(d *DB) uint64 { return d.batches.Load() }

// Checkpoints returns how many times d has folded its log into bbolt.
func Checkpoints(d *DB) uint64 { return d.checkpoints.Load() }

// LogOffset returns where d's next log record goes.
func LogOffset(d *DB) int64 { return d.log.off }

// Crash closes d's files as a killed process would leave them: no
// checkpoint, the log as written.
func Crash(d *DB) {
	d.closed.Store(true)
	d.active.Wait()
	_ = d.log.close()
	_ = d.db.Close()
}
