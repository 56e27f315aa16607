package funding

import "github.com/corebank/corebank/storage"

// Migrations returns funding's one-time changes to stores written by
// earlier releases, for storage.Migrate: "funding.due-queue" moves pending
// inflows' settlement times from "funding.inflows.due" onto storage's due
// queue; "funding.binary-records" rewrites JSON inflow records in the binary
// form (inflow_record.go).
func (s *Service) Migrations() []storage.Migration {
	return []storage.Migration{{Name: "funding.due-queue", Run: func(tx storage.Tx) error {
		return storage.MoveToDue(tx, "funding.inflows.due", nil, dueInflow)
	}}, {Name: "funding.binary-records", Run: rewriteJSONRecords}}
}
