package capital

import "github.com/corebank/corebank"

var (
	// ErrProductNotFound is returned for an unknown product, and for one
	// the requesting entity may not see: inactive, its owner inactive, the
	// entity's type not eligible, outside the owner's tree, or misconfigured
	// (a share offering with no inventory).
	ErrProductNotFound = corebank.NotFound("product")
	// ErrOrderNotFound is returned for an unknown product order, or one
	// outside the caller's tree.
	ErrOrderNotFound = corebank.NotFound("product order")
	// ErrInvalidForState (400 error_operation_invalid_for_state) is returned
	// when an order's, capital account's or product's state does not allow
	// the move asked for: every withdrawal refusal SPEC.md lists, a confirm
	// of an expired or rejected order, an order of a product off sale, an
	// allotment of an offering already allotted.
	ErrInvalidForState = corebank.InvalidForState(corebank.KindBadRequest, "the object's state does not allow this operation")
	// ErrAlreadyProcessing (409 error_transfer_already_processing) is
	// returned by ConfirmOrder while the order is CONFIRMING (another call
	// holds it) or RECOVERY_REQUIRED (the recovery job has not completed it
	// yet).
	ErrAlreadyProcessing = corebank.E(corebank.KindConflict, "error_transfer_already_processing", "the order's confirmation is still being processed")
)
