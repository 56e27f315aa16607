package corebank

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
	"unicode/utf8"
)

// Sealed values have the layout
//
//	key id (1 byte) | nonce (12 bytes) | AES-256-GCM ciphertext and tag (16 bytes)
//
// The key id is authenticated together with the caller's associated data, so
// a value cannot be moved to another key id or another record unnoticed. A
// later key rotation adds keys under new ids while Open keeps reading values
// sealed under the old ones.

// sealerKeyID is the id of the one key NewSealer accepts today.
const sealerKeyID byte = 1

const sealerOverhead = 1 + 12 + 16

// ErrUnseal is returned by Sealer.Open for a value that is truncated,
// tampered with, sealed under another key or bound to other associated
// data. It is never the caller's fault, so services treat it as internal.
var ErrUnseal = errors.New("corebank: sealed value cannot be opened (corrupt, wrong key or wrong associated data)")

// Sealer encrypts small secrets at rest (RSA private keys, webhook secrets,
// identity and document numbers) with AES-256-GCM under a random nonce. It is
// safe for concurrent use.
type Sealer struct {
	id   byte
	aead cipher.AEAD
}

// NewSealer returns a Sealer for a 32-byte AES-256 key. The key is copied;
// any other length is an error.
func NewSealer(key []byte) (*Sealer, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("corebank: sealer key must be 32 bytes, got %d", len(key))
	}
	block, err := aes.NewCipher(append([]byte(nil), key...))
	if err != nil {
		return nil, fmt.Errorf("corebank: sealer: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("corebank: sealer: %w", err)
	}
	return &Sealer{id: sealerKeyID, aead: aead}, nil
}

// Seal encrypts plaintext and binds it to associatedData (for example the
// owning record's ID and field name); Open must be given the same
// associatedData. Each call uses a fresh random nonce, so sealing the same
// plaintext twice gives different results.
func (s *Sealer) Seal(plaintext, associatedData []byte) []byte {
	out := make([]byte, 1+s.aead.NonceSize(), sealerOverhead+len(plaintext))
	out[0] = s.id
	rand.Read(out[1:]) // crypto/rand.Read never returns an error (Go 1.24+)
	return s.aead.Seal(out, out[1:1+s.aead.NonceSize()], plaintext, s.ad(s.id, associatedData))
}

// Open decrypts a value made by Seal with the same associatedData. It
// returns ErrUnseal when the value is truncated, altered, sealed under an
// unknown key id or bound to different associated data.
func (s *Sealer) Open(sealed, associatedData []byte) ([]byte, error) {
	if len(sealed) < sealerOverhead || sealed[0] != s.id {
		return nil, ErrUnseal
	}
	ns := s.aead.NonceSize()
	pt, err := s.aead.Open(nil, sealed[1:1+ns], sealed[1+ns:], s.ad(sealed[0], associatedData))
	if err != nil {
		return nil, ErrUnseal
	}
	return pt, nil
}

func (s *Sealer) ad(id byte, associatedData []byte) []byte {
	ad := make([]byte, 0, 1+len(associatedData))
	return append(append(ad, id), associatedData...)
}

// MaskTail returns s with every character but the last n replaced by '*',
// keeping its length in characters: MaskTail("A12345678", 4) is
// "*****5678". A value of n characters or fewer is masked completely, so a
// short number is never shown whole. n < 0 counts as 0.
func MaskTail(s string, n int) string {
	if n < 0 {
		n = 0
	}
	count := utf8.RuneCountInString(s)
	if count <= n {
		n = 0
	}
	out := make([]byte, 0, len(s))
	i := 0
	for _, r := range s {
		if i < count-n {
			out = append(out, '*')
		} else {
			out = utf8.AppendRune(out, r)
		}
		i++
	}
	return string(out)
}
