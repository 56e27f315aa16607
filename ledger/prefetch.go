package ledger

import (
	"hash/fnv"

	"github.com/corebank/corebank/storage"
)

// Reads names what a transaction is about to read from the ledger, so that
// it can read it all at once (storage.Prefetch) together with its own keys.
type Reads struct {
	// Accounts are accounts whose record and balance it reads (a posting,
	// a hold, GetAccountTx).
	Accounts []string
	// Records are accounts whose record alone it reads (AccountRecordTx).
	Records []string
	// Holds are holds it posts, voids or reads.
	Holds []string
	// Entries are journal entries it reads, or posts under IDs it gives
	// (Entry.ID: the ledger checks that none has it).
	Entries []string
	// Events are the IDs of objects it appends events about.
	Events []string
	// BANs are service BANs it looks accounts up by.
	BANs []string
	// DetailsOf are accounts whose account details it lists
	// (AccountDetailsOfAccountTx: an inflow to the account finds the
	// details it came through).
	DetailsOf []string
}

// With returns r and o together.
func (r Reads) With(o Reads) Reads {
	return Reads{
		Accounts:  append(r.Accounts, o.Accounts...),
		Records:   append(r.Records, o.Records...),
		Holds:     append(r.Holds, o.Holds...),
		Entries:   append(r.Entries, o.Entries...),
		Events:    append(r.Events, o.Events...),
		BANs:      append(r.BANs, o.BANs...),
		DetailsOf: append(r.DetailsOf, o.DetailsOf...),
	}
}

// Prefetch reads r ahead in tx (storage.Prefetch), when tx can.
func (r Reads) Prefetch(tx storage.Tx) error {
	if !storage.Prefetching(tx) {
		return nil
	}
	return storage.Prefetch(tx, r.Refs()...)
}

// Refs returns the keys r reads.
func (r Reads) Refs() []storage.Ref {
	out := make([]storage.Ref, 0, 2*len(r.Accounts)+len(r.Records)+len(r.Holds)+len(r.Entries)+len(r.Events)+len(r.BANs)+len(r.DetailsOf))
	for _, id := range r.Accounts {
		out = append(out, storage.Ref{Bucket: bucketAccounts, Key: []byte(id)}, storage.Ref{Bucket: bucketBalances, Key: []byte(id)})
	}
	for _, id := range r.Records {
		out = append(out, storage.Ref{Bucket: bucketAccounts, Key: []byte(id)})
	}
	for _, id := range r.Holds {
		out = append(out, storage.Ref{Bucket: bucketHolds, Key: []byte(id)})
	}
	for _, id := range r.Entries {
		out = append(out, storage.Ref{Bucket: bucketEntries, Key: []byte(id)})
	}
	for _, id := range r.Events {
		out = append(out, storage.Ref{Bucket: bucketEventOrder, Key: eventOrderKey(id)})
	}
	for _, ban := range r.BANs {
		out = append(out, storage.Ref{Bucket: bucketBANs, Key: []byte(ban)})
	}
	for _, id := range r.DetailsOf {
		if validID(id) {
			out = append(out, storage.Ref{Bucket: bucketDetailsIndex, Key: detailsOfAccountPrefix(id), Prefix: true})
		}
	}
	return out
}

// eventOrderKey is the key of object id's newest event ID: a hash of the
// ID first, so that new objects' keys, in ID (time) order, do not all fall
// on one end of a table's index, where every insert would contend.
func eventOrderKey(id string) []byte {
	h := fnv.New32a()
	_, _ = h.Write([]byte(id))
	return append(h.Sum(nil), id...)
}
