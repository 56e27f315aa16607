package corebank

// ListOptions selects one page of a list. After and Before are item IDs
// (or a package-defined position key) taken from a previous page; at most
// one of them is set. Services treat Limit outside 1-100 as a validation
// error on "limit"; 0 means the service's default.
type ListOptions struct {
	Limit  int
	After  string
	Before string
}

// Page is one page of a list in ascending order. HasNext and HasPrevious say
// whether items exist beyond either end; Next and Previous are the positions
// to pass as After and Before to fetch them ("" when none).
type Page[T any] struct {
	Items       []T
	HasNext     bool
	HasPrevious bool
	Next        string
	Previous    string
	// Total is the number of items matching the filters, where the service
	// keeps a count; -1 when it does not.
	Total int64
}

// DefaultLimit is the page size when a caller gives none.
const DefaultLimit = 20

// MaxLimit is the largest page a caller may ask for.
const MaxLimit = 100

// CheckLimit returns the effective limit, or an error naming "limit".
func (o ListOptions) CheckLimit(def int) (int, error) {
	if o.After != "" && o.Before != "" {
		return 0, InvalidField("cursor", "give either a next or a previous cursor, not both")
	}
	switch {
	case o.Limit == 0:
		return def, nil
	case o.Limit < 1 || o.Limit > MaxLimit:
		return 0, InvalidField("limit", "must be between 1 and 100")
	}
	return o.Limit, nil
}

// ErrCursor is the answer to a cursor a list did not issue: tampered,
// malformed, or from another list or other filters.
var ErrCursor = InvalidField("cursor", "is not a cursor this list issued")

// ValidID reports whether s has the form of the IDs corebank issues: a
// 26-character ULID in Crockford base32, upper case.
func ValidID(s string) bool {
	if len(s) != 26 || s[0] > '7' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9', c >= 'A' && c <= 'Z' && c != 'I' && c != 'L' && c != 'O' && c != 'U':
		default:
			return false
		}
	}
	return true
}
