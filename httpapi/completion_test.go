package httpapi_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/corebank/corebank/httpapi"
	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/memory"
)

// completionTxs counts the Updates that write nothing but Idempotency-Key
// records: the deferred completions' transactions.
type completionTxs struct {
	storage.Backend
	mu sync.Mutex
	n  int
}

func (c *completionTxs) Update(ctx context.Context, fn func(storage.Tx) error) error {
	return recordUpdate(ctx, c.Backend, fn, func(ws []write) {
		for _, w := range ws {
			if w.b != "httpapi.idempotency" {
				return
			}
		}
		if len(ws) > 0 {
			c.mu.Lock()
			c.n++
			c.mu.Unlock()
		}
	})
}

func (c *completionTxs) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// TestDeferredCompletionsShareTransactions: keyed requests answered one at
// a time, as from one client, have their responses stored together
// (Options.DeferCompletion), a transaction per 50 ms at most rather than
// one per request, and each is then replayed from the store.
func TestDeferredCompletionsShareTransactions(t *testing.T) {
	db := &completionTxs{Backend: memory.New()}
	e := newEnvDB(t, db, func(o *httpapi.Options) { o.DeferCompletion = true })
	const n = 8
	before := db.count()
	start := time.Now()
	var first [n]resp
	for i := range n {
		first[i] = e.do("POST", "/counterparties", e.key, cpBody("Ada", fmt.Sprint("Linger", i)), "Idempotency-Key", fmt.Sprint("linger-", i))
		if first[i].Status != 201 {
			t.Fatalf("POST %d: %d %s", i, first[i].Status, first[i].Raw)
		}
	}
	took := time.Since(start)
	deadline := time.Now().Add(10 * time.Second)
	for i := 0; i < n; {
		// Stored: the retry replays without running the handler.
		r := e.do("POST", "/counterparties", e.key, cpBody("Ada", fmt.Sprint("Linger", i)), "Idempotency-Key", fmt.Sprint("linger-", i))
		if r.Raw != first[i].Raw {
			t.Fatalf("retry %d answered differently:\n%s\n%s", i, first[i].Raw, r.Raw)
		}
		if db.count()-before == 0 {
			if time.Now().After(deadline) {
				t.Fatal("no completion stored after 10 s")
			}
			time.Sleep(5 * time.Millisecond)
			continue
		}
		i++
	}
	httpapi.FlushCompletions(e.h)
	// One transaction for the requests of each 50 ms, and one more for
	// the retries that ran before theirs was stored.
	if got, most := db.count()-before, 2+int(took/(50*time.Millisecond)); got > most {
		t.Errorf("%d requests in %v: their completions took %d transactions, want at most %d", n, took, got, most)
	}
}
