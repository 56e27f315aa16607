package storage

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
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
	return ScheduleGroup(tx, kind, at, id, "")
}

// ScheduleGroup is Schedule for an item of a group (DueItem.Group): for a
// settlement, the account it moves money on. The group is the item's
// value in BucketDue.
func ScheduleGroup(tx Tx, kind string, at int64, id, group string) error {
	return tx.Put(BucketDue, dueKey(kind, at, id), []byte(group))
}

// Unschedule removes the item Schedule recorded, and any lease on it;
// removing an absent item is not an error.
func Unschedule(tx Tx, kind string, at int64, id string) error {
	k := dueKey(kind, at, id)
	if err := tx.Delete(BucketDue, k); err != nil {
		return err
	}
	return tx.Delete(BucketDueLease, k)
}

// BucketDueLease holds the leases on the items of Batch jobs, keyed as in
// BucketDue: the lease's end (Unix milliseconds, big-endian) then the ID
// of the node that holds it. See "Several nodes" on Due.
const BucketDueLease = Bucket("storage.due_lease")

// DueLease is a node's claim on a due item of a Batch job: no other node
// takes the item before Until (Unix milliseconds, on the runner's clock),
// but a later process of the same Instance (see Due.Instance).
type DueLease struct {
	Node     string
	Until    int64
	Instance string
}

// A lease is stored as Until (8 bytes), Node, then, when the lease has an
// Instance, a 0 byte and the Instance.
func (l DueLease) encode() []byte {
	b := append(AppendInt64(make([]byte, 0, 9+len(l.Node)+len(l.Instance)), l.Until), l.Node...)
	if l.Instance != "" {
		b = append(append(b, 0), l.Instance...)
	}
	return b
}

func decodeLease(v []byte) (DueLease, error) {
	if len(v) < 8 {
		return DueLease{}, ErrCorrupt
	}
	node, instance, _ := strings.Cut(string(v[8:]), "\x00")
	return DueLease{Until: int64(binary.BigEndian.Uint64(v)), Node: node, Instance: instance}, nil
}

// ErrLeaseLost is returned by CheckLease when the item's lease is no
// longer the one the runner took: it expired and another node took the
// item over, or the item was settled or moved meanwhile.
var ErrLeaseLost = errors.New("storage: the lease on a due item was lost")

// CheckLease returns nil when it, an item handed to a Batch job, is still
// leased to the node it was handed to (an expired lease that nobody took
// over still counts), and ErrLeaseLost when not. A Batch job calls it
// in the transaction that settles the item, so that of two nodes that
// both worked on an item (the first too slowly), only the one holding the
// lease settles it. An item with no lease (handed to a Tx job, or built by
// hand) always passes.
func CheckLease(tx Tx, kind string, it DueItem) error {
	if it.Lease == (DueLease{}) {
		return nil
	}
	v, err := tx.Get(BucketDueLease, dueKey(kind, it.At, it.ID))
	if errors.Is(err, ErrNotFound) {
		return ErrLeaseLost
	}
	if err != nil {
		return err
	}
	l, err := decodeLease(v)
	if err != nil {
		return err
	}
	if l.Node != it.Lease.Node {
		return ErrLeaseLost
	}
	return nil
}

// LeaseRef is the key CheckLease reads for it: for a Batch job to
// Prefetch with the rest of what its transaction reads.
func LeaseRef(kind string, it DueItem) Ref {
	return Ref{Bucket: BucketDueLease, Key: dueKey(kind, it.At, it.ID)}
}

// LeaseTx leases it to l.Node until l.Until, in tx, and returns it
// carrying the lease: for a service that schedules an item and works on
// it at once (the webhooks' test delivery), so that no other node's runner
// takes it meanwhile.
func LeaseTx(tx Tx, kind string, it DueItem, l DueLease) (DueItem, error) {
	it.Lease = l
	return it, tx.Put(BucketDueLease, dueKey(kind, it.At, it.ID), l.encode())
}

