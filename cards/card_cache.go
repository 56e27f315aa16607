package cards

import (
	"bytes"
	"errors"
	"sync"

	"github.com/corebank/corebank/storage"
)

// An authorization decision decodes its card's record, and with
// encoding/json that was over half of the decision's transaction
// (BenchmarkAuthorize): a card record is about a kilobyte of JSON with
// its controls. decodedCards keeps the last decoding of each card beside
// the bytes it came from. The bytes are still read inside the
// transaction and compared, so a card another transaction (or another
// node) changed is decoded afresh: the cache holds only what a given
// value decodes to, which never changes. TestDecodedCards checks it
// answers what getCard does.

// maxDecoded bounds the cache; past it, it starts over.
const maxDecoded = 1 << 14

type decodedCards struct {
	mu sync.Mutex
	m  map[string]decodedCard
}

type decodedCard struct {
	raw []byte
	r   *record
}

// get is getCard through the cache. The record answered is a copy of the
// cached one that shares what its fields point to: callers may set its
// fields but must not change what they point to (controls, phone).
func (d *decodedCards) get(tx storage.Tx, id string) (*record, error) {
	// Peeked, not copied: on a hit the bytes are only compared (a copy of
	// a kilobyte per decision was an eighth of what it allocates); a miss
	// keeps a copy.
	raw, err := storage.Peek(tx, cardBucket, []byte(id))
	if errors.Is(err, storage.ErrNotFound) {
		return nil, ErrCardNotFound
	}
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	e, ok := d.m[id]
	d.mu.Unlock()
	if !ok || !bytes.Equal(e.raw, raw) {
		r, err := decodeCard(raw)
		if err != nil {
			return nil, err
		}
		e = decodedCard{raw: bytes.Clone(raw), r: r}
		d.mu.Lock()
		if d.m == nil || len(d.m) >= maxDecoded {
			d.m = make(map[string]decodedCard)
		}
		d.m[id] = e
		d.mu.Unlock()
	}
	c := *e.r
	return &c, nil
}
