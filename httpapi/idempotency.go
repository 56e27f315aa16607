package httpapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/storage"
)

// bucketIdem holds idempotency records, keyed by idemKey.
const bucketIdem storage.Bucket = "httpapi.idempotency"

// idemDueKind is the due-work kind that deletes a record when it expires;
// the item's ID is the record's key.
const idemDueKind = "httpapi.idempotency"

const maxIdemKey = 255

// idempotent runs fn at most once per (entity, key), replaying its stored
// response to later requests with the same key and body. fn runs under a
// storage.Journal, so each write it makes commits with a record of its
// result: after a crash, a retry re-runs fn, whose committed writes return
// their recorded results instead of running again.
func (h *handler) idempotent(x *exchange, r *http.Request, key string, fn handlerFunc) {
	if err := checkIdemKey(key); err != nil {
		h.writeError(x, r, err)
		return
	}
	ctx := r.Context()
	k := idemKey(x.c.EntityID, key)
	hash := requestHash(r, x.body)
	now := h.clock.Now()
	stored := func() (*idemRecord, error) {
		return storage.View(ctx, h.db, func(tx storage.Tx) (*idemRecord, error) {
			rec, _, err := h.getIdem(tx, k, hash, now)
			return rec, err
		})
	}
	if !h.inflight.claim(k) {
		// Only a request still running makes a duplicate wait: a retry of
		// one that completed is answered from its record even while
		// another retry of it is being answered (two retries of one
		// request sent at once, as the simulator does).
		if rec, err := stored(); err == nil && rec != nil && rec.Done {
			replay(x, rec)
			return
		}
		h.writeError(x, r, errIdemBusy)
		return
	}
	defer h.inflight.release(k)
	rec, err := stored()
	if err != nil {
		h.writeError(x, r, err)
		return
	}
	if rec != nil && rec.Done {
		replay(x, rec)
		return
	}
	run := &idemRun{h: h, k: k, hash: hash, now: now}
	buf := getBuf()
	defer putBuf(buf)
	x.capture = buf
	defer func() { x.capture = nil }() // on a panic, ServeHTTP answers
	err = fn(h, x, r.WithContext(storage.WithJournal(ctx, run)))
	if errors.Is(err, errIdemBusy) && h.completer != nil {
		// A deferred completion (of this key's earlier request) was stored
		// while this one ran over its steps: answer what it stored.
		done, _ := stored()
		if done != nil && done.Done {
			x.capture = nil
			replay(x, done)
			return
		}
	}
	if err != nil {
		h.writeError(x, r, err)
	}
	x.capture = nil
	status := x.status
	if status == 0 {
		status = http.StatusOK
	}
	keep := storable(status) && !h.noStore.Load()
	if h.completer != nil && keep && (run.wrote != nil || run.replayed) {
		h.completer.add(run, status, buf.Bytes())
	} else if err := h.complete(context.WithoutCancel(ctx), run, status, buf.Bytes(), keep); err != nil {
		h.log.ErrorContext(ctx, "storing idempotent response", slog.String("error", err.Error()))
	}
	if run.replayed {
		x.Header().Set("Idempotent-Replayed", "true")
	}
	x.sent = true
	x.w.WriteHeader(status)
	_, _ = x.w.Write(buf.Bytes())
}

// replay answers the stored response of rec.
func replay(x *exchange, rec *idemRecord) {
	hd := x.Header()
	hd["Content-Type"] = jsonContentType
	hd.Set("Idempotent-Replayed", "true")
	x.WriteHeader(rec.Status)
	_, _ = x.Write(rec.Body)
}

// inflight holds the idempotency keys whose requests are running in this
// process, so that a concurrent duplicate is refused at once. It is not
// stored: a key whose request died with the process is free on restart,
// and requests on other nodes meet at the record (idemRun).
type inflight struct {
	mu   sync.Mutex
	keys map[string]struct{}
}

