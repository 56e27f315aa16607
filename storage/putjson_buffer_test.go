package storage_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/memory"
)

// upper is a json.Marshaler whose output has insignificant whitespace,
// which json.Marshal compacts.
type upper string

func (u upper) MarshalJSON() ([]byte, error) {
	return []byte(` { "v" : "` + strings.ToUpper(string(u)) + `" } `), nil
}

// TestPutJSONBuffer: PutJSON, which encodes into a reused buffer, stores
// exactly the bytes json.Marshal gives, for values that escape HTML,
// carry raw JSON and Marshalers, and outgrow the pooled buffer; one after
// another in a transaction, so that a reused buffer would show in the
// values stored before it; and fails as Marshal does.
func TestPutJSONBuffer(t *testing.T) {
	type rec struct {
		Name  string            `json:"name"`
		Note  string            `json:"note,omitempty"`
		Tags  map[string]int    `json:"tags"`
		Raw   json.RawMessage   `json:"raw"`
		Up    upper             `json:"up"`
		Items []string          `json:"items"`
		Ptr   *int              `json:"ptr"`
		Meta  map[string]string `json:"meta,omitempty"`
	}
	values := []any{
		rec{Name: "<script>&\u2028", Tags: map[string]int{"b": 2, "a": 1}, Raw: json.RawMessage(` [1, 2] `), Up: "x"},
		rec{Name: "é", Items: []string{"", "\x00"}, Meta: map[string]string{"k": "v"}},
		"plain",
		nil,
		[]byte("bytes"),
		rec{Name: strings.Repeat("long ", 30_000)}, // past the pooled buffer's bound
		map[string]any{"n": 1.5, "s": []any{true, nil}},
	}
	db := memory.New()
	defer db.Close()
	ctx := context.Background()
	err := db.Update(ctx, func(tx storage.Tx) error {
		for i, v := range values {
			if err := storage.PutJSON(tx, "things", storage.Key(string(rune('a'+i))), v); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = db.View(ctx, func(tx storage.Tx) error {
		for i, v := range values {
			want, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			got, err := tx.Get("things", storage.Key(string(rune('a'+i))))
			if err != nil {
				return err
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("value %d stored (-json.Marshal +PutJSON):\n%s", i, diff)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(ctx, func(tx storage.Tx) error {
		return storage.PutJSON(tx, "things", storage.Key("bad"), map[string]any{"c": make(chan int)})
	})
	var unsupported *json.UnsupportedTypeError
	if !errors.As(err, &unsupported) {
		t.Errorf("PutJSON of a channel = %v, want json.Marshal's UnsupportedTypeError", err)
	}
}
