// Package token makes the capabilities that the sandbox's browser pages
// are reached by (acquiring's 3DS challenge, funding's checkout). Whoever
// holds a page's URL may answer it, so its token is the page's only lock
// and must be unguessable.
package token

import (
	"crypto/rand"
	"encoding/base64"
)

// New returns 32 random bytes (256 bits) as 43 characters of unpadded
// base64url, which a URL path carries as they are.
func New() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return base64.RawURLEncoding.EncodeToString(b[:])
}
