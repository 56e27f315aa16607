package funding

import "github.com/corebank/corebank"

var (
	// ErrInflowNotFound is returned for an unknown inflow ID.
	ErrInflowNotFound = corebank.NotFound("inflow")
	// ErrNoReceivingDetails is returned when an account has account details
	// but none of them accepts funds now (all pending, expired or deleted).
	ErrNoReceivingDetails = corebank.E(corebank.KindRejected, "account_details_inactive", "the account's details do not accept inbound funds")
)

var (
	// ErrSessionNotFound is returned for an unknown funding session, or one
	// outside the caller's tree.
	ErrSessionNotFound = corebank.NotFound("funding session")
	// ErrDuplicateSession is returned by CreateSession when the entity
	// already has a session with the unique_reference; the original is its
	// Data.
	ErrDuplicateSession = corebank.E(corebank.KindConflict, "duplicate_reference", "a funding session with this unique_reference already exists for the entity")
	// ErrSessionInvalidForState is returned when a session's status does
	// not allow the move asked for (a terminal session, or back to an
	// earlier status).
	ErrSessionInvalidForState = corebank.InvalidForState(corebank.KindConflict, "the funding session's status does not allow this move")
	// ErrNotETransfer is returned by ValidateETransfer (PATCH) for a
	// session of another rail, or one not awaiting_user: 400.
	ErrNotETransfer = corebank.InvalidForState(corebank.KindBadRequest, "only an etransfer session awaiting_user can be validated")
)
