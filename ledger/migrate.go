package ledger

import "github.com/corebank/corebank/storage"

// Migrations returns the ledger's one-time changes to stores written by
// earlier releases, for storage.Migrate: "ledger.due-queue" moves hold
// timeouts and account details expiry from the ledger's own time indexes
// ("ledger.due", "ledger.account_details_due") onto storage's due queue;
// "ledger.system-history" deletes the history lines earlier releases wrote
// for system accounts, which keep none now.
func (s *Service) Migrations() []storage.Migration {
	return []storage.Migration{{Name: "ledger.due-queue", Run: func(tx storage.Tx) error {
		if err := storage.MoveToDue(tx, "ledger.due", nil, dueHold); err != nil {
			return err
		}
		return storage.MoveToDue(tx, "ledger.account_details_due", nil, dueDetails)
	}}, {Name: "ledger.system-history", Run: func(tx storage.Tx) error {
		return storage.DeleteMatching(tx, bucketHistory, []byte(systemPrefix), nil)
	}}}
}
