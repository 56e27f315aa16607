package httpapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/storage"
)

// Buckets holding idempotency records and their expiry index.
const (
	bucketIdem    storage.Bucket = "httpapi.idempotency"
	bucketIdemExp storage.Bucket = "httpapi.idempotency.expiry"
)

// idemStale is how long a reserved key may stay in flight before another
// request may take it over (a process that died mid-request leaves one).
const idemStale = 5 * time.Minute

const maxIdemKey = 255

type idemRecord struct {
	Hash    string `json:"hash"`
	Done    bool   `json:"done"`
	Status  int    `json:"status,omitempty"`
	Body    []byte `json:"body,omitempty"`
	Created int64  `json:"created"`
	Expires int64  `json:"expires"`
}

func idemKey(entityID, key string) []byte {
	k := make([]byte, 0, len(entityID)+1+len(key))
	k = append(k, entityID...)
	k = append(k, 0)
	return append(k, key...)
}

func idemExpKey(expires int64, k []byte) []byte {
	e := storage.AppendInt64(make([]byte, 0, 8+len(k)), expires)
	return append(e, k...)
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
	var replay *idemRecord
	err := h.db.Update(ctx, func(tx storage.Tx) error {
		replay = nil
		var rec idemRecord
		err := storage.GetJSON(tx, bucketIdem, k, &rec)
		switch {
		case errors.Is(err, storage.ErrNotFound):
		case err != nil:
			return err
		case rec.Expires > now.UnixMilli():
			if rec.Hash != hash {
				return errIdemMismatch
			}
			if rec.Done {
				replay = &rec
				return nil
			}
			if now.UnixMilli()-rec.Created < idemStale.Milliseconds() {
				return errIdemBusy
			}
			fallthrough
		default: // expired or stale: drop it and reserve afresh
			if err := tx.Delete(bucketIdemExp, idemExpKey(rec.Expires, k)); err != nil {
				return err
			}
		}
		rec = idemRecord{Hash: hash, Created: now.UnixMilli(), Expires: now.Add(h.idemTTL).UnixMilli()}
		if err := storage.PutJSON(tx, bucketIdem, k, &rec); err != nil {
			return err
		}
		return tx.Put(bucketIdemExp, idemExpKey(rec.Expires, k), nil)
	})
	return replay, err
}

// complete stores the response of a reserved key, or releases the key when
// the response must not be replayed.
func (h *handler) complete(ctx context.Context, k []byte, hash string, status int, body []byte, keep bool) error {
	if keep {
		body = redactCards(body)
		body = redactSecrets(body)
	}
	return h.db.Update(ctx, func(tx storage.Tx) error {
		var rec idemRecord
		if err := storage.GetJSON(tx, bucketIdem, k, &rec); err != nil {
			if errors.Is(err, storage.ErrNotFound) {
				return nil
			}
			return err
		}
		if rec.Hash != hash || rec.Done {
			return nil // taken over after going stale; not ours any more
		}
		if !keep {
			if err := tx.Delete(bucketIdemExp, idemExpKey(rec.Expires, k)); err != nil {
				return err
			}
			return tx.Delete(bucketIdem, k)
		}
		rec.Done, rec.Status, rec.Body = true, status, body
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

// PurgeIdempotency deletes idempotency records that expired at or before
// now from db, returning how many it removed. Records are also replaced
// lazily when their key is reused; this job bounds the store's size. The
// server's job runner calls it alongside the domain jobs.
func PurgeIdempotency(ctx context.Context, db storage.Backend, now time.Time) (int, error) {
	total := 0
	for {
		n := 0
		err := db.Update(ctx, func(tx storage.Tx) error {
			n = 0
			var dead [][]byte
			err := tx.Scan(bucketIdemExp, storage.ScanOptions{Limit: 500}, func(key, _ []byte) error {
				exp, err := storage.Uint64(key)
				if err != nil || int64(exp) > now.UnixMilli() {
					return storage.ErrStop
				}
				dead = append(dead, bytes.Clone(key))
				return nil
			})
			if err != nil {
				return err
			}
			for _, ek := range dead {
				if err := tx.Delete(bucketIdemExp, ek); err != nil {
					return err
				}
				if err := tx.Delete(bucketIdem, ek[8:]); err != nil {
					return err
				}
			}
			n = len(dead)
			return nil
		})
		total += n
		if err != nil || n < 500 {
			return total, err
		}
	}
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

// redactSecrets removes webhook secrets from a response before it is
// stored: an object with a secret beside enabled_events (a webhook, as
// create and rotate_secret answer) loses the secret, so that a replay never
// shows it again.
func redactSecrets(body []byte) []byte {
	if !bytes.Contains(body, []byte(`"secret"`)) {
		return body
	}
	return rewriteObjects(body, redactSecret)
}

// redactSecret drops the secret of x when x is a webhook.
func redactSecret(x map[string]any) bool {
	if _, hook := x["enabled_events"]; hook {
		if _, ok := x["secret"]; ok {
			delete(x, "secret")
			return true
		}
	}
	return false
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
