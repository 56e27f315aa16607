package cards

import (
	"errors"
	"fmt"

	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/storage"
)

// VerifyStore checks, in tx, what the cards package keeps, and reports each
// broken rule to v: every card is in its entity's list unless deleted,
// and every list key names a card that should be there; every number key
// and creation key names a card (the number key is an HMAC under a key
// Verify does not have, so a card missing one is not found); every card
// transaction is in its card's list and names a card; a pending
// authorization holds its authorized amount on its account with a pending
// ledger hold (claimed in ledger.HoldSet) and is queued to expire; and
// every "cards.authorization" item names a pending authorization expiring
// then. It writes nothing.
func VerifyStore(tx storage.Tx, v *storage.Verifier) error {
	err := storage.VerifyIndexed(tx, v, storage.Indexed[*record]{
		Kind:    "card",
		Records: storage.ScanJSON[record](cardBucket, nil, v, "card"),
		Load:    storage.Found(getCard, ErrCardNotFound),
		Keys: func(_ storage.Tx, r *record) ([]storage.KV, error) {
			if r.Deleted {
				return nil, nil
			}
			return []storage.KV{{Bucket: index, Key: listKey(r.EntityID, r.ID)}}, nil
		},
		Ranges: []storage.IndexRange{
			{Bucket: index, Prefix: []byte("l/"), ID: storage.LastPart},
			{Bucket: index, Prefix: []byte("n/"), ID: storage.ValueID, Loose: true},
			{Bucket: index, Prefix: []byte("c/"), ID: storage.LastPart, Loose: true},
		},
	})
	if err != nil {
		return err
	}
	txs := storage.ScanJSON[txRecord](txBucket, nil, v, "card transaction")
	err = storage.VerifyIndexed(tx, v, storage.Indexed[*txRecord]{
		Kind: "card transaction",
		Records: func(tx storage.Tx, fn func(string, *txRecord) error) error {
			return txs(tx, func(id string, t *txRecord) error {
				if err := verifyAuthorization(tx, v, t); err != nil {
					return err
				}
				return fn(id, t)
			})
		},
		Load: storage.Found(getTx, ErrTransactionNotFound),
		Keys: func(_ storage.Tx, t *txRecord) ([]storage.KV, error) {
			return []storage.KV{{Bucket: index, Key: txListKey(t.CardID, t.ID)}}, nil
		},
		Ranges: []storage.IndexRange{{Bucket: index, Prefix: []byte("t/"), ID: storage.LastPart}},
	})
	if err != nil {
		return err
	}
	return storage.VerifyDue(tx, v, dueAuth, func(id string, at int64) (string, error) {
		t, err := getTx(tx, id)
		switch {
		case errors.Is(err, ErrTransactionNotFound):
			return "no such card transaction", nil
		case err != nil:
			return "", nil // reported by the scan
		case t.Status != TxPending:
			return "the card transaction is " + t.Status, nil
		case t.ExpiresAt != at:
			return fmt.Sprintf("the authorization expires at %d", t.ExpiresAt), nil
		}
		return "", nil
	})
}

// verifyAuthorization checks a card transaction's card and, while it is
// pending, its hold and expiry.
func verifyAuthorization(tx storage.Tx, v *storage.Verifier, t *txRecord) error {
	if ok, err := storage.Exists(tx, cardBucket, []byte(t.CardID)); err != nil {
		return err
	} else if !ok {
		v.Report(storage.FindIndexDangling, []string{t.ID, t.CardID}, "card transaction names a card that does not exist")
	}
	if t.Status != TxPending {
		if t.HoldID != "" {
			return ledger.VerifyHold(tx, v, ledger.HoldClaim{Kind: "card transaction", Owner: t.ID, Hold: t.HoldID})
		}
		return nil
	}
	if t.HoldID == "" {
		v.Report(ledger.FindHoldMismatch, []string{t.ID}, "pending authorization of %d has no hold", t.AmountAuthorized)
	} else if err := ledger.VerifyHold(tx, v, ledger.HoldClaim{Kind: "card transaction", Owner: t.ID, Hold: t.HoldID,
		Status: ledger.HoldPending, Debit: t.AccountID, Amount: t.AmountAuthorized}); err != nil {
		return err
	}
	if ok, err := storage.IsDue(tx, dueAuth, t.ExpiresAt, t.ID); err != nil {
		return err
	} else if !ok {
		v.Report(storage.FindDueMissing, []string{t.ID}, "pending authorization expires at %d but is not queued", t.ExpiresAt)
	}
	return nil
}
