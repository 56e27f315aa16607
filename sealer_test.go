package corebank_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/corebank/corebank"
)

func mustSealer(tb testing.TB) *corebank.Sealer {
	tb.Helper()
	s, err := corebank.NewSealer(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

func TestNewSealer(t *testing.T) {
	for _, n := range []int{0, 16, 24, 31, 33, 64} {
		if _, err := corebank.NewSealer(make([]byte, n)); err == nil {
			t.Errorf("NewSealer(%d-byte key) = nil error, want an error", n)
		}
	}
	if _, err := corebank.NewSealer(make([]byte, 32)); err != nil {
		t.Errorf("NewSealer(32-byte key) = %v", err)
	}
}

func TestSealer(t *testing.T) {
	s := mustSealer(t)
	ad := []byte("entities/01H/ssn")
	t.Run("OK", func(t *testing.T) {
		for _, pt := range [][]byte{nil, []byte("123456789"), bytes.Repeat([]byte("x"), 5000)} {
			sealed := s.Seal(pt, ad)
			if bytes.Contains(sealed, []byte("123456789")) {
				t.Fatal("sealed value contains the plaintext")
			}
			got, err := s.Open(sealed, ad)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			if !bytes.Equal(got, pt) {
				t.Fatalf("Open = %q, want %q", got, pt)
			}
		}
	})
	t.Run("RandomNonce", func(t *testing.T) {
		a, b := s.Seal([]byte("same"), ad), s.Seal([]byte("same"), ad)
		if bytes.Equal(a, b) {
			t.Fatal("two seals of the same plaintext are equal")
		}
	})
	t.Run("ErrUnseal", func(t *testing.T) {
		sealed := s.Seal([]byte("123456789"), ad)
		other, err := corebank.NewSealer(bytes.Repeat([]byte{8}, 32))
		if err != nil {
			t.Fatal(err)
		}
		flip := func(i int) []byte {
			c := append([]byte(nil), sealed...)
			c[i] ^= 1
			return c
		}
		cases := map[string]struct {
			s      *corebank.Sealer
			sealed []byte
			ad     []byte
		}{
			"TamperedKeyID":      {s, flip(0), ad},
			"TamperedNonce":      {s, flip(3), ad},
			"TamperedCiphertext": {s, flip(15), ad},
			"TamperedTag":        {s, flip(len(sealed) - 1), ad},
			"Truncated":          {s, sealed[:len(sealed)-1], ad},
			"Short":              {s, sealed[:5], ad},
			"Empty":              {s, nil, ad},
			"WrongAD":            {s, sealed, []byte("entities/01H/nin")},
			"WrongKey":           {other, sealed, ad},
		}
		for name, c := range cases {
			t.Run(name, func(t *testing.T) {
				got, err := c.s.Open(c.sealed, c.ad)
				if !errors.Is(err, corebank.ErrUnseal) || got != nil {
					t.Fatalf("Open = %q, %v; want nil, ErrUnseal", got, err)
				}
			})
		}
	})
}

func TestMaskTail(t *testing.T) {
	cases := []struct {
		in   string
		n    int
		want string
	}{
		{"123456789", 4, "*****6789"},
		{"A1234567", 4, "****4567"},
		{"12345", 4, "*2345"},
		{"1234", 4, "****"},
		{"12", 4, "**"},
		{"", 4, ""},
		{"abc", 0, "***"},
		{"abc", -1, "***"},
		{"ÅÄÖ1234", 4, "***1234"},
	}
	for _, c := range cases {
		if got := corebank.MaskTail(c.in, c.n); got != c.want {
			t.Errorf("MaskTail(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}
