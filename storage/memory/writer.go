package memory

import (
	"errors"
	"sync"

	"github.com/corebank/corebank/storage"
)

// The writer. Updates run one at a time, in the order they arrive, but no
// lock passes from one Update's goroutine to the next: a handoff costs a
// wake-up, often on another core, during which no Update runs at all, and
// under 16 writers that idle time was most of the store's (a two-phase
// transfer from 16 goroutines was slower than from one). Instead the
// goroutine of an Update that finds nobody writing becomes the leader: it
// takes everything queued and runs each Update in turn on its own stack,
// waking each caller as soon as its commit is published, then hands the
// role to the first Update queued meanwhile (one wake-up per batch, not
// per Update). Arrival order is kept, which the p99 of a card
// authorization needs: a mutex lets a running goroutine barge ahead of
// those already waiting, and under 16 writers that put the p99 of cards
// BenchmarkAuthorize/concurrent16 over 2 ms while its median was 30 µs.
// storage/bolt's commit queue is the same queue (storage/internal/writeq),
// with a log write and an fsync per batch; here each Update commits on its
// own.

// call is one Update in the writer's queue.
type call struct {
	fn       func(storage.Tx) error
	err      error
	panicked bool
	pval     any
	wake     chan bool // receives true to lead the next batch, false when done
}

var calls = sync.Pool{New: func() any { return &call{wake: make(chan bool, 1)} }}

// errGoexit is the outcome of an Update whose function called
// runtime.Goexit (t.FailNow in a test) on the leader's goroutine.
var errGoexit = errors.New("storage/memory: the transaction's function exited its goroutine")

// write queues fn and returns its outcome once it has run, leading a
// batch when nobody else is.
func (d *DB) write(fn func(storage.Tx) error) error {
	c := calls.Get().(*call)
	c.fn = fn
	lead := d.writes.Join(c)
	if !lead {
		lead = <-c.wake
	}
	if lead {
		d.lead(c) // c is at the head of the queue it takes, so it is done
	}
	err, panicked, pval := c.err, c.panicked, c.pval
	*c = call{wake: c.wake}
	calls.Put(c)
	if panicked {
		panic(pval)
	}
	return err
}

// lead runs every queued call, in order, then passes the lead on.
func (d *DB) lead(self *call) {
	batch := d.writes.Take()
	d.runBatch(batch, self)
	d.writes.Recycle(batch)
	d.passOn()
}

// runBatch runs the calls of batch in order, waking each when it is done.
func (d *DB) runBatch(batch []*call, self *call) {
	i := 0 // calls before i are done and woken: the leader must not touch them
	defer func() {
		if i < len(batch) { // runtime.Goexit in batch[i]'s function
			d.abandon(batch, i, self)
		}
	}()
	d.wmu.Lock()
	d.prepare()
	for i < len(batch) {
		c := batch[i]
		c.panicked, c.pval, c.err = d.run(c.fn)
		i++
		if c != self {
			c.wake <- false
		}
	}
	d.wmu.Unlock()
}

// run applies fn, recovering a panic so that it can be re-raised on its
// caller's goroutine. (Since Go 1.21 panic(nil) arrives as
// *runtime.PanicNilError, so a nil recover means no panic.)
func (d *DB) run(fn func(storage.Tx) error) (panicked bool, pval any, err error) {
	defer func() {
		if r := recover(); r != nil {
			panicked, pval, err = true, r, nil
		}
	}()
	return false, nil, d.apply(fn)
}

// abandon runs when the leader's goroutine exits inside batch[i]'s
// function (apply has rolled it back): that call fails, the calls after it
// go back to the head of the queue, and the lead passes on.
func (d *DB) abandon(batch []*call, i int, self *call) {
	d.wmu.Unlock()
	c := batch[i]
	c.err, c.panicked, c.pval = errGoexit, false, nil
	if c != self {
		c.wake <- false
	}
	d.writes.Requeue(batch[i+1:])
	d.passOn()
}

// passOn hands the lead to the first queued call, if any.
func (d *DB) passOn() {
	if next := d.writes.PassOn(); next != nil {
		next.wake <- true
	}
}
