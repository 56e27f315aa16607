package storage

// Peeker is an optional interface a Tx may implement (as the drivers of
// database/sql/driver add capabilities): Peek is Get without the copy. The
// returned slice is the stored value itself, valid until the transaction
// ends, and must be neither modified nor retained. storage/memory
// implements it.
type Peeker interface {
	Peek(b Bucket, key []byte) ([]byte, error)
}

// Peek returns the value under key for a decoder that copies what it keeps:
// the stored slice itself when tx implements Peeker, otherwise a copy from
// Get. It returns ErrNotFound for an absent key.
func Peek(tx Tx, b Bucket, key []byte) ([]byte, error) {
	if p, ok := tx.(Peeker); ok {
		return p.Peek(b, key)
	}
	return tx.Get(b, key)
}
