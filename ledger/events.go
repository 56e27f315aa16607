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
	// ID is a ULID whose time is Created. IDs increase with time, and one
	// object's events (by the object's "id") in the order they happened;
	// commit order may differ between objects (a transaction that read
	// the clock earlier can commit later), which is why a reader of new
	// events takes them from the unread index (UnreadEventsTx) rather
	// than after the last ID it saw.
	ID       string `json:"id"`
	Type     string `json:"type"`
	EntityID string `json:"entity_id"`
	// Object is the API representation of the changed object.
	Object  json.RawMessage `json:"object"`
	Created int64           `json:"created"`
}

// AppendEventTx appends an event of type typ about entityID, whose object is
// object encoded as JSON, in tx. It returns an error only when object cannot
// be encoded or storage fails.
//
// The event's ID is minted at now and the event is also indexed as unread
// (UnreadEventsTx). Appending reads nothing: a key that every writer read
// (the newest event, as before) would make any two transactions that
// report a change conflict, on a store that runs transactions at once.
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
	id, err := ulid.ParseStrict(s.ids.New(now))
	if err != nil {
		return nil, fmt.Errorf("ledger: event ID: %w", err)
	}
	// An object's events sort in the order they happened, also when two
	// nodes make them in one millisecond or a transaction read the clock
	// before the one that reported the last change committed: each ID is
	// minted after the object's newest, kept under the object's ID. The
	// transactions that change one object conflict on its record anyway,
	// so this key serializes nothing that was not. It leads with a hash of
	// the ID (eventOrderKey).
	if objID := objectID(raw); objID != "" {
		key := eventOrderKey(objID)
		v, err := tx.Get(bucketEventOrder, key)
		switch {
		case errors.Is(err, storage.ErrNotFound):
		case err != nil:
			return nil, err
		default:
			var last ulid.ULID
			if last.UnmarshalText(v) == nil && id.Compare(last) <= 0 {
				id = nextULID(last)
			}
		}
		if err := tx.Put(bucketEventOrder, key, []byte(id.String())); err != nil {
			return nil, err
		}
	}
	ev := &Event{ID: id.String(), Type: typ, EntityID: entityID, Object: raw, Created: int64(id.Time())}
	sc := eventScratches.Get().(*eventScratch)
	err = tx.Put(bucketOutbox, []byte(ev.ID), sc.encode(ev))
	eventScratches.Put(sc)
	if err != nil {
		return nil, err
	}
	if err := tx.Put(bucketUnread, []byte(ev.ID), []byte{}); err != nil {
		return nil, err
	}
	return ev, nil
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

// UnreadEventsTx returns up to limit events (limit <= 0 means 100; at most
// 1000) that no reader has marked read (MarkReadTx), oldest ID first. Every
// committed event is in it until marked, whatever order transactions
// committed in, so a reader that takes its new events here misses none.
func (s *Service) UnreadEventsTx(tx storage.Tx, limit int) ([]Event, error) {
	var ids []string
	// A queue: an event committed while this runs is the next reader's.
	if err := tx.Scan(bucketUnread, storage.ScanOptions{Limit: clampEventLimit(limit), Queue: true}, func(k, _ []byte) error {
		ids = append(ids, string(k))
		return nil
	}); err != nil {
		return nil, err
	}
	refs := make([]storage.Ref, len(ids))
	for i, id := range ids {
		refs[i] = storage.Ref{Bucket: bucketOutbox, Key: []byte(id)}
	}
	if err := storage.Prefetch(tx, refs...); err != nil {
		return nil, err
	}
	out := make([]Event, 0, len(ids))
	for _, id := range ids {
		ev, err := s.EventTx(tx, id)
		if errors.Is(err, storage.ErrNotFound) {
			// Deleted unread: nothing to read.
			if err := tx.Delete(bucketUnread, []byte(id)); err != nil && !errors.Is(err, storage.ErrReadOnly) {
				return nil, err
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, ev)
	}
	return out, nil
}

// OldestUnreadTx returns the ID of the oldest unread event, "" when every
// event has been read: every event with a smaller ID has been read.
func (s *Service) OldestUnreadTx(tx storage.Tx) (string, error) {
	var id string
	err := tx.Scan(bucketUnread, storage.ScanOptions{Limit: 1}, func(k, _ []byte) error {
		id = string(k)
		return nil
	})
	return id, err
}

// UnreadTx reports whether the event with id is unread.
func (s *Service) UnreadTx(tx storage.Tx, id string) (bool, error) {
	return storage.Exists(tx, bucketUnread, []byte(id))
}

// MarkReadTx marks the events with ids read: UnreadEventsTx no longer
// returns them.
func (s *Service) MarkReadTx(tx storage.Tx, ids ...string) error {
	for _, id := range ids {
		if err := tx.Delete(bucketUnread, []byte(id)); err != nil {
			return err
		}
	}
	return nil
}

// MarkUnreadTx marks the stored event with id unread again, for a reader
// that moves its position back (a migration from a cursor).
func (s *Service) MarkUnreadTx(tx storage.Tx, id string) error {
	return tx.Put(bucketUnread, []byte(id), []byte{})
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
	return new(eventScratch).encode(ev)
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
// the first), in ID order (limit <= 0 means 100; at most 1000). An
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
// has handled it and keeps it no longer (the webhooks' retention), read or
// not. Deleting an absent event is not an error.
func (s *Service) DeleteEventTx(tx storage.Tx, id string) error {
	if err := tx.Delete(bucketUnread, []byte(id)); err != nil {
		return err
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
