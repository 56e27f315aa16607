package storage

import "context"

// Update runs fn in a read-write transaction of db and returns what the
// committed run of fn returned. A backend may run fn more than once (group
// commit re-runs a batch; PostgreSQL retries serialization failures), so fn
// returns its results rather than writing them to variables outside, and
// every run starts from nothing. On error the zero T is returned.
//
// Under a context from WithJournal the call is the journal's next step: it
// returns the step's recorded result when it committed before, and else
// records what fn returned in the transaction that commits it.
func Update[T any](ctx context.Context, db Backend, fn func(Tx) (T, error)) (T, error) {
	if j, _ := ctx.Value(journalKey{}).(*journal); j != nil {
		return journaled(ctx, db, j, fn)
	}
	return result(ctx, db.Update, fn)
}

// View runs fn against one consistent snapshot of db and returns what fn
// returned; on error the zero T.
func View[T any](ctx context.Context, db Backend, fn func(Tx) (T, error)) (T, error) {
	return result(ctx, db.View, fn)
}

// result runs fn through run (db.Update or db.View), keeping what the last
// successful run returned.
func result[T any](ctx context.Context, run func(context.Context, func(Tx) error) error, fn func(Tx) (T, error)) (T, error) {
	var out T
	err := run(ctx, func(tx Tx) error {
		v, err := fn(tx)
		if err != nil {
			return err
		}
		out = v
		return nil
	})
	if err != nil {
		var zero T
		return zero, err
	}
	return out, nil
}
