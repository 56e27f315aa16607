package httpapi

import (
	"errors"
	"testing"

	"github.com/corebank/corebank"
)

// TestSyntaxError: a syntax error names the member being read or just
// read where the JSON breaks, and the body when no member is in progress.
func TestSyntaxError(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`{"account_id":"x","amount": }`, "amount"},
		{`{"name":`, "name"},
		{`{"type":"checking",`, "body"},
		{`{name:"a"}`, "body"},
		{`{"person":{"first_name":"A","date_of_birth":19-01}}`, "person.date_of_birth"},
		{`{"items":[1,}`, "items.1"},
		{`{"officers":[{"person":{"email":}}]}`, "officers.0.person.email"},
		{`{"a":{,}}`, "a"},
		{`[1,`, "1"},
		{`{"amount":12 3}`, "amount"},
		{`{"items":[1 2]}`, "items.0"},
		{`{"a":"b"}x`, ""}, // the first value is well formed
		{`{"a":"b"}`, ""},
	} {
		err := syntaxError([]byte(tc.body))
		var ce *corebank.Error
		switch {
		case err == nil:
			if tc.want != "" {
				t.Errorf("syntaxError(%s) = nil, want %q named", tc.body, tc.want)
			}
		case !errors.As(err, &ce) || ce.Kind != corebank.KindInvalid:
			t.Errorf("syntaxError(%s) = %v, want a validation error", tc.body, err)
		case ce.Fields[tc.want] == "":
			t.Errorf("syntaxError(%s) names %v, want %q", tc.body, ce.Fields, tc.want)
		}
	}
}
