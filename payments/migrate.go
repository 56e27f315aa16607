package payments

import "github.com/corebank/corebank/storage"

// Migrations returns the payments' one-time changes to stores written by
// earlier releases, for storage.Migrate: "payments.due-queue" moves quote
// expiry ("q/") and payout checks ("t/") from "payments.due" onto storage's
// due queue.
func (s *Service) Migrations() []storage.Migration {
	return []storage.Migration{{Name: "payments.due-queue", Run: func(tx storage.Tx) error {
		if err := storage.MoveToDue(tx, "payments.due", []byte("q/"), dueQuote); err != nil {
			return err
		}
		return storage.MoveToDue(tx, "payments.due", []byte("t/"), dueTransfer)
	}}}
}
