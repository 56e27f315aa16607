package token_test

import (
	"encoding/base64"
	"testing"

	"github.com/corebank/corebank/internal/token"
)

func TestNew(t *testing.T) {
	a, b := token.New(), token.New()
	if a == b {
		t.Fatalf("two tokens are both %q", a)
	}
	raw, err := base64.RawURLEncoding.DecodeString(a)
	if err != nil || len(raw) != 32 || len(a) != 43 {
		t.Errorf("token %q: %d bytes, %v; want 32 bytes in 43 characters", a, len(raw), err)
	}
}
