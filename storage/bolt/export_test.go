package bolt

import "errors"

// Batches returns how many times d has fsynced its log, so tests and
// benchmarks can report how many Updates shared each fsync.
func Batches(d *DB) uint64 { return d.syncs.Load() }

// Checkpoints returns how many times d has folded its log into bbolt.
func Checkpoints(d *DB) uint64 { return d.checkpoints.Load() }

// LogOffset returns where d's next log record goes in the active log file.
func LogOffset(d *DB) int64 { return d.log.off }

// FailFolds makes every later checkpoint fail (or succeed again, with
// false) before it writes to bbolt. Call it with no Update running.
func FailFolds(d *DB, fail bool) {
	if d.folding != nil {
		<-d.folding
		d.folding = nil
	}
	d.testFold = nil
	if fail {
		d.testFold = func() error { return errors.New("fold failed by test") }
	}
}

// Frozen reports whether d has a frozen overlay waiting to be folded.
func Frozen(d *DB) bool { return d.state.Load().frozen != nil }

// BlockSyncs makes every later log fsync wait until release is called;
// entered receives once per fsync that starts waiting. Call it with no
// Update running.
func BlockSyncs(d *DB) (entered <-chan struct{}, release func()) {
	in := make(chan struct{}, 100)
	gate := make(chan struct{})
	d.testSync = func() {
		in <- struct{}{}
		<-gate
	}
	return in, func() { close(gate) }
}
