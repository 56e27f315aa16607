package corebank

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Kind classifies an Error by what the caller can do about it. It carries no
// transport meaning; httpapi maps each Kind to a status in one place.
type Kind int

const (
	// KindInternal is an unexpected failure; its details are never shown to a caller.
	KindInternal Kind = iota
	// KindInvalid is input that fails validation; Fields names each bad field.
	KindInvalid
	// KindNotFound is a missing object, or one outside the caller's reach.
	KindNotFound
	// KindConflict is a clash with existing state (duplicates, races, reused keys).
	KindConflict
	// KindRejected is a well-formed request the current state refuses
	// (insufficient funds, an entity not yet approved, a closed account).
	KindRejected
	// KindUnavailable is a dependency that is down; retrying later may succeed.
	KindUnavailable
	// KindForbidden is an action the caller's credentials do not allow.
	KindForbidden
	// KindUnauthorized is a missing or unknown credential.
	KindUnauthorized
	// KindRateLimited is a caller over a quota.
	KindRateLimited
	// KindTooLarge is a request body or file over its size limit.
	KindTooLarge
	// KindBadRequest is a request the API documents as a 400 rather than a 422.
	KindBadRequest
)

var kindNames = [...]string{"internal", "invalid", "not_found", "conflict", "rejected",
	"unavailable", "forbidden", "unauthorized", "rate_limited", "too_large", "bad_request"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// Error is the error every corebank service returns for anything a caller
// can act on. Code is a stable snake_case identifier; Fields maps a field's
// JSON path (dotted for nesting, "person.first_name") to what is wrong with
// it. Data optionally carries an object the caller needs, such as the
// original transfer of a duplicate reference.
type Error struct {
	Kind    Kind
	Code    string
	Message string
	Fields  map[string]string
	Data    any
	Err     error
	// Resource names what a not-found error is about ("account",
	// "transfer"), so that errors.Is tells one resource's absence from
	// another's while both answer code not_found.
	Resource string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Code)
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if len(e.Fields) > 0 {
		keys := make([]string, 0, len(e.Fields))
		for k := range e.Fields {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteString(" (")
		for i, k := range keys {
			if i > 0 {
				b.WriteString("; ")
			}
			b.WriteString(k + ": " + e.Fields[k])
		}
		b.WriteString(")")
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is an *Error with the same Kind, Code and
// Resource, so that errors.Is(err, ledger.ErrInsufficientFunds) works on
// wrapped copies that carry their own message or fields, and a missing
// payment detail is not ledger.ErrAccountNotFound.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code && t.Kind == e.Kind && t.Resource == e.Resource
}

// E builds an *Error of the given kind and code.
func E(kind Kind, code, message string) *Error {
	return &Error{Kind: kind, Code: code, Message: message}
}

// With returns a copy of e carrying a different message, for reporting a
// sentinel with context while keeping errors.Is working.
func (e *Error) With(message string) *Error {
	c := *e
	c.Message = message
	return &c
}

// WithData returns a copy of e carrying data for the caller.
func (e *Error) WithData(data any) *Error {
	c := *e
	c.Data = data
	return &c
}

// Invalid returns a validation error naming fields. With no fields it still
// reports a validation error; callers should name at least one.
func Invalid(fields map[string]string) *Error {
	msg := "the request is invalid"
	if len(fields) == 1 {
		for k, v := range fields {
			msg = k + ": " + v
		}
	} else if len(fields) > 1 {
		msg = fmt.Sprintf("%d fields are invalid", len(fields))
	}
	return &Error{Kind: KindInvalid, Code: CodeValidation, Message: msg, Fields: fields}
}

// InvalidField is Invalid for a single field.
func InvalidField(field, problem string) *Error {
	return Invalid(map[string]string{field: problem})
}

// NotFound reports a missing object; what names it ("account") and
// becomes its Resource. Declare one per resource and return it (or a copy
// from With) for both a missing object and one outside the caller's tree.
func NotFound(what string) *Error {
	return &Error{Kind: KindNotFound, Code: CodeNotFound, Message: what + " not found", Resource: what}
}

// ErrEntityNotFound reports an entity that does not exist or lies outside
// the caller's tree; the two are indistinguishable on purpose.
var ErrEntityNotFound = NotFound("entity")

// Common codes shared across packages.
const (
	CodeValidation      = "validation_error"
	CodeNotFound        = "not_found"
	CodeConflict        = "conflict"
	CodeInternal        = "internal_error"
	CodeInvalidForState = "error_operation_invalid_for_state"
)

// InvalidForState returns the error of a move that an object's state
// refuses: code CodeInvalidForState, message naming what refused. Every
// domain builds its state errors with it. kind is what the API answers for
// that domain: KindBadRequest (400) where SPEC.md says so (capital) and for
// funding's etransfer validation, KindConflict (409) for the other state
// machines (cards, card transactions, payments, acquiring, funding
// sessions), KindRejected (422) for a deleted webhook. As Is compares Kind
// and Code, errors.Is matches any two of one kind, whichever domain made
// them.
func InvalidForState(kind Kind, message string) *Error {
	return E(kind, CodeInvalidForState, message)
}

// Problems collects field errors during validation so that one response
// names every bad field at once.
type Problems map[string]string

// Add records a problem for field unless one is already recorded.
func (p Problems) Add(field, problem string) {
	if _, ok := p[field]; !ok {
		p[field] = problem
	}
}

// Err returns nil when there are no problems, else an Invalid error.
func (p Problems) Err() error {
	if len(p) == 0 {
		return nil
	}
	return Invalid(map[string]string(p))
}

// BadRequest is Err as a KindBadRequest error: for the requests the API
// documents as a 400 rather than a 422 (refunds, card creation).
func (p Problems) BadRequest() error {
	err := p.Err()
	var e *Error
	if errors.As(err, &e) {
		e.Kind = KindBadRequest
	}
	return err
}

// KindOf returns the Kind of err's first *Error in its chain, or KindInternal.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return KindInternal
}
