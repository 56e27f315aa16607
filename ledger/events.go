package ledger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/storage"
)

// Event is one entry of the outbox: a change, recorded in the same
// transaction as the change, for webhooks and other readers.
type Event struct {
	// Seq orders events by commit: readers resume after the last Seq seen.
	Seq      uint64 `json:"seq"`
	ID       string `json:"id"`
	Type     string `json:"type"`
	EntityID string `json:"entity_id"`
	// Object is the API representation of the changed object.
	Object  json.RawMessage `json:"object"`
	Created int64           `json:"created"`
}

var eventSeqKey = []byte("event_seq")

// AppendEventTx appends an event of type typ about entityID, whose object is
// object encoded as JSON, in tx. Because the sequence counter is read and
// written in tx, Seq order is commit order. It returns an error only when
// object cannot be encoded or storage fails.
func (s *Service) AppendEventTx(tx storage.Tx, now time.Time, typ, entityID string, object any) (*Event, error) {
	raw, err := json.Marshal(object)
	if err != nil {
		return nil, fmt.Errorf("ledger: encode %s event: %w", typ, err)
	}
	return s.appendEvent(tx, now, typ, entityID, raw)
}

// appendEvent is AppendEventTx with the object already encoded by
// json.Marshal (so valid, compact JSON). The stored event is written by hand
// around it instead of re-encoding, which would validate and copy the object
// again.
func (s *Service) appendEvent(tx storage.Tx, now time.Time, typ, entityID string, raw json.RawMessage) (*Event, error) {
	var seq uint64
	b, err := tx.Get(bucketMeta, eventSeqKey)
	switch {
	case err == nil:
		if seq, err = storage.Uint64(b); err != nil {
			return nil, err
		}
	case !errors.Is(err, storage.ErrNotFound):
		return nil, err
	}
	seq++
	var key [8]byte
	if err := tx.Put(bucketMeta, eventSeqKey, storage.AppendUint64(key[:0], seq)); err != nil {
		return nil, err
	}
	ev := &Event{Seq: seq, ID: s.ids.New(now), Type: typ, EntityID: entityID, Object: raw, Created: corebank.Millis(now)}
	enc := make([]byte, 0, len(raw)+160+len(typ)+len(entityID))
	enc = append(enc, `{"seq":`...)
	enc = strconv.AppendUint(enc, ev.Seq, 10)
	enc = append(enc, `,"id":`...)
	enc = appendJSONString(enc, ev.ID)
	enc = append(enc, `,"type":`...)
	enc = appendJSONString(enc, ev.Type)
	enc = append(enc, `,"entity_id":`...)
	enc = appendJSONString(enc, ev.EntityID)
	enc = append(enc, `,"object":`...)
	if len(raw) == 0 {
		enc = append(enc, "null"...)
	} else {
		enc = append(enc, raw...)
	}
	enc = append(enc, `,"created":`...)
	enc = strconv.AppendInt(enc, ev.Created, 10)
	enc = append(enc, '}')
	if err := tx.Put(bucketEvents, storage.AppendUint64(key[:0], seq), enc); err != nil {
		return nil, err
	}
	return ev, nil
}

// appendJSONString appends s as a JSON string: plain printable ASCII is
// copied, anything else goes through encoding/json.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// Events returns up to limit events with Seq greater than afterSeq, in Seq
// order (limit <= 0 means 100; at most 1000). An empty result means the
// reader is caught up.
func (s *Service) Events(ctx context.Context, afterSeq uint64, limit int) ([]Event, error) {
	if limit <= 0 {
		limit = 100
	}
	if limit > 1000 {
		limit = 1000
	}
	return storage.View(ctx, s.db, func(tx storage.Tx) ([]Event, error) {
		var out []Event
		err := tx.Scan(bucketEvents, storage.ScanOptions{After: storage.AppendUint64(nil, afterSeq), Limit: limit}, func(_, v []byte) error {
			var ev Event
			if err := json.Unmarshal(v, &ev); err != nil {
				return fmt.Errorf("ledger: decode event: %w", err)
			}
			out = append(out, ev)
			return nil
		})
		return out, err
	})
}
