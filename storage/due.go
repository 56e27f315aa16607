package storage

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/benbjohnson/clock"
)

// BucketDue holds every service's due work, keyed kind/ then the due time
// (Unix milliseconds, big-endian) then the item's ID. A service schedules an
// item with Schedule in the same transaction as the change that makes it
// due, so the work and its reason commit together.
const BucketDue = Bucket("storage.due")

func dueKey(kind string, at int64, id string) []byte {
	k := make([]byte, 0, len(kind)+9+len(id))
	k = append(k, kind...)
	k = append(k, '/')
	k = AppendInt64(k, at)
	return append(k, id...)
}

// Schedule records, in tx, that item id of kind falls due at at (Unix
// milliseconds). Scheduling the same (kind, at, id) twice stores it once.
func Schedule(tx Tx, kind string, at int64, id string) error {
	return tx.Put(BucketDue, dueKey(kind, at, id), []byte{})
}

// Unschedule removes the item Schedule recorded; removing an absent item is
// not an error.
func Unschedule(tx Tx, kind string, at int64, id string) error {
	return tx.Delete(BucketDue, dueKey(kind, at, id))
}

// DueItem is one scheduled item.
type DueItem struct {
	At int64 // Unix milliseconds
	ID string
}

// DueJob is the handler of one kind of due work. Set exactly one of Tx and
// Batch.
type DueJob struct {
	// Kind names the work ("ledger.hold"); it prefixes the queue's keys, so
	// it must not contain '/'.
	Kind string
	// Tx does the work of one item inside the transaction that removes the
	// item from the queue; it may Schedule the item again for later. now is
	// the clock's time, read once per transaction.
	Tx func(tx Tx, now time.Time, item DueItem) error
	// Batch, instead, handles items outside any transaction, for work that
	// waits on the outside world (asking a payout provider, sending a
	// webhook). It must Unschedule or reschedule what it settles, in its own
	// transactions; an item it leaves is not offered again in the same
	// RunDue. It returns how many items it settled.
	Batch func(ctx context.Context, now time.Time, items []DueItem) (int, error)
	// Prepare, when set, runs once per RunDue before the kind's items are
	// read, for work that feeds this kind's queue from elsewhere (the
	// webhooks turn new outbox events into deliveries, scheduling their
	// first attempts), so that one RunDue sends what earlier kinds caused.
	Prepare func(ctx context.Context) error
}

// DefaultDueBatch is how many items one transaction of RunDue handles when
// NewDue is given no batch size.
const DefaultDueBatch = 256

// Due runs scheduled work when the clock says so. It holds no state of its
// own beyond its jobs: every item lives in BucketDue, so work survives a
// restart, and several Due values over one store see the same queue.
type Due struct {
	db    Backend
	clock clock.Clock
	batch int
	jobs  []DueJob
	onLag func(kind string, lag time.Duration)
}

// NewDue returns a runner over db that stamps work with clk's time and
// handles up to batch items per transaction (DefaultDueBatch when 0), with
// jobs registered in order (see Add).
func NewDue(db Backend, clk clock.Clock, batch int, jobs ...DueJob) *Due {
	if batch <= 0 {
		batch = DefaultDueBatch
	}
	if clk == nil {
		clk = clock.New()
	}
	d := &Due{db: db, clock: clk, batch: batch}
	d.Add(jobs...)
	return d
}

// Add registers jobs after those already registered. RunDue runs kinds in
// registration order, so the order of Add calls is the documented order in
// which due work happens at one instant. Add panics on a kind registered
// twice or a job with neither or both handlers: both are wiring mistakes.
func (d *Due) Add(jobs ...DueJob) *Due {
	for _, j := range jobs {
		if (j.Tx == nil) == (j.Batch == nil) || j.Kind == "" {
			panic(fmt.Sprintf("storage: due job %q needs a kind and exactly one of Tx and Batch", j.Kind))
		}
		for _, have := range d.jobs {
			if have.Kind == j.Kind {
				panic(fmt.Sprintf("storage: due job %q registered twice", j.Kind))
			}
		}
		d.jobs = append(d.jobs, j)
	}
	return d
}

