package httpapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/storage"
)

// bucketIdem holds idempotency records, keyed by idemKey.
const bucketIdem storage.Bucket = "httpapi.idempotency"

// idemDueKind is the due-work kind that deletes a record when it expires;
// the item's ID is the record's key.
const idemDueKind = "httpapi.idempotency"

// idemStale is how long a reserved key may stay in flight before another
// request may take it over (a process that died mid-request leaves one).
const idemStale = 5 * time.Minute

const maxIdemKey = 255

// idemRecord is a reserved or completed key. Under Options.Sealer the
// request hash and the response body are sealed together in Sealed (see
// setOutcome and outcome) and Hash and Body stay empty; without one they
// are kept as they are, the response stripped of its secrets first.
type idemRecord struct {
	Hash    string `json:"hash,omitempty"`
	Sealed  []byte `json:"sealed,omitempty"`
	Done    bool   `json:"done"`
	Status  int    `json:"status,omitempty"`
	Body    []byte `json:"body,omitempty"`
	Created int64  `json:"created"`
	Expires int64  `json:"expires"`
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

// reserve claims (entity, key) for this request. It returns a stored
// record to replay, or nil once the key is reserved for the caller.
func (h *handler) reserve(ctx context.Context, k []byte, hash string, now time.Time) (*idemRecord, error) {
	return storage.Update(ctx, h.db, func(tx storage.Tx) (*idemRecord, error) {
		var rec idemRecord
		err := storage.GetJSON(tx, bucketIdem, k, &rec)
		switch {
		case errors.Is(err, storage.ErrNotFound):
		case err != nil:
			return nil, err
		case rec.Expires > now.UnixMilli():
			got, body, err := h.outcome(&rec, k)
			if err != nil {
				return nil, err
			}
			if got != hash {
				return nil, errIdemMismatch
			}
			if rec.Done {
				rec.Body = body
				return &rec, nil
			}
			if now.UnixMilli()-rec.Created < idemStale.Milliseconds() {
				return nil, errIdemBusy
			}
			fallthrough
		default: // expired or stale: drop it and reserve afresh
			if err := storage.Unschedule(tx, idemDueKind, rec.Expires, string(k)); err != nil {
				return nil, err
			}
		}
		rec = idemRecord{Created: now.UnixMilli(), Expires: now.Add(h.idemTTL).UnixMilli()}
		h.setOutcome(&rec, k, hash, nil)
		if err := storage.PutJSON(tx, bucketIdem, k, &rec); err != nil {
			return nil, err
		}
		return nil, storage.Schedule(tx, idemDueKind, rec.Expires, string(k))
	})
}

// complete stores the response of a reserved key, or releases the key when
// the response must not be replayed.
func (h *handler) complete(ctx context.Context, k []byte, hash string, status int, body []byte, keep bool) error {
	if keep {
		body = redactCards(body)
		if h.sealer == nil {
			body = redactSecrets(body)
		}
	}
	return h.db.Update(ctx, func(tx storage.Tx) error {
		var rec idemRecord
		if err := storage.GetJSON(tx, bucketIdem, k, &rec); err != nil {
			if errors.Is(err, storage.ErrNotFound) {
				return nil
			}
			return err
		}
		got, _, err := h.outcome(&rec, k)
		if err != nil {
			return err
		}
		if got != hash || rec.Done {
			return nil // taken over after going stale; not ours any more
		}
		if !keep {
			if err := storage.Unschedule(tx, idemDueKind, rec.Expires, string(k)); err != nil {
				return err
			}
			return tx.Delete(bucketIdem, k)
		}
		rec.Done, rec.Status = true, status
		h.setOutcome(&rec, k, hash, body)
		return storage.PutJSON(tx, bucketIdem, k, &rec)
	})
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
