// Package b64 decodes the Base64 that API clients send (document files in
// entities, encrypted card data in acquiring) the one lenient way both
// accept.
package b64

import "encoding/base64"

// Decode decodes s in the standard or the URL-safe alphabet, padded or
// not, ignoring spaces, tabs and line breaks anywhere (clients wrap long
// Base64 at 64 or 76 columns). When neither alphabet decodes s it returns
// the URL-safe decoder's error.
func Decode(s string) ([]byte, error) {
	clean := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case ' ', '\n', '\r', '\t':
		default:
			clean = append(clean, c)
		}
	}
	for len(clean) > 0 && clean[len(clean)-1] == '=' {
		clean = clean[:len(clean)-1]
	}
	if b, err := base64.RawStdEncoding.DecodeString(string(clean)); err == nil {
		return b, nil
	}
	return base64.RawURLEncoding.DecodeString(string(clean))
}