func (f *inflight) claim(k []byte) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.keys[string(k)]; ok {
		return false
	}
	if f.keys == nil {
		f.keys = make(map[string]struct{})
	}
	f.keys[string(k)] = struct{}{}
	return true
}

func (f *inflight) release(k []byte) {
	f.mu.Lock()
	delete(f.keys, string(k))
	f.mu.Unlock()
}

// idemRecord is what a key has done. It is first written by the
// transaction of the request's first write (a step, see storage.Journal),
// so that the record and the effect commit together; each later write
// appends its step; the completed response then replaces the steps.
// Under Options.Sealer the request hash and the response body are sealed
// together in Sealed (see setOutcome and outcome), and each step's result
// on its own, and Hash and Body stay empty; without one they are kept as
// they are, stripped of their secrets first.
type idemRecord struct {
	Hash    string     `json:"hash,omitempty"`
	Sealed  []byte     `json:"sealed,omitempty"`
	Done    bool       `json:"done"`
	Status  int        `json:"status,omitempty"`
	Body    []byte     `json:"body,omitempty"`
	Steps   []idemStep `json:"steps,omitempty"`
	Created int64      `json:"created"`
	Expires int64      `json:"expires"`
}

// idemStep is the result of one committed write of a request that has not
// completed: what storage.Update returned, as JSON, sealed under the
// sealer with the step's number bound to it.
type idemStep struct {
	Name   string `json:"name"`
	Result []byte `json:"result"`
}

// errIdemUnsealable is a sealed record met without the sealer that can open
// it (Options.Sealer removed or changed over a store that has records).
var errIdemUnsealable = errors.New("httpapi: idempotency record cannot be opened: Options.Sealer is missing or not the one that sealed it")

// idemAD binds a sealed record to its key, so that a sealed value moved to
// another entity's or another key's record does not open.
func idemAD(k []byte) []byte {
	return append([]byte(bucketIdem+"\x00"), k...)
}

// setOutcome writes the request hash and the response body (nil while in
// flight) into rec: sealed together under the sealer, else in clear.
func (h *handler) setOutcome(rec *idemRecord, k []byte, hash string, body []byte) {
	if h.sealer == nil {
		rec.Hash, rec.Body, rec.Sealed = hash, body, nil
		return
	}
	plain := make([]byte, 0, len(hash)+len(body))
	plain = append(append(plain, hash...), body...)
	rec.Hash, rec.Body, rec.Sealed = "", nil, h.sealer.Seal(plain, idemAD(k))
}

// outcome returns the request hash and response body that rec holds,
// opening them when they are sealed. Records written in clear (without a
// sealer, or by an earlier release) are read as they are.
func (h *handler) outcome(rec *idemRecord, k []byte) (hash string, body []byte, err error) {
	if rec.Sealed == nil {
		return rec.Hash, rec.Body, nil
	}
	if h.sealer == nil {
		return "", nil, errIdemUnsealable
	}
	plain, err := h.sealer.Open(rec.Sealed, idemAD(k))
	if err != nil || len(plain) < sha256.Size*2 {
		return "", nil, fmt.Errorf("%w: %v", errIdemUnsealable, err)
	}
	return string(plain[:sha256.Size*2]), plain[sha256.Size*2:], nil
}

func idemKey(entityID, key string) []byte {
	k := make([]byte, 0, len(entityID)+1+len(key))
	k = append(k, entityID...)
	k = append(k, 0)
	return append(k, key...)
}

