package webhooks

import (
	"context"

	"github.com/corebank/corebank/ledger"
)

// LedgerOutbox reads the ledger's event outbox, where every domain package
// appends its events in the same transaction as the change they report.
func LedgerOutbox(l *ledger.Service) Outbox {
	return OutboxFunc(func(ctx context.Context, afterSeq uint64, limit int) ([]Event, error) {
		evs, err := l.Events(ctx, afterSeq, limit)
		if err != nil {
			return nil, err
		}
		out := make([]Event, len(evs))
		for i, e := range evs {
			out[i] = Event{Seq: e.Seq, ID: e.ID, Type: e.Type, EntityID: e.EntityID, Data: e.Object, Created: e.Created}
		}
		return out, nil
	})
}
