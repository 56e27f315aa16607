package memory

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"
)

// TestLogTree checks the log's tree against a sorted slice through random
// inserts (appends to interleaved ranges, and anywhere), deletes and every
// kind of ordered walk, with the node invariants after each step.
func TestLogTree(t *testing.T) {
	for _, shape := range []string{"append", "random", "drain", "deep", "items"} {
		t.Run(shape, func(t *testing.T) {
			r := rand.New(rand.NewSource(1))
			// "items" is "random" in a hashed bucket's tree.
			tr := newLogTree(shape == "items")
			// The model: the keys present, unordered, and where each is.
			var keys []string
			at := map[string]int{}
			recs := map[string]entry{}
			rec := func(k string) entry {
				if e, ok := recs[k]; ok {
					return e
				}
				b := appendRec(nil, []byte(k))
				b = appendRec(b, nil)
				b = append(b, 0)
				recs[k] = entry(&b[0])
				if tr.items {
					recs[k] = entry(&item{key: record(&b[0])})
				}
				return recs[k]
			}
			next := map[int]int{}
			key := func() string {
				if shape == "random" || shape == "items" || shape == "deep" && r.Intn(2) == 0 {
					return fmt.Sprintf("k%07d", r.Intn(20000*(1+19*b2i(shape == "deep"))))
				}
				s := r.Intn(6)
				next[s]++
				return fmt.Sprintf("s%d/%06d", s, next[s])
			}
			steps := 6000
			if shape == "deep" {
				steps = 400000 // three levels of inner nodes
			}
			for step := range steps {
				switch {
				case shape == "drain" && step >= 3000 || r.Intn(10) == 0:
					if len(keys) == 0 {
						continue
					}
					i := r.Intn(len(keys))
					k := keys[i]
					tr.Delete(rec(k))
					keys[i] = keys[len(keys)-1]
					at[keys[i]] = i
					keys = keys[:len(keys)-1]
					delete(at, k)
				default:
					k := key()
					_, found := tr.Insert(rec(k))
					_, had := at[k]
					if found != had {
						t.Fatalf("step %d: Insert(%s) found=%v, model has it: %v", step, k, found, had)
					}
					if !had {
						at[k] = len(keys)
						keys = append(keys, k)
					}
				}
				if shape != "deep" && (step%97 == 0 || step > steps-100) || step%100000 == 0 || step == steps-1 {
					model := slices.Clone(keys)
					slices.Sort(model)
					checkLog(t, tr, model, r)
				}
			}
			depth := 0
			for n := tr.root; n.kids != nil; n = n.kids[0] {
				depth++
			}
			if shape == "deep" && depth < 3 {
				t.Errorf("%d keys in %d levels of inner nodes; want 3", tr.Len(), depth)
			}
		})
	}
}

func checkLog(t *testing.T, tr *logTree, model []string, r *rand.Rand) {
	t.Helper()
	if tr.Len() != len(model) {
		t.Fatalf("Len %d, want %d", tr.Len(), len(model))
	}
	var got []string
	tr.Ascend(func(e entry) bool { got = append(got, tr.key(e)); return true })
	if !slices.Equal(got, model) {
		t.Fatalf("Ascend = %d keys, want %d", len(got), len(model))
	}
	got = got[:0]
	tr.Descend(func(e entry) bool { got = append(got, tr.key(e)); return true })
	slices.Reverse(got)
	if !slices.Equal(got, model) {
		t.Fatal("Descend differs")
	}
	checkNode(t, tr, tr.root, nil)
	for range 20 {
		var pivot string
		if len(model) > 0 && r.Intn(2) == 0 {
			pivot = model[r.Intn(len(model))]
		} else {
			pivot = fmt.Sprintf("%c%d", "ks"[r.Intn(2)], r.Intn(100000))
		}
		p := appendRec(nil, []byte(pivot))
		pe := entry(&p[0])
		if tr.items {
			pe = entry(&item{key: pe})
		}
		i, has := slices.BinarySearch(model, pivot)
		if _, ok := tr.Get(pe); ok != has {
			t.Fatalf("Get(%s) = %v, want %v", pivot, ok, has)
		}
		var first string
		tr.AscendGreaterOrEqual(pe, func(e entry) bool { first = tr.key(e); return false })
		if want := ""; i < len(model) && first != model[i] || i == len(model) && first != want {
			t.Fatalf("AscendGreaterOrEqual(%s) starts at %q", pivot, first)
		}
		j := i - 1
		if has {
			j = i
		}
		var last string
		n := 0
		tr.DescendLessOrEqual(pe, func(e entry) bool { last = tr.key(e); n++; return n < 2 })
		if j >= 0 && last != model[max(j-1, 0)] || j < 0 && n != 0 {
			t.Fatalf("DescendLessOrEqual(%s) walked to %q", pivot, last)
		}
	}
}

// checkNode checks parent links, order, each entry's key prefix (in a
// hashed bucket's tree; none in a log's), and that
// each inner entry is the first entry under its child.
func checkNode(t *testing.T, tr *logTree, n, parent *lnode) string {
	t.Helper()
	if n.parent != parent {
		t.Fatal("bad parent link")
	}
	if (n.pres != nil) != tr.items || tr.items && len(n.pres) != len(n.ents) {
		t.Fatalf("%d prefixes for %d entries (items %v)", len(n.pres), len(n.ents), tr.items)
	}
	for i, p := range n.pres {
		if p != keyPrefix(tr.key(n.ents[i])) {
			t.Fatalf("prefix %x of %q", p, tr.key(n.ents[i]))
		}
	}
	if n.kids == nil {
		for i := 1; i < len(n.ents); i++ {
			if tr.key(n.ents[i-1]) >= tr.key(n.ents[i]) {
				t.Fatal("leaf out of order")
			}
		}
		if len(n.ents) == 0 {
			if parent != nil {
				t.Fatal("empty leaf in the tree")
			}
			return ""
		}
		return tr.key(n.ents[0])
	}
	if len(n.kids) != len(n.ents) || len(n.kids) == 0 {
		t.Fatal("inner node shape")
	}
	for i, k := range n.kids {
		if first := checkNode(t, tr, k, n); first != tr.key(n.ents[i]) {
			t.Fatalf("inner entry %q, child starts at %q", tr.key(n.ents[i]), first)
		}
	}
	return tr.key(n.ents[0])
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