// requestHash is SHA-256 over method, path and body.
func requestHash(r *http.Request, body []byte) string {
	h := sha256.New()
	h.Write([]byte(r.Method))
	h.Write([]byte{' '})
	h.Write([]byte(r.URL.Path))
	h.Write([]byte{'\n'})
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

func checkIdemKey(key string) error {
	if len(key) > maxIdemKey {
		return corebank.InvalidField("Idempotency-Key", "must be at most 255 characters")
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x20 || key[i] > 0x7e {
			return corebank.InvalidField("Idempotency-Key", "must be printable ASCII")
		}
	}
	return nil
}

// getIdem reads the live record of k: nil when there is none or it has
// expired at now (a reused key then starts afresh and its record is
// replaced; stale is the expired record's expiry, 0 when there was none,
// for putIdem to take off the queue). A record for another request is
// errIdemMismatch.
func (h *handler) getIdem(tx storage.Tx, k []byte, hash string, now time.Time) (rec *idemRecord, stale int64, err error) {
	r, err := storage.LoadJSON[idemRecord](tx, bucketIdem, k, storage.ErrNotFound)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return nil, 0, nil
	case err != nil:
		return nil, 0, err
	case r.Expires <= now.UnixMilli():
		return nil, r.Expires, nil
	}
	got, body, err := h.outcome(r, k)
	if err != nil {
		return nil, 0, err
	}
	if got != hash {
		return nil, 0, errIdemMismatch
	}
	r.Body = body
	return r, 0, nil
}

// putIdem writes rec, or a new record (nil) started at now, its expiry
// queued in the same transaction and the expiry stale of the expired
// record it replaces (getIdem's; 0 for none) taken off the queue, and
// returns the record and the bytes it wrote.
func (h *handler) putIdem(tx storage.Tx, k []byte, hash string, now time.Time, rec *idemRecord, stale int64, fill func(*idemRecord)) (*idemRecord, []byte, error) {
	if rec == nil {
		if stale != 0 {
			if err := storage.Unschedule(tx, idemDueKind, stale, string(k)); err != nil {
				return nil, nil, err
			}
		}
		rec = &idemRecord{Created: now.UnixMilli(), Expires: now.Add(h.idemTTL).UnixMilli()}
		if err := storage.Schedule(tx, idemDueKind, rec.Expires, string(k)); err != nil {
			return nil, nil, err
		}
	}
	fill(rec)
	var body []byte
	if rec.Done {
		body = rec.Body
	}
	h.setOutcome(rec, k, hash, body)
	raw, err := json.Marshal(rec)
	if err != nil {
		return nil, nil, err
	}
	return rec, raw, tx.Put(bucketIdem, k, raw)
}

// idemRun is the storage.Journal of one idempotent request: the steps of
// its record are replayed, and new ones appended to it in the transaction
// of their effect.
type idemRun struct {
	h        *handler
	k        []byte
	hash     string
	now      time.Time
	rec      *idemRecord // as the current step's transaction read it
	stale    int64       // and the expiry of an expired record it found
	replayed bool
	// wrote and raw are the record as the last committed step wrote it and
	// its bytes: completing finds them unchanged and need not decode them.
	wrote *idemRecord
	raw   []byte
}

func (r *idemRun) Replay(tx storage.Tx, step int, name string) ([]byte, bool, error) {
	rec, stale, err := r.h.getIdem(tx, r.k, r.hash, r.now)
	if err != nil {
		return nil, false, err
	}
	r.rec, r.stale = rec, stale
	switch {
	case rec != nil && rec.Done: // completed by a request elsewhere meanwhile
		return nil, false, errIdemBusy
	case rec == nil || step >= len(rec.Steps):
		return nil, false, nil
	case rec.Steps[step].Name != name:
		return nil, false, errIdemDiverged
	}
	res, err := r.h.openStep(rec.Steps[step].Result, r.k, step)
	if err != nil {
		return nil, false, err
	}
	r.replayed = true
	return res, true, nil
}

func (r *idemRun) Record(tx storage.Tx, step int, name string, result []byte) error {
	if r.rec != nil && (r.rec.Done || step != len(r.rec.Steps)) {
		return errIdemBusy
	}
	if r.rec == nil && step != 0 {
		// The steps before expired or were purged under this request:
		// nothing to bind this one to.
		return errIdemBusy
	}
	rec, raw, err := r.h.putIdem(tx, r.k, r.hash, r.now, r.rec, r.stale, func(rec *idemRecord) {
		rec.Steps = append(rec.Steps, idemStep{Name: name, Result: r.h.sealStep(result, r.k, step)})
	})
	r.wrote, r.raw = rec, raw // a re-run of the step overwrites them
	return err
}

