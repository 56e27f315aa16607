package bank_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/corebank/corebank/bank"
	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/memory"
)

// TestDisjointTransfersShareNoKeys audits the keys a book transfer's
// transactions touch: two transfers between disjoint accounts, each
// accepted over HTTP with an Idempotency-Key and then settled, must not
// write a key the other reads or writes (a Scan reads its whole range).
// On a store that runs transactions at once (PostgreSQL) such a key would
// make every two unrelated transfers conflict, and all of them wait for
// or retry against each other. The queues are left out (see queues).
func TestDisjointTransfersShareNoKeys(t *testing.T) {
	ctx := context.Background()
	mock := clock.NewMock()
	mock.Set(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	rec := &recorder{Backend: memory.New()}
	b, err := bank.New(rec, bank.Options{SecretKey: make([]byte, 32), Clock: mock, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	root, _, err := b.Entities.Bootstrap(ctx)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(b.Handler)
	defer srv.Close()
	call := func(method, path, idem string, body any) map[string]any {
		t.Helper()
		var rd io.Reader
		if body != nil {
			raw, _ := json.Marshal(body)
			rd = bytes.NewReader(raw)
		}
		req, _ := http.NewRequest(method, srv.URL+path, rd)
		req.Header.Set("Authorization", "Bearer "+root.APIKey)
		req.Header.Set("Content-Type", "application/json")
		if idem != "" {
			req.Header.Set("Idempotency-Key", idem)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		raw, _ := io.ReadAll(resp.Body)
		if resp.StatusCode/100 != 2 || json.Unmarshal(raw, &out) != nil {
			t.Fatalf("%s %s = %d %s", method, path, resp.StatusCode, raw)
		}
		if data, ok := out["data"].(map[string]any); ok {
			return data // an envelope
		}
		return out
	}
	cp := call("POST", "/counterparties", "", map[string]any{"type": "individual", "profile": map[string]any{
		"first_name": "Book", "last_name": "Payee", "relationship": "vendor", "email": "payee@example.com",
		"address": map[string]any{"line1": "1 Main St", "city": "Austin", "country": "US"}}})["id"].(string)
	type pair struct{ from, detail string }
	pairs := make([]pair, 2)
	for i := range pairs {
		account := func(name string) map[string]any {
			return call("POST", "/accounts", "", map[string]any{"type": "checking", "currency": "USD", "display_name": name})
		}
		from, to := account(fmt.Sprint("Source ", i)), account(fmt.Sprint("Destination ", i))
		call("POST", "/sandbox/inflows", "", map[string]any{"account_id": from["id"], "amount": 1_000_000, "narration": "seed"})
		pd := call("POST", "/payment-details", "", map[string]any{"counterparty_id": cp,
			"payment_method": "book-transfer", "currency": "USD", "account_holder_name": "Book Payee",
			"account_number": to["service_ban"]})
		pairs[i] = pair{from["id"].(string), pd["id"].(string)}
	}
	// Warm up: the first transfer of a bank writes one-time records.
	send := func(p pair, ref string) {
		call("POST", "/transfers", ref, map[string]any{"account_id": p.from, "payment_detail_id": p.detail,
			"amount": 1, "currency": "USD", "payment_type": "book-transfer", "narration": "audit", "unique_reference": ref})
	}
	settle := func() {
		mock.Add(2 * time.Second)
		if _, err := b.RunDue(ctx, mock.Now()); err != nil {
			t.Fatal(err)
		}
	}
	for i, p := range pairs {
		send(p, fmt.Sprint("warm-", i))
	}
	settle()

	var accept, settled [2]*access
	for i, p := range pairs {
		accept[i] = rec.record(func() { send(p, fmt.Sprint("audit-", i)) })
		settled[i] = rec.record(settle)
	}
	for _, c := range []struct {
		name string
		a, b *access
	}{{"accept", accept[0], accept[1]}, {"settle", settled[0], settled[1]}} {
		if shared := c.a.conflicts(c.b); len(shared) > 0 {
			t.Errorf("%s: two transfers between disjoint accounts share keys:\n  %s", c.name, strings.Join(shared, "\n  "))
		}
	}
}

// queues are the buckets every transfer inserts into and only a runner
// reads whole (the due runner, the webhook dispatcher): a reader of a range
// that writers only insert into depends on them in one direction, which
// never aborts anyone; its conflicts with other runners are the runner's.
var queues = map[string]bool{
	string(storage.BucketDue): true, string(storage.BucketDueLease): true, "ledger.outbox_unread": true,
}

// recorder is a Backend that records what Updates read and write while
// record runs.
type recorder struct {
	storage.Backend
	mu  sync.Mutex
	cur *access
}

func (r *recorder) record(fn func()) *access {
	a := &access{writes: map[string]bool{}}
	r.mu.Lock()
	r.cur = a
	r.mu.Unlock()
	fn()
	r.mu.Lock()
	r.cur = nil
	r.mu.Unlock()
	return a
}

func (r *recorder) Update(ctx context.Context, fn func(storage.Tx) error) error {
	return r.Backend.Update(ctx, func(tx storage.Tx) error {
		r.mu.Lock()
		a := r.cur
		r.mu.Unlock()
		if a == nil {
			return fn(tx)
		}
		t := &recTx{Tx: tx, run: &access{writes: map[string]bool{}}}
		err := fn(t)
		if err == nil {
			r.mu.Lock()
			a.merge(t.run)
			r.mu.Unlock()
		}
		return err
	})
}

// access is what transactions touched: keys written, and ranges read
// (a Get reads the range of its key alone).
type access struct {
	writes map[string]bool // bucket + "\x00" + key
	reads  []span
}

type span struct{ bucket, lo, hi string } // [lo, hi]; hi "" is the bucket's end

func (a *access) merge(b *access) {
	for k := range b.writes {
		a.writes[k] = true
	}
	a.reads = append(a.reads, b.reads...)
}

// conflicts lists the keys one side writes that the other reads or writes.
func (a *access) conflicts(b *access) []string {
	var out []string
	seen := map[string]bool{}
	check := func(w *access, r *access) {
		for k := range w.writes {
			bucket, key, _ := strings.Cut(k, "\x00")
			hit := r.writes[k]
			for _, s := range r.reads {
				if hit {
					break
				}
				hit = s.bucket == bucket && key >= s.lo && (s.hi == "" || key <= s.hi)
			}
			if hit && !seen[k] && !queues[bucket] {
				seen[k] = true
				out = append(out, fmt.Sprintf("%s %q", bucket, key))
			}
		}
	}
	check(a, b)
	check(b, a)
	sort.Strings(out)
	return out
}

type recTx struct {
	storage.Tx
	run *access
}

func (t *recTx) Get(b storage.Bucket, key []byte) ([]byte, error) {
	t.run.reads = append(t.run.reads, span{string(b), string(key), string(key)})
	return t.Tx.Get(b, key)
}

func (t *recTx) Put(b storage.Bucket, key, value []byte) error {
	t.run.writes[string(b)+"\x00"+string(key)] = true
	return t.Tx.Put(b, key, value)
}

func (t *recTx) Delete(b storage.Bucket, key []byte) error {
	t.run.writes[string(b)+"\x00"+string(key)] = true
	return t.Tx.Delete(b, key)
}

// Scan records the range it covered: from its start to the last key it
// visited, or to the end of its prefix when it ran out of keys.
func (t *recTx) Scan(b storage.Bucket, o storage.ScanOptions, fn func(key, value []byte) error) error {
	var last []byte
	stopped, n := false, 0
	err := t.Tx.Scan(b, o, func(k, v []byte) error {
		last = append(last[:0], k...)
		n++
		err := fn(k, v)
		if err != nil {
			stopped = true
		}
		return err
	})
	if o.Limit > 0 && n == o.Limit {
		stopped = true // a full page stopped at its limit; a short one ran out
	}
	lo, hi := string(o.Prefix), ""
	if end, ok := storage.PrefixEnd(o.Prefix); ok {
		hi = string(end)
	}
	if o.After != nil {
		if o.Reverse {
			hi = string(o.After)
		} else {
			lo = string(o.After)
		}
	}
	if stopped && last != nil {
		if o.Reverse {
			lo = string(last)
		} else {
			hi = string(last)
		}
	}
	t.run.reads = append(t.run.reads, span{string(b), lo, hi})
	return err
}
