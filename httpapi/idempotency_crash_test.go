package httpapi_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/httpapi"
	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/memory"
)

// journalChecked is a backend that notes every Update made under an
// idempotent request that bypasses its journal (a direct Backend.Update
// rather than storage.Update): such a write would run again on a retry.
type journalChecked struct {
	storage.Backend
	mu     sync.Mutex
	bypass []string
}

func (j *journalChecked) Update(ctx context.Context, fn func(storage.Tx) error) error {
	if storage.Unjournaled(ctx) {
		j.mu.Lock()
		j.bypass = append(j.bypass, "an Update outside storage.Update")
		j.mu.Unlock()
	}
	return j.Backend.Update(ctx, fn)
}

func (j *journalChecked) take() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	out := j.bypass
	j.bypass = nil
	return out
}

// TestIdempotentRetryAfterCrash: for every POST route, the owner's request
// with an Idempotency-Key is answered and its writes commit, but the
// response is not stored, as when the process dies right after the last
// write. The retry with the key answers the same status and the same bytes,
// marked replayed when the first one wrote, and writes nothing but the
// idempotency record: every effect happened once. Every write a request
// makes goes through its journal.
func TestIdempotentRetryAfterCrash(t *testing.T) {
	for _, deferred := range []bool{false, true} {
		t.Run(fmt.Sprintf("DeferCompletion=%v", deferred), func(t *testing.T) { retryAfterCrash(t, deferred) })
	}
}

// retryAfterCrash is TestIdempotentRetryAfterCrash with completions stored
// before answering, or after (Options.DeferCompletion).
func retryAfterCrash(t *testing.T, deferred bool) {
	cardSecrets := regexp.MustCompile(`"number":"[0-9]{16}","cvv":"[0-9]{3}",`)
	checked := &journalChecked{Backend: memory.New()}
	counted := &countingDB{Backend: checked}
	sealer, err := corebank.NewSealer(bytes.Repeat([]byte{5}, 32))
	if err != nil {
		t.Fatal(err)
	}
	// Under a sealer a replay is the original bytes, secrets included.
	e := newHookEnvDB(t, counted, false, func(o *httpapi.Options) { o.Sealer, o.DeferCompletion = sealer, deferred })
	a, _ := newAuthzSides(e)
	table := authzRoutes(e)
	var posts []string
	for _, p := range httpapi.RoutePatterns {
		// The sandbox clock advance moves the fake clock, which is not
		// stored: a crash loses the advance, so its retry advances again.
		// An open route has no idempotency layer (no entity to keep it under).
		if _, ok := table[p]; ok && strings.HasPrefix(p, "POST ") && p != "POST /sandbox/clock/advance" && !httpapi.Open(p) {
			posts = append(posts, p)
		}
	}
	checked.take()
	for _, p := range ownerOrder(table, posts) {
		t.Run(p, func(t *testing.T) {
			r := table[p].ownerReq(a)
			key := "crash " + p
			httpapi.CrashBeforeStoring(e.h, true)
			counted.start()
			first := e.do(http.MethodPost, r.path, a.key, authzBody(r.body), "Idempotency-Key", key)
			wrote := counted.stop()
			httpapi.CrashBeforeStoring(e.h, false)
			if first.Status < 200 || first.Status > 299 {
				t.Fatalf("first request: %d %.500s", first.Status, first.Raw)
			}
			if bad := checked.take(); len(bad) > 0 {
				t.Errorf("first request: %d writes bypass the idempotency journal", len(bad))
			}

			counted.start()
			retry := e.do(http.MethodPost, r.path, a.key, authzBody(r.body), "Idempotency-Key", key)
			httpapi.FlushCompletions(e.h)
			again := counted.stop()
			// A card's number and CVV are never stored, sealed or not (see
			// "Secrets at rest"): the retry of a card creation lacks them.
			want := cardSecrets.ReplaceAllString(first.Raw, "")
			if retry.Status != first.Status || retry.Raw != want {
				t.Fatalf("retry after the crash answered differently:\nfirst %d %s\nretry %d %s",
					first.Status, first.Raw, retry.Status, retry.Raw)
			}
			if want := len(wrote) > 0; (retry.Header.Get("Idempotent-Replayed") == "true") != want {
				t.Errorf("retry: Idempotent-Replayed %q, want set %v", retry.Header.Get("Idempotent-Replayed"), want)
			}
			for b := range again {
				if b != "httpapi.idempotency" && b != storage.BucketDue {
					t.Errorf("retry wrote to %s: the effect ran twice", b)
				}
			}

			// The response is now stored: a third request replays it
			// without running the handler at all.
			counted.start()
			third := e.do(http.MethodPost, r.path, a.key, authzBody(r.body), "Idempotency-Key", key)
			if n := len(counted.stop()); n != 0 || third.Raw != want || third.Header.Get("Idempotent-Replayed") != "true" {
				t.Errorf("stored replay: %d buckets written, replayed %q, %d %.300s",
					n, third.Header.Get("Idempotent-Replayed"), third.Status, third.Raw)
			}
		})
	}
}