// OnLag sets fn to be called once per kind in every RunDue with how late
// the kind's oldest due item was when RunDue reached it (the clock's time
// then, minus the time it was due), or 0 when none was due: the due-work
// lag that examples/server exports as a metric. Set it before RunDue runs;
// fn must be fast.
func (d *Due) OnLag(fn func(kind string, lag time.Duration)) *Due {
	d.onLag = fn
	return d
}

// Kinds lists the registered kinds in the order RunDue runs them.
func (d *Due) Kinds() []string {
	out := make([]string, len(d.jobs))
	for i, j := range d.jobs {
		out[i] = j.Kind
	}
	return out
}

// RunDue does every item due at or before asOf, kind by kind in
// registration order, oldest first within a kind, in transactions of at
// most the batch size. It returns how many items were handled. A failing
// kind does not stop the others: their errors are joined, and the failed
// items stay queued for the next call.
func (d *Due) RunDue(ctx context.Context, asOf time.Time) (int, error) {
	total := 0
	var errs []error
	for _, j := range d.jobs {
		var lag time.Duration
		n, err := d.run(ctx, j, asOf.UnixMilli(), &lag)
		if d.onLag != nil {
			d.onLag(j.Kind, lag)
		}
		total += n
		if err != nil {
			errs = append(errs, fmt.Errorf("due %s: %w", j.Kind, err))
		}
	}
	return total, errors.Join(errs...)
}

// run does j's due items; *lag is set from the first (oldest) item read.
func (d *Due) run(ctx context.Context, j DueJob, asOf int64, lag *time.Duration) (int, error) {
	if j.Prepare != nil {
		if err := j.Prepare(ctx); err != nil {
			return 0, err
		}
	}
	prefix := append([]byte(j.Kind), '/')
	total := 0
	// Each pass resumes after the last key handled: an item a job leaves
	// queued is not offered twice, and one rescheduled to a later time still
	// at or before asOf is handled again when the walk reaches it.
	var after []byte
	for {
		if err := ctx.Err(); err != nil {
			return total, err
		}
		if j.Tx != nil {
			items, err := Update(ctx, d.db, func(tx Tx) ([]DueItem, error) {
				items, err := d.scan(tx, prefix, after, asOf)
				if err != nil {
					return nil, err
				}
				now := d.clock.Now()
				if after == nil && len(items) > 0 {
					*lag = lagOf(now, items[0])
				}
				for _, it := range items {
					if err := tx.Delete(BucketDue, dueKey(j.Kind, it.At, it.ID)); err != nil {
						return nil, err
					}
					if err := j.Tx(tx, now, it); err != nil {
						return nil, err
					}
				}
				return items, nil
			})
			total += len(items)
			if err != nil || len(items) == 0 {
				return total, err
			}
			last := items[len(items)-1]
			after = dueKey(j.Kind, last.At, last.ID)
			continue
		}
		items, err := View(ctx, d.db, func(tx Tx) ([]DueItem, error) {
			return d.scan(tx, prefix, after, asOf)
		})
		if err != nil || len(items) == 0 {
			return total, err
		}
		if after == nil {
			*lag = lagOf(d.clock.Now(), items[0])
		}
		last := items[len(items)-1]
		after = dueKey(j.Kind, last.At, last.ID)
		n, err := j.Batch(ctx, d.clock.Now(), items)
		total += n
		if err != nil {
			return total, err
		}
	}
}

// lagOf is how late it is at now for it.
func lagOf(now time.Time, it DueItem) time.Duration {
	return max(0, time.Duration(now.UnixMilli()-it.At)*time.Millisecond)
}

// scan returns up to one batch of items under prefix due at or before
// asOf, strictly after the key after when it is set.
func (d *Due) scan(tx Tx, prefix, after []byte, asOf int64) ([]DueItem, error) {
	var items []DueItem
	err := tx.Scan(BucketDue, ScanOptions{Prefix: prefix, After: after, Limit: d.batch}, func(k, _ []byte) error {
		rest := k[len(prefix):]
		at, err := Uint64(rest)
		if err != nil {
			return ErrCorrupt
		}
		if int64(at) > asOf {
			return ErrStop
		}
		items = append(items, DueItem{At: int64(at), ID: string(rest[8:])})
		return nil
	})
	return items, err
}
