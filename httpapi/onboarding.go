package httpapi

import (
	"context"
	"net/http"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/entities"
)

// createSubmission serves POST /onboarding-submissions: entity_id, the
// body's alone (default the caller's entity, which must lie in the
// caller's tree), is submitted for review. An entity that misses
// requirements is 422 validation_error with details naming each one; one
// already pending, approved or suspended is 409 invalid_entity_state. The
// domain decides scope.
func (h *handler) createSubmission(x *exchange, r *http.Request) error {
	return created(x, r, enveloped(http.StatusCreated, "entity submitted for review"), nil,
		func(ctx context.Context, c corebank.Caller, req entityOnly) (*entities.Submission, error) {
			return h.ent.SubmitEntity(ctx, c, req.EntityID)
		})
}

// getSubmission serves GET /onboarding-submissions/{id}. The domain
// decides scope: a foreign submission answers as a missing one.
func (h *handler) getSubmission(x *exchange, r *http.Request) error {
	return fetched(x, r, enveloped(http.StatusOK, "submission retrieved"), h.ent.GetSubmission)
}
