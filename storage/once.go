package storage

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"runtime"
	"sync/atomic"
)

// A Journal makes the Updates made under one context exactly once across
// crashes and retries: an idempotent request (httpapi's Idempotency-Key)
// runs its handler under WithJournal, and every Update it makes through the
// generic Update is a numbered step whose result the journal records in the
// transaction that commits the step's effect. Run again with the same
// journal (a retry after a crash), a step that committed returns its
// recorded result instead of running, and the first step that did not runs
// for the first time. So a retry either replays or runs, never both.
//
// Replay and Record are called inside the step's transaction, on the
// goroutine running it, Replay first; both may be called again when the
// transaction re-runs. name identifies the code of the step (the function
// passed to Update), so that a retry taking another path is refused rather
// than handed another step's result.
type Journal interface {
	// Replay returns the result that step recorded, or ok false if it has
	// not committed.
	Replay(tx Tx, step int, name string) (result []byte, ok bool, err error)
	// Record keeps result as step's, in tx.
	Record(tx Tx, step int, name string, result []byte) error
}

type journalKey struct{}

// stepKey marks the context an Update passes to Backend.Update for a
// journaled step.
type stepKey struct{}

type journal struct {
	j    Journal
	next atomic.Int64
}

// WithJournal returns a context under which every Update is a step of j.
// The Updates under one journal run one after another, not concurrently.
func WithJournal(ctx context.Context, j Journal) context.Context {
	return context.WithValue(ctx, journalKey{}, &journal{j: j})
}

// WithoutJournal returns ctx with no journal: for writes a request makes
// that are bookkeeping of their own, outside what a retry must replay
// (a webhook attempt's outcome), so they are not numbered among its steps.
func WithoutJournal(ctx context.Context) context.Context {
	if ctx.Value(journalKey{}) == nil {
		return ctx
	}
	return context.WithValue(ctx, journalKey{}, (*journal)(nil))
}

// Unjournaled reports whether a Backend.Update called with ctx bypasses a
// journal that ctx carries: a write under an idempotent request that did
// not go through the generic Update. Tests wrap a backend with it to prove
// that every write a request makes is journaled.
func Unjournaled(ctx context.Context) bool {
	j, _ := ctx.Value(journalKey{}).(*journal)
	return j != nil && ctx.Value(stepKey{}) == nil
}

// journaled runs fn as the next step of j. Results travel as JSON, so a
// result type must survive encoding/json both ways (a type that writes its
// own JSON reads it back too).
func journaled[T any](ctx context.Context, db Backend, j *journal, fn func(Tx) (T, error)) (T, error) {
	// Steps are numbered by the Updates that commit: one that fails (and
	// is perhaps tried again) takes no number.
	step := int(j.next.Load())
	name := funcName(fn)
	v, err := result(context.WithValue(ctx, stepKey{}, true), db.Update, func(tx Tx) (T, error) {
		var v T
		raw, ok, err := j.j.Replay(tx, step, name)
		if err != nil {
			return v, err
		}
		if ok {
			if err := json.Unmarshal(raw, &v); err != nil {
				return v, fmt.Errorf("storage: replaying step %d (%s): %w", step, name, err)
			}
			return v, nil
		}
		if v, err = fn(tx); err != nil {
			return v, err
		}
		if raw, err = json.Marshal(v); err != nil {
			return v, fmt.Errorf("storage: recording step %d (%s): %w", step, name, err)
		}
		return v, j.j.Record(tx, step, name, raw)
	})
	if err == nil {
		j.next.Add(1)
	}
	return v, err
}

// funcName names the code of fn: a closure's name holds the function it is
// written in and its place there ("ledger.(*Service).Post.func1"), the
// same in every run of one build.
func funcName(fn any) string {
	f := runtime.FuncForPC(reflect.ValueOf(fn).Pointer())
	if f == nil {
		return "?"
	}
	return f.Name()
}
