package httpapi

import (
	"net/http"
)

// createSubmission serves POST /onboarding-submissions: entity_id (default
// the caller's entity, which must lie in the caller's tree) is submitted for
// review. An entity that misses requirements is 422 validation_error with
// details naming each one; one already pending, approved or suspended is 409
// invalid_entity_state. The domain decides scope.
func (h *handler) createSubmission(x *exchange, r *http.Request) error {
	requested, err := bodyEntityID(x)
	if err != nil {
		return err
	}
	sub, err := h.ent.Submit(r.Context(), x.caller(), requested)
	if err != nil {
		return err
	}
	return ok(x, http.StatusCreated, "entity submitted for review", sub)
}

// getSubmission serves GET /onboarding-submissions/{id}. The domain
// decides scope: a foreign submission answers as a missing one.
func (h *handler) getSubmission(x *exchange, r *http.Request) error {
	within, err := queryEntityID(r)
	if err != nil {
		return err
	}
	sub, err := h.ent.GetSubmission(r.Context(), x.caller(), within, r.PathValue("id"))
	if err != nil {
		return err
	}
	return ok(x, http.StatusOK, "submission retrieved", sub)
}
