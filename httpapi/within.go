package httpapi

import "context"

// within answers nil when owner lies in the tree of entityID (the caller's
// entity when ""), which must itself lie in the caller's tree. Otherwise it
// returns nf, the error a missing object gives, so that a foreign object
// looks missing.
//
// It is one of the shared scope helpers (see handler.go) and lived in
// counterparties.go; the payment routes no longer use it (the payments
// service decides scope itself), documents, entities and onboarding still
// do, until their services take the caller. Remove it with the others.
func (h *handler) within(ctx context.Context, x *exchange, owner, entityID string, nf error) error {
	scopeTo, err := h.scopeOrCaller(ctx, x, entityID)
	if err != nil {
		return err
	}
	in, err := h.inScope(ctx, scopeTo, owner)
	if err != nil {
		return err
	}
	if !in {
		return nf
	}
	return nil
}
