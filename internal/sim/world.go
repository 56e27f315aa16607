package sim

import (
	"math/rand/v2"
	"slices"
)

// World is what the simulator knows of the bank it built: enough to aim
// requests at real objects. It is a guide, not an oracle: the bank's
// answers decide what exists, and the checks read the bank itself.
type World struct {
	Root     Entity
	Entities []*Entity
	Accounts []*Account
}

// Entity is an onboarded person or business.
type Entity struct {
	ID     string
	Type   string // individual or business
	Status string // as last seen
	Parent string
	Key    string // a full-access key of its own, once made
}

// Account is a currency account.
type Account struct {
	ID       string
	Entity   string
	Currency string
	Deleted  bool
}

// AddEntity records an entity.
func (s *Sim) AddEntity(e *Entity) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.world.Entities = append(s.world.Entities, e)
}

// AddAccount records an account.
func (s *Sim) AddAccount(a *Account) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.world.Accounts = append(s.world.Accounts, a)
}

// PickEntity returns a random entity whose copy satisfies keep, or nil.
// The root is one of the candidates.
func (s *Sim) PickEntity(r *rand.Rand, keep func(Entity) bool) *Entity {
	s.mu.Lock()
	defer s.mu.Unlock()
	cands := []*Entity{&s.world.Root}
	cands = append(cands, s.world.Entities...)
	return pickWhere(r, cands, func(e *Entity) bool { return keep == nil || keep(*e) })
}

// PickAccount returns a random live account whose copy satisfies keep, or
// nil.
func (s *Sim) PickAccount(r *rand.Rand, keep func(Account) bool) *Account {
	s.mu.Lock()
	defer s.mu.Unlock()
	return pickWhere(r, s.world.Accounts, func(a *Account) bool { return !a.Deleted && (keep == nil || keep(*a)) })
}

// Accounts returns copies of every live account.
func (s *Sim) Accounts() []Account {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Account
	for _, a := range s.world.Accounts {
		if !a.Deleted {
			out = append(out, *a)
		}
	}
	return out
}

// Update changes the world under its lock.
func (s *Sim) Update(fn func(w *World)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fn(&s.world)
}

// RootID is the root entity's ID.
func (s *Sim) RootID() string { return s.world.Root.ID }

// pickWhere returns a random element of l that keep accepts, or the zero
// value. It reads at most all of l, starting at a random place.
func pickWhere[T any](r *rand.Rand, l []T, keep func(T) bool) T {
	var zero T
	if len(l) == 0 {
		return zero
	}
	start := r.IntN(len(l))
	for i := range l {
		v := l[(start+i)%len(l)]
		if keep(v) {
			return v
		}
	}
	return zero
}

// Pick returns a random element of l, or the zero value.
func Pick[T any](r *rand.Rand, l []T) T {
	var zero T
	if len(l) == 0 {
		return zero
	}
	return l[r.IntN(len(l))]
}

// Choose returns one of the given values.
func Choose[T any](r *rand.Rand, vs ...T) T { return vs[r.IntN(len(vs))] }

// Chance is true with probability p.
func Chance(r *rand.Rand, p float64) bool { return r.Float64() < p }

// Remove drops the elements keep rejects, in place.
func Remove[T any](l []T, drop func(T) bool) []T { return slices.DeleteFunc(l, drop) }
