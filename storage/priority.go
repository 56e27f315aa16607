package storage

import "context"

type priorityKey struct{}

// WithPriority marks ctx's Updates as the store's first to run when
// Updates queue for it (storage/postgres, whose connections are fewer than
// its callers). Due work runs so (Due.RunDue): settling what was accepted
// is what keeps a busy store's backlog from growing without bound, and it
// is bounded by the runner's workers, so the rest still get their turns.
// Stores that queue nothing ignore it.
func WithPriority(ctx context.Context) context.Context {
	return context.WithValue(ctx, priorityKey{}, true)
}

// HasPriority reports whether ctx was marked by WithPriority.
func HasPriority(ctx context.Context) bool {
	p, _ := ctx.Value(priorityKey{}).(bool)
	return p
}
