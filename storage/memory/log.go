package memory

import "sort"

// logTree is a bucket's ordered set of keys: a B+tree with linked leaves,
// shaped for what a store mostly sees, appends at the end of many
// interleaved key ranges (a ledger history: per account, in time order;
// IDs that grow with time). A google/btree spends about twenty comparisons,
// each a cache miss on a stored key, per insert, and its splits leave
// appended-to nodes half empty for good. Here an insert that lands in the
// leaf of a recent insert, or right after it, costs two or three
// comparisons (see hints); a leaf that overflows at its end keeps its
// entries and starts a new leaf, so appended leaves end up full; and a
// delete drops an entry, its leaf once empty, and merges a thinned leaf
// with a thin neighbour, without rebalancing further.
//
// Its elements are entries (a log bucket) or, when items is set, *item (a
// hashed bucket), each ordered by its key record. The Update holder mutates
// it under DB.mu; Views read it under the read lock. Only Insert reads or
// writes hints, so readers never touch them.
type logTree struct {
	// items is set for a hashed bucket's tree, whose elements are *item
	// (keyed by their key record) rather than entries.
	items       bool
	root        *lnode
	first, last *lnode // leftmost and rightmost leaves
	n           int
	// hints are the leaves of the last few inserts: appends to a few
	// ranges at a time (two accounts' two streams) each find their leaf
	// without a descent.
	hints [4]*lnode
	next  uint8 // slot of hints the next descent fills
}

// lnode is a leaf or an inner node. A leaf's ents are its entries in
// order; an inner node's ents[i] is the first entry under kids[i], kept
// exact by every insert and delete, so that a leaf's range is [its first
// entry, the next leaf's first entry). Leaves other than an empty root are
// never empty.
type lnode struct {
	parent     *lnode
	ents       []entry
	kids       []*lnode // nil for a leaf
	prev, next *lnode   // neighbouring leaves
}

// lnodeMax is the capacity of a node: 512 bytes of entries.
const lnodeMax = 64

func newLogTree() *logTree {
	l := &lnode{ents: make([]entry, 0, lnodeMax)}
	return &logTree{root: l, first: l, last: l}
}

func (t *logTree) Len() int { return t.n }

// key returns the key of an element.
func (t *logTree) key(e entry) string {
	if t.items {
		return recString((*item)(e).key)
	}
	return recString(e)
}

// search returns the index of the first element at or after e in ents and
// whether it has e's key.
func (t *logTree) search(ents []entry, e entry) (int, bool) {
	k := t.key(e)
	i := sort.Search(len(ents), func(i int) bool { return t.key(ents[i]) >= k })
	return i, i < len(ents) && t.key(ents[i]) == k
}

// descend returns the leaf whose range holds e (the first leaf when e
// precedes every entry).
func (t *logTree) descend(e entry) *lnode {
	n := t.root
	k := t.key(e)
	for n.kids != nil {
		// The last child whose first entry is at or before e.
		i := sort.Search(len(n.ents), func(i int) bool { return t.key(n.ents[i]) > k }) - 1
		n = n.kids[max(i, 0)]
	}
	return n
}

// leafFor is descend that tries the hinted leaves first.
func (t *logTree) leafFor(e entry) *lnode {
	k := t.key(e)
	for _, l := range t.hints {
		if l == nil || len(l.ents) == 0 || k < t.key(l.ents[0]) {
			continue
		}
		if l.next == nil || k < t.key(l.next.ents[0]) {
			return l
		}
	}
	l := t.descend(e)
	t.hints[t.next%uint8(len(t.hints))] = l
	t.next++
	return l
}

// Get returns the stored entry equal to e.
func (t *logTree) Get(e entry) (entry, bool) {
	l := t.descend(e)
	if i, ok := t.search(l.ents, e); ok {
		return l.ents[i], true
	}
	return nil, false
}

// Insert adds e unless an equal entry is present, which it returns.
func (t *logTree) Insert(e entry) (entry, bool) {
	l := t.leafFor(e)
	i, found := t.search(l.ents, e)
	if found {
		return l.ents[i], true
	}
	t.n++
	if len(l.ents) < lnodeMax {
		l.ents = insertAt(l.ents, i, e)
		if i == 0 {
			t.fixFirst(l)
		}
		return nil, false
	}
	r := &lnode{ents: make([]entry, 0, lnodeMax)}
	switch {
	case i == len(l.ents): // an append: l stays full
		r.ents = append(r.ents, e)
	case i == 0: // a prepend: l keeps only e
		r.ents = append(r.ents, l.ents...)
		clear(l.ents)
		l.ents = append(l.ents[:0], e)
		t.fixFirst(l)
	default:
		h := len(l.ents) / 2
		r.ents = append(r.ents, l.ents[h:]...)
		clear(l.ents[h:])
		l.ents = l.ents[:h]
		if i <= h {
			l.ents = insertAt(l.ents, i, e)
		} else {
			r.ents = insertAt(r.ents, i-h, e)
		}
	}
	r.prev, r.next = l, l.next
	if l.next != nil {
		l.next.prev = r
	} else {
		t.last = r
	}
	l.next = r
	t.addAfter(l, r)
	return nil, false
}

func insertAt[T any](s []T, i int, v T) []T {
	var zero T
	s = append(s, zero)
	copy(s[i+1:], s[i:])
	s[i] = v
	return s
}

// indexOf returns n's index in its parent.
func indexOf(n *lnode) int {
	for i, k := range n.parent.kids {
		if k == n {
			return i
		}
	}
	panic("memory: log node missing from its parent")
}

// fixFirst records n's new first entry in its ancestors.
func (t *logTree) fixFirst(n *lnode) {
	for n.parent != nil {
		i := indexOf(n)
		n.parent.ents[i] = n.ents[0]
		if i != 0 {
			return
		}
		n = n.parent
	}
}

