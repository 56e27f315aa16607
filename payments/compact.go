package payments

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/corebank/corebank/storage"
)

// Compact records for CreateTransfer. It needs five fields of the payment
// detail and two of the counterparty; decoding both JSON documents (the
// counterparty carries the whole profile) cost more than the rest of the
// transaction's reads. So every write of a detail or counterparty also
// writes, in the same transaction, a small binary record of those fields:
//
//	payments.hot  d/<id>  format byte, entity, counterparty, payment_method,
//	                      currency, account_number
//	              c/<id>  format byte, entity, status
//
// A store written before these records existed has none; the readers then
// fall back to the JSON record.
const (
	bucketHot = storage.Bucket("payments.hot")
	compactV1 = 0x01
)

func hotDetailKey(id string) []byte       { return storage.Key("d", id) }
func hotCounterpartyKey(id string) []byte { return storage.Key("c", id) }

func appendStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func readStr(b []byte) (string, []byte, bool) {
	v, rest, ok := readBytes(b)
	return string(v), rest, ok
}

// readBytes is readStr without the copy: the value aliases b.
func readBytes(b []byte) ([]byte, []byte, bool) {
	n, k := binary.Uvarint(b)
	if k <= 0 || uint64(len(b)-k) < n {
		return nil, nil, false
	}
	return b[k : k+int(n)], b[k+int(n):], true
}

// putDetail stores d and its compact record.
func putDetail(tx storage.Tx, d *PaymentDetail) error {
	if err := storage.PutJSON(tx, bucketDetails, []byte(d.ID), d); err != nil {
		return err
	}
	b := make([]byte, 0, 8+len(d.EntityID)+len(d.CounterpartyID)+len(d.PaymentMethod)+len(d.Currency)+len(d.AccountNumber))
	b = append(b, compactV1)
	b = appendStr(b, d.EntityID)
	b = appendStr(b, d.CounterpartyID)
	b = appendStr(b, d.PaymentMethod)
	b = appendStr(b, d.Currency)
	b = appendStr(b, d.AccountNumber)
	return tx.Put(bucketHot, hotDetailKey(d.ID), b)
}

// putCounterparty stores c and its compact record.
func putCounterparty(tx storage.Tx, c *Counterparty) error {
	if err := storage.PutJSON(tx, bucketCounterparties, []byte(c.ID), c); err != nil {
		return err
	}
	b := make([]byte, 0, 4+len(c.EntityID)+len(c.Status))
	b = append(b, compactV1)
	b = appendStr(b, c.EntityID)
	b = appendStr(b, c.Status)
	return tx.Put(bucketHot, hotCounterpartyKey(c.ID), b)
}

// detailFields are the fields of a payment detail CreateTransfer reads.
type detailFields struct {
	ID, EntityID, CounterpartyID, PaymentMethod, Currency, AccountNumber string
}

// getDetailFields returns those fields of payment detail id when entityID
// owns it, or ErrPaymentDetailNotFound.
func getDetailFields(tx storage.Tx, entityID, id string) (*detailFields, error) {
	raw, err := tx.Get(bucketHot, hotDetailKey(id))
	if errors.Is(err, storage.ErrNotFound) {
		full, err := ownedBy[PaymentDetail](tx, entityID, bucketDetails, id, ErrPaymentDetailNotFound)
		if err != nil {
			return nil, err
		}
		return &detailFields{ID: full.ID, EntityID: full.EntityID, CounterpartyID: full.CounterpartyID,
			PaymentMethod: full.PaymentMethod, Currency: full.Currency, AccountNumber: full.AccountNumber}, nil
	} else if err != nil {
		return nil, err
	}
	d := &detailFields{ID: id}
	ok := len(raw) > 0 && raw[0] == compactV1
	var rest []byte
	if ok {
		d.EntityID, rest, ok = readStr(raw[1:])
	}
	if ok {
		d.CounterpartyID, rest, ok = readStr(rest)
	}
	if ok {
		d.PaymentMethod, rest, ok = readStr(rest)
	}
	if ok {
		d.Currency, rest, ok = readStr(rest)
	}
	if ok {
		d.AccountNumber, rest, ok = readStr(rest)
	}
	if !ok || len(rest) != 0 {
		return nil, fmt.Errorf("payments: malformed compact payment detail %s", id)
	}
	if d.EntityID != entityID {
		return nil, ErrPaymentDetailNotFound
	}
	return d, nil
}

// counterpartyActive reports whether counterparty id, which entityID must
// own, is active, or returns ErrCounterpartyNotFound.
func counterpartyActive(tx storage.Tx, entityID, id string) (bool, error) {
	raw, err := tx.Get(bucketHot, hotCounterpartyKey(id))
	if errors.Is(err, storage.ErrNotFound) {
		c, err := ownedBy[Counterparty](tx, entityID, bucketCounterparties, id, ErrCounterpartyNotFound)
		if err != nil {
			return false, err
		}
		return c.Status == CounterpartyActive, nil
	} else if err != nil {
		return false, err
	}
	var owner, status []byte
	ok := len(raw) > 0 && raw[0] == compactV1
	var rest []byte
	if ok {
		owner, rest, ok = readBytes(raw[1:])
	}
	if ok {
		status, rest, ok = readBytes(rest)
	}
	if !ok || len(rest) != 0 {
		return false, fmt.Errorf("payments: malformed compact counterparty %s", id)
	}
	if string(owner) != entityID {
		return false, ErrCounterpartyNotFound
	}
	return string(status) == CounterpartyActive, nil
}
