package memory

import (
	"encoding/binary"
	"sort"
)

// Each node of a hashed bucket's tree keeps, beside its entries, the first
// eight bytes of each entry's key as a big-endian number (pres): a search
// compares those and reads a stored key only when they are equal. Reading a stored key is a
// cache miss or two (an item, then its key record, carved wherever its
// value was), and a descent to a key that lands anywhere in a big bucket,
// such as ledger.event_order's hash-led keys, made about thirty of them
// (BenchmarkTreeInsert/hashed: 440 ns at 20,000 keys and 1 µs at 200,000;
// several µs in a busy server, whose caches hold little of the tree).
// A log bucket's tree, whose inserts are appends that its hints place
// without a search, keeps none: there the prefixes cost more to keep than
// they save (ledger BenchmarkTwoPhaseTransfer was 5-10% slower with them),
// and each node searches its keys alone. TestLogTree checks pres against
// the keys after every step and TestPrefixSearch checks these searches
// against sort.Search on the keys.

// keyPrefix is the first eight bytes of k, zero-padded, as a big-endian
// number: keyPrefix(a) < keyPrefix(b) implies a < b, and a > b likewise,
// so only equal prefixes need the keys.
func keyPrefix(k string) uint64 {
	if len(k) >= 8 {
		return binary.BigEndian.Uint64([]byte(k[:8]))
	}
	var b [8]byte
	copy(b[:], k)
	return binary.BigEndian.Uint64(b[:])
}

// searchGE returns the index of the first entry of n whose key is at or
// after k (p is keyPrefix(k)), and whether that entry's key is k.
func (t *logTree) searchGE(n *lnode, k string, p uint64) (int, bool) {
	if n.pres == nil {
		i := sort.Search(len(n.ents), func(i int) bool { return t.key(n.ents[i]) >= k })
		return i, i < len(n.ents) && t.key(n.ents[i]) == k
	}
	lo, hi := 0, len(n.pres)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if q := n.pres[m]; q < p || q == p && t.key(n.ents[m]) < k {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(n.ents) && n.pres[lo] == p && t.key(n.ents[lo]) == k
}

// searchGT returns the index of the first entry of n whose key is after k
// (p is keyPrefix(k)).
func (t *logTree) searchGT(n *lnode, k string, p uint64) int {
	if n.pres == nil {
		return sort.Search(len(n.ents), func(i int) bool { return t.key(n.ents[i]) > k })
	}
	lo, hi := 0, len(n.pres)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if q := n.pres[m]; q < p || q == p && t.key(n.ents[m]) <= k {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// before reports whether k (with prefix p) sorts before n's first entry,
// which n must have.
func (t *logTree) before(n *lnode, k string, p uint64) bool {
	if n.pres == nil {
		return k < t.key(n.ents[0])
	}
	q := n.pres[0]
	return p < q || p == q && k < t.key(n.ents[0])
}
