package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/corebank/corebank/storage"
)

// VerifyStore checks, in tx, the idempotency records the HTTP layer keeps
// and reports each broken rule to v: every record is queued to expire at
// its expiry, and every "httpapi.idempotency" item names a record
// expiring then. It writes nothing.
func VerifyStore(tx storage.Tx, v *storage.Verifier) error {
	err := tx.Scan(bucketIdem, storage.ScanOptions{}, func(k, raw []byte) error {
		var rec idemRecord
		if err := json.Unmarshal(raw, &rec); err != nil {
			v.Report(storage.FindCorrupt, []string{string(k)}, "idempotency record does not decode: %v", err)
			return nil
		}
		if ok, err := storage.IsDue(tx, idemDueKind, rec.Expires, string(k)); err != nil {
			return err
		} else if !ok {
			v.Report(storage.FindDueMissing, []string{string(k)}, "idempotency record expiring at %d is not queued", rec.Expires)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return storage.VerifyDue(tx, v, idemDueKind, func(id string, at int64) (string, error) {
		raw, err := tx.Get(bucketIdem, []byte(id))
		switch {
		case errors.Is(err, storage.ErrNotFound):
			return "no such idempotency record", nil
		case err != nil:
			return "", err
		}
		var rec idemRecord
		if json.Unmarshal(raw, &rec) == nil && rec.Expires != at {
			return fmt.Sprintf("the idempotency record expires at %d", rec.Expires), nil
		}
		return "", nil
	})
}
