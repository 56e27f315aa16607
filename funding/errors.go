package funding

import "github.com/corebank/corebank"

var (
	// ErrInflowNotFound is returned for an unknown inflow ID.
	ErrInflowNotFound = corebank.NotFound("inflow")
	// ErrNoReceivingDetails is returned when an account has account details
	// but none of them accepts funds now (all pending, expired or deleted).
	ErrNoReceivingDetails = corebank.E(corebank.KindRejected, "account_details_inactive", "the account's details do not accept inbound funds")
)
