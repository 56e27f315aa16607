package corebank_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank"
)

func TestCheckMeta(t *testing.T) {
	lim := corebank.MetaLimits{Keys: 3, KeyLen: 4, ValueLen: 5}
	tests := []struct {
		name string
		m    map[string]string
		want corebank.Problems
	}{
		{"OK", map[string]string{"a": "12345", "ééé": "ééééé"}, corebank.Problems{}},
		{"ErrKeys", map[string]string{"a": "", "b": "", "c": "", "d": ""}, corebank.Problems{"meta": "must have at most 3 keys"}},
		{"ErrEmptyKey", map[string]string{"": "x"}, corebank.Problems{"meta.": "keys must be 1-4 characters"}},
		{"ErrLongKey", map[string]string{"abcde": "x"}, corebank.Problems{"meta.abcde": "keys must be 1-4 characters"}},
		{"ErrLongValue", map[string]string{"k": strings.Repeat("é", 6)}, corebank.Problems{"meta.k": "must be at most 5 characters"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := corebank.Problems{}
			corebank.CheckMeta(p, "meta", tt.m, lim)
			if diff := cmp.Diff(tt.want, p); diff != "" {
				t.Fatalf("(-want +got)\n%s", diff)
			}
		})
	}
}
