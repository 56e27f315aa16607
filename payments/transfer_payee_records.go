package payments

import (
	"errors"
	"fmt"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/internal/scope"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/storage"
)

// Payee records speed up CreateTransfer's payee check. It needs five
// fields of the payment detail and two of the counterparty, and decoding
// both JSON documents (the counterparty carries its whole profile) cost
// more than the rest of its reads. So every write of a detail or a
// counterparty also writes, in the same transaction, a small binary record
// of those fields (storage.Encoder):
//
//	payments.hot  d/<id>  version, entity, counterparty, payment_method,
//	                      currency, account_number, receiver
//	              c/<id>  version, entity, status
//
// receiver (version 2) is the ID of the account a book-transfer detail's
// account_number names, "" for other details: the service BAN names that
// account for good (ledger.AccountIDByServiceBAN), so a transfer reads the
// account's record with the detail's counterparty instead of first looking
// the BAN up, which on PostgreSQL is a round trip of its own.
//
// Measured for issue 10 (the 2-core machine, one session, runs
// interleaved): without these records and the account refs
// (transfer_account_refs.go), BenchmarkCreateTransfer/memory/callers=1 ran
// at 35-39k transfers/s with 106 allocs/op against 89-95k with 47, and
// BenchmarkLoopbackTransfers memory/echo fell to 0.35-0.42 (the target is
// 0.60) from 0.58-0.70 (memory 15-17k req/s against 21-26k). Each alone
// recovers only part: without these records alone (refs kept) 86
// allocs/op.
//
// The records only ever hold what the JSON record holds, or what it
// names for good (TestTransferWithoutPayeeRecords runs the same transfers
// with and without them); a store written before them has none, and the
// readers fall back to the JSON record and the BAN. A detail record of
// version 1 (no receiver) is rewritten by the migration
// "payments.payee-receivers", and read as before until then.
const (
	bucketHot = storage.Bucket("payments.hot")
	payeeV1   = 0x01
	payeeV2   = 0x02
)

func hotDetailKey(id string) []byte       { return storage.Key("d", id) }
func hotCounterpartyKey(id string) []byte { return storage.Key("c", id) }

// putDetail stores d and its payee record.
func putDetail(tx storage.Tx, d *PaymentDetail) error {
	if err := storage.PutJSON(tx, bucketDetails, []byte(d.ID), d); err != nil {
		return err
	}
	return putDetailPayee(tx, d)
}

// putDetailPayee stores d's payee record.
func putDetailPayee(tx storage.Tx, d *PaymentDetail) error {
	receiver, err := detailReceiver(tx, d.PaymentMethod, d.AccountNumber)
	if err != nil {
		return err
	}
	e := storage.Encoder{B: make([]byte, 0, 8+len(d.EntityID)+len(d.CounterpartyID)+len(d.PaymentMethod)+len(d.Currency)+len(d.AccountNumber)+len(receiver))}
	e.Byte(payeeV2)
	e.Str(d.EntityID)
	e.Str(d.CounterpartyID)
	e.Str(d.PaymentMethod)
	e.Str(d.Currency)
	e.Str(d.AccountNumber)
	e.Str(receiver)
	return tx.Put(bucketHot, hotDetailKey(d.ID), e.B)
}

// detailReceiver returns the ID of the account that a book-transfer
// detail's account number, a service BAN, names; "" for other details and
// a BAN that names none (a transfer to it fails when it looks the BAN up).
func detailReceiver(tx storage.Tx, method, accountNumber string) (string, error) {
	if method != BookTransfer || !ledger.ValidServiceBAN(accountNumber) {
		return "", nil
	}
	id, err := ledger.AccountIDByServiceBAN(tx, accountNumber)
	if corebank.KindOf(err) == corebank.KindNotFound {
		return "", nil
	}
	return id, err
}

// putCounterparty stores c and its payee record.
func putCounterparty(tx storage.Tx, c *Counterparty) error {
	if err := storage.PutJSON(tx, bucketCounterparties, []byte(c.ID), c); err != nil {
		return err
	}
	e := storage.Encoder{B: make([]byte, 0, 4+len(c.EntityID)+len(c.Status))}
	e.Byte(payeeV1)
	e.Str(c.EntityID)
	e.Str(c.Status)
	return tx.Put(bucketHot, hotCounterpartyKey(c.ID), e.B)
}

// detailFields are the fields of a payment detail CreateTransfer reads,
// and Receiver, when known, the account its account number names.
type detailFields struct {
	ID, EntityID, CounterpartyID, PaymentMethod, Currency, AccountNumber string
	Receiver                                                             string
}

// getDetailFields returns those fields of payment detail id when entityID
// owns it, or ErrPaymentDetailNotFound.
func getDetailFields(tx storage.Tx, entityID, id string) (*detailFields, error) {
	raw, err := storage.Peek(tx, bucketHot, hotDetailKey(id))
	if errors.Is(err, storage.ErrNotFound) {
		// A nil tree: entityID itself must own the detail.
		full, err := scope.Get(tx, nil, corebank.As(entityID), "", id, getDetail, ErrPaymentDetailNotFound)
		if err != nil {
			return nil, err
		}
		return &detailFields{ID: full.ID, EntityID: full.EntityID, CounterpartyID: full.CounterpartyID,
			PaymentMethod: full.PaymentMethod, Currency: full.Currency, AccountNumber: full.AccountNumber}, nil
	} else if err != nil {
		return nil, err
	}
	dec := storage.Decoder{B: raw}
	version := dec.Byte()
	owner := dec.Raw()
	d := &detailFields{ID: id, CounterpartyID: dec.Str(), PaymentMethod: dec.Str(), Currency: dec.Str(), AccountNumber: dec.Str()}
	if version == payeeV2 {
		d.Receiver = dec.Str()
	}
	if version != payeeV1 && version != payeeV2 || dec.Err != nil || len(dec.B) != 0 {
		return nil, fmt.Errorf("payments: payee record of payment detail %s: %w", id, storage.ErrCorrupt)
	}
	if string(owner) != entityID {
		return nil, ErrPaymentDetailNotFound
	}
	d.EntityID = entityID
	return d, nil
}

// counterpartyActive reports whether counterparty id, which entityID must
// own, is active, or returns ErrCounterpartyNotFound.
func counterpartyActive(tx storage.Tx, entityID, id string) (bool, error) {
	raw, err := storage.Peek(tx, bucketHot, hotCounterpartyKey(id))
	if errors.Is(err, storage.ErrNotFound) {
		c, err := scope.Get(tx, nil, corebank.As(entityID), "", id, getCounterparty, ErrCounterpartyNotFound)
		if err != nil {
			return false, err
		}
		return c.Status == CounterpartyActive, nil
	} else if err != nil {
		return false, err
	}
	dec := storage.Decoder{B: raw}
	version := dec.Byte()
	owner, status := dec.Raw(), dec.Raw()
	if version != payeeV1 || dec.Err != nil || len(dec.B) != 0 {
		return false, fmt.Errorf("payments: payee record of counterparty %s: %w", id, storage.ErrCorrupt)
	}
	if string(owner) != entityID {
		return false, ErrCounterpartyNotFound
	}
	return string(status) == CounterpartyActive, nil
}
