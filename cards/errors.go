package cards

import "github.com/corebank/corebank"

var (
	// ErrCardNotFound is returned for an unknown card, or one outside the
	// caller's tree.
	ErrCardNotFound = corebank.NotFound("card")
	// ErrInvalidForState is returned for a move the card's state refuses:
	// unfreezing a fraud card, any move of a deleted card, a blocked freeze
	// of a fraud card.
	ErrInvalidForState = corebank.InvalidForState(corebank.KindConflict, "the card's status does not allow this operation")
	// ErrCreateLimit is returned when the entity issued Options.CreateLimit
	// cards in the last hour; its Data is a RateLimit.
	ErrCreateLimit = corebank.E(corebank.KindRateLimited, "rate_limited", "card creation limit exceeded")
)

// ErrTransactionNotFound is returned for an unknown card transaction, or
// one outside the caller's tree.
var ErrTransactionNotFound = corebank.NotFound("card transaction")

var (
	// ErrTransactionState is returned for a lifecycle move the card
	// transaction's status refuses (clearing a voided one, refunding a
	// pending one).
	ErrTransactionState = corebank.InvalidForState(corebank.KindConflict, "the card transaction's status does not allow this operation")
	// ErrIncrementDeclined is returned when an increment would pass a
	// control or the available balance; its message names which.
	ErrIncrementDeclined = corebank.E(corebank.KindConflict, "card_increment_declined", "the increment was declined")
	// ErrClearingDeclined is returned when the part of a clearing above
	// the authorization would pass a control or the available balance;
	// its message names which. Nothing changes.
	ErrClearingDeclined = corebank.E(corebank.KindConflict, "card_clearing_declined", "the clearing above the authorized amount was declined")
)