// Release gives back the leases on items, handed to a Batch job that
// leaves them unsettled (an error stopped it), so that the next run, on
// any node, takes them without waiting for the leases to end. A lease
// another node holds now is left alone.
func Release(ctx context.Context, db Backend, kind string, items []DueItem) error {
	if len(items) == 0 {
		return nil
	}
	return db.Update(ctx, func(tx Tx) error {
		for _, it := range items {
			err := CheckLease(tx, kind, it)
			if errors.Is(err, ErrLeaseLost) || it.Lease == (DueLease{}) {
				continue
			}
			if err != nil {
				return err
			}
			if err := tx.Delete(BucketDueLease, dueKey(kind, it.At, it.ID)); err != nil {
				return err
			}
		}
		return nil
	})
}

// DueItem is one scheduled item.
type DueItem struct {
	At int64 // Unix milliseconds
	ID string
	// Group is the group ScheduleGroup named, "" for none. A runner keeps
	// a group's items out of its claims while a share of it holds some
	// (see runBatch), and cuts each claim into shares that keep a group
	// together (cutShares).
	Group string
	// Lease is the lease this runner holds on the item when it is handed
	// to a Batch job; zero for a Tx job, whose transaction is its claim.
	Lease DueLease
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
	// webhook). The runner hands it items it has leased (see "Several
	// nodes" on Due). It must Unschedule or reschedule what it settles, in
	// its own transactions, each checking CheckLease first; an item it
	// leaves is not offered again in the same RunDue, nor by any node
	// before its lease ends unless it Releases it. It returns how many
	// items it settled.
	Batch func(ctx context.Context, now time.Time, items []DueItem) (int, error)
	// Claim, for a Batch job, is how many items one lease takes (default
	// the runner's batch size): few enough that the job settles them all
	// well within the lease.
	Claim int
	// Workers, for a Batch job, caps how many of its claims one runner
	// works on at once (0: the runner's Workers). 1 keeps a job whose own
	// concurrency is bounded elsewhere (the webhooks' attempts share one
	// semaphore, and their lease allows one claim's wait) to one claim at
	// a time.
	Workers int
	// Prepare, when set, runs once per RunDue before the kind's items are
	// read, for work that feeds this kind's queue from elsewhere (the
	// webhooks turn new outbox events into deliveries, scheduling their
	// first attempts), so that one RunDue sends what earlier kinds caused.
	Prepare func(ctx context.Context) error
}

// DefaultDueBatch is how many items one transaction of RunDue handles when
// NewDue is given no batch size.
const DefaultDueBatch = 256

// DefaultDueLease is how long a node's lease on the items of a Batch job
// lasts when Lease is not called.
const DefaultDueLease = 30 * time.Second

// Due runs scheduled work when the clock says so. It holds no state of its
// own beyond its jobs: every item lives in BucketDue, so work survives a
// restart, and several Due values over one store see the same queue.
//
// # Several nodes
//
// Several Due values over one store (several processes on one database,
// or several runners in one process) share the work, and each item is
// done once per due time. A Tx job's item is claimed by the transaction
// that removes it from the queue: the store serializes two runners'
// transactions, so the second finds the item gone (or, on PostgreSQL,
// fails to commit and is rerun, then finds it gone). A Batch job works
// outside any transaction, so its items are leased first: in one
// transaction the runner writes, for each item due and not under a live
// lease, a lease (its node ID, and the time on its LeaseClock plus the
// lease duration) into BucketDueLease, and hands the job only the items it
// leased. An item whose lease has ended (its node died or stalled) is
// leased again by the next runner that reaches it, the old lease read and
// replaced in that transaction, so two nodes never both hold an item; and
// the job settles an item only in a transaction where CheckLease finds its
// node's lease still there, so a stalled node that wakes after a takeover
// changes nothing. A node restarted under another node ID but the same
// Instance takes its predecessor's leased items at once. A node takes its
// own leased items again on its next run (the job left them, or a runner of the same node holds them): within
// one node the job keeps its own work in flight from being done twice (the
// webhooks do; a payout check applies once because it moves the item).
//
// # Workers
//
// Within one runner a Batch kind's claims may run several at once
// (Workers): the claims are still taken one after another, oldest items
// first, each in its own lease transaction, and the kind ends, once every
// claim's job has returned, before the next kind starts.
type Due struct {
	db         Backend
	clock      clock.Clock
	batch      int
	jobs       []DueJob
	onLag      func(kind string, lag time.Duration)
	onRun      func(kind string, it DueItem)
	node       string
	lease      time.Duration
	leaseClock clock.Clock
	instance   string
	workers    int

	// claimMu orders this runner's claims with its record of the items
	// its Batch jobs are working on now (busy, by due key), so that two
	// RunDue calls of one runner never hand a job the same item at once.
	claimMu sync.Mutex
	busy    map[busyItem]bool
	// groups counts the items of each group in the shares this runner's
	// Batch jobs are working on.
	groups map[busyGroup]int
}