// stepAD binds a sealed step to its record's key and its number.
func stepAD(k []byte, step int) []byte {
	return fmt.Appendf(idemAD(k), "\x00step %d", step)
}

// sealStep seals a step's result under the sealer; without one it keeps
// it stripped of secrets, as a stored response is.
func (h *handler) sealStep(result, k []byte, step int) []byte {
	if h.sealer == nil {
		return redactSecrets(redactCards(result))
	}
	return h.sealer.Seal(redactCards(result), stepAD(k, step))
}

func (h *handler) openStep(sealed, k []byte, step int) ([]byte, error) {
	if h.sealer == nil {
		return sealed, nil
	}
	res, err := h.sealer.Open(sealed, stepAD(k, step))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errIdemUnsealable, err)
	}
	return res, nil
}

// complete stores the response of a request that ran. A response that
// must not be replayed (keep false) stores nothing; the steps its writes
// recorded stay, so that a retry replays them.
func (h *handler) complete(ctx context.Context, run *idemRun, status int, body []byte, keep bool) error {
	if !keep {
		return nil
	}
	body = h.replayable(body)
	return h.db.Update(ctx, func(tx storage.Tx) error { return h.completeTx(tx, run, status, body) })
}

// replayable is what a response body keeps for replay: card data never,
// secrets only under a sealer.
func (h *handler) replayable(body []byte) []byte {
	body = redactCards(body)
	if h.sealer == nil {
		body = redactSecrets(body)
	}
	return body
}

// completeTx is complete in tx, body already replayable.
func (h *handler) completeTx(tx storage.Tx, run *idemRun, status int, body []byte) error {
	k, hash, now := run.k, run.hash, run.now
	var rec *idemRecord
	var stale int64
	if run.raw != nil {
		// The record as this request's last write left it, the common
		// case, is not decoded again.
		raw, err := tx.Get(bucketIdem, k)
		if err != nil && !errors.Is(err, storage.ErrNotFound) {
			return err
		}
		if bytes.Equal(raw, run.raw) {
			c := *run.wrote
			rec = &c
		}
	}
	if rec == nil {
		var err error
		if rec, stale, err = h.getIdem(tx, k, hash, now); err != nil || (rec != nil && rec.Done) {
			return err
		}
	}
	_, _, err := h.putIdem(tx, k, hash, now, rec, stale, func(rec *idemRecord) {
		rec.Done, rec.Status, rec.Body, rec.Steps = true, status, body, nil
	})
	return err
}

// completer stores completions after their answers (Options.DeferCompletion):
// one goroutine at a time writes all that are waiting, up to
// maxDeferredBatch, in one transaction. A completion lost to a crash
// costs nothing but a re-run of the handler over the journaled steps on
// retry, which answers the same bytes.
//
// It waits up to completionLinger after the oldest completion waiting was
// queued, unless maxDeferredBatch are waiting, so that a node whose
// requests come one at a time still stores many per transaction. Without
// it, a node of four on one database under 16 clients (bank
// TestPostgresLoad) stored its completions one or two per transaction: a
// transaction for every other transfer, where one node with the same load
// found its batches already full while its Update waited for a connection.
type completer struct {
	h       *handler
	mu      sync.Mutex
	pending []deferred
	oldest  time.Time // when pending's first was queued
	running bool
	hurry   bool          // flush is waiting: no lingering
	ready   chan struct{} // a full batch, or hurry: stop lingering
}

type deferred struct {
	run    *idemRun
	status int
	body   []byte
}

const maxDeferredBatch = 256

// completionLinger bounds how long a completion waits for others to be
// stored with. A retry in that time runs over the journaled steps, as
// after a crash, and answers the same bytes.
const completionLinger = 50 * time.Millisecond

