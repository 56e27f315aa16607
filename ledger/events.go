package ledger

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/klauspost/compress/s2"
	"github.com/oklog/ulid/v2"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/storage"
)

// Event is one entry of the outbox: a change, recorded in the same
// transaction as the change, for webhooks and other readers.
type Event struct {
	// ID is a ULID whose time is Created. IDs increase in commit order, so
	// readers resume after the last ID seen.
	ID       string `json:"id"`
	Type     string `json:"type"`
	EntityID string `json:"entity_id"`
	// Object is the API representation of the changed object.
	Object  json.RawMessage `json:"object"`
	Created int64           `json:"created"`
}

// eventLastKey holds, in bucketMeta, the ID of the newest event once it has
// been deleted, so that later IDs still sort after it.
var eventLastKey = []byte("event_last")

// AppendEventTx appends an event of type typ about entityID, whose object is
// object encoded as JSON, in tx. It returns an error only when object cannot
// be encoded or storage fails.
//
// The event's ID is minted at now, or just after the newest event's ID when
// that one sorts later (a transaction that read the clock earlier committed
// first), so that ID order is commit order; Created is the ID's time.
func (s *Service) AppendEventTx(tx storage.Tx, now time.Time, typ, entityID string, object any) (*Event, error) {
	raw, err := json.Marshal(object)
	if err != nil {
		return nil, fmt.Errorf("ledger: encode %s event: %w", typ, err)
	}
	return s.appendEvent(tx, now, typ, entityID, raw)
}

// appendEvent is AppendEventTx with the object already encoded by
// json.Marshal (so valid, compact JSON).
func (s *Service) appendEvent(tx storage.Tx, now time.Time, typ, entityID string, raw json.RawMessage) (*Event, error) {
	last, err := lastEventID(tx)
	if err != nil {
		return nil, err
	}
	id, err := ulid.ParseStrict(s.ids.New(now))
	if err != nil {
		return nil, fmt.Errorf("ledger: event ID: %w", err)
	}
	if id.Compare(last) <= 0 {
		id = nextULID(last)
	}
	ev := &Event{ID: id.String(), Type: typ, EntityID: entityID, Object: raw, Created: int64(id.Time())}
	if err := tx.Put(bucketOutbox, []byte(ev.ID), encodeEvent(ev)); err != nil {
		return nil, err
	}
	return ev, nil
}

// lastEventID returns the newest event's ID, the zero ULID when there was
// none.
func lastEventID(tx storage.Tx) (ulid.ULID, error) {
	var last ulid.ULID
	err := tx.Scan(bucketOutbox, storage.ScanOptions{Reverse: true, Limit: 1}, func(k, _ []byte) error {
		return last.UnmarshalText(k)
	})
	if err != nil {
		return last, fmt.Errorf("ledger: newest event: %w", err)
	}
	v, err := tx.Get(bucketMeta, eventLastKey)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return last, nil
	case err != nil:
		return last, err
	}
	var deleted ulid.ULID
	if err := deleted.UnmarshalText(v); err != nil {
		return last, fmt.Errorf("ledger: newest deleted event: %w", err)
	}
	if deleted.Compare(last) > 0 {
		last = deleted
	}
	return last, nil
}

// nextULID returns the ULID just after u (its 128 bits plus one).
func nextULID(u ulid.ULID) ulid.ULID {
	for i := len(u) - 1; i >= 0; i-- {
		u[i]++
		if u[i] != 0 {
			break
		}
	}
	return u
}

// Stored forms of an event, keyed by its ID (which gives Created): a
// format byte, then the body: the type and the entity ID each as a uvarint
// length and bytes, then the object's JSON to the end. eventPlain stores
// the body as is; eventS2 compresses it with S2 (Snappy's successor) and
// eventDict as the dictionary, chosen whenever that is shorter (nearly
// always): a 500-byte transfer object keeps about 200 bytes. S2 rather
// than deflate, which keeps about 170 but costs some 18 us an event
// against 1 us (its Reset re-reads the dictionary), inside the
// transaction of every change that reports one (BenchmarkEventCodec).
const (
	eventPlain = 1
	eventS2    = 3 // 2 was a deflated form, never released
)

// eventS2Dict is eventDict made ready for S2, once.
var eventS2Dict = sync.OnceValue(func() *s2.Dict { return s2.MakeDict([]byte(eventDict), nil) })

func encodeEvent(ev *Event) []byte {
	body := make([]byte, 1, 1+2*binary.MaxVarintLen16+len(ev.Type)+len(ev.EntityID)+len(ev.Object))
	body[0] = eventPlain
	body = binary.AppendUvarint(body, uint64(len(ev.Type)))
	body = append(body, ev.Type...)
	body = binary.AppendUvarint(body, uint64(len(ev.EntityID)))
	body = append(body, ev.EntityID...)
	body = append(body, ev.Object...)

	out := make([]byte, 1+s2.MaxEncodedLen(len(body)-1))
	out[0] = eventS2
	enc := eventS2Dict().Encode(out[1:], body[1:])
	if len(enc)+1 >= len(body) {
		return body
	}
	return out[:1+len(enc)]
}

