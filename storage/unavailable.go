package storage

import (
	"errors"

	"github.com/corebank/corebank"
)

// ErrUnavailable is wrapped by the error of a call that could not reach
// the store: a database that is down, restarting, or out of reach on the
// network. It is a *corebank.Error of KindUnavailable, code
// "unavailable", so httpapi answers 503 with Retry-After; retrying later
// may succeed. Unless the error also wraps ErrOutcomeUnknown, nothing the
// call wrote was committed. Match it with errors.Is; it never stands for
// a failure of the request itself (a constraint, a bad statement, a
// serialization failure out of retries), which stays an internal error.
var ErrUnavailable = &corebank.Error{Kind: corebank.KindUnavailable, Code: "unavailable", Resource: "storage",
	Message: "the database is not answering; retry shortly"}

// ErrOutcomeUnknown is wrapped, beside ErrUnavailable, by the error of an
// Update whose connection broke after its commit was sent: the database
// may have committed it. Only a retry that is safe to repeat (a request
// with the same Idempotency-Key, which replays what was committed) finds
// out.
var ErrOutcomeUnknown = errors.New("storage: the connection broke during the commit, which may have been made")

// Unavailable returns err marked as ErrUnavailable, with the message of
// ErrOutcomeUnknown when err wraps it. A backend calls it on the errors of
// connection-level failures only.
func Unavailable(err error) *corebank.Error {
	e := *ErrUnavailable
	e.Err = err
	if errors.Is(err, ErrOutcomeUnknown) {
		e.Message = "the connection to the database broke while the change was being committed, so it may have been made: " +
			"retry with the same Idempotency-Key, which answers what was done"
	}
	return &e
}
