package entities

import "github.com/corebank/corebank"

// Errors returned by this package. Validation failures are
// corebank.Invalid errors (code validation_error) naming each field by its
// dotted JSON path. Each resource has its own not-found error, distinct
// under errors.Is, and an object outside the caller's tree answers it
// exactly as a missing one does.
var (
	// ErrEntityNotFound reports an entity that does not exist or lies outside
	// the caller's tree; the two are indistinguishable on purpose. It is
	// corebank.ErrEntityNotFound, which every package answers for an
	// entity_id it may not use.
	ErrEntityNotFound = corebank.ErrEntityNotFound

	// ErrAPIKeyNotFound reports an API key that does not exist or belongs to
	// an entity outside the caller's tree.
	ErrAPIKeyNotFound = corebank.NotFound("api key")

	// ErrDocumentNotFound reports a document that does not exist or belongs
	// to an entity outside the caller's tree.
	ErrDocumentNotFound = corebank.NotFound("document")

	// ErrSubmissionNotFound reports an onboarding submission that does not
	// exist or belongs to an entity outside the caller's tree.
	ErrSubmissionNotFound = corebank.NotFound("submission")

	// ErrUnauthorized reports a secret that matches no API key (unknown,
	// rotated away or deleted).
	ErrUnauthorized = corebank.E(corebank.KindUnauthorized, "unauthorized", "the API key is not valid")

	// ErrEntityNotApproved is the gate's answer when an entity that is not
	// approved (incomplete, pending or rejected) tries to open an account or
	// move money.
	ErrEntityNotApproved = corebank.E(corebank.KindRejected, "entity_not_approved", "the entity must be approved first")

	// ErrEntitySuspended is the gate's answer when a suspended entity tries to
	// open an account or move money; it can still read.
	ErrEntitySuspended = corebank.E(corebank.KindRejected, "entity_suspended", "the entity is suspended: it can read but not open accounts or move money")

	// ErrInvalidTransition reports a review decision or submission that the
	// entity's current status does not allow.
	ErrInvalidTransition = corebank.E(corebank.KindConflict, "invalid_entity_state", "the entity's status does not allow this")

	// ErrFileTooLarge reports an uploaded document file over MaxFileSize
	// decoded bytes. Fields names the file ("file" or "file_back").
	ErrFileTooLarge = corebank.E(corebank.KindTooLarge, "file_too_large", "a document file may be at most 10 MiB")
)
