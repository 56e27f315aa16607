package ledger

import "github.com/corebank/corebank"

// Errors returned by the ledger. Compare with errors.Is; the returned copies
// may carry a more specific message or fields.
var (
	// ErrAccountNotFound is returned for an unknown account ID or service
	// BAN, and for an account outside the caller's tree. Each not-found
	// error names its resource (corebank.NotFound), so errors.Is tells it
	// from ErrHoldNotFound, ErrEntryNotFound and ErrAccountDetailsNotFound;
	// all share the code not_found.
	ErrAccountNotFound = corebank.NotFound("account")
	// ErrHoldNotFound is returned for an unknown hold ID.
	ErrHoldNotFound = corebank.NotFound("hold")
	// ErrEntryNotFound is returned for an unknown journal entry ID.
	ErrEntryNotFound = corebank.NotFound("journal entry")

	// ErrInsufficientFunds is returned when a debit would take a customer
	// account's available balance below zero. Nothing is written.
	ErrInsufficientFunds = corebank.E(corebank.KindRejected, "insufficient_funds", "insufficient funds")
	// ErrAccountNotEmpty is returned by DeleteAccount while the account has a
	// non-zero balance or pending holds.
	ErrAccountNotEmpty = corebank.E(corebank.KindRejected, "account_not_empty", "the account has a balance or pending holds")
	// ErrAccountDeleted is returned when money would move on a deleted account.
	ErrAccountDeleted = corebank.E(corebank.KindRejected, "account_deleted", "the account is deleted")
	// ErrInflowsNotAllowed is returned when an account's configuration
	// forbids credits.
	ErrInflowsNotAllowed = corebank.E(corebank.KindRejected, "inflows_not_allowed", "the account does not accept inflows")
	// ErrOutflowsNotAllowed is returned when an account's configuration
	// forbids debits.
	ErrOutflowsNotAllowed = corebank.E(corebank.KindRejected, "outflows_not_allowed", "the account does not allow outflows")
	// ErrHoldNotPending is returned when posting or voiding a hold that is
	// already posted, voided or expired (other than an identical retry).
	ErrHoldNotPending = corebank.E(corebank.KindRejected, "hold_not_pending", "the hold is no longer pending")

	// ErrBalanceLimit is returned when a movement would take a balance
	// beyond ±2^62, where int64 arithmetic could overflow.
	ErrBalanceLimit = corebank.E(corebank.KindRejected, "balance_limit_exceeded", "the balance would exceed the ledger's limit")

	// ErrIdempotencyKeyReused is returned when a key is reused with different
	// content; Fields names each differing field.
	ErrIdempotencyKeyReused = corebank.E(corebank.KindConflict, "idempotency_key_reused", "the idempotency key was used for a different request")

	// ErrCurrencyMismatch is returned when the accounts of a hold differ in
	// currency, or a line's currency does not match its account.
	ErrCurrencyMismatch = corebank.E(corebank.KindInvalid, "currency_mismatch", "accounts differ in currency")
	// ErrUnbalancedEntry is returned when an entry's debits and credits differ
	// in some currency; Fields names the currency ("lines.USD").
	ErrUnbalancedEntry = corebank.E(corebank.KindInvalid, "unbalanced_entry", "debits and credits differ")
)

// Errors about account details.
var (
	// ErrAccountDetailsNotFound is returned for an unknown account details
	// ID, and for details outside the caller's tree.
	ErrAccountDetailsNotFound = corebank.NotFound("account details")
	// ErrAccountDetailsInactive is returned when details that are deleted or
	// expired are activated or asked to accept funds.
	ErrAccountDetailsInactive = corebank.E(corebank.KindRejected, "account_details_inactive", "the account details are deleted or expired")
	// ErrAccountNumberTaken is returned by CreateAccountDetails when the
	// provider issues an account number or IBAN that other details already
	// hold; retrying asks the provider for another.
	ErrAccountNumberTaken = corebank.E(corebank.KindConflict, corebank.CodeConflict, "the provider issued an account number that is already in use")
	// ErrAccountDetailsPending is returned by AcceptsInflowsTx for details
	// whose provisioning has not completed.
	ErrAccountDetailsPending = corebank.E(corebank.KindRejected, "account_details_pending", "the account details are not active yet")
)

// accountNotFound is ErrAccountNotFound naming account id: what a missing
// account and one outside the caller's tree answer alike.
func accountNotFound(id string) error {
	return ErrAccountNotFound.With("account " + id + " not found")
}

// detailsNotFound is ErrAccountDetailsNotFound naming details id.
func detailsNotFound(id string) error {
	return ErrAccountDetailsNotFound.With("account details " + id + " not found")
}
