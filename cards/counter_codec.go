package cards

import (
	"encoding/binary"
	"encoding/json"

	"github.com/corebank/corebank/storage"
)

// Counters are stored as a version byte and four signed varints rather
// than JSON: an authorization reads and writes one per control and window
// (six for a card with an MCC and a group control), and decoding them as
// JSON was a third of BenchmarkAuthorize. TestCounterCodec checks that
// this codec and JSON read the same counter; counters written as JSON by
// earlier releases are read as JSON.

// counterV1 marks a binary counter; a JSON one starts with '{'.
const counterV1 = 1

// appendCounter appends the stored form of c to dst.
func appendCounter(dst []byte, c counter) []byte {
	dst = append(dst, counterV1)
	for _, v := range [...]int64{c.AmountHold, c.AmountUsed, c.CountHold, c.CountUsed} {
		dst = binary.AppendVarint(dst, v)
	}
	return dst
}

// parseCounter reads a counter appendCounter (or JSON) wrote.
func parseCounter(raw []byte) (counter, error) {
	var c counter
	if len(raw) > 0 && raw[0] == '{' {
		if err := json.Unmarshal(raw, &c); err != nil {
			return counter{}, storage.ErrCorrupt
		}
		return c, nil
	}
	if len(raw) == 0 || raw[0] != counterV1 {
		return counter{}, storage.ErrCorrupt
	}
	raw = raw[1:]
	for _, p := range [...]*int64{&c.AmountHold, &c.AmountUsed, &c.CountHold, &c.CountUsed} {
		v, n := binary.Varint(raw)
		if n <= 0 {
			return counter{}, storage.ErrCorrupt
		}
		*p, raw = v, raw[n:]
	}
	if len(raw) != 0 {
		return counter{}, storage.ErrCorrupt
	}
	return c, nil
}
