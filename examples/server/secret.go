package main

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"strings"
)

// loadSecretKey returns the key that seals secrets at rest (RSA private
// keys, webhook secrets, identity numbers). COREBANK_SECRET_KEY (base64)
// wins; otherwise the key file is read, or created with mode 0600 on first
// start. With no file (memory store) the key lives only as long as the
// process, like the store itself.
func loadSecretKey(path string) ([]byte, error) {
	if env := os.Getenv("COREBANK_SECRET_KEY"); env != "" {
		key, err := base64.StdEncoding.DecodeString(strings.TrimSpace(env))
		if err != nil || len(key) != 32 {
			return nil, errors.New("COREBANK_SECRET_KEY must be 32 bytes in base64")
		}
		return key, nil
	}
	if path == "" {
		key := make([]byte, 32)
		_, err := rand.Read(key)
		return key, err
	}
	raw, err := os.ReadFile(path)
	if err == nil {
		key, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(raw)))
		if err != nil || len(key) != 32 {
			return nil, fmt.Errorf("secret key file %s must hold 32 bytes in base64", path)
		}
		return key, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create secret key file: %w", err)
	}
	if _, err := f.WriteString(base64.StdEncoding.EncodeToString(key) + "\n"); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, err
	}
	return key, f.Close()
}