func newCompleter(h *handler) *completer {
	return &completer{h: h, ready: make(chan struct{}, 1)}
}

// add queues the completion of run; body is copied.
func (c *completer) add(run *idemRun, status int, body []byte) {
	d := deferred{run: run, status: status, body: c.h.replayable(bytes.Clone(body))}
	c.mu.Lock()
	if len(c.pending) == 0 {
		c.oldest = time.Now()
	}
	c.pending = append(c.pending, d)
	if len(c.pending) == maxDeferredBatch {
		c.signal()
	}
	start := !c.running
	c.running = true
	c.mu.Unlock()
	if start {
		go c.loop()
	}
}

// signal wakes a lingering loop; it never blocks.
func (c *completer) signal() {
	select {
	case c.ready <- struct{}{}:
	default:
	}
}

func (c *completer) loop() {
	var linger *time.Timer
	for {
		c.mu.Lock()
		n := min(len(c.pending), maxDeferredBatch)
		if n == 0 {
			c.pending, c.running = nil, false
			c.mu.Unlock()
			return
		}
		if wait := completionLinger - time.Since(c.oldest); wait > 0 && n < maxDeferredBatch && !c.hurry {
			c.mu.Unlock()
			if linger == nil {
				linger = time.NewTimer(wait)
				defer linger.Stop()
			} else {
				linger.Reset(wait)
			}
			select {
			case <-linger.C:
			case <-c.ready:
			}
			continue
		}
		batch := c.pending[:n:n]
		c.pending = c.pending[n:]
		c.mu.Unlock()
		err := c.h.db.Update(context.Background(), func(tx storage.Tx) error {
			for _, d := range batch {
				// A record another request replaced meanwhile (its key
				// expired and reused) refuses this completion alone.
				if err := c.h.completeTx(tx, d.run, d.status, d.body); err != nil && corebank.KindOf(err) == corebank.KindInternal {
					return err
				}
			}
			return nil
		})
		if err != nil && !errors.Is(err, storage.ErrClosed) {
			c.h.log.Error("storing idempotent responses", slog.Int("responses", n), slog.String("error", err.Error()))
		}
	}
}

