package storage

// Ref names one key of a bucket or, with Prefix, every key under a
// prefix: what a Scan with that Prefix alone (no After, no Limit, not
// Reverse, not Queue) reads.
type Ref struct {
	Bucket Bucket
	Key    []byte
	Prefix bool
}

// Prefetcher is an optional interface a Tx may implement (as Peeker is):
// Prefetch reads the keys now, in one go, as Gets of each would, and keeps
// what it read, so that the Gets of them that follow are answered without
// going to the store. storage/postgres implements it: there every Get is
// a round trip to the database, and a transaction that knows what it will
// read makes one instead of many.
type Prefetcher interface {
	Prefetch(keys []Ref) error
}

// Prefetching reports whether tx implements Prefetcher: a caller on a hot
// path asks before it builds the keys, which cost allocations for nothing
// on a store without it.
func Prefetching(tx Tx) bool {
	_, ok := tx.(Prefetcher)
	return ok
}

// Prefetch reads keys ahead of the Gets that will read them, when tx
// implements Prefetcher; otherwise it does nothing, since a Get there
// costs no more than its share of a prefetch would. It never changes what
// those Gets return.
func Prefetch(tx Tx, keys ...Ref) error {
	if p, ok := tx.(Prefetcher); ok && len(keys) > 0 {
		return p.Prefetch(keys)
	}
	return nil
}
