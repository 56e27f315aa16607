package httpapi

import "testing"

// TestMalformedPath: a syntax error names the member being read or just
// read where the JSON breaks, and the body when no member is in progress.
func TestMalformedPath(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`{"account_id":"x","amount": }`, "amount"},
		{`{"name":`, "name"},
		{`{"type":"checking",`, ""},
		{`{name:"a"}`, ""},
		{`{"person":{"first_name":"A","date_of_birth":19-01}}`, "person.date_of_birth"},
		{`{"items":[1,}`, "items.1"},
		{`{"officers":[{"person":{"email":}}]}`, "officers.0.person.email"},
		{`{"a":{,}}`, "a"},
		{`[1,`, "1"},
		{``, ""},
		{`{"amount":12 3}`, "amount"},
		{`{"items":[1 2]}`, "items.0"},
		{`{"a":"b"}x`, ""},
	} {
		if got := malformedPath([]byte(tc.body)); got != tc.want {
			t.Errorf("malformedPath(%s) = %q, want %q", tc.body, got, tc.want)
		}
	}
}
