package acquiring

import (
	"errors"
	"fmt"

	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/storage"
)

// VerifyStore checks, in tx, what the acquiring package keeps, and reports
// each broken rule to v: payment intents, intent actions, refunds and
// disputes agree with their lists and lookup keys (an intent's reference
// on its account, a challenge's token, a charge's one dispute) both ways;
// an action names an intent that exists; a pending refund holds its
// amount on the merchant account with a pending ledger hold (claimed in
// ledger.HoldSet) and is queued for the acquirer's answer, a successful
// one has it posted and a failed one voided; and every item of the
// acquiring due work names an object that still waits for it. It writes
// nothing.
func VerifyStore(tx storage.Tx, v *storage.Verifier) error {
	err := storage.VerifyIndexed(tx, v, storage.Indexed[*intentRecord]{
		Kind:    "payment intent",
		Records: storage.ScanJSON[intentRecord](intentBucket, nil, v, "payment intent"),
		Load:    storage.Found(getIntent, ErrIntentNotFound),
		Keys: func(_ storage.Tx, r *intentRecord) ([]storage.KV, error) {
			return []storage.KV{
				{Bucket: index, Key: intentListKey(r.EntityID, r.ID)},
				{Bucket: index, Key: refKey(r.AccountID, r.Reference), Value: []byte(r.ID)},
			}, nil
		},
		Ranges: []storage.IndexRange{
			{Bucket: index, Prefix: []byte("i/"), ID: storage.LastPart},
			{Bucket: index, Prefix: []byte("r/"), ID: storage.ValueID},
		},
	})
	if err != nil {
		return err
	}
	actions := storage.ScanJSON[actionRecord](actionBucket, nil, v, "intent action")
	err = storage.VerifyIndexed(tx, v, storage.Indexed[*actionRecord]{
		Kind: "intent action",
		Records: func(tx storage.Tx, fn func(string, *actionRecord) error) error {
			return actions(tx, func(id string, a *actionRecord) error {
				if ok, err := storage.Exists(tx, intentBucket, []byte(a.PaymentIntentID)); err != nil {
					return err
				} else if !ok {
					v.Report(storage.FindIndexDangling, []string{id, a.PaymentIntentID}, "intent action names a payment intent that does not exist")
				}
				if err := verifyChallenge(tx, v, a); err != nil {
					return err
				}
				return fn(id, a)
			})
		},
		Load: storage.Found(getAction, ErrActionNotFound),
		Keys: func(_ storage.Tx, a *actionRecord) ([]storage.KV, error) {
			kvs := []storage.KV{{Bucket: index, Key: actionListKey(a.EntityID, a.ID)}}
			if a.Token != "" {
				kvs = append(kvs, storage.KV{Bucket: index, Key: tokenKey(a.Token), Value: []byte(a.ID)})
			}
			return kvs, nil
		},
		Ranges: []storage.IndexRange{
			{Bucket: index, Prefix: []byte("a/"), ID: storage.LastPart},
			{Bucket: index, Prefix: []byte("t/"), ID: storage.ValueID},
		},
	})
	if err != nil {
		return err
	}
	refunds := storage.ScanJSON[refundRecord](refundBucket, nil, v, "refund")
	err = storage.VerifyIndexed(tx, v, storage.Indexed[*refundRecord]{
		Kind: "refund",
		Records: func(tx storage.Tx, fn func(string, *refundRecord) error) error {
			return refunds(tx, func(id string, r *refundRecord) error {
				if err := verifyRefund(tx, v, r); err != nil {
					return err
				}
				return fn(id, r)
			})
		},
		Load: storage.Found(getRefund, ErrRefundNotFound),
		Keys: func(_ storage.Tx, r *refundRecord) ([]storage.KV, error) {
			return []storage.KV{{Bucket: index, Key: refundListKey(r.EntityID, r.ID)}}, nil
		},
		Ranges: []storage.IndexRange{{Bucket: index, Prefix: []byte("f/"), ID: storage.LastPart}},
	})
	if err != nil {
		return err
	}
	disputes := storage.ScanJSON[disputeRecord](disputeBucket, nil, v, "dispute")
	err = storage.VerifyIndexed(tx, v, storage.Indexed[*disputeRecord]{
		Kind: "dispute",
		Records: func(tx storage.Tx, fn func(string, *disputeRecord) error) error {
			return disputes(tx, func(id string, d *disputeRecord) error {
				if d.Status == DisputeNeedsResponse {
					if ok, err := storage.IsDue(tx, dueEvidence, d.EvidenceDueBy, d.ID); err != nil {
						return err
					} else if !ok {
						v.Report(storage.FindDueMissing, []string{id}, "dispute awaiting a response is not queued for review at %d", d.EvidenceDueBy)
					}
				}
				return fn(id, d)
			})
		},
		Load: storage.Found(getDispute, ErrDisputeNotFound),
		Keys: func(_ storage.Tx, d *disputeRecord) ([]storage.KV, error) {
			return []storage.KV{
				{Bucket: index, Key: disputeListKey(d.EntityID, d.ID)},
				{Bucket: index, Key: disputeOfKey(d.PaymentIntentActionID), Value: []byte(d.ID)},
			}, nil
		},
		Ranges: []storage.IndexRange{
			{Bucket: index, Prefix: []byte("d/"), ID: storage.LastPart},
			{Bucket: index, Prefix: []byte("x/"), ID: storage.ValueID},
		},
	})
	if err != nil {
		return err
	}
	return verifyAcquiringDue(tx, v)
}

