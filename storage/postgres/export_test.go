package postgres

// Commits returns how many transactions Updates have committed.
func Commits(d *DB) uint64 { return d.commits.Load() }

// Queued returns how many Updates wait for a group.
func Queued(d *DB) int {
	d.qmu.Lock()
	defer d.qmu.Unlock()
	return len(d.queue)
}

// RoundTrips returns how many round trips Views and Updates have made.
func RoundTrips(d *DB) uint64 { return d.trips.Load() }
