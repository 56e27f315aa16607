package funding

import (
	"errors"
	"fmt"

	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/storage"
)

// VerifyStore checks, in tx, what the funding package keeps, and reports each
// broken rule to v: an inflow still pending holds its amount for its
// account with a pending ledger hold and is queued to settle at its
// settles_at, and one settled from a hold has it posted; a funding
// session is in its entity's list and under its unique_reference (and its
// checkout token), every key of the sessions' index names a session that
// has it, a session's pending credit is a pending hold of its account
// while the session is open (posted once settled, voided once failed,
// expired or cancelled), and its one due entry is the one it needs; and
// every "funding.inflow" and "funding.session" item names a live inflow
// or session due then. Holds checked are claimed in ledger.HoldSet. It
// writes nothing.
func VerifyStore(tx storage.Tx, v *storage.Verifier) error {
	err := tx.Scan(bucket, storage.ScanOptions{}, func(k, raw []byte) error {
		id := string(k)
		r, err := decodeRecord(id, raw)
		if err != nil {
			v.Report(storage.FindCorrupt, []string{id}, "inflow does not decode: %v", err)
			return nil
		}
		return verifyInflow(tx, v, r)
	})
	if err != nil {
		return err
	}
	sessions := storage.ScanJSON[sessionRecord](sessionBucket, nil, v, "funding session")
	err = storage.VerifyIndexed(tx, v, storage.Indexed[*sessionRecord]{
		Kind: "funding session",
		Records: func(tx storage.Tx, fn func(string, *sessionRecord) error) error {
			return sessions(tx, func(id string, r *sessionRecord) error {
				if err := verifySession(tx, v, r); err != nil {
					return err
				}
				return fn(id, r)
			})
		},
		Load: storage.Found(getSession, ErrSessionNotFound),
		Keys: func(_ storage.Tx, r *sessionRecord) ([]storage.KV, error) {
			id := []byte(r.ID)
			kvs := []storage.KV{
				{Bucket: sessionIndex, Key: listKey(r.EntityID, r.ID)},
				{Bucket: sessionIndex, Key: refKey(r.EntityID, r.UniqueReference), Value: id},
			}
			if r.Token != "" {
				kvs = append(kvs, storage.KV{Bucket: sessionIndex, Key: tokenKey(r.Token), Value: id})
			}
			return kvs, nil
		},
		Ranges: []storage.IndexRange{
			{Bucket: sessionIndex, Prefix: []byte("e/"), ID: storage.LastPart},
			{Bucket: sessionIndex, Prefix: []byte("r/"), ID: storage.ValueID},
			{Bucket: sessionIndex, Prefix: []byte("t/"), ID: storage.ValueID},
		},
	})
	if err != nil {
		return err
	}
	return verifyFundingDue(tx, v)
}

func verifyInflow(tx storage.Tx, v *storage.Verifier, r *record) error {
	if r.HoldID == "" {
		if r.Status == StatusPending {
			v.Report(ledger.FindHoldMismatch, []string{r.ID}, "pending inflow of %d has no hold", r.Amount)
		}
		return nil
	}
	c := ledger.HoldClaim{Kind: r.Status + " inflow", Owner: r.ID, Hold: r.HoldID, Status: ledger.HoldPosted, Credit: r.AccountID, Amount: r.Amount}
	if r.Status == StatusPending {
		c.Status = ledger.HoldPending
		switch ok, err := isDue(tx, dueInflow, r.SettlesAt, r.ID); {
		case err != nil:
			return err
		case !ok:
			v.Report(storage.FindDueMissing, []string{r.ID}, "pending inflow is not queued to settle")
		}
	}
	return ledger.VerifyHold(tx, v, c)
}

// isDue reports whether item id of kind is queued at *at (false for nil).
func isDue(tx storage.Tx, kind string, at *int64, id string) (bool, error) {
	if at == nil {
		return false, nil
	}
	return storage.IsDue(tx, kind, *at, id)
}

func verifySession(tx storage.Tx, v *storage.Verifier, r *sessionRecord) error {
	if r.HoldID != "" {
		c := ledger.HoldClaim{Kind: r.Status + " funding session", Owner: r.ID, Hold: r.HoldID, Credit: r.AccountID}
		switch r.Status {
		case SessionSettled:
			c.Status = ledger.HoldPosted
		case SessionFailed, SessionExpired, SessionCancelled:
			c.Status = ledger.HoldVoided
		default:
			c.Status = ledger.HoldPending
		}
		if err := ledger.VerifyHold(tx, v, c); err != nil {
			return err
		}
	}
	want := nextDue(r)
	switch {
	case r.DueAt != want:
		v.Report(storage.FindDueMissing, []string{r.ID}, "%s funding session's next move is at %d, it records %d", r.Status, want, r.DueAt)
	case want != 0:
		if ok, err := storage.IsDue(tx, dueSession, want, r.ID); err != nil {
			return err
		} else if !ok {
			v.Report(storage.FindDueMissing, []string{r.ID}, "%s funding session's next move at %d is not queued", r.Status, want)
		}
	}
	return nil
}

func verifyFundingDue(tx storage.Tx, v *storage.Verifier) error {
	err := storage.VerifyDue(tx, v, dueInflow, func(id string, at int64) (string, error) {
		r, err := get(tx, id)
		switch {
		case errors.Is(err, ErrInflowNotFound):
			return "no such inflow", nil
		case err != nil:
			return "", nil // reported by the scan
		case r.Status != StatusPending:
			return "the inflow is " + r.Status, nil
		case r.SettlesAt == nil || *r.SettlesAt != at:
			return "the inflow settles at another time", nil
		}
		return "", nil
	})
	if err != nil {
		return err
	}
	return storage.VerifyDue(tx, v, dueSession, func(id string, at int64) (string, error) {
		r, err := getSession(tx, id)
		switch {
		case errors.Is(err, ErrSessionNotFound):
			return "no such funding session", nil
		case err != nil:
			return "", nil
		case Terminal(r.Status):
			return "the funding session is " + r.Status, nil
		case r.DueAt != at:
			return fmt.Sprintf("the funding session's next move is at %d", r.DueAt), nil
		}
		return "", nil
	})
}
