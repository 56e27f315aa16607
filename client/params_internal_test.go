package client

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestEncodeParams(t *testing.T) {
	type enum string
	type params struct {
		Limit    *int     `form:"limit,omitempty" json:"limit,omitempty"`
		Status   *enum    `form:"status,omitempty" json:"status,omitempty"`
		Cursor   *string  `form:"cursor,omitempty" json:"cursor,omitempty"`
		Types    []string `form:"type,omitempty" json:"type,omitempty"`
		Flag     *bool    `form:"flag,omitempty" json:"flag,omitempty"`
		Key      *string  `json:"Idempotency-Key,omitempty"`
		Request  *string  `json:"X-Request-Id,omitempty"`
		Skipped  string   `json:"-"`
		internal string
	}
	cases := []struct {
		name   string
		in     any
		query  url.Values
		header http.Header
	}{
		{"Nil", (*params)(nil), url.Values{}, http.Header{}},
		{"Untyped nil", nil, url.Values{}, http.Header{}},
		{"Empty", &params{}, url.Values{}, http.Header{}},
		{"All", &params{Limit: Ptr(5), Status: Ptr(enum("pending")), Cursor: Ptr("a b&c"), Types: []string{"x", "y"},
			Flag: Ptr(false), Key: Ptr("k1"), Request: Ptr("r1"), Skipped: "no", internal: "no"},
			url.Values{"limit": {"5"}, "status": {"pending"}, "cursor": {"a b&c"}, "type": {"x", "y"}, "flag": {"false"}},
			http.Header{"Idempotency-Key": {"k1"}, "X-Request-Id": {"r1"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q, h, err := encodeParams(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.query, q); d != "" {
				t.Errorf("query (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.header, h); d != "" {
				t.Errorf("header (-want +got):\n%s", d)
			}
		})
	}
	if _, _, err := encodeParams(42); err == nil {
		t.Error("an int encoded as parameters")
	}
}
