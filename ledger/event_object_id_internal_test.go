package ledger

import (
	"encoding/json"
	"testing"
)

// TestObjectID: objectID equals the plain path on json.Marshal's output,
// whether or not the shortcut applies.
func TestObjectID(t *testing.T) {
	for _, v := range []any{
		Account{ID: "01JACCOUNT", EntityID: "e1", Currency: "USD"},
		map[string]any{"id": "tr_1", "amount": 5},
		map[string]any{"ID": "upper", "id": "lower"},
		map[string]any{"Id": "mixed"},
		map[string]any{"object": map[string]string{"id": "nested"}},
		map[string]any{"id": 7},
		map[string]any{"id": nil},
		map[string]any{"id": `quo"te`},
		map[string]any{"id": "<html>&"},
		map[string]any{"id": "ünï"},
		map[string]any{"id": ""},
		map[string]any{},
		[]string{"id"},
		"id",
		struct {
			ID   string `json:"id"`
			Rest string `json:"rest"`
		}{"first", `x","id":"y`},
	} {
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := objectID(raw), objectIDPlain(raw); got != want {
			t.Errorf("objectID(%s) = %q, plain path %q", raw, got, want)
		}
	}
}

// FuzzObjectID compares objectID with the plain path on objects with an
// arbitrary id and other keys.
func FuzzObjectID(f *testing.F) {
	f.Add("01JX", "amount", "x")
	f.Add(`a"b`, "id", "")
	f.Add("\x00\xff", "ID", "y")
	f.Fuzz(func(t *testing.T, id, key, val string) {
		for _, v := range []any{
			map[string]string{"id": id, key: val},
			map[string]any{key: map[string]string{"id": id}},
			struct {
				ID    string `json:"id"`
				Other string `json:"other"`
			}{id, val},
		} {
			raw, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := objectID(raw), objectIDPlain(raw); got != want {
				t.Errorf("objectID(%s) = %q, plain path %q", raw, got, want)
			}
		}
	})
}
