package payments

import (
	"errors"
	"fmt"

	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/storage"
)

// VerifyStore checks, in tx, what the payments package keeps, and reports each
// broken rule to v: counterparties, payment details and transfers agree
// with their list indexes, uniqueness keys (an active counterparty's name
// and identifications, a transfer's unique_reference) and payee records,
// both ways; a payment detail's counterparty exists; a pending or
// processing transfer holds its money with pending ledger holds (claimed
// in ledger.HoldSet) and is queued for its next check, and a finished one
// holds nothing and is queued for nothing; every "payments.transfer" item
// names a transfer in flight checked then, and every "payments.quote"
// item an active quote expiring then. It writes nothing.
func VerifyStore(tx storage.Tx, v *storage.Verifier) error {
	err := storage.VerifyIndexed(tx, v, storage.Indexed[*Counterparty]{
		Kind:    "counterparty",
		Records: storage.ScanJSON[Counterparty](bucketCounterparties, nil, v, "counterparty"),
		Load:    storage.Found(getCounterparty, ErrCounterpartyNotFound),
		Keys: func(tx storage.Tx, c *Counterparty) ([]storage.KV, error) {
			return storage.Writes(tx, func(tx storage.Tx) error {
				if c.Status == CounterpartyActive {
					keys, _ := c.uniqueKeys()
					for _, k := range keys {
						if err := tx.Put(bucketUnique, k, []byte(c.ID)); err != nil {
							return err
						}
					}
				}
				if err := writeCounterpartyIndexes(tx, c, true); err != nil {
					return err
				}
				return putCounterparty(tx, c)
			})
		},
		Ranges: []storage.IndexRange{
			{Bucket: bucketIndex, Prefix: []byte("cp/"), ID: storage.LastPart},
			{Bucket: bucketUnique, Prefix: []byte("cp-"), ID: storage.ValueID},
			{Bucket: bucketHot, Prefix: []byte("c/"), ID: storage.LastPart, Optional: true},
		},
	})
	if err != nil {
		return err
	}
	details := storage.ScanJSON[PaymentDetail](bucketDetails, nil, v, "payment detail")
	err = storage.VerifyIndexed(tx, v, storage.Indexed[*PaymentDetail]{
		Kind: "payment detail",
		Records: func(tx storage.Tx, fn func(string, *PaymentDetail) error) error {
			return details(tx, func(id string, d *PaymentDetail) error {
				if ok, err := storage.Exists(tx, bucketCounterparties, []byte(d.CounterpartyID)); err != nil {
					return err
				} else if !ok {
					v.Report(storage.FindIndexDangling, []string{id, d.CounterpartyID}, "payment detail names a counterparty that does not exist")
				}
				return fn(id, d)
			})
		},
		Load: storage.Found(getDetail, ErrPaymentDetailNotFound),
		Keys: func(tx storage.Tx, d *PaymentDetail) ([]storage.KV, error) {
			return storage.Writes(tx, func(tx storage.Tx) error {
				if err := setIndex(tx, true, d.ID, "pd", d.CounterpartyID); err != nil {
					return err
				}
				return putDetail(tx, d)
			})
		},
		Ranges: []storage.IndexRange{
			{Bucket: bucketIndex, Prefix: []byte("pd/"), ID: storage.LastPart},
			{Bucket: bucketHot, Prefix: []byte("d/"), ID: storage.LastPart, Optional: true},
		},
	})
	if err != nil {
		return err
	}
	err = storage.VerifyIndexed(tx, v, storage.Indexed[*transferRecord]{
		Kind: "transfer",
		Records: func(tx storage.Tx, fn func(string, *transferRecord) error) error {
			return tx.Scan(bucketTransfers, storage.ScanOptions{}, func(k, raw []byte) error {
				id := string(k)
				r, err := decodeTransferRecord(raw, id)
				if err != nil {
					v.Report(storage.FindCorrupt, []string{id}, "transfer does not decode: %v", err)
					return nil
				}
				if err := verifyTransfer(tx, v, r); err != nil {
					return err
				}
				return fn(id, r)
			})
		},
		Load: storage.Found(getTransfer, ErrTransferNotFound),
		Keys: func(tx storage.Tx, r *transferRecord) ([]storage.KV, error) {
			return storage.Writes(tx, func(tx storage.Tx) error {
				if err := tx.Put(bucketUnique, refKey(r.AccountID, r.UniqueReference), []byte(r.ID)); err != nil {
					return err
				}
				return writeTransferIndexes(tx, &r.Transfer, true)
			})
		},
		Ranges: []storage.IndexRange{
			{Bucket: bucketIndex, Prefix: []byte("tr/"), ID: storage.LastPart},
			{Bucket: bucketUnique, Prefix: []byte("tref/"), ID: storage.ValueID},
		},
	})
	if err != nil {
		return err
	}
	return verifyPaymentsDue(tx, v)
}

