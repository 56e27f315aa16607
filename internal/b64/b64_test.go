package b64_test

import (
	"testing"

	"github.com/corebank/corebank/internal/b64"
)

func TestDecode(t *testing.T) {
	want := "\xfb\xff\xfe hello" // bytes whose Base64 differs between the alphabets
	for _, in := range []string{
		"+//+IGhlbGxv", "-__-IGhlbGxv", "+//+IGhl\nbGxv", " +//+ IGhl\r\n\tbGxv ", "+//+IGhlbGxv==",
	} {
		got, err := b64.Decode(in)
		if err != nil || string(got) != want {
			t.Errorf("Decode(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"+//-IGhlbGxv", "IGhl*bGxv", "IGhlbGxv\xff", "I"} {
		if got, err := b64.Decode(in); err == nil {
			t.Errorf("Decode(%q) = %q, want an error", in, got)
		}
	}
}
