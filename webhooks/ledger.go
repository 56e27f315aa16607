package webhooks

import (
	"github.com/corebank/corebank"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/storage"
)

// LedgerOutbox reads the ledger's event outbox, where every domain package
// appends its events in the same transaction as the change they report.
func LedgerOutbox(l *ledger.Service) Outbox { return ledgerOutbox{l} }

type ledgerOutbox struct{ l *ledger.Service }

func fromLedger(e ledger.Event) Event {
	return Event{ID: e.ID, Type: e.Type, EntityID: e.EntityID, Data: e.Object, Created: e.Created}
}

func fromLedgerAll(evs []ledger.Event, err error) ([]Event, error) {
	if err != nil {
		return nil, err
	}
	out := make([]Event, len(evs))
	for i, e := range evs {
		out[i] = fromLedger(e)
	}
	return out, nil
}

func (o ledgerOutbox) EventsTx(tx storage.Tx, after string, limit int) ([]Event, error) {
	return fromLedgerAll(o.l.EventsTx(tx, after, limit))
}

func (o ledgerOutbox) UnreadEventsTx(tx storage.Tx, limit int) ([]Event, error) {
	return fromLedgerAll(o.l.UnreadEventsTx(tx, limit))
}

func (o ledgerOutbox) MarkReadTx(tx storage.Tx, ids ...string) error {
	return o.l.MarkReadTx(tx, ids...)
}

func (o ledgerOutbox) MarkUnreadTx(tx storage.Tx, id string) error { return o.l.MarkUnreadTx(tx, id) }

func (o ledgerOutbox) OldestUnreadTx(tx storage.Tx) (string, error) { return o.l.OldestUnreadTx(tx) }

func (o ledgerOutbox) UnreadTx(tx storage.Tx, id string) (bool, error) { return o.l.UnreadTx(tx, id) }

func (o ledgerOutbox) EventTx(tx storage.Tx, id string) (Event, error) {
	e, err := o.l.EventTx(tx, id)
	return fromLedger(e), err
}

func (o ledgerOutbox) DeleteEventTx(tx storage.Tx, id string) error {
	return o.l.DeleteEventTx(tx, id)
}

func (o ledgerOutbox) PageEventsTx(tx storage.Tx, q storage.PageQuery, keep func(Event) (bool, error)) (*corebank.Page[Event], error) {
	p, err := o.l.PageEventsTx(tx, q, func(e ledger.Event) (bool, error) { return keep(fromLedger(e)) })
	if err != nil {
		return nil, err
	}
	out := &corebank.Page[Event]{Items: make([]Event, len(p.Items)), HasNext: p.HasNext, HasPrevious: p.HasPrevious,
		Next: p.Next, Previous: p.Previous, Total: p.Total}
	for i, e := range p.Items {
		out.Items[i] = fromLedger(e)
	}
	return out, nil
}
