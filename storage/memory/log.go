package memory

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
	pres       []uint64 // in a hashed bucket's tree, keyPrefix of each entry's key (log_prefix.go)
	kids       []*lnode // nil for a leaf
	prev, next *lnode   // neighbouring leaves
}

// lnodeMax is the capacity of a node: 512 bytes of entries.
const lnodeMax = 64

// newNode returns an empty node of t, inner when inner is set.
func (t *logTree) newNode(inner bool) *lnode {
	return t.newNodeCap(inner, lnodeMax)
}

// newNodeCap is newNode with room for n entries before the first append
// grows them.
func (t *logTree) newNodeCap(inner bool, n int) *lnode {
	l := &lnode{ents: make([]entry, 0, n)}
	if t.items {
		l.pres = make([]uint64, 0, n)
	}
	if inner {
		l.kids = make([]*lnode, 0, n)
	}
	return l
}

// put inserts e, whose key has prefix p, at i.
func (n *lnode) put(i int, e entry, p uint64) {
	n.ents = insertAt(n.ents, i, e)
	if n.pres != nil {
		n.pres = insertAt(n.pres, i, p)
	}
}

// putFirst inserts kid's first entry at i, n being kid's parent.
func (n *lnode) putFirst(i int, kid *lnode) {
	n.ents = insertAt(n.ents, i, kid.ents[0])
	if n.pres != nil {
		n.pres = insertAt(n.pres, i, kid.pres[0])
	}
}

// take appends src's entries (and children) from i on, and cuts them from
// src.
func (n *lnode) take(src *lnode, i int) {
	n.ents = append(n.ents, src.ents[i:]...)
	clear(src.ents[i:])
	src.ents = src.ents[:i]
	if n.pres != nil {
		n.pres = append(n.pres, src.pres[i:]...)
		src.pres = src.pres[:i]
	}
	if src.kids != nil {
		n.kids = append(n.kids, src.kids[i:]...)
		clear(src.kids[i:])
		src.kids = src.kids[:i]
	}
}

// cut removes the entry (and child) at i.
func (n *lnode) cut(i int) {
	last := len(n.ents) - 1
	copy(n.ents[i:], n.ents[i+1:])
	n.ents[last] = nil
	n.ents = n.ents[:last]
	if n.pres != nil {
		copy(n.pres[i:], n.pres[i+1:])
		n.pres = n.pres[:last]
	}
	if n.kids != nil {
		copy(n.kids[i:], n.kids[i+1:])
		n.kids[last] = nil
		n.kids = n.kids[:last]
	}
}

// newLogTree returns an empty tree, of items when items is set.
func newLogTree(items bool) *logTree {
	t := &logTree{items: items}
	// A bucket's first leaf grows as it fills: most buckets of a small
	// store (a sandbox workspace's) hold a few keys.
	l := t.newNodeCap(false, 4)
	t.root, t.first, t.last = l, l, l
	return t
}

func (t *logTree) Len() int { return t.n }

// key returns the key of an element.
func (t *logTree) key(e entry) string {
	if t.items {
		return recString((*item)(e).key)
	}
	return recString(e)
}

// descend returns the leaf whose range holds k, whose prefix is p (the
// first leaf when k precedes every entry).
func (t *logTree) descend(k string, p uint64) *lnode {
	n := t.root
	for n.kids != nil {
		// The last child whose first entry is at or before k.
		i := t.searchGT(n, k, p) - 1
		n = n.kids[max(i, 0)]
	}
	return n
}

// leafFor is descend that tries the hinted leaves first.
func (t *logTree) leafFor(k string, p uint64) *lnode {
	for _, l := range t.hints {
		if l == nil || len(l.ents) == 0 || t.before(l, k, p) {
			continue
		}
		if l.next == nil || t.before(l.next, k, p) {
			return l
		}
	}
	l := t.descend(k, p)
	t.hints[t.next%uint8(len(t.hints))] = l
	t.next++
	return l
}

// find returns the leaf whose range holds e, the index of the first
// element at or after e in it, and whether that element has e's key.
func (t *logTree) find(e entry) (*lnode, int, bool) {
	k := t.key(e)
	p := keyPrefix(k)
	l := t.descend(k, p)
	i, ok := t.searchGE(l, k, p)
	return l, i, ok
}

// Get returns the stored entry equal to e.
func (t *logTree) Get(e entry) (entry, bool) {
	if l, i, ok := t.find(e); ok {
		return l.ents[i], true
	}
	return nil, false
}

// Insert adds e unless an equal entry is present, which it returns.
func (t *logTree) Insert(e entry) (entry, bool) {
	k := t.key(e)
	p := keyPrefix(k)
	l := t.leafFor(k, p)
	i, found := t.searchGE(l, k, p)
	if found {
		return l.ents[i], true
	}
	t.n++
	if len(l.ents) < lnodeMax {
		l.put(i, e, p)
		if i == 0 {
			t.fixFirst(l)
		}
		return nil, false
	}
	r := t.newNode(false)
	switch {
	case i == len(l.ents): // an append: l stays full
		r.put(0, e, p)
	case i == 0: // a prepend: l keeps only e
		r.take(l, 0)
		l.put(0, e, p)
		t.fixFirst(l)
	default:
		h := len(l.ents) / 2
		r.take(l, h)
		if i <= h {
			l.put(i, e, p)
		} else {
			r.put(i-h, e, p)
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
		if n.pres != nil {
			n.parent.pres[i] = n.pres[0]
		}
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
		root := t.newNode(true)
		root.putFirst(0, n)
		root.putFirst(1, r)
		root.kids = append(root.kids, n, r)
		n.parent, r.parent = root, root
		t.root = root
		return
	}
	r.parent = p
	i := indexOf(n) + 1
	if len(p.kids) < lnodeMax {
		p.putFirst(i, r)
		p.kids = insertAt(p.kids, i, r)
		return
	}
	q := t.newNode(true)
	if i == len(p.kids) { // appended: p stays full
		q.putFirst(0, r)
		q.kids = append(q.kids, r)
	} else {
		h := len(p.kids) / 2
		q.take(p, h)
		if i <= h {
			p.putFirst(i, r)
			p.kids = insertAt(p.kids, i, r)
		} else {
			q.putFirst(i-h, r)
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
	l, i, found := t.find(e)
	if !found {
		return
	}
	t.n--
	l.cut(i)
	switch {
	case len(l.ents) > 0:
		if i == 0 {
			t.fixFirst(l)
		}
		// A leaf that deletes thinned out takes in a thin next sibling, so
		// that scattered deletes cannot leave a leaf per live key.
		if r := l.next; len(l.ents) < lnodeMax/4 && r != nil && r.parent == l.parent && len(l.ents)+len(r.ents) <= lnodeMax/2 {
			l.take(r, 0)
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
	p.cut(i)
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
	l, i, _ := t.find(pivot)
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
	l, i, found := t.find(pivot)
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
