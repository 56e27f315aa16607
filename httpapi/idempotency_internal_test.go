package httpapi

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/storage"
)

// queued lists the idempotency items in the due queue as "at id".
func queued(t *testing.T, db storage.Backend) []string {
	t.Helper()
	out, err := storage.View(context.Background(), db, func(tx storage.Tx) ([]string, error) {
		var out []string
		err := tx.Scan(storage.BucketDue, storage.ScanOptions{Prefix: []byte(idemDueKind + "/")}, func(k, _ []byte) error {
			rest := k[len(idemDueKind)+1:]
			at, err := storage.Uint64(rest)
			if err != nil {
				return err
			}
			out = append(out, time.UnixMilli(int64(at)).UTC().Format(time.RFC3339)+" "+string(rest[8:]))
			return nil
		})
		return out, err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func stored(t *testing.T, db storage.Backend, entity, key string) bool {
	t.Helper()
	ok, err := storage.View(context.Background(), db, func(tx storage.Tx) (bool, error) {
		return storage.Exists(tx, bucketIdem, idemKey(entity, key))
	})
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

// TestIdempotencyDue: a record's expiry is queued on the one due queue in
// the transaction that writes it, moved when an expired key is reused,
// dropped when the key is released, and run by DueJobs.
func TestIdempotencyDue(t *testing.T) {
	ctx := context.Background()
	t.Run("OK", func(t *testing.T) {
		f := newFW(t)
		f.do(t, "POST", "/echo", "full", []byte(`{"name":"a"}`), "Idempotency-Key", "k1")
		f.do(t, "POST", "/echo", "other", []byte(`{"name":"a"}`), "Idempotency-Key", "k1")
		want := []string{"2026-01-02T00:00:00Z E1\x00k1", "2026-01-02T00:00:00Z E2\x00k1"}
		if diff := cmp.Diff(want, queued(t, f.h.db)); diff != "" {
			t.Fatalf("queued (-want +got):\n%s", diff)
		}
		due := storage.NewDue(f.h.db, f.clock, 0, DueJobs()...)
		if n, err := due.RunDue(ctx, f.clock.Now().Add(24*time.Hour-time.Millisecond)); n != 0 || err != nil {
			t.Fatalf("before expiry: RunDue = %d, %v", n, err)
		}
		if n, err := due.RunDue(ctx, f.clock.Now().Add(24*time.Hour)); n != 2 || err != nil {
			t.Fatalf("at expiry: RunDue = %d, %v", n, err)
		}
		if stored(t, f.h.db, "E1", "k1") || stored(t, f.h.db, "E2", "k1") || len(queued(t, f.h.db)) != 0 {
			t.Fatalf("records or items left: %q", queued(t, f.h.db))
		}
	})
	t.Run("OKReuseMovesExpiry", func(t *testing.T) {
		f := newFW(t)
		f.do(t, "POST", "/echo", "full", []byte(`{"name":"a"}`), "Idempotency-Key", "k1")
		f.clock.Add(25 * time.Hour)
		got := f.do(t, "POST", "/echo", "full", []byte(`{"name":"b"}`), "Idempotency-Key", "k1")
		if got.status != 201 || got.header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("reuse after expiry: %d %s", got.status, got.raw)
		}
		if diff := cmp.Diff([]string{"2026-01-03T01:00:00Z E1\x00k1"}, queued(t, f.h.db)); diff != "" {
			t.Fatalf("queued (-want +got):\n%s", diff)
		}
		if n, err := PurgeIdempotency(ctx, f.h.db, f.clock.Now()); n != 0 || err != nil || !stored(t, f.h.db, "E1", "k1") {
			t.Fatalf("the new record is not due: %d %v", n, err)
		}
	})
	t.Run("OKReleasedUnqueued", func(t *testing.T) {
		f := newFW(t)
		if got := f.do(t, "POST", "/echo", "full", []byte(`{"name":""}`), "Idempotency-Key", "k1"); got.status != 422 {
			t.Fatalf("%d %s", got.status, got.raw)
		}
		if q := queued(t, f.h.db); len(q) != 0 || stored(t, f.h.db, "E1", "k1") {
			t.Fatalf("released key left %q", q)
		}
	})
	t.Run("OKReplacedRecordKept", func(t *testing.T) {
		// An item whose record has another expiry (it cannot happen through
		// the handler, which moves the item with the record) leaves it.
		f := newFW(t)
		f.do(t, "POST", "/echo", "full", []byte(`{"name":"a"}`), "Idempotency-Key", "k1")
		k := string(idemKey("E1", "k1"))
		if _, err := storage.Update(ctx, f.h.db, func(tx storage.Tx) (struct{}, error) {
			return struct{}{}, storage.Schedule(tx, idemDueKind, 1, k)
		}); err != nil {
			t.Fatal(err)
		}
		if n, err := PurgeIdempotency(ctx, f.h.db, f.clock.Now()); n != 1 || err != nil || !stored(t, f.h.db, "E1", "k1") {
			t.Fatalf("stale item: %d %v, record stored %v", n, err, stored(t, f.h.db, "E1", "k1"))
		}
	})
}

// rawRecord is the stored idempotency record of (entity, key), as bytes.
func rawRecord(t *testing.T, db storage.Backend, entity, key string) []byte {
	t.Helper()
	raw, err := storage.View(context.Background(), db, func(tx storage.Tx) ([]byte, error) {
		return tx.Get(bucketIdem, idemKey(entity, key))
	})
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func putRecord(t *testing.T, db storage.Backend, entity, key string, raw []byte) {
	t.Helper()
	err := db.Update(context.Background(), func(tx storage.Tx) error {
		return tx.Put(bucketIdem, idemKey(entity, key), raw)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestIdempotencySealed: under Options.Sealer a record holds neither the
// request hash nor the response readable, a replay is the original bytes
// (secrets included), a sealed record moved to another record's key does
// not open, and records written in clear by an earlier release still
// replay. Without a sealer an API key is removed before the response is
// stored.
func TestIdempotencySealed(t *testing.T) {
	const secret = "sk_sandbox_Q7vLx2Rk9TzM4pWn8cYb"
	body := []byte(`{"name":"` + secret + `"}`)
	sealed := func(t *testing.T) *fw {
		f := newFW(t)
		s, err := corebank.NewSealer(make([]byte, 32))
		if err != nil {
			t.Fatal(err)
		}
		f.h.sealer = s
		return f
	}
	t.Run("OKReplayExact", func(t *testing.T) {
		f := sealed(t)
		first := f.do(t, "POST", "/echo", "full", body, "Idempotency-Key", "k1")
		second := f.do(t, "POST", "/echo", "full", body, "Idempotency-Key", "k1")
		if second.header.Get("Idempotent-Replayed") != "true" || second.status != first.status || second.raw != first.raw {
			t.Fatalf("replay %d %q, want %d %q", second.status, second.raw, first.status, first.raw)
		}
		if f.calls.Load() != 1 {
			t.Fatalf("handler ran %d times", f.calls.Load())
		}
		raw := rawRecord(t, f.h.db, "E1", "k1")
		var rec idemRecord
		if err := json.Unmarshal(raw, &rec); err != nil {
			t.Fatal(err)
		}
		if rec.Hash != "" || rec.Body != nil || len(rec.Sealed) == 0 || !rec.Done || rec.Status != 201 {
			t.Fatalf("record not sealed: %s", raw)
		}
		for _, form := range []string{secret, base64.StdEncoding.EncodeToString([]byte(first.raw)),
			requestHash(httptest.NewRequest("POST", "/echo", nil), body)} {
			if bytes.Contains(raw, []byte(form)) {
				t.Fatalf("record holds %q: %s", form, raw)
			}
		}
	})
	t.Run("OKMismatch", func(t *testing.T) {
		f := sealed(t)
		f.do(t, "POST", "/echo", "full", body, "Idempotency-Key", "k1")
		got := f.do(t, "POST", "/echo", "full", []byte(`{"name":"other"}`), "Idempotency-Key", "k1")
		if got.status != 422 || got.code() != codeIdempotencyMismatch {
			t.Fatalf("other body: %d %s", got.status, got.raw)
		}
	})
	t.Run("ErrMovedRecord", func(t *testing.T) {
		f := sealed(t)
		f.do(t, "POST", "/echo", "full", body, "Idempotency-Key", "k1")
		putRecord(t, f.h.db, "E2", "k1", rawRecord(t, f.h.db, "E1", "k1"))
		got := f.do(t, "POST", "/echo", "other", body, "Idempotency-Key", "k1")
		if got.status != 500 || strings.Contains(got.raw, secret) {
			t.Fatalf("moved record: %d %s", got.status, got.raw)
		}
	})
	t.Run("OKClearRecordFromEarlierRelease", func(t *testing.T) {
		f := newFW(t)
		first := f.do(t, "POST", "/echo", "full", body, "Idempotency-Key", "k1")
		g := sealed(t)
		g.clock.Set(f.clock.Now())
		putRecord(t, g.h.db, "E1", "k1", rawRecord(t, f.h.db, "E1", "k1"))
		second := g.do(t, "POST", "/echo", "full", body, "Idempotency-Key", "k1")
		if second.header.Get("Idempotent-Replayed") != "true" || second.raw != first.raw || g.calls.Load() != 0 {
			t.Fatalf("clear record under a sealer: %d %s", second.status, second.raw)
		}
	})
	t.Run("OKUnsealedDropsAPIKey", func(t *testing.T) {
		got := string(redactSecrets([]byte(`{"id":"k1","api_key":"` + secret + `","prefix":"sk_sandbox_Q7vL"}`)))
		if got != `{"id":"k1","prefix":"sk_sandbox_Q7vL"}` {
			t.Fatalf("redactSecrets = %s", got)
		}
	})
}

func TestIdempotency(t *testing.T) {
	t.Run("OKReplay", func(t *testing.T) {
		f := newFW(t)
		body := []byte(`{"name":"a","amount":1}`)
		first := f.do(t, "POST", "/echo", "full", body, "Idempotency-Key", "k1")
		second := f.do(t, "POST", "/echo", "full", body, "Idempotency-Key", "k1")
		if first.status != 201 || second.status != 201 || first.raw != second.raw {
			t.Fatalf("first %d %s, second %d %s", first.status, first.raw, second.status, second.raw)
		}
		if first.header.Get("Idempotent-Replayed") != "" || second.header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("replay headers: %q %q", first.header.Get("Idempotent-Replayed"), second.header.Get("Idempotent-Replayed"))
		}
		if n := f.calls.Load(); n != 1 {
			t.Fatalf("ran %d times", n)
		}
		// Another entity's same key is its own.
		third := f.do(t, "POST", "/echo", "other", body, "Idempotency-Key", "k1")
		if third.status != 201 || third.header.Get("Idempotent-Replayed") != "" || f.calls.Load() != 2 {
			t.Fatalf("other entity: %d %v", third.status, third.header)
		}
	})
	t.Run("ErrMismatch", func(t *testing.T) {
		f := newFW(t)
		f.do(t, "POST", "/echo", "full", []byte(`{"name":"a"}`), "Idempotency-Key", "k1")
		got := f.do(t, "POST", "/echo", "full", []byte(`{"name":"b"}`), "Idempotency-Key", "k1")
		if got.status != 422 || got.code() != "idempotency_key_mismatch" {
			t.Fatalf("%d %s", got.status, got.raw)
		}
	})
	t.Run("OKValidationNotStored", func(t *testing.T) {
		f := newFW(t)
		got := f.do(t, "POST", "/echo", "full", []byte(`{"name":""}`), "Idempotency-Key", "k1")
		if got.status != 422 {
			t.Fatalf("%d %s", got.status, got.raw)
		}
		got = f.do(t, "POST", "/echo", "full", []byte(`{"name":"fixed"}`), "Idempotency-Key", "k1")
		if got.status != 201 || got.header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("corrected retry: %d %s", got.status, got.raw)
		}
	})
	t.Run("OKExpiry", func(t *testing.T) {
		f := newFW(t)
		f.do(t, "POST", "/echo", "full", []byte(`{"name":"a"}`), "Idempotency-Key", "k1")
		f.clock.Add(23 * time.Hour)
		if got := f.do(t, "POST", "/echo", "full", []byte(`{"name":"a"}`), "Idempotency-Key", "k1"); got.header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("not replayed within 24h: %d", got.status)
		}
		f.clock.Add(time.Hour + time.Second)
		got := f.do(t, "POST", "/echo", "full", []byte(`{"name":"b"}`), "Idempotency-Key", "k1")
		if got.status != 201 || got.header.Get("Idempotent-Replayed") != "" || f.calls.Load() != 2 {
			t.Fatalf("after expiry: %d %s", got.status, got.raw)
		}
		f.clock.Add(25 * time.Hour)
		n, err := PurgeIdempotency(context.Background(), f.h.db, f.clock.Now())
		if err != nil || n != 1 {
			t.Fatalf("purge: %d %v", n, err)
		}
	})
	t.Run("OKConcurrentRunsOnce", func(t *testing.T) {
		f := newFW(t)
		var wg sync.WaitGroup
		results := make([]resp, 5)
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[0] = f.do(t, "POST", "/slow", "full", []byte(`{}`), "Idempotency-Key", "k1")
		}()
		<-f.entered
		for i := 1; i < 5; i++ {
			results[i] = f.do(t, "POST", "/slow", "full", []byte(`{}`), "Idempotency-Key", "k1")
		}
		close(f.gate)
		wg.Wait()
		if results[0].status != 201 {
			t.Fatalf("first: %d %s", results[0].status, results[0].raw)
		}
		for _, r := range results[1:] {
			if r.status != 409 || r.code() != "conflict" {
				t.Fatalf("duplicate in flight: %d %s", r.status, r.raw)
			}
		}
		if got := f.do(t, "POST", "/slow", "full", []byte(`{}`), "Idempotency-Key", "k1"); got.header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("after completion: %d %s", got.status, got.raw)
		}
		// Once it completed, a retry meeting another retry of it in flight
		// replays too, rather than 409 (found by the simulator: two
		// retries of one request in one concurrent step).
		k := idemKey("E1", "k1") // the "full" key's entity
		if !f.h.inflight.claim(k) {
			t.Fatal("the key is still claimed")
		}
		got := f.do(t, "POST", "/slow", "full", []byte(`{}`), "Idempotency-Key", "k1")
		f.h.inflight.release(k)
		if got.status != 201 || got.header.Get("Idempotent-Replayed") != "true" || got.raw != results[0].raw {
			t.Fatalf("retry beside a retry in flight: %d %s", got.status, got.raw)
		}
		if n := f.calls.Load(); n != 1 {
			t.Fatalf("ran %d times", n)
		}
	})
	t.Run("OKPanicReleases", func(t *testing.T) {
		f := newFW(t)
		if got := f.do(t, "POST", "/panic", "full", nil, "Idempotency-Key", "k1"); got.status != 500 {
			t.Fatalf("%d", got.status)
		}
		if got := f.do(t, "POST", "/panic", "full", nil, "Idempotency-Key", "k1"); got.status != 500 || got.code() != "internal_error" {
			t.Fatalf("key not released after panic: %d %s", got.status, got.raw)
		}
	})
	t.Run("OKPanicAfterCapturedWrite", func(t *testing.T) {
		f := newFW(t)
		for i := 0; i < 2; i++ {
			got := f.do(t, "POST", "/panic-late", "full", nil, "Idempotency-Key", "k1")
			if got.status != 500 || got.code() != "internal_error" || got.header.Get("Idempotent-Replayed") != "" {
				t.Fatalf("try %d: %d %s", i, got.status, got.raw)
			}
		}
	})
	t.Run("OKCardRedacted", func(t *testing.T) {
		f := newFW(t)
		first := f.do(t, "POST", "/card", "full", nil, "Idempotency-Key", "k1")
		if !strings.Contains(first.raw, "4111111111111111") {
			t.Fatalf("first response lacks the number: %s", first.raw)
		}
		second := f.do(t, "POST", "/card", "full", nil, "Idempotency-Key", "k1")
		if second.header.Get("Idempotent-Replayed") != "true" || strings.Contains(second.raw, "4111") || strings.Contains(second.raw, `"123"`) {
			t.Fatalf("replay: %s", second.raw)
		}
	})
}
