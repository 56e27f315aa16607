package storage

import (
	"bytes"
	"encoding/json"
	"sync"
)

// PutJSON encodes into a reused buffer rather than json.Marshal's fresh
// one: Put copies the value (Tx: slices passed in may be reused), so the
// encoded bytes were garbage as soon as Put returned. A card
// authorization stores its record with PutJSON, and that buffer, about
// 1.2 KB, was 12% of the bytes cards BenchmarkAuthorize allocates per
// authorization, whose p99 under 16 callers is set by the garbage
// collector. TestPutJSONBuffer holds the bytes equal to json.Marshal's.

// jsonBuffer is an encoder and the buffer it writes to.
type jsonBuffer struct {
	buf bytes.Buffer
	enc *json.Encoder
}

var jsonBuffers = sync.Pool{New: func() any {
	e := &jsonBuffer{}
	e.enc = json.NewEncoder(&e.buf)
	return e
}}

// maxPooledJSON is the largest buffer put back: one huge record must not
// pin its buffer for good.
const maxPooledJSON = 64 << 10

// marshal returns v as json.Marshal encodes it, in e's buffer, valid
// until e is released. Encoder.Encode is Marshal (HTML escaped, no
// indent) and a newline, which marshal cuts.
func (e *jsonBuffer) marshal(v any) ([]byte, error) {
	e.buf.Reset()
	if err := e.enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(e.buf.Bytes(), []byte{'\n'}), nil
}

// release puts e back in the pool unless its buffer grew too large.
func (e *jsonBuffer) release() {
	if e.buf.Cap() <= maxPooledJSON {
		jsonBuffers.Put(e)
	}
}
