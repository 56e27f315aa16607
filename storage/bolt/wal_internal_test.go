package bolt

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank/storage"
)

type logOp struct {
	Op         byte
	Bucket     storage.Bucket
	Key, Value string
}

func ops(payload []byte) ([]logOp, error) {
	var out []logOp
	err := decodeOps(payload, func(op byte, b storage.Bucket, key, value []byte) error {
		out = append(out, logOp{op, b, string(key), string(value)})
		return nil
	})
	return out, err
}

// FuzzDecodeOps feeds arbitrary payloads to the log decoder: it never
// panics, and what it accepts encodes back to the same operations.
func FuzzDecodeOps(f *testing.F) {
	w := &wal{}
	w.reset()
	w.put("b", []byte("key"), []byte("value"))
	w.delete("b", []byte("gone"))
	w.put("other", []byte("k"), nil)
	f.Add(w.buf[recordHeader:])
	f.Add([]byte{opPut, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Add([]byte{opDelete, 1, 'b'})
	f.Fuzz(func(t *testing.T, payload []byte) {
		got, err := ops(payload)
		if err != nil {
			return
		}
		re := &wal{}
		re.reset()
		for _, o := range got {
			if o.Op == opPut {
				re.put(o.Bucket, []byte(o.Key), []byte(o.Value))
			} else {
				re.delete(o.Bucket, []byte(o.Key))
			}
		}
		again, err := ops(re.buf[recordHeader:])
		if err != nil {
			t.Fatalf("re-encoded payload fails to decode: %v", err)
		}
		if diff := cmp.Diff(got, again); diff != "" {
			t.Fatalf("round trip (-first +again):\n%s", diff)
		}
	})
}
