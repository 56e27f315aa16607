package httpapi

import (
	"net/http"

	"github.com/corebank/corebank"
)

// errSubmissionNotFound is the answer for a missing submission and for one
// of an entity outside the caller's tree alike.
var errSubmissionNotFound = corebank.NotFound("submission")

// createSubmission serves POST /onboarding-submissions: entity_id (default
// the caller's entity, which must lie in the caller's tree) is submitted for
// review. An entity that misses requirements is 422 validation_error with
// details naming each one; one already pending, approved or suspended is 409
// invalid_entity_state.
func (h *handler) createSubmission(x *exchange, r *http.Request) error {
	requested, err := bodyEntityID(x)
	if err != nil {
		return err
	}
	ctx := r.Context()
	entity, err := h.scope(ctx, x, requested)
	if err != nil {
		return err
	}
	sub, err := h.ent.Submit(ctx, entity)
	if err != nil {
		return err
	}
	return ok(x, http.StatusCreated, "entity submitted for review", sub)
}

// getSubmission serves GET /onboarding-submissions/{id}.
func (h *handler) getSubmission(x *exchange, r *http.Request) error {
	entity, err := queryEntityID(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	sub, err := h.ent.GetSubmission(ctx, r.PathValue("id"))
	if err != nil {
		if notFound(err) {
			return errSubmissionNotFound
		}
		return err
	}
	if err := h.within(ctx, x, sub.EntityID, entity, errSubmissionNotFound); err != nil {
		return err
	}
	return ok(x, http.StatusOK, "submission retrieved", sub)
}
