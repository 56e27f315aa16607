package writeq_test

import (
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank/storage/internal/writeq"
)

// write is a backend's call: its value, and the channel its owner wakes.
type write struct {
	n    int
	wake chan bool
}

// TestLeadAndPassOn: the first to join leads; the others wait; the lead
// goes to the first write queued meanwhile; an empty queue has no leader.
func TestLeadAndPassOn(t *testing.T) {
	var q writeq.Queue[write]
	a, b, c := &write{n: 1}, &write{n: 2}, &write{n: 3}
	if !q.Join(a) {
		t.Fatal("the first write does not lead")
	}
	if q.Join(b) || q.Join(c) {
		t.Fatal("a write leads while another does")
	}
	if got := q.Take(); len(got) != 3 || got[0] != a || got[2] != c {
		t.Fatalf("Take = %v", got)
	}
	d := &write{n: 4}
	if q.Join(d) {
		t.Fatal("a write joining during a batch leads")
	}
	if next := q.PassOn(); next != d {
		t.Fatalf("PassOn = %v, want the write queued meanwhile", next)
	}
	q.Requeue([]*write{b, c}) // d's leader could not finish b and c
	if got := q.Take(); len(got) != 3 || got[0] != b || got[1] != c || got[2] != d {
		t.Fatalf("Take after Requeue = %v, want b c d", got)
	}
	if next := q.PassOn(); next != nil {
		t.Fatalf("PassOn on an empty queue = %v", next)
	}
	if !q.Join(&write{}) {
		t.Fatal("after the lead ended, a new write does not lead")
	}
}

// TestOrder runs writers through the queue as a backend does and checks
// every write ran once, each writer's in its own order.
func TestOrder(t *testing.T) {
	var q writeq.Queue[write]
	const writers, each = 8, 500
	var ran []int // only the leader appends
	run := func(w *write) {
		if q.Join(w) || <-w.wake {
			batch := q.Take()
			for _, x := range batch {
				ran = append(ran, x.n)
				if x != w {
					x.wake <- false
				}
			}
			q.Recycle(batch)
			if next := q.PassOn(); next != nil {
				next.wake <- true
			}
		}
	}
	var wg sync.WaitGroup
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				run(&write{n: g*each + i, wake: make(chan bool, 1)})
			}
		}()
	}
	wg.Wait()
	last := make([]int, writers)
	for i := range last {
		last[i] = -1
	}
	seen := map[int]bool{}
	for _, n := range ran {
		g := n / each
		if n <= last[g] || seen[n] {
			t.Fatalf("write %d ran after %d of the same writer, or twice", n, last[g])
		}
		last[g], seen[n] = n, true
	}
	if diff := cmp.Diff(writers*each, len(seen)); diff != "" {
		t.Errorf("writes run (-want +got):\n%s", diff)
	}
}
