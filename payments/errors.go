package payments

import "github.com/corebank/corebank"

// Errors returned by the payments service. Compare with errors.Is; the
// returned copies may carry a more specific message, fields or data.
// Validation failures are corebank validation errors (code
// validation_error) naming each bad field by its JSON path.
var (
	// ErrCounterpartyNotFound is returned for an unknown counterparty, or one
	// owned by another entity.
	ErrCounterpartyNotFound = corebank.E(corebank.KindNotFound, corebank.CodeNotFound, "counterparty not found")
	// ErrPaymentDetailNotFound is returned for an unknown payment detail, or
	// one owned by another entity.
	ErrPaymentDetailNotFound = corebank.E(corebank.KindNotFound, corebank.CodeNotFound, "payment detail not found")
	// ErrQuoteNotFound is returned for an unknown FX quote, or one owned by
	// another entity.
	ErrQuoteNotFound = corebank.E(corebank.KindNotFound, corebank.CodeNotFound, "fx quote not found")
	// ErrTransferNotFound is returned for an unknown transfer, or one owned by
	// another entity.
	ErrTransferNotFound = corebank.E(corebank.KindNotFound, corebank.CodeNotFound, "transfer not found")
	// ErrAccountNotFound is returned when a request names an account that
	// does not exist, is deleted, or belongs to another entity.
	ErrAccountNotFound = corebank.E(corebank.KindNotFound, corebank.CodeNotFound, "account not found")

	// ErrDuplicateReference is returned by CreateTransfer when the account
	// already has a transfer with the same unique_reference. Its Data is the
	// original *Transfer.
	ErrDuplicateReference = corebank.E(corebank.KindConflict, "duplicate_reference", "a transfer with this unique_reference already exists for the account")
	// ErrFXProviderUnavailable is returned by CreateQuote when the rate
	// provider cannot be reached; retrying after a short delay may succeed.
	ErrFXProviderUnavailable = corebank.E(corebank.KindUnavailable, "fx_provider_unavailable", "the exchange rate provider is unavailable")
	// ErrInvalidForState is returned when a transfer cannot make the
	// requested move from its current status (for example reversing a
	// pending transfer, or failing a successful one).
	ErrInvalidForState = corebank.E(corebank.KindConflict, "error_operation_invalid_for_state", "the operation is not valid in the object's current state")
)
