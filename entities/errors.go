package entities

import "github.com/corebank/corebank"

// Errors returned by this package. Validation failures are
// corebank.Invalid errors (code validation_error) naming each field by its
// dotted JSON path; missing or out-of-scope entities are corebank.NotFound.
var (
	// ErrEntityNotFound reports an entity that does not exist or lies outside
	// the caller's tree; the two are indistinguishable on purpose.
	ErrEntityNotFound = corebank.NotFound("entity")

	// ErrAPIKeyNotFound reports an unknown API key ID.
	ErrAPIKeyNotFound = corebank.NotFound("api key")

	// ErrDocumentNotFound reports an unknown document ID.
	ErrDocumentNotFound = corebank.NotFound("document")

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

	// ErrCardData reports card data that is not valid base64 or does not
	// decrypt under the API key's RSA key.
	ErrCardData = corebank.E(corebank.KindInvalid, corebank.CodeValidation, "the card data cannot be decrypted with this API key's encryption key")
)
