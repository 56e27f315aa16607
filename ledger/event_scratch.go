package ledger

import (
	"encoding/binary"
	"sync"

	"github.com/klauspost/compress/s2"
)

// eventScratch holds the buffers an event is encoded in. Put copies what
// it stores, so the stored form of an event need not outlive its Put, and
// appendEvent encodes into pooled scratch (eventScratches): two fresh
// buffers of the event's size for every event were 1.3 KB of the 9 KB a
// POST /transfers allocates (httpapi BenchmarkTransfers), every byte of
// which brings the next garbage collection nearer.
type eventScratch struct {
	body, out []byte
}

var eventScratches = sync.Pool{New: func() any { return new(eventScratch) }}

// encode returns ev's stored form (see eventPlain), in sc's buffers: valid
// until sc's next use.
func (sc *eventScratch) encode(ev *Event) []byte {
	body := append(sc.body[:0], eventPlain)
	body = binary.AppendUvarint(body, uint64(len(ev.Type)))
	body = append(body, ev.Type...)
	body = binary.AppendUvarint(body, uint64(len(ev.EntityID)))
	body = append(body, ev.EntityID...)
	body = append(body, ev.Object...)
	sc.body = body

	n := 1 + s2.MaxEncodedLen(len(body)-1)
	if cap(sc.out) < n {
		sc.out = make([]byte, n)
	}
	out := sc.out[:n]
	out[0] = eventS2
	enc := eventS2Dict().Encode(out[1:], body[1:])
	if len(enc)+1 >= len(body) {
		return body
	}
	return out[:1+len(enc)]
}
