// Package writeq is the write queue storage/memory and storage/bolt share:
// writes run one batch at a time, in the order they arrive, and no lock
// passes from one write's goroutine to the next. The goroutine of a write
// that finds nobody leading becomes the leader: it takes everything
// queued, runs it on its own stack, wakes each caller when its outcome is
// known, and then hands the lead to the first write queued meanwhile: one
// wake-up per batch, not per write. A mutex would let a running goroutine
// barge ahead of those already waiting; arrival order is what keeps the
// p99 of a card authorization under 16 writers near its median.
//
// The queue holds the writes and the lead; waking a write is its owner's
// (each backend's call carries its own channel).
package writeq

import "sync"

// Queue is the writes of type T waiting for a leader. The zero value is
// an empty queue nobody leads.
type Queue[T any] struct {
	mu      sync.Mutex
	queue   []*T
	spare   []*T // a batch's array given back by Recycle, for the next Take
	leading bool
}

// Join queues w and reports whether its caller leads now: true when
// nobody was leading. A caller told false waits for its owner's wake-up,
// which either says it leads the next batch (PassOn chose it) or that its
// write is done.
func (q *Queue[T]) Join(w *T) bool {
	q.mu.Lock()
	q.queue = append(q.queue, w)
	lead := !q.leading
	q.leading = true
	q.mu.Unlock()
	return lead
}

// Take returns every queued write, in arrival order, for the leader to
// run; writes joining meanwhile wait for the next batch.
func (q *Queue[T]) Take() []*T {
	q.mu.Lock()
	batch := q.queue
	q.queue, q.spare = q.spare[:0], nil
	q.mu.Unlock()
	return batch
}

// Recycle gives a batch's array back once the leader is done with it, so
// that the next Take appends into it rather than a new one (a backend
// that keeps its batches after passing the lead on does not call it).
func (q *Queue[T]) Recycle(batch []*T) {
	clear(batch)
	q.mu.Lock()
	q.spare = batch[:0]
	q.mu.Unlock()
}

// Requeue puts ws back at the head of the queue, in their order, for the
// next leader: the writes a leader could not finish.
func (q *Queue[T]) Requeue(ws []*T) {
	if len(ws) == 0 {
		return
	}
	q.mu.Lock()
	q.queue = append(append([]*T(nil), ws...), q.queue...)
	q.mu.Unlock()
}

// PassOn ends the caller's lead. It returns the first queued write, whose
// caller leads next and which the caller must wake to say so, or nil when
// the queue is empty, and then nobody leads.
func (q *Queue[T]) PassOn() *T {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.queue) == 0 {
		q.leading = false
		return nil
	}
	return q.queue[0]
}

// Len is how many writes are queued (the batch a leader runs is not).
func (q *Queue[T]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.queue)
}
