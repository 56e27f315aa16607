package acquiring

import "github.com/corebank/corebank"

var (
	// ErrIntentNotFound is returned for an unknown payment intent, or one
	// outside the caller's tree.
	ErrIntentNotFound = corebank.NotFound("payment intent")
	// ErrActionNotFound is returned for an unknown intent action, or one
	// outside the caller's tree.
	ErrActionNotFound = corebank.NotFound("intent action")
	// ErrRefundNotFound is returned for an unknown refund, or one outside
	// the caller's tree.
	ErrRefundNotFound = corebank.NotFound("refund")
	// ErrDuplicateReference is returned by CreateIntent when the account
	// already has an intent with the reference; the original is its Data.
	ErrDuplicateReference = corebank.E(corebank.KindConflict, "duplicate_reference", "a payment intent with this reference already exists for the account")
	// ErrInvalidForState is returned when an intent's or action's status
	// does not allow the move asked for: a confirm or cancel of an intent
	// not in requires_action, a simulate of a final action to another
	// outcome.
	ErrInvalidForState = corebank.InvalidForState(corebank.KindConflict, "the payment's status does not allow this operation")
	// ErrNoCardKey is returned for card data from a caller without an API
	// key (a library caller): there is no key to decrypt it with.
	ErrNoCardKey = corebank.InvalidField("intent_action.payment_type_data.data", "cannot be decrypted: the caller has no API key")
)

var (
	// ErrDisputeNotFound is returned for an unknown dispute, or one outside
	// the caller's tree.
	ErrDisputeNotFound = corebank.NotFound("dispute")
	// ErrAlreadyDisputed is returned by OpenDispute for a charge that
	// already has a dispute (a charge is disputed at most once).
	ErrAlreadyDisputed = corebank.E(corebank.KindConflict, "charge_already_disputed", "the charge already has a dispute")
)
