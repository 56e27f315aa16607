package funding

import (
	"encoding/json"
	"errors"

	"github.com/corebank/corebank/storage"
)

// Inflow records are stored in storage's binary form rather than JSON: a
// book transfer wrote one as it settled (now its entry is its record, see
// inflow_entry.go), and the JSON form (field names,
// the ID again beside its key) was 427 of the 2.4 KB its ledger and
// payments records took (BenchmarkFootprint in httpapi); this form is about
// half. TestInflowRecordEqualsJSON checks that a record reads back exactly
// as its JSON would. Records written as JSON by earlier releases still
// read (a JSON record starts with '{'), and the migration
// "funding.binary-records" rewrites them.

const inflowRecordV1 = 0x01

// optInt64 appends an optional number: 0 for nil, else 1 and the number.
func optInt64(e *storage.Encoder, p *int64) {
	if p == nil {
		e.Byte(0)
		return
	}
	e.Byte(1)
	e.Varint(*p)
}

func readOptInt64(d *storage.Decoder) *int64 {
	if d.Byte() == 0 {
		return nil
	}
	v := d.Varint()
	return &v
}

// encode is r's stored value; the ID is the key, so it is not repeated.
func (r *record) encode() []byte {
	in := &r.Inflow
	e := storage.Encoder{B: make([]byte, 0, 128+len(in.Narration)+len(in.Reference))}
	e.Byte(inflowRecordV1)
	for _, s := range [...]string{in.Type, in.AccountID, in.EntityID, in.Currency, in.Narration, in.Reference,
		in.Source, in.Status, r.HoldID} {
		e.Str(s)
	}
	if in.AccountDetailsID == nil {
		e.Byte(0)
	} else {
		e.Byte(1)
		e.Str(*in.AccountDetailsID)
	}
	e.Varint(in.Amount)
	optInt64(&e, in.SettlesAt)
	optInt64(&e, in.CompletedAt)
	e.Varint(in.Created)
	e.Varint(in.Updated)
	return e.B
}

// decodeRecord reads the record stored under id, binary or JSON.
func decodeRecord(id string, b []byte) (*record, error) {
	r := &record{}
	if len(b) > 0 && b[0] == '{' {
		return r, json.Unmarshal(b, r)
	}
	d := storage.Decoder{B: b}
	if d.Byte() != inflowRecordV1 {
		return nil, storage.ErrCorrupt
	}
	in := &r.Inflow
	in.ID = id
	in.Type = d.StrKnown("inflow")
	in.AccountID = d.Str()
	in.EntityID = d.Str()
	in.Currency = d.Str()
	in.Narration = d.Str()
	in.Reference = d.Str()
	in.Source = d.Str()
	in.Status = d.StrKnown(StatusCompleted)
	r.HoldID = d.Str()
	if d.Byte() == 1 {
		s := d.Str()
		in.AccountDetailsID = &s
	}
	in.Amount = d.Varint()
	in.SettlesAt = readOptInt64(&d)
	in.CompletedAt = readOptInt64(&d)
	in.Created = d.Varint()
	in.Updated = d.Varint()
	if d.Err != nil || len(d.B) != 0 {
		return nil, storage.ErrCorrupt
	}
	return r, nil
}

func put(tx storage.Tx, r *record) error {
	return tx.Put(bucket, []byte(r.ID), r.encode())
}

func get(tx storage.Tx, id string) (*record, error) {
	b, err := tx.Get(bucket, []byte(id))
	if errors.Is(err, storage.ErrNotFound) {
		return nil, ErrInflowNotFound
	}
	if err != nil {
		return nil, err
	}
	return decodeRecord(id, b)
}

// rewriteJSONRecords re-encodes every record an earlier release stored as
// JSON.
func rewriteJSONRecords(tx storage.Tx) error {
	var old []*record
	err := tx.Scan(bucket, storage.ScanOptions{}, func(k, v []byte) error {
		if len(v) == 0 || v[0] != '{' {
			return nil
		}
		r, err := decodeRecord(string(k), v)
		if err != nil {
			return err
		}
		old = append(old, r)
		return nil
	})
	if err != nil {
		return err
	}
	for _, r := range old {
		if err := put(tx, r); err != nil {
			return err
		}
	}
	return nil
}