// busyItem names an item a runner's Batch job is working on.
type busyItem struct {
	kind string
	at   int64
	id   string
}

// busyGroup names a group (DueItem.Group) of a kind.
type busyGroup struct{ kind, group string }

// NewNodeID returns a random node ID (16 hex digits), the identity a
// runner writes into its leases.
func NewNodeID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
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
	d := &Due{db: db, clock: clk, batch: batch, node: NewNodeID(), lease: DefaultDueLease, leaseClock: clk, workers: 1, busy: map[busyItem]bool{}, groups: map[busyGroup]int{}}
	d.Add(jobs...)
	return d
}

// Lease sets the node ID this runner writes into its leases (a random one
// from NewNodeID when empty) and how long a lease lasts (DefaultDueLease
// when 0). Set it before RunDue runs. A lease must outlast the longest a
// Batch job takes over one claim of items.
func (d *Due) Lease(node string, lease time.Duration) *Due {
	if node != "" {
		d.node = node
	}
	if lease > 0 {
		d.lease = lease
	}
	return d
}

// LeaseClock sets the clock leases are measured on (default the runner's
// own). A lease is about a node's liveness, not the business time: a
// sandbox whose fake clock jumps an hour must not take work from a node
// that is still on it, so bank.New gives its runners the real clock.
// Nodes on several machines need wall clocks that agree within a small
// part of the lease.
func (d *Due) LeaseClock(clk clock.Clock) *Due {
	if clk != nil {
		d.leaseClock = clk
	}
	return d
}

// Workers sets how many claims of a Batch job this runner works on at once
// (default 1; DueJob.Workers lowers it per job): RunDue keeps taking
// claims, oldest items first, while fewer than n are in flight, handing
// each to the job on a goroutine of its own, and ends the kind once none
// is left due and every claim's job has returned. So with n > 1 a Batch
// function runs concurrently with itself, on disjoint items; what it
// waits on (a provider, the store) must allow that. Tx jobs are not
// affected: their transaction is their claim. Set it before RunDue runs.
func (d *Due) Workers(n int) *Due {
	d.workers = max(n, 1)
	return d
}

// Instance names what this runner runs as across restarts (a server's
// machine and address): a runner takes at once the items leased by a
// runner of the same Instance under another node ID, its predecessor that
// died, instead of waiting for their leases to end, so that a restarted
// node resumes its own work at once while its node ID stays its own (new
// at each start). Two runners that run at once must not share an
// Instance. Empty, the default, is none. Set it before RunDue runs.
func (d *Due) Instance(name string) *Due {
	d.instance = name
	return d
}

// Node returns the node ID this runner writes into its leases.
func (d *Due) Node() string { return d.node }

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

