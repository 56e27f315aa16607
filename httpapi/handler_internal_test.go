package httpapi

import (
	"bytes"
	"strings"
	"testing"
)

func TestFramework(t *testing.T) {
	f := newFW(t)
	deep := strings.Repeat("[", 100000) + strings.Repeat("]", 100000)
	huge := append([]byte(`{"name":"`), bytes.Repeat([]byte("a"), 11<<20)...)
	huge = append(huge, `"}`...)
	tests := []struct {
		name, method, path, key, body string
		status                        int
		code, field                   string
	}{
		{"OK", "POST", "/echo", "full", `{"name":"a","amount":5}`, 201, "", ""},
		{"OKEmptyBodyValidated", "POST", "/echo", "full", ``, 422, "validation_error", "name"},
		{"ErrNoKey", "POST", "/echo", "", `{}`, 401, "unauthorized", ""},
		{"ErrBadKey", "GET", "/list", "nope", ``, 401, "unauthorized", ""},
		{"ErrReadOnly", "POST", "/echo", "ro", `{"name":"a"}`, 403, "forbidden", ""},
		{"OKReadOnlyGet", "GET", "/list", "ro", ``, 200, "", ""},
		{"ErrUnknownField", "POST", "/echo", "full", `{"name":"a","entity_idd":"x"}`, 422, "validation_error", "entity_idd"},
		{"ErrUnknownNestedField", "POST", "/echo", "full", `{"name":"a","nested":{"inner":"x","outer":1}}`, 422, "validation_error", "nested.outer"},
		{"ErrUnknownInArray", "POST", "/echo", "full", `{"name":"a","items":[{"x":1},{"y":2}]}`, 422, "validation_error", "items.1.y"},
		{"ErrWrongType", "POST", "/echo", "full", `{"name":5}`, 422, "validation_error", "name"},
		{"ErrWrongNestedType", "POST", "/echo", "full", `{"name":"a","nested":{"inner":true}}`, 422, "validation_error", "nested.inner"},
		{"ErrHugeNumber", "POST", "/echo", "full", `{"name":"a","amount":1e40}`, 422, "validation_error", "amount"},
		{"ErrFraction", "POST", "/echo", "full", `{"name":"a","amount":1.5}`, 422, "validation_error", "amount"},
		{"ErrNotObject", "POST", "/echo", "full", `[1,2]`, 422, "validation_error", "body"},
		{"ErrMalformed", "POST", "/echo", "full", `{"name":`, 422, "validation_error", "name"},
		{"ErrMalformedValue", "POST", "/echo", "full", `{"name": tru}`, 422, "validation_error", "name"},
		{"ErrMalformedBetweenMembers", "POST", "/echo", "full", `{"name":"a",`, 422, "validation_error", "body"},
		{"ErrMalformed2", "POST", "/echo", "full", `{name:"a"}`, 422, "validation_error", "body"},
		{"ErrTrailing", "POST", "/echo", "full", `{"name":"a"} {}`, 422, "validation_error", "body"},
		{"ErrTrailingGarbage", "POST", "/echo", "full", `{"name":"a"}x`, 422, "validation_error", "body"},
		{"ErrDeep", "POST", "/echo", "full", deep, 422, "validation_error", "body"},
		{"ErrTooLarge", "POST", "/echo", "full", string(huge), 413, "request_too_large", ""},
		{"ErrNoRoute", "GET", "/nowhere", "full", ``, 404, "not_found", ""},
		{"ErrMethod", "DELETE", "/echo", "full", ``, 405, "method_not_allowed", ""},
		{"ErrPanic", "GET", "/panic", "full", ``, 500, "internal_error", ""},
		{"ErrPlain", "GET", "/plain", "full", ``, 500, "internal_error", ""},
		{"ErrLimit0", "GET", "/list?limit=0", "full", ``, 422, "validation_error", "limit"},
		{"ErrLimit101", "GET", "/list?limit=101", "full", ``, 422, "validation_error", "limit"},
		{"ErrLimitText", "GET", "/list?limit=ten", "full", ``, 422, "validation_error", "limit"},
		{"ErrCursor", "GET", "/list?cursor=abc", "full", ``, 422, "validation_error", "cursor"},
		{"ErrIdemKeyLong", "POST", "/echo", "full", `{"name":"a"}`, 422, "validation_error", "Idempotency-Key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var hdr []string
			if tt.name == "ErrIdemKeyLong" {
				hdr = []string{"Idempotency-Key", strings.Repeat("k", 300)}
			}
			got := f.do(t, tt.method, tt.path, tt.key, []byte(tt.body), hdr...)
			if got.status != tt.status || got.code() != tt.code {
				t.Fatalf("got %d %q, want %d %q: %.300s", got.status, got.code(), tt.status, tt.code, got.raw)
			}
			if tt.field != "" && got.detail(tt.field) == "" {
				t.Fatalf("details do not name %q: %.300s", tt.field, got.raw)
			}
			if got.status == 500 && strings.Contains(got.raw, "boom") {
				t.Fatalf("500 leaks the cause: %s", got.raw)
			}
			if got.status == 401 || got.status == 403 {
				if _, ok := got.body["error"].(map[string]any); !ok {
					t.Fatalf("auth error not in {error:{}} form: %s", got.raw)
				}
			} else if got.status >= 400 && got.body["status"] != "error" {
				t.Fatalf("error body lacks status: error: %s", got.raw)
			}
		})
	}
}
