package payments

import (
	"bytes"

	"github.com/corebank/corebank/storage"
)

// Migrations returns the payments' one-time changes to stores written by
// earlier releases, for storage.Migrate: "payments.due-queue" moves quote
// expiry ("q/") and payout checks ("t/") from "payments.due" onto storage's
// due queue; "payments.transfer-indexes" deletes the transfer list indexes
// that did not depend on the status (tr/<entity>/all/ and
// tr/<entity>/a:<account>/), whose lists now read the union of the status
// indexes.
func (s *Service) Migrations() []storage.Migration {
	return []storage.Migration{{Name: "payments.due-queue", Run: func(tx storage.Tx) error {
		if err := storage.MoveToDue(tx, "payments.due", []byte("q/"), dueQuote); err != nil {
			return err
		}
		return storage.MoveToDue(tx, "payments.due", []byte("t/"), dueTransfer)
	}}, {Name: "payments.transfer-indexes", Run: dropStatuslessIndexes}}
}

// dropStatuslessIndexes deletes the index keys tr/<entity>/all/<id> and
// tr/<entity>/a:<account>/<id> that earlier releases wrote.
func dropStatuslessIndexes(tx storage.Tx) error {
	return storage.DeleteMatching(tx, bucketIndex, []byte("tr/"), func(k []byte) bool {
		_, rest, ok := bytes.Cut(k[len("tr/"):], []byte("/"))
		return ok && (bytes.HasPrefix(rest, []byte("all/")) || bytes.HasPrefix(rest, []byte("a:")))
	})
}
