package memory

import (
	"fmt"
	"hash/fnv"
	"testing"
)

// BenchmarkTreeInsert inserts keys into a hashed bucket's tree (the tree
// of items) that already holds size keys, in two orders: appends to a few
// interleaved ranges (a ledger history), and keys that lead with a hash
// of an ID (ledger.event_order, whose keys are spread on purpose so that
// PostgreSQL's index has no hot end), which land anywhere and miss every
// cache on the way down.
func BenchmarkTreeInsert(b *testing.B) {
	for _, size := range []int{20_000, 200_000} {
		for _, order := range []string{"append", "hashed"} {
			b.Run(fmt.Sprintf("%s/%d", order, size), func(b *testing.B) {
				key := func(i int) []byte {
					id := fmt.Sprintf("tr_%020d", i)
					if order == "append" {
						return []byte(fmt.Sprintf("acct%d/%s", i%4, id))
					}
					h := fnv.New32a()
					h.Write([]byte(id))
					return append(h.Sum(nil), id...)
				}
				item := func(k []byte) entry {
					r := appendRec(nil, k)
					return entry(&item{key: record(&r[0])})
				}
				tr := newLogTree(true)
				for i := range size {
					tr.Insert(item(key(i)))
				}
				ents := make([]entry, 1<<16)
				for i := range ents {
					ents[i] = item(key(size + i))
				}
				b.ResetTimer()
				n := 0
				for b.Loop() {
					if n == len(ents) {
						b.StopTimer()
						for _, e := range ents {
							tr.Delete(e)
						}
						n = 0
						b.StartTimer()
					}
					tr.Insert(ents[n])
					n++
				}
			})
		}
	}
}
