package storage_test

import (
	"errors"
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

func TestFeed(t *testing.T) {
	errOwn := errors.New("own")
	tests := []struct {
		name   string
		limit  int
		stopAt int   // the callback returns stop on this entry (1-based)
		stop   error // ErrStop or another error
		want   []string
		more   []bool
		err    error
	}{
		{name: "NoLimit", want: []string{"a", "b", "c"}, more: []bool{true, true, true}},
		{name: "Limit", limit: 2, want: []string{"a", "b"}, more: []bool{true, false}},
		{name: "ErrStop", stopAt: 2, stop: storage.ErrStop, want: []string{"a", "b"}, more: []bool{true, false}},
		{name: "OtherError", stopAt: 1, stop: errOwn, want: []string{"a"}, more: []bool{false}, err: errOwn},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := storage.Feed{Limit: tt.limit}
			var got []string
			var more []bool
			var err error
			fn := func(k, v []byte) error {
				got = append(got, string(k))
				k[0] = 'X' // the callback's copy, not the caller's
				if len(got) == tt.stopAt {
					return tt.stop
				}
				return nil
			}
			for _, k := range []string{"a", "b", "c"} {
				key := []byte(k)
				var m bool
				m, err = f.Send(fn, key, []byte("v"))
				more = append(more, m)
				if string(key) != k {
					t.Fatalf("Send let the callback change the caller's key: %q", key)
				}
				if !m {
					break
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("keys (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.more, more); diff != "" {
				t.Errorf("more (-want +got):\n%s", diff)
			}
			if !errors.Is(err, tt.err) {
				t.Errorf("err = %v, want %v", err, tt.err)
			}
		})
	}
}