// verifyTransfer checks a transfer's holds and its place in the due queue.
func verifyTransfer(tx storage.Tx, v *storage.Verifier, r *transferRecord) error {
	var want ledger.HoldStatus
	inFlight := r.Status == StatusPending || r.Status == StatusProcessing
	switch r.Status {
	case StatusPending, StatusProcessing:
		want = ledger.HoldPending
	case StatusSuccessful, StatusReversed:
		want = ledger.HoldPosted
	case StatusFailed:
		want = ledger.HoldVoided
	}
	if len(r.Holds) == 0 {
		v.Report(ledger.FindHoldMismatch, []string{r.ID}, "%s transfer has no holds", r.Status)
	}
	for i, h := range r.Holds {
		c := ledger.HoldClaim{Kind: r.Status + " transfer", Owner: r.ID, Hold: h, Status: want}
		if i == 0 {
			c.Debit = r.AccountID
		}
		if err := ledger.VerifyHold(tx, v, c); err != nil {
			return err
		}
	}
	switch {
	case inFlight && r.DueAt == 0:
		v.Report(storage.FindDueMissing, []string{r.ID}, "%s transfer has no next check", r.Status)
	case inFlight:
		if ok, err := storage.IsDue(tx, dueTransfer, r.DueAt, r.ID); err != nil {
			return err
		} else if !ok {
			v.Report(storage.FindDueMissing, []string{r.ID}, "%s transfer's next check at %d is not queued", r.Status, r.DueAt)
		}
	case r.DueAt != 0:
		v.Report(storage.FindDueOrphan, []string{r.ID}, "%s transfer still has a next check at %d", r.Status, r.DueAt)
	}
	return nil
}

func verifyPaymentsDue(tx storage.Tx, v *storage.Verifier) error {
	err := storage.VerifyDue(tx, v, dueTransfer, func(id string, at int64) (string, error) {
		r, err := getTransfer(tx, id)
		switch {
		case errors.Is(err, ErrTransferNotFound):
			return "no such transfer", nil
		case err != nil:
			return "", nil // reported by the scan
		case r.Status != StatusPending && r.Status != StatusProcessing:
			return "the transfer is " + r.Status, nil
		case r.DueAt != at:
			return fmt.Sprintf("the transfer's next check is at %d", r.DueAt), nil
		}
		return "", nil
	})
	if err != nil {
		return err
	}
	return storage.VerifyDue(tx, v, dueQuote, func(id string, at int64) (string, error) {
		q, err := getQuote(tx, id)
		switch {
		case errors.Is(err, ErrQuoteNotFound):
			return "no such quote", nil
		case err != nil:
			return "", nil
		case q.Quote.Status != QuoteActive:
			return "the quote is " + q.Quote.Status, nil
		case q.Quote.ExpiresAt != at:
			return fmt.Sprintf("the quote expires at %d", q.Quote.ExpiresAt), nil
		}
		return "", nil
	})
}
