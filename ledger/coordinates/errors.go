package coordinates

import "errors"

// ErrInvalid matches, through errors.Is, every error a Validate function
// returns. Its Error text is never shown; the returned *ValidationError's
// Problem is what a caller puts in a field's message.
var ErrInvalid = errors.New("coordinates: invalid identifier")

// ValidationError reports why an identifier is invalid. Problem is a short
// lower-case phrase naming what is wrong ("must be 9 digits", "check digit
// does not match"), suitable as the message of corebank.InvalidField.
type ValidationError struct {
	Problem string
}

func (e *ValidationError) Error() string { return e.Problem }

// Is makes errors.Is(err, ErrInvalid) true.
func (e *ValidationError) Is(target error) bool { return target == ErrInvalid }

func invalid(problem string) error { return &ValidationError{Problem: problem} }

// Problem returns the problem phrase of a validation error, or err's text
// for any other error, or "" for nil. It lets callers write
// problems.Add(field, coordinates.Problem(err)).
func Problem(err error) string {
	if err == nil {
		return ""
	}
	var v *ValidationError
	if errors.As(err, &v) {
		return v.Problem
	}
	return err.Error()
}