// verifyChallenge checks that an action waiting behind a 3DS challenge is
// queued to expire.
func verifyChallenge(tx storage.Tx, v *storage.Verifier, a *actionRecord) error {
	if a.ExpireAt == 0 || Final(a.Status) {
		return nil
	}
	if ok, err := storage.IsDue(tx, dueChallenge, a.ExpireAt, a.ID); err != nil {
		return err
	} else if !ok {
		v.Report(storage.FindDueMissing, []string{a.ID}, "challenge expiring at %d is not queued", a.ExpireAt)
	}
	return nil
}

// verifyRefund checks a refund's hold and its place in the due queue.
func verifyRefund(tx storage.Tx, v *storage.Verifier, r *refundRecord) error {
	c := ledger.HoldClaim{Kind: r.Status + " refund", Owner: r.ID, Hold: r.HoldID, Debit: r.AccountID, Amount: r.Amount}
	switch r.Status {
	case RefundPending:
		c.Status = ledger.HoldPending
		if ok, err := storage.IsDue(tx, dueRefund, r.DueAt, r.ID); err != nil {
			return err
		} else if !ok {
			v.Report(storage.FindDueMissing, []string{r.ID}, "pending refund's answer at %d is not queued", r.DueAt)
		}
	case RefundSuccessful:
		c.Status = ledger.HoldPosted
	default:
		c.Status = ledger.HoldVoided
	}
	return ledger.VerifyHold(tx, v, c)
}

func verifyAcquiringDue(tx storage.Tx, v *storage.Verifier) error {
	err := storage.VerifyDue(tx, v, dueChallenge, func(id string, at int64) (string, error) {
		a, err := getAction(tx, id)
		switch {
		case errors.Is(err, ErrActionNotFound):
			return "no such intent action", nil
		case err != nil:
			return "", nil // reported by the scan
		case Final(a.Status):
			return "the intent action is " + a.Status, nil
		case a.ExpireAt != at:
			return fmt.Sprintf("the challenge expires at %d", a.ExpireAt), nil
		}
		return "", nil
	})
	if err != nil {
		return err
	}
	err = storage.VerifyDue(tx, v, dueRefund, func(id string, at int64) (string, error) {
		r, err := getRefund(tx, id)
		switch {
		case errors.Is(err, ErrRefundNotFound):
			return "no such refund", nil
		case err != nil:
			return "", nil
		case r.Status != RefundPending:
			return "the refund is " + r.Status, nil
		case r.DueAt != at:
			return fmt.Sprintf("the refund's answer is due at %d", r.DueAt), nil
		}
		return "", nil
	})
	if err != nil {
		return err
	}
	err = storage.VerifyDue(tx, v, dueDispute, func(id string, _ int64) (string, error) {
		a, err := getAction(tx, id)
		switch {
		case errors.Is(err, ErrActionNotFound):
			return "no such intent action", nil
		case err != nil:
			return "", nil
		case a.Status != ActionCompleted:
			return "the intent action is " + a.Status, nil
		}
		return "", nil
	})
	if err != nil {
		return err
	}
	return storage.VerifyDue(tx, v, dueEvidence, func(id string, at int64) (string, error) {
		d, err := getDispute(tx, id)
		switch {
		case errors.Is(err, ErrDisputeNotFound):
			return "no such dispute", nil
		case err != nil:
			return "", nil
		case d.Status != DisputeNeedsResponse:
			return "the dispute is " + d.Status, nil
		case d.EvidenceDueBy != at:
			return fmt.Sprintf("the dispute's evidence is due by %d", d.EvidenceDueBy), nil
		}
		return "", nil
	})
}
