package memory

import (
	"math/rand"
	"slices"
	"sort"
	"strings"
	"testing"
)

// TestPrefixSearch checks the searches by key prefix against sort.Search
// on the keys themselves, on sorted keys that are short, long, share
// their first eight bytes or differ only past them, and contain zero bytes
// (which a short key's padding looks like), for pivots in and out of the
// set.
func TestPrefixSearch(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	alpha := "\x00\x01ab\xff"
	word := func() string {
		var b strings.Builder
		if r.Intn(2) == 0 {
			b.WriteString("commonpre") // nine bytes alike
		}
		for range r.Intn(12) {
			b.WriteByte(alpha[r.Intn(len(alpha))])
		}
		return b.String()
	}
	for round := range 2000 {
		set := map[string]bool{}
		for range 1 + r.Intn(lnodeMax) {
			set[word()] = true
		}
		keys := make([]string, 0, len(set))
		for k := range set {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		tr := newLogTree(true)
		n := tr.newNode(false)
		for i, k := range keys {
			b := appendRec(nil, []byte(k))
			n.put(i, entry(&item{key: record(&b[0])}), keyPrefix(k))
		}
		for range 20 {
			k := word()
			if r.Intn(3) == 0 {
				k = keys[r.Intn(len(keys))]
			}
			p := keyPrefix(k)
			ge := sort.Search(len(keys), func(i int) bool { return keys[i] >= k })
			gt := sort.Search(len(keys), func(i int) bool { return keys[i] > k })
			i, found := tr.searchGE(n, k, p)
			if i != ge || found != (ge < len(keys) && keys[ge] == k) {
				t.Fatalf("round %d: searchGE(%q) = %d, %v; want %d in %q", round, k, i, found, ge, keys)
			}
			if j := tr.searchGT(n, k, p); j != gt {
				t.Fatalf("round %d: searchGT(%q) = %d; want %d in %q", round, k, j, gt, keys)
			}
			if b := tr.before(n, k, p); b != (k < keys[0]) {
				t.Fatalf("round %d: before(%q) = %v, first key %q", round, k, b, keys[0])
			}
		}
	}
}
