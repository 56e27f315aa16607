package ledger

import (
	"bytes"
	"encoding/json"
)

// objectID returns the "id" of an event's object, as json.Unmarshal into
// struct{ ID string `json:"id"` } would read it ("" when there is none),
// without decoding the rest when the object begins with it, as every
// object of this tree does. raw is json.Marshal's output: compact, and a
// string without a backslash is its own text. Decoding the whole object
// (some 500 bytes for a transfer) to read its ID cost 5% of a POST
// /transfers (httpapi BenchmarkTransfers).
//
// The shortcut trusts that a later key does not name "id" again in
// another case, which json.Marshal writes only for a struct with two
// such tags; no object of this tree has them.
func objectID(raw []byte) string {
	const lead = `{"id":"`
	if rest, ok := bytes.CutPrefix(raw, []byte(lead)); ok {
		if i := bytes.IndexByte(rest, '"'); i >= 0 && bytes.IndexByte(rest[:i], '\\') < 0 {
			return string(rest[:i])
		}
	}
	return objectIDPlain(raw)
}

// objectIDPlain is objectID by decoding the whole object.
func objectIDPlain(raw []byte) string {
	var obj struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(raw, &obj) != nil {
		return ""
	}
	return obj.ID
}
