package storage_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank/storage"
)

func TestPrefixEnd(t *testing.T) {
	tests := []struct {
		prefix, want string
		ok           bool
	}{
		{"", "", false},
		{"\xff\xff", "", false},
		{"a", "b", true},
		{"a\xff", "b", true},
		{"ab\xff\xff", "ac", true},
	}
	for _, tt := range tests {
		end, ok := storage.PrefixEnd([]byte(tt.prefix))
		if string(end) != tt.want || ok != tt.ok {
			t.Errorf("PrefixEnd(%q) = %q, %v; want %q, %v", tt.prefix, end, ok, tt.want, tt.ok)
		}
	}
}

func TestScanOptionsStart(t *testing.T) {
	type start struct {
		From               string
		Exclusive, Bounded bool
	}
	tests := []struct {
		name string
		o    storage.ScanOptions
		want start
	}{
		{"OK/all", storage.ScanOptions{}, start{"", false, true}},
		{"OK/prefix", storage.ScanOptions{Prefix: []byte("a/")}, start{"a/", false, true}},
		{"OK/after", storage.ScanOptions{Prefix: []byte("a/"), After: []byte("a/1")}, start{"a/1", true, true}},
		{"OK/afterBelowPrefix", storage.ScanOptions{Prefix: []byte("b/"), After: []byte("a/1")}, start{"b/", false, true}},
		{"OK/reverseAll", storage.ScanOptions{Reverse: true}, start{"", false, false}},
		{"OK/reverseAllFF", storage.ScanOptions{Prefix: []byte("\xff"), Reverse: true}, start{"", false, false}},
		{"OK/reversePrefix", storage.ScanOptions{Prefix: []byte("a/"), Reverse: true}, start{"a0", true, true}},
		{"OK/reverseAfter", storage.ScanOptions{Prefix: []byte("a/"), After: []byte("a/1"), Reverse: true}, start{"a/1", true, true}},
		{"OK/reverseAfterAbovePrefix", storage.ScanOptions{Prefix: []byte("a/"), After: []byte("b"), Reverse: true}, start{"a0", true, true}},
		{"OK/reverseAfterUnbounded", storage.ScanOptions{After: []byte("b"), Reverse: true}, start{"b", true, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			from, excl, bounded := tt.o.Start()
			got := start{string(from), excl, bounded}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Start() (-want +got):\n%s", diff)
			}
		})
	}
}