func decodeEvent(k, v []byte) (Event, error) {
	var id ulid.ULID
	if err := id.UnmarshalText(k); err != nil || len(v) == 0 {
		return Event{}, fmt.Errorf("ledger: event %q: %w", k, storage.ErrCorrupt)
	}
	ev := Event{ID: string(k), Created: int64(id.Time())}
	var rest []byte
	switch v[0] {
	case eventPlain:
		rest = v[1:]
	case eventS2:
		var err error
		if rest, err = eventS2Dict().Decode(nil, v[1:]); err != nil {
			return Event{}, fmt.Errorf("ledger: event %q: %w: %w", k, storage.ErrCorrupt, err)
		}
	default:
		return Event{}, fmt.Errorf("ledger: event %q: format %d: %w", k, v[0], storage.ErrCorrupt)
	}
	field := func() (string, bool) {
		n, w := binary.Uvarint(rest)
		if w <= 0 || n > uint64(len(rest)-w) {
			return "", false
		}
		s := string(rest[w : w+int(n)])
		rest = rest[w+int(n):]
		return s, true
	}
	var ok1, ok2 bool
	ev.Type, ok1 = field()
	ev.EntityID, ok2 = field()
	if !ok1 || !ok2 {
		return Event{}, fmt.Errorf("ledger: event %q: %w", k, storage.ErrCorrupt)
	}
	if len(rest) > 0 {
		ev.Object = json.RawMessage(bytes.Clone(rest))
	}
	return ev, nil
}

// clampEventLimit applies Events' limits: 100 for limit <= 0, at most 1000.
func clampEventLimit(limit int) int {
	if limit <= 0 {
		return 100
	}
	return min(limit, 1000)
}

// Events returns up to limit events after the event with ID after ("" for
// the first), in commit order (limit <= 0 means 100; at most 1000). An
// empty result means the reader is caught up.
func (s *Service) Events(ctx context.Context, after string, limit int) ([]Event, error) {
	return storage.View(ctx, s.db, func(tx storage.Tx) ([]Event, error) {
		return s.EventsTx(tx, after, limit)
	})
}

// EventsTx is Events inside tx.
func (s *Service) EventsTx(tx storage.Tx, after string, limit int) ([]Event, error) {
	var out []Event
	o := storage.ScanOptions{Limit: clampEventLimit(limit)}
	if after != "" {
		o.After = []byte(after)
	}
	err := tx.Scan(bucketOutbox, o, func(k, v []byte) error {
		ev, err := decodeEvent(k, v)
		out = append(out, ev)
		return err
	})
	return out, err
}

// EventTx returns the event with id, storage.ErrNotFound when there is none
// (never appended, or deleted).
func (s *Service) EventTx(tx storage.Tx, id string) (Event, error) {
	v, err := tx.Get(bucketOutbox, []byte(id))
	if err != nil {
		return Event{}, err
	}
	return decodeEvent([]byte(id), v)
}

// DeleteEventTx removes the event with id from the outbox, for a reader that
// has handled it and keeps it no longer (the webhooks' retention). Deleting
// an absent event is not an error. Deleting the newest event records its ID,
// so that later IDs still sort after it.
func (s *Service) DeleteEventTx(tx storage.Tx, id string) error {
	if ok, err := storage.Exists(tx, bucketOutbox, []byte(id)); err != nil || !ok {
		return err
	}
	newest := true
	if err := tx.Scan(bucketOutbox, storage.ScanOptions{After: []byte(id), Limit: 1}, func(_, _ []byte) error {
		newest = false
		return nil
	}); err != nil {
		return err
	}
	if newest {
		if err := tx.Put(bucketMeta, eventLastKey, []byte(id)); err != nil {
			return err
		}
	}
	return tx.Delete(bucketOutbox, []byte(id))
}

// PageEventsTx returns one page of the outbox's events, oldest first, as
// storage.ReadPage reads q (its Bucket is the outbox's; positions are event
// IDs), keeping those keep accepts.
func (s *Service) PageEventsTx(tx storage.Tx, q storage.PageQuery, keep func(Event) (bool, error)) (*corebank.Page[Event], error) {
	q.Bucket = bucketOutbox
	return storage.ReadPage(tx, q, func(id string, v []byte) (Event, bool, error) {
		ev, err := decodeEvent([]byte(id), v)
		if err != nil {
			return Event{}, false, err
		}
		ok, err := keep(ev)
		return ev, ok, err
	})
}