// addAfter links r, a new node, into the tree right after its sibling n,
// splitting ancestors that overflow.
func (t *logTree) addAfter(n, r *lnode) {
	p := n.parent
	if p == nil {
		root := &lnode{ents: make([]entry, 0, lnodeMax), kids: make([]*lnode, 0, lnodeMax)}
		root.ents = append(root.ents, n.ents[0], r.ents[0])
		root.kids = append(root.kids, n, r)
		n.parent, r.parent = root, root
		t.root = root
		return
	}
	r.parent = p
	i := indexOf(n) + 1
	if len(p.kids) < lnodeMax {
		p.ents = insertAt(p.ents, i, r.ents[0])
		p.kids = insertAt(p.kids, i, r)
		return
	}
	q := &lnode{ents: make([]entry, 0, lnodeMax), kids: make([]*lnode, 0, lnodeMax)}
	if i == len(p.kids) { // appended: p stays full
		q.ents = append(q.ents, r.ents[0])
		q.kids = append(q.kids, r)
	} else {
		h := len(p.kids) / 2
		q.ents = append(q.ents, p.ents[h:]...)
		q.kids = append(q.kids, p.kids[h:]...)
		clear(p.ents[h:])
		clear(p.kids[h:])
		p.ents, p.kids = p.ents[:h], p.kids[:h]
		if i <= h {
			p.ents = insertAt(p.ents, i, r.ents[0])
			p.kids = insertAt(p.kids, i, r)
		} else {
			q.ents = insertAt(q.ents, i-h, r.ents[0])
			q.kids = insertAt(q.kids, i-h, r)
		}
	}
	for _, k := range q.kids {
		k.parent = q
	}
	t.addAfter(p, q)
}

// Delete removes the entry equal to e, if any.
func (t *logTree) Delete(e entry) {
	l := t.descend(e)
	i, found := t.search(l.ents, e)
	if !found {
		return
	}
	t.n--
	copy(l.ents[i:], l.ents[i+1:])
	l.ents[len(l.ents)-1] = nil
	l.ents = l.ents[:len(l.ents)-1]
	switch {
	case len(l.ents) > 0:
		if i == 0 {
			t.fixFirst(l)
		}
		// A leaf that deletes thinned out takes in a thin next sibling, so
		// that scattered deletes cannot leave a leaf per live key.
		if r := l.next; len(l.ents) < lnodeMax/4 && r != nil && r.parent == l.parent && len(l.ents)+len(r.ents) <= lnodeMax/2 {
			l.ents = append(l.ents, r.ents...)
			clear(r.ents)
			r.ents = r.ents[:0]
			t.drop(r)
		}
	case l.parent != nil:
		t.drop(l)
	}
}

// drop removes l, an emptied leaf that is not the root, from the tree.
func (t *logTree) drop(l *lnode) {
	if l.prev != nil {
		l.prev.next = l.next
	} else {
		t.first = l.next
	}
	if l.next != nil {
		l.next.prev = l.prev
	} else {
		t.last = l.prev
	}
	for j, h := range t.hints {
		if h == l {
			t.hints[j] = nil
		}
	}
	t.unlink(l)
}

// unlink removes n, now empty, from its parent, and the parent too if that
// leaves it empty; a root left with one child gives way to it.
func (t *logTree) unlink(n *lnode) {
	p := n.parent
	i := indexOf(n)
	copy(p.ents[i:], p.ents[i+1:])
	copy(p.kids[i:], p.kids[i+1:])
	p.ents[len(p.ents)-1], p.kids[len(p.kids)-1] = nil, nil
	p.ents, p.kids = p.ents[:len(p.ents)-1], p.kids[:len(p.kids)-1]
	n.parent = nil
	switch {
	case len(p.kids) == 0:
		t.unlink(p) // p is not the root: the root keeps a child
	case i == 0:
		t.fixFirst(p)
	}
	for len(t.root.kids) == 1 {
		t.root = t.root.kids[0]
		t.root.parent = nil
	}
}

// Ascend calls fn for each entry in order until fn returns false.
func (t *logTree) Ascend(fn func(entry) bool) {
	t.ascendFrom(t.first, 0, fn)
}

// AscendGreaterOrEqual calls fn for each entry at or after pivot, in order,
// until fn returns false.
func (t *logTree) AscendGreaterOrEqual(pivot entry, fn func(entry) bool) {
	l := t.descend(pivot)
	i, _ := t.search(l.ents, pivot)
	t.ascendFrom(l, i, fn)
}

func (t *logTree) ascendFrom(l *lnode, i int, fn func(entry) bool) {
	for ; l != nil; l, i = l.next, 0 {
		for ; i < len(l.ents); i++ {
			if !fn(l.ents[i]) {
				return
			}
		}
	}
}

// Descend calls fn for each entry in reverse order until fn returns false.
func (t *logTree) Descend(fn func(entry) bool) {
	t.descendFrom(t.last, len(t.last.ents)-1, fn)
}

// DescendLessOrEqual calls fn for each entry at or before pivot, in
// reverse order, until fn returns false.
func (t *logTree) DescendLessOrEqual(pivot entry, fn func(entry) bool) {
	l := t.descend(pivot)
	i, found := t.search(l.ents, pivot)
	if !found {
		i--
	}
	t.descendFrom(l, i, fn)
}

func (t *logTree) descendFrom(l *lnode, i int, fn func(entry) bool) {
	for l != nil {
		for ; i >= 0; i-- {
			if !fn(l.ents[i]) {
				return
			}
		}
		if l = l.prev; l != nil {
			i = len(l.ents) - 1
		}
	}
}
