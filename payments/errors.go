package payments

import (
	"github.com/corebank/corebank"
	"github.com/corebank/corebank/ledger"
)

// Errors returned by the payments service. Compare with errors.Is; the
// returned copies may carry a more specific message, fields or data. Each
// resource's not-found error is its own under errors.Is (a missing payment
// detail is not ErrAccountNotFound) while all answer code not_found.
// corebank.ErrEntityNotFound answers an entity_id the caller may not act
// for, and corebank.ErrForbidden a change asked by a read-only caller.
// Validation failures are corebank validation errors (code
// validation_error) naming each bad field by its JSON path.
var (
	// ErrCounterpartyNotFound is returned for an unknown counterparty, or one
	// the caller may not act on (outside its tree, or not the entity the
	// request acts for).
	ErrCounterpartyNotFound = corebank.NotFound("counterparty")
	// ErrPaymentDetailNotFound is returned for an unknown payment detail, or
	// one the caller may not act on.
	ErrPaymentDetailNotFound = corebank.NotFound("payment detail")
	// ErrQuoteNotFound is returned for an unknown FX quote, or one the caller
	// may not act on.
	ErrQuoteNotFound = corebank.NotFound("fx quote")
	// ErrTransferNotFound is returned for an unknown transfer, or one the
	// caller may not act on.
	ErrTransferNotFound = corebank.NotFound("transfer")
	// ErrAccountNotFound is returned when a request names an account that
	// does not exist, is deleted, or that the caller may not act on. It is
	// ledger.ErrAccountNotFound itself: one resource, one sentinel.
	ErrAccountNotFound = ledger.ErrAccountNotFound

	// ErrDuplicateReference is returned by CreateTransfer when the account
	// already has a transfer with the same unique_reference. Its Data is the
	// original *Transfer.
	ErrDuplicateReference = corebank.E(corebank.KindConflict, "duplicate_reference", "a transfer with this unique_reference already exists for the account")
	// ErrFXProviderUnavailable is returned by CreateQuote when the rate
	// provider cannot be reached; retrying after a short delay may succeed.
	ErrFXProviderUnavailable = corebank.E(corebank.KindUnavailable, "fx_provider_unavailable", "the exchange rate provider is unavailable")
	// ErrPayoutProviderUnavailable is what RunDue returns when the payout
	// provider fails a check (the provider's error is its Err): the
	// transfer waits as it is and is checked again 30 s later, so the
	// error is the provider's unavailability (503), not corebank's fault.
	ErrPayoutProviderUnavailable = corebank.E(corebank.KindUnavailable, "payout_provider_unavailable", "the payout provider is unavailable")
	// ErrInvalidForState is returned when a transfer cannot make the
	// requested move from its current status (for example reversing a
	// pending transfer, or failing a successful one).
	ErrInvalidForState = corebank.InvalidForState(corebank.KindConflict, "the operation is not valid in the object's current state")
)
