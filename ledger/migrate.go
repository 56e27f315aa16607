package ledger

import (
	"encoding/json"
	"fmt"

	"github.com/corebank/corebank/storage"
)

// Migrations returns the ledger's one-time changes to stores written by
// earlier releases, for storage.Migrate, in order: "ledger.due-queue" moves
// hold timeouts and account details expiry from the ledger's own time
// indexes ("ledger.due", "ledger.account_details_due") onto storage's due
// queue; "ledger.outbox" moves the outbox from "ledger.events" (sequence
// number -> event JSON, with a counter "event_seq" in "ledger.meta") to
// "ledger.outbox", keyed by event ID in the compact form. The events keep
// their IDs; readers that kept a sequence number as their cursor translate
// it themselves (the webhooks' migration does); "ledger.system-history"
// deletes the history lines earlier releases wrote for system accounts,
// which keep none now; "ledger.fold" queues the first fold of system
// accounts' changes (sysdelta.go), which queues the next itself.
func (s *Service) Migrations() []storage.Migration {
	return []storage.Migration{{Name: "ledger.due-queue", Run: func(tx storage.Tx) error {
		if err := storage.MoveToDue(tx, "ledger.due", nil, dueHold); err != nil {
			return err
		}
		return storage.MoveToDue(tx, "ledger.account_details_due", nil, dueDetails)
	}}, {Name: "ledger.outbox", Run: migrateOutbox}, {Name: "ledger.system-history", Run: func(tx storage.Tx) error {
		return storage.DeleteMatching(tx, bucketHistory, []byte(systemPrefix), nil)
	}}, {Name: "ledger.fold", Run: func(tx storage.Tx) error {
		return storage.Schedule(tx, dueFold, 0, foldID)
	}}}
}

// legacyEvents is the bucket the outbox was kept in, keyed by sequence.
const legacyEvents = storage.Bucket("ledger.events")

func migrateOutbox(tx storage.Tx) error {
	var keys [][]byte
	err := tx.Scan(legacyEvents, storage.ScanOptions{}, func(k, v []byte) error {
		var ev Event
		if err := json.Unmarshal(v, &ev); err != nil {
			return fmt.Errorf("ledger: legacy event %x: %w", k, err)
		}
		keys = append(keys, append([]byte(nil), k...))
		return tx.Put(bucketOutbox, []byte(ev.ID), encodeEvent(&ev))
	})
	if err != nil {
		return err
	}
	for _, k := range keys {
		if err := tx.Delete(legacyEvents, k); err != nil {
			return err
		}
	}
	return tx.Delete(bucketMeta, []byte("event_seq"))
}
