package corebank

// Caller is who a service call acts for: the entity of the API key that made
// a request, and whether that key may only read. Services take a Caller and
// decide scope themselves, inside the transaction that reads the object, so
// an object outside the caller's tree answers exactly as a missing one.
//
// The zero Caller may act on nothing. In-process code that is trusted with
// every entity (an embedding program, sandbox tooling, due work) passes
// System().
type Caller struct {
	// EntityID is the entity the caller acts for; it may act on that entity
	// and every entity below it.
	EntityID string
	// KeyID identifies the API key, for audit; it grants nothing.
	KeyID string
	// ReadOnly callers may read but not change anything.
	ReadOnly bool

	system bool
}

// As returns the caller acting for entityID with a read-write key.
func As(entityID string) Caller { return Caller{EntityID: entityID} }

// System returns the caller for trusted in-process work: it may act on
// every entity. Nothing built from a request is ever System.
func System() Caller { return Caller{system: true} }

// IsSystem reports whether c is System().
func (c Caller) IsSystem() bool { return c.system }

// ErrForbidden is returned when a read-only caller asks for a change.
var ErrForbidden = E(KindForbidden, "forbidden", "this API key is read-only: only GET requests are allowed")

// CheckWrite returns ErrForbidden for a read-only caller, else nil.
func (c Caller) CheckWrite() error {
	if c.ReadOnly && !c.system {
		return ErrForbidden
	}
	return nil
}