// OnRun sets fn to be called once for each item this runner hands a job:
// a Tx job's items once the transaction that did them commits, a Batch
// job's once their lease commits. Tests count with it that each item runs
// once across several runners. Set it before RunDue runs; fn must be fast
// and safe for concurrent use.
func (d *Due) OnRun(fn func(kind string, it DueItem)) *Due {
	d.onRun = fn
	return d
}

func (d *Due) ran(kind string, items []DueItem) {
	if d.onRun != nil {
		for _, it := range items {
			d.onRun(kind, it)
		}
	}
}

// Kinds lists the registered kinds in the order RunDue runs them.
func (d *Due) Kinds() []string {
	out := make([]string, len(d.jobs))
	for i, j := range d.jobs {
		out[i] = j.Kind
	}
	return out
}

// Next returns when the first item queued for this runner's kinds falls
// due, or the zero time when none is: a program that runs due work only
// when some is due (bank/workspace, which hosts many banks and keeps no
// ticker for an idle one) sleeps until then.
func (d *Due) Next(ctx context.Context) (time.Time, error) {
	return View(ctx, d.db, func(tx Tx) (time.Time, error) {
		first := int64(math.MaxInt64)
		for _, j := range d.jobs {
			items, err := d.scan(tx, append([]byte(j.Kind), '/'), nil, math.MaxInt64, 1)
			if err != nil {
				return time.Time{}, err
			}
			if len(items) > 0 {
				first = min(first, items[0].At)
			}
		}
		if first == math.MaxInt64 {
			return time.Time{}, nil
		}
		return time.UnixMilli(first), nil
	})
}

// RunDue does every item due at or before asOf, kind by kind in
// registration order, oldest first within a kind, in transactions of at
// most the batch size. It returns how many items were handled. A failing
// kind does not stop the others: their errors are joined, and the failed
// items stay queued for the next call.
func (d *Due) RunDue(ctx context.Context, asOf time.Time) (int, error) {
	return d.RunDueWhere(ctx, asOf, nil)
}

