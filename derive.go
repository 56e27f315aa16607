package corebank

import (
	"crypto/hkdf"
	"crypto/sha256"
)

// DeriveKey derives a 32-byte key for one purpose from a master secret with
// HKDF-SHA256, so one secret can protect several uses (sealing, cursor
// signing) without any two sharing a key.
func DeriveKey(secret []byte, purpose string) ([]byte, error) {
	return hkdf.Key(sha256.New, secret, nil, purpose, 32)
}
