package payments

import (
	"bytes"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/storage"
)

// Migrations returns the payments' one-time changes to stores written by
// earlier releases, for storage.Migrate: "payments.due-queue" moves quote
// expiry ("q/") and payout checks ("t/") from "payments.due" onto storage's
// due queue; "payments.transfer-indexes" deletes the transfer list indexes
// that did not depend on the status (tr/<entity>/all/ and
// tr/<entity>/a:<account>/), whose lists now read the union of the status
// indexes; "payments.payee-receivers" rewrites the payee records of
// payment details to version 2, which names a book transfer's receiving
// account.
func (s *Service) Migrations() []storage.Migration {
	return []storage.Migration{{Name: "payments.due-queue", Run: func(tx storage.Tx) error {
		if err := storage.MoveToDue(tx, "payments.due", []byte("q/"), dueQuote); err != nil {
			return err
		}
		return storage.MoveToDue(tx, "payments.due", []byte("t/"), dueTransfer)
	}}, {Name: "payments.transfer-indexes", Run: dropStatuslessIndexes},
		{Name: "payments.payee-receivers", Run: addPayeeReceivers}}
}

// addPayeeReceivers rewrites the payee records of payment details that
// earlier releases wrote without the receiving account (version 1), so
// that book transfers to them read the account without looking its BAN up
// (transfer_payee_records.go).
func addPayeeReceivers(tx storage.Tx) error {
	var ids []string
	err := tx.Scan(bucketHot, storage.ScanOptions{Prefix: []byte("d/")}, func(k, v []byte) error {
		if len(v) > 0 && v[0] == payeeV1 {
			ids = append(ids, string(k[len("d/"):]))
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, id := range ids {
		d, err := getDetail(tx, id)
		if corebank.KindOf(err) == corebank.KindNotFound {
			continue // a record without its detail, which Verify reports
		} else if err != nil {
			return err
		}
		if err := putDetailPayee(tx, d); err != nil {
			return err
		}
	}
	return nil
}

// dropStatuslessIndexes deletes the index keys tr/<entity>/all/<id> and
// tr/<entity>/a:<account>/<id> that earlier releases wrote.
func dropStatuslessIndexes(tx storage.Tx) error {
	return storage.DeleteMatching(tx, bucketIndex, []byte("tr/"), func(k []byte) bool {
		_, rest, ok := bytes.Cut(k[len("tr/"):], []byte("/"))
		return ok && (bytes.HasPrefix(rest, []byte("all/")) || bytes.HasPrefix(rest, []byte("a:")))
	})
}
