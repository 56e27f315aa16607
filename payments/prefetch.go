package payments

import (
	"time"

	"github.com/corebank/corebank/funding"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/storage"
)

// Where a read is a round trip to the database (storage.Prefetch), a
// transfer's transactions read what they will need in a few reads, each
// as soon as the keys are known, rather than one at a time.

// prefetchTransfer reads, for a new transfer id, the keys the request
// names: the debited account's, the reference's, the payment detail's and
// the counterparty's when it is named, and the transfer's event order.
// A request that is not valid reads nothing: it fails before any read.
func prefetchTransfer(tx storage.Tx, id string, in NewTransfer) error {
	if !storage.Prefetching(tx) || in.validate() != nil {
		return nil
	}
	refs := append(ledger.Reads{Accounts: []string{in.AccountID}, Events: []string{id}}.Refs(),
		storage.Ref{Bucket: bucketUnique, Key: refKey(in.AccountID, in.UniqueReference)},
		storage.Ref{Bucket: bucketHot, Key: hotDetailKey(in.PaymentDetailID)})
	if in.CounterpartyID != "" {
		refs = append(refs, storage.Ref{Bucket: bucketHot, Key: hotCounterpartyKey(in.CounterpartyID)})
	}
	return storage.Prefetch(tx, refs...)
}

// prefetchPayee reads, once the payment detail d is, its counterparty and,
// for a book transfer, the receiving account's record (or, when d does
// not name the account, its service BAN), with more.
func prefetchPayee(tx storage.Tx, d *detailFields, paymentType string, more ...storage.Ref) error {
	if !storage.Prefetching(tx) {
		return nil
	}
	var rs ledger.Reads
	switch {
	case paymentType != BookTransfer || d.PaymentMethod != BookTransfer:
	case d.Receiver != "":
		rs.Records = []string{d.Receiver}
	case ledger.ValidServiceBAN(d.AccountNumber):
		rs.BANs = []string{d.AccountNumber}
	}
	refs := append(rs.Refs(), storage.Ref{Bucket: bucketHot, Key: hotCounterpartyKey(d.CounterpartyID)})
	return storage.Prefetch(tx, append(refs, more...)...)
}

// prefetchPayouts reads what applying items reads, on a store where each
// read is a round trip (storage.Prefetch), in two: the leases and
// transfers, then the holds, accounts and event keys the transfers name,
// with those of the inflow crediting each book transfer's receiving
// account, whose ID it makes now and returns by transfer ID. What it
// cannot read (a transfer gone) is left to the Gets, which fail as they
// would have.
func (s *Service) prefetchPayouts(tx storage.Tx, now time.Time, items []storage.DueItem) (map[string]string, error) {
	if !storage.Prefetching(tx) {
		return nil, nil
	}
	refs := transferRefs(make([]storage.Ref, 0, 2*len(items)), items)
	for _, it := range items {
		refs = append(refs, storage.LeaseRef(dueTransfer, it))
	}
	if err := storage.Prefetch(tx, refs...); err != nil {
		return nil, err
	}
	var rs ledger.Reads
	inflows := map[string]string{}
	for _, it := range items {
		r, err := getTransfer(tx, it.ID)
		if err != nil {
			continue
		}
		rs.Accounts = append(rs.Accounts, r.AccountID)
		rs.Holds = append(rs.Holds, r.Holds...)
		rs.Events = append(rs.Events, r.ID)
		if r.ReceiverID != "" {
			rs.Accounts = append(rs.Accounts, r.ReceiverID)
			if s.receiver != nil {
				id := s.ids.New(now)
				inflows[r.ID] = id
				rs = rs.With(funding.ReceiveReadsFor(id, r.ReceiverID))
			}
		}
	}
	return inflows, rs.Prefetch(tx)
}

// transferRefs appends the keys of items' transfers to refs.
func transferRefs(refs []storage.Ref, items []storage.DueItem) []storage.Ref {
	for _, it := range items {
		refs = append(refs, storage.Ref{Bucket: bucketTransfers, Key: []byte(it.ID)})
	}
	return refs
}
