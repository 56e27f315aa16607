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

func TestCheckText(t *testing.T) {
	line, free := corebank.Line(1, 5), corebank.FreeText(0, 5)
	tests := []struct {
		name string
		s    string
		rule corebank.TextRule
		want corebank.Problems
	}{
		{"OK", "héllo", line, corebank.Problems{}},
		{"OKEmptyOptional", "", free, corebank.Problems{}},
		{"OKNewlineInFreeText", "a\nb\tc", free, corebank.Problems{}},
		{"OKArabic", "مرحبا", line, corebank.Problems{}},
		{"OKNoMax", strings.Repeat("x", 1000), corebank.TextRule{}, corebank.Problems{}},
		{"ErrRequired", "", line, corebank.Problems{"f": "is required"}},
		{"ErrTooLong", "123456", free, corebank.Problems{"f": "must be at most 5 characters"}},
		{"ErrTooLongCountsCharacters", strings.Repeat("é", 6), free, corebank.Problems{"f": "must be at most 5 characters"}},
		{"ErrRange", "1", corebank.Line(2, 5), corebank.Problems{"f": "must be 2-5 characters"}},
		{"ErrAtLeast", "1", corebank.Line(2, 0), corebank.Problems{"f": "must be at least 2 characters"}},
		{"ErrNUL", "a\x00b", free, corebank.Problems{"f": "must not contain the control character U+0000"}},
		{"ErrESC", "\x1b[31m", free, corebank.Problems{"f": "must not contain the control character U+001B"}},
		{"OKCRLFInFreeText", "a\r\nb", free, corebank.Problems{}},
		{"ErrCR", "a\rb", free, corebank.Problems{"f": "must not contain the control character U+000D"}},
		{"ErrCRAtEnd", "a\r", free, corebank.Problems{"f": "must not contain the control character U+000D"}},
		{"ErrCRLFInLine", "a\r\nb", line, corebank.Problems{"f": "must be a single line: no line breaks or tabs"}},
		{"ErrDEL", "a\x7f", free, corebank.Problems{"f": "must not contain the control character U+007F"}},
		{"ErrC1", "a\u0085", free, corebank.Problems{"f": "must not contain the control character U+0085"}},
		{"ErrNewlineInLine", "a\nb", line, corebank.Problems{"f": "must be a single line: no line breaks or tabs"}},
		{"ErrTabInLine", "a\tb", line, corebank.Problems{"f": "must be a single line: no line breaks or tabs"}},
		{"ErrRLO", "abc\u202etxt.exe", line, corebank.Problems{"f": "must not contain the bidirectional control character U+202E"}},
		{"ErrLRE", "\u202a", free, corebank.Problems{"f": "must not contain the bidirectional control character U+202A"}},
		{"ErrIsolate", "a\u2066b", line, corebank.Problems{"f": "must not contain the bidirectional control character U+2066"}},
		{"ErrPDI", "a\u2069", line, corebank.Problems{"f": "must not contain the bidirectional control character U+2069"}},
		{"ErrInvalidByte", "a\xffb", free, corebank.Problems{"f": "must be valid UTF-8"}},
		{"ErrTruncated", "a\xe2\x80", free, corebank.Problems{"f": "must be valid UTF-8"}},
		{"ErrSurrogate", "a\xed\xa0\x80", free, corebank.Problems{"f": "must be valid UTF-8"}},
		{"ErrCharactersBeforeLength", "\x00234567", free, corebank.Problems{"f": "must not contain the control character U+0000"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := corebank.Problems{}
			corebank.CheckText(p, "f", tt.s, tt.rule)
			if diff := cmp.Diff(tt.want, p); diff != "" {
				t.Fatalf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestCheckMetaText(t *testing.T) {
	p := corebank.Problems{}
	corebank.CheckMeta(p, "meta", map[string]string{"a\x00": "x", "b": "x\x1b", "c": "x\ny", "d\u202e": "x"}, corebank.MetaLimits{Keys: 4, KeyLen: 8, ValueLen: 8})
	want := corebank.Problems{
		"meta.a\x00":   "keys must not contain the control character U+0000",
		"meta.b":       "must not contain the control character U+001B",
		"meta.d\u202e": "keys must not contain the bidirectional control character U+202E",
	}
	if diff := cmp.Diff(want, p); diff != "" {
		t.Fatalf("(-want +got)\n%s", diff)
	}
}

func BenchmarkTextProblem(b *testing.B) {
	s := strings.Repeat("Payment for invoice 1234, café ", 3)
	b.ReportAllocs()
	for b.Loop() {
		if corebank.TextProblem(s, false) != "" {
			b.Fatal("clean text refused")
		}
	}
}
