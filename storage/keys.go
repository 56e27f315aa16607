package storage

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
)

// Key builds a key from parts joined by '/'. Parts must not contain '/'
// (IDs are ULIDs and currencies are letters, so none do); use Uint64 for
// numbers so that byte order is numeric order.
func Key(parts ...string) []byte {
	n := len(parts)
	for _, p := range parts {
		n += len(p)
	}
	k := make([]byte, 0, n)
	for i, p := range parts {
		if i > 0 {
			k = append(k, '/')
		}
		k = append(k, p...)
	}
	return k
}

// Prefix is Key with a trailing '/', for scanning everything below parts.
func Prefix(parts ...string) []byte {
	return append(Key(parts...), '/')
}

// AppendUint64 appends v big-endian, so that keys sort numerically.
func AppendUint64(k []byte, v uint64) []byte {
	return binary.BigEndian.AppendUint64(k, v)
}

// Uint64 decodes a big-endian uint64 from the first 8 bytes of b.
func Uint64(b []byte) (uint64, error) {
	if len(b) < 8 {
		return 0, fmt.Errorf("storage: %d bytes is too short for a uint64", len(b))
	}
	return binary.BigEndian.Uint64(b), nil
}

// Time-ordered keys hold Unix milliseconds; negative times are not stored,
// so a signed value maps to the same order as unsigned.

// AppendInt64 appends a non-negative v so that keys sort numerically; a
// negative v is clamped to 0.
func AppendInt64(k []byte, v int64) []byte {
	if v < 0 {
		v = 0
	}
	return AppendUint64(k, uint64(v))
}

// LoadJSON returns the JSON record under key, or notFound when the key is
// absent. A value that does not decode is ErrCorrupt (wrapped, naming the
// key). Each domain's getX for its records is this with its own bucket and
// not-found error; a record whose absence is no error, or whose not-found
// message names the key, passes ErrNotFound and maps it.
func LoadJSON[T any](tx Tx, b Bucket, key []byte, notFound error) (*T, error) {
	raw, err := tx.Get(b, key)
	if errors.Is(err, ErrNotFound) {
		return nil, notFound
	}
	if err != nil {
		return nil, err
	}
	v := new(T)
	if err := json.Unmarshal(raw, v); err != nil {
		return nil, fmt.Errorf("%w: decode %s/%s: %v", ErrCorrupt, b, key, err)
	}
	return v, nil
}

// PutJSON encodes v as JSON and stores it under key, in the bytes
// json.Marshal gives (see putjson_buffer.go for how).
func PutJSON(tx Tx, b Bucket, key []byte, v any) error {
	e := jsonBuffers.Get().(*jsonBuffer)
	defer e.release()
	raw, err := e.marshal(v)
	if err != nil {
		return fmt.Errorf("storage: encode %s/%s: %w", b, key, err)
	}
	return tx.Put(b, key, raw)
}

// Exists reports whether key is present.
func Exists(tx Tx, b Bucket, key []byte) (bool, error) {
	_, err := tx.Get(b, key)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}