// RunDueWhere is RunDue for the jobs keep accepts (all when keep is nil),
// in the same order: a program that runs its due work in lanes, each on
// its own goroutine, keeps a long run of one kind (a fold of many changes,
// the webhook dispatcher's ingest of a busy outbox) from holding back the
// others (settlement).
func (d *Due) RunDueWhere(ctx context.Context, asOf time.Time, keep func(DueJob) bool) (int, error) {
	ctx = WithPriority(ctx)
	jobs := d.jobs
	if keep != nil {
		jobs = slices.DeleteFunc(slices.Clone(jobs), func(j DueJob) bool { return !keep(j) })
	}
	due, err := d.dueKinds(ctx, jobs, asOf.UnixMilli())
	if err != nil {
		return 0, err
	}
	total := 0
	var errs []error
	for _, j := range jobs {
		var lag time.Duration
		// oldest is the first item due, when the look found it and no
		// Prepare can add an older one: the run needs no look of its own.
		var oldest *DueItem
		if due != nil && j.Prepare == nil {
			it, ok := due[j.Kind]
			if !ok {
				if d.onLag != nil {
					d.onLag(j.Kind, 0)
				}
				continue
			}
			oldest = &it
		}
		n, err := d.run(ctx, j, asOf.UnixMilli(), oldest, &lag)
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

// dueKinds returns, by kind, the first item due at or before asOf of each
// kind that has one, read in one View: on a store where reads are round
// trips (storage.Prefetch), one for every kind, rather than a transaction
// each for the many kinds with nothing due, on every run of every node.
// Elsewhere it returns nil, and every kind is run: a look there costs
// what it saves.
func (d *Due) dueKinds(ctx context.Context, jobs []DueJob, asOf int64) (map[string]DueItem, error) {
	return View(ctx, d.db, func(tx Tx) (map[string]DueItem, error) {
		if !Prefetching(tx) {
			return nil, nil
		}
		refs := make([]Ref, len(jobs))
		for i, j := range jobs {
			refs[i] = Ref{Bucket: BucketDue, Key: append([]byte(j.Kind), '/'), Prefix: true}
		}
		if err := Prefetch(tx, refs...); err != nil {
			return nil, err
		}
		due := make(map[string]DueItem, len(jobs))
		for i, j := range jobs {
			items, err := d.scan(tx, refs[i].Key, nil, asOf, 1)
			if err != nil {
				return nil, err
			}
			if len(items) > 0 {
				due[j.Kind] = items[0]
			}
		}
		return due, nil
	})
}

// run does j's due items; *lag is set from the first (oldest) item read,
// or from oldest when a look found it.
func (d *Due) run(ctx context.Context, j DueJob, asOf int64, oldest *DueItem, lag *time.Duration) (int, error) {
	if j.Prepare != nil {
		if err := j.Prepare(ctx); err != nil {
			return 0, err
		}
	}
	prefix := append([]byte(j.Kind), '/')
	if j.Batch != nil {
		return d.runBatch(ctx, j, prefix, asOf, oldest, lag)
	}
	total := 0
	// Each pass resumes after the last key handled: an item rescheduled to
	// a later time still at or before asOf is handled again when the walk
	// reaches it.
	var after []byte
	for {
		if err := ctx.Err(); err != nil {
			return total, err
		}
		items, err := Update(ctx, d.db, func(tx Tx) ([]DueItem, error) {
			items, err := d.scan(tx, prefix, after, asOf, d.batch)
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
		d.ran(j.Kind, items)
		last := items[len(items)-1]
		after = dueKey(j.Kind, last.At, last.ID)
	}
}

// runBatch is run for a Batch job: it claims up to j.Claim items at a
// time, oldest first, and hands each claim to j.Batch, with up to the
// job's workers in flight. A worker is free before its claim is taken, so
// that leased items never wait for one. The first error (a claim's, a
// job's, ctx's) stops further claims; the claims in flight finish first.
func (d *Due) runBatch(ctx context.Context, j DueJob, prefix []byte, asOf int64, oldest *DueItem, lag *time.Duration) (int, error) {
	claim := d.batch
	if j.Claim > 0 {
		claim = j.Claim
	}
	workers := d.workers
	if j.Workers > 0 {
		workers = min(workers, j.Workers)
	}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex // guards total and firstErr
		total    int
		firstErr error
	)
	fail := func(err error) {
		mu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		mu.Unlock()
	}
	failed := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return firstErr != nil
	}
	work := func(items []DueItem) {
		n, err := j.Batch(ctx, d.clock.Now(), items)
		d.claimMu.Lock()
		for _, it := range items {
			delete(d.busy, busyItem{j.Kind, it.At, it.ID})
			if it.Group != "" {
				g := busyGroup{j.Kind, it.Group}
				if d.groups[g]--; d.groups[g] <= 0 {
					delete(d.groups, g)
				}
			}
		}
		d.claimMu.Unlock()
		mu.Lock()
		total += n
		mu.Unlock()
		if err != nil {
			fail(err)
		}
	}
	slots := make(chan struct{}, workers)
	// Each claim resumes after the last key the previous one read: an item
	// a job leaves queued is not offered twice, and one rescheduled to a
	// later time still at or before asOf is handled again when the walk
	// reaches it.
	var after []byte
	// A claim passes over the items of a group that a share in flight
	// holds: the two shares would lock the same account, the later one
	// waiting for the earlier one's transaction with all its own locks
	// held, and across 32 shares in flight (4 nodes) such waits chained
	// until settlement fell seconds behind acceptance. A group passed over
	// stays so for the rest of the walk, so that its items are handed in
	// their order, and the walk goes round again, from the oldest item,
	// once its shares are done.
	passed := map[string]bool{}
	for pass := 1; ; pass++ {
	walk:
		for {
			slots <- struct{}{}
			// One claim for every worker free now, each handed its share: the
			// claims of a node take turns (claimMu), and under load, when
			// every round trip waits, one at a time per share would bound
			// the whole node's pace.
			free := 1
			for free < workers {
				select {
				case slots <- struct{}{}:
					free++
					continue
				default:
				}
				break
			}
			give := func(n int) {
				for range n {
					<-slots
				}
			}
			if failed() {
				give(free)
				break
			}
			if err := ctx.Err(); err != nil {
				give(free)
				fail(err)
				break
			}
			if after == nil && oldest != nil {
				*lag = lagOf(d.clock.Now(), *oldest)
			} else if after == nil {
				// A read first: most runs find nothing due, and need no write.
				seen, err := View(ctx, d.db, func(tx Tx) ([]DueItem, error) {
					return d.scan(tx, prefix, after, asOf, 1)
				})
				if err != nil || len(seen) == 0 {
					give(free)
					if err != nil {
						fail(err)
					}
					break
				}
				*lag = lagOf(d.clock.Now(), seen[0])
			}
			c, err := d.claim(ctx, j.Kind, prefix, after, asOf, free*claim, passed)
			if err != nil || c.last == nil {
				give(free)
				if err != nil {
					fail(err)
				}
				break
			}
			after = c.last
			d.ran(j.Kind, c.items)
			shares := 0
			for _, share := range cutShares(c.items, claim) {
				shares++
				if workers == 1 {
					work(share)
					continue
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer func() { <-slots }()
					work(share)
				}()
			}
			if workers == 1 {
				give(free)
			} else {
				give(free - shares)
			}
			if c.ended {
				break walk
			}
		}
		wg.Wait()
		if len(passed) == 0 || failed() || pass == groupPasses {
			return total, firstErr
		}
		after = nil
		clear(passed)
	}
}

// groupPasses bounds the walks of one runBatch: a walk that passed over
// busy groups' items is followed by another once its shares are done, in
// which only another RunDue's shares can still hold a group.
const groupPasses = 4

// cutShares cuts a claim's items into shares of about claim items each,
// as many as claim-sized shares would be (the runner took a worker for
// each), keeping each group (DueItem.Group) in one share, or a larger group
// in claim-sized parts: each group (part), in the order of its first
// item, goes to the share with the fewest items so far, so a share may
// pass claim by part of a group. Items keep their order within a group;
// an item of no group is a group of its own. Shares cut in time order
// put a busy account's items in several shares, each waiting for the
// other's transaction, and chains of such waits made a share of 16 take
// 0.7 s instead of 0.1 s (bank TestPostgresLoad, two nodes).
func cutShares(items []DueItem, claim int) [][]DueItem {
	k := (len(items) + claim - 1) / claim
	out := make([][]DueItem, 0, k)
	if k <= 1 || !slices.ContainsFunc(items, func(it DueItem) bool { return it.Group != "" }) {
		for len(items) > 0 {
			n := min(claim, len(items))
			out = append(out, items[:n:n])
			items = items[n:]
		}
		return out
	}
	var order []string
	groups := map[string][]DueItem{}
	for i, it := range items {
		g := it.Group
		if g == "" {
			g = "\x00" + strconv.Itoa(i) // a group of its own
		}
		if _, ok := groups[g]; !ok {
			order = append(order, g)
		}
		groups[g] = append(groups[g], it)
	}
	out = out[:k]
	for _, g := range order {
		// A group larger than a share goes in share-sized parts, which
		// wait for each other as before rather than make one share do a
		// claim's work alone (a payout each asks its provider about).
		for part := range slices.Chunk(groups[g], claim) {
			least := 0
			for i := range out {
				if len(out[i]) < len(out[least]) {
					least = i
				}
			}
			out[least] = append(out[least], part...)
		}
	}
	return slices.DeleteFunc(out, func(sh []DueItem) bool { return len(sh) == 0 })
}

// claimed is what one claim read: the items leased, and the key of the
// last item read, leased or not (nil when none was due).
type claimed struct {
	items []DueItem
	last  []byte
	// ended is set when the claim read fewer items than it could: none
	// is left to claim before asOf.
	ended bool
}

// claim leases to this runner up to limit items of kind due at or before
// asOf after the key after: each that no other node holds under a live
// lease, no RunDue of this runner is working on, and whose group is
// neither in passed nor in a share this runner works on (such a group
// goes into passed). The items stay busy until the caller clears them.
func (d *Due) claim(ctx context.Context, kind string, prefix, after []byte, asOf int64, limit int, passed map[string]bool) (claimed, error) {
	d.claimMu.Lock()
	defer d.claimMu.Unlock()
	var pass []string // the groups passed over, by the run that commits
	c, err := Update(ctx, d.db, func(tx Tx) (claimed, error) {
		items, err := d.scan(tx, prefix, after, asOf, limit)
		if err != nil || len(items) == 0 {
			return claimed{}, err
		}
		now := d.leaseClock.Now().UnixMilli()
		lease := DueLease{Node: d.node, Until: now + d.lease.Milliseconds(), Instance: d.instance}
		c := claimed{last: dueKey(kind, items[len(items)-1].At, items[len(items)-1].ID), ended: len(items) < limit}
		// The items this runner will not take are left out before their
		// leases are read, which on PostgreSQL locks them.
		pass = pass[:0]
		takes := make([]DueItem, 0, len(items))
		refs := make([]Ref, 0, len(items))
		for _, it := range items {
			switch {
			case d.busy[busyItem{kind, it.At, it.ID}]:
			case it.Group != "" && (passed[it.Group] || d.groups[busyGroup{kind, it.Group}] > 0):
				pass = append(pass, it.Group)
			default:
				takes = append(takes, it)
				refs = append(refs, LeaseRef(kind, it))
			}
		}
		if err := Prefetch(tx, refs...); err != nil {
			return claimed{}, err
		}
		for _, it := range takes {
			k := dueKey(kind, it.At, it.ID)
			v, err := tx.Get(BucketDueLease, k)
			switch {
			case errors.Is(err, ErrNotFound):
			case err != nil:
				return claimed{}, err
			default:
				held, err := decodeLease(v)
				if err != nil {
					return claimed{}, err
				}
				if held.Until > now && held.Node != d.node && (d.instance == "" || held.Instance != d.instance) {
					continue // another node's, still running
				}
			}
			if err := tx.Put(BucketDueLease, k, lease.encode()); err != nil {
				return claimed{}, err
			}
			it.Lease = lease
			c.items = append(c.items, it)
		}
		return c, nil
	})
	if err != nil {
		return c, err
	}
	for _, g := range pass {
		passed[g] = true
	}
	for _, it := range c.items {
		d.busy[busyItem{kind, it.At, it.ID}] = true
		if it.Group != "" {
			d.groups[busyGroup{kind, it.Group}]++
		}
	}
	return c, nil
}

// lagOf is how late it is at now for it.
func lagOf(now time.Time, it DueItem) time.Duration {
	return max(0, time.Duration(now.UnixMilli()-it.At)*time.Millisecond)
}

// scan returns up to limit items under prefix due at or before asOf,
// strictly after the key after when it is set.
func (d *Due) scan(tx Tx, prefix, after []byte, asOf int64, limit int) ([]DueItem, error) {
	var items []DueItem
	// A queue: an item scheduled while a claim runs is the next claim's.
	err := tx.Scan(BucketDue, ScanOptions{Prefix: prefix, After: after, Limit: limit, Queue: true}, func(k, v []byte) error {
		rest := k[len(prefix):]
		at, err := Uint64(rest)
		if err != nil {
			return ErrCorrupt
		}
		if int64(at) > asOf {
			return ErrStop
		}
		items = append(items, DueItem{At: int64(at), ID: string(rest[8:]), Group: string(v)})
		return nil
	})
	return items, err
}