// flush waits until every completion queued so far is stored, without
// lingering meanwhile (tests).
func (c *completer) flush() {
	c.mu.Lock()
	c.hurry = true
	c.mu.Unlock()
	c.signal()
	defer func() {
		c.mu.Lock()
		c.hurry = false
		c.mu.Unlock()
	}()
	for {
		c.mu.Lock()
		idle := !c.running
		c.mu.Unlock()
		if idle {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// storable says whether a response is kept for replay. Validation failures,
// conflicts with other requests in flight, quota refusals and server errors
// release the key, so that a corrected or later retry runs afresh.
func storable(status int) bool {
	switch {
	case status >= 500:
		return false
	case status == http.StatusUnprocessableEntity, status == http.StatusTooManyRequests,
		status == http.StatusUnauthorized, status == http.StatusForbidden,
		status == http.StatusRequestEntityTooLarge:
		return false
	}
	return true
}

// DueJobs returns the due work of the HTTP layer, for a storage.Due
// runner over the store given to New: the job of kind
// "httpapi.idempotency" deletes an idempotency record when it expires.
// Records are also replaced when their key is reused after expiry; this job
// bounds the store's size.
func DueJobs() []storage.DueJob {
	return []storage.DueJob{{Kind: idemDueKind, Tx: expireIdem}}
}

// expireIdem deletes the record item names, unless it has been replaced
// since (the new record's expiry is queued on its own).
func expireIdem(tx storage.Tx, _ time.Time, item storage.DueItem) error {
	k := []byte(item.ID)
	raw, err := tx.Get(bucketIdem, k)
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	var rec idemRecord
	if json.Unmarshal(raw, &rec) == nil && rec.Expires != item.At {
		return nil
	}
	return tx.Delete(bucketIdem, k)
}

// Migrations returns httpapi's one-time changes to stores written by
// earlier releases, for storage.Migrate: "httpapi.due-queue" moves the
// idempotency records' expiry index ("httpapi.idempotency.expiry",
// <expires ms><record key>) onto storage's due queue.
func Migrations() []storage.Migration {
	return []storage.Migration{{Name: "httpapi.due-queue", Run: func(tx storage.Tx) error {
		return storage.MoveToDue(tx, "httpapi.idempotency.expiry", nil, idemDueKind)
	}}}
}

// PurgeIdempotency deletes the idempotency records in db that expired at
// or before now and returns how many it removed: DueJobs run on their own,
// for callers that do not run them with the other services' due work.
func PurgeIdempotency(ctx context.Context, db storage.Backend, now time.Time) (int, error) {
	return storage.NewDue(db, nil, 0, DueJobs()...).RunDue(ctx, now)
}

// redactCards removes card numbers and CVVs from a response before it is
// stored: an object with a cvv/cvc field, or a number beside card fields,
// loses its number and cvv.
func redactCards(body []byte) []byte {
	if !bytes.Contains(body, []byte(`"cvv"`)) && !bytes.Contains(body, []byte(`"cvc"`)) &&
		!bytes.Contains(body, []byte(`"number"`)) {
		return body
	}
	return rewriteObjects(body, redactCard)
}

var cardMarkers = []string{"cvv", "cvc", "expiry_month", "exp_month", "expiry", "last4", "last_four", "masked_number", "card_type"}

// redactCard drops the number and CVV of x when x looks like a card.
func redactCard(x map[string]any) bool {
	card := false
	for _, m := range cardMarkers {
		if _, ok := x[m]; ok {
			card = true
			break
		}
	}
	if !card {
		return false
	}
	changed := false
	for _, f := range []string{"number", "cvv", "cvc", "card_number"} {
		if _, ok := x[f]; ok {
			delete(x, f)
			changed = true
		}
	}
	return changed
}

// redactSecrets removes secrets from a response before it is stored in
// clear (without Options.Sealer): an object with a secret beside
// enabled_events (a webhook, as create and rotate_secret answer) loses the
// secret, and any object loses its api_key (POST /sandbox/api-keys), so
// that the store never holds them and a replay never shows them again.
func redactSecrets(body []byte) []byte {
	if !bytes.Contains(body, []byte(`"secret"`)) && !bytes.Contains(body, []byte(`"api_key"`)) {
		return body
	}
	return rewriteObjects(body, redactSecret)
}

// redactSecret drops the secret of x when x is a webhook, and its api_key.
func redactSecret(x map[string]any) bool {
	changed := false
	if _, hook := x["enabled_events"]; hook {
		if _, ok := x["secret"]; ok {
			delete(x, "secret")
			changed = true
		}
	}
	if _, ok := x["api_key"]; ok {
		delete(x, "api_key")
		changed = true
	}
	return changed
}

// rewriteObjects decodes body (numbers kept exact), calls fix on every
// object in it, outermost first, and answers body itself when fix changed
// nothing, else the re-encoded value. It answers nil, so that nothing is
// stored, when body is not JSON or cannot be encoded again.
func rewriteObjects(body []byte, fix func(map[string]any) bool) []byte {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil
	}
	if !walkObjects(v, fix) {
		return body
	}
	out, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return out
}

// walkObjects calls fix on every object in v, outermost first (an object's
// own fields before the values left in it), and reports whether any call
// changed something.
func walkObjects(v any, fix func(map[string]any) bool) bool {
	changed := false
	switch x := v.(type) {
	case map[string]any:
		changed = fix(x)
		for _, e := range x {
			if walkObjects(e, fix) {
				changed = true
			}
		}
	case []any:
		for _, e := range x {
			if walkObjects(e, fix) {
				changed = true
			}
		}
	}
	return changed
}
