package main

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// checkKeyPlace refuses, in production, a bbolt store whose secret key
// would come from a file in the store's own folder (the default
// <db>.key among them): whoever copies or backs up that folder would get
// the key with the data it seals. The key must come from
// COREBANK_SECRET_KEY or from -secret-key-file in another folder. The
// sandbox keeps the default, and a memory store has nothing at rest. A
// PostgreSQL store has no folder, and its key is always named.
func checkKeyPlace(cfg *config) error {
	if cfg.env != "production" || cfg.memory || cfg.dsn != "" || os.Getenv("COREBANK_SECRET_KEY") != "" {
		return nil
	}
	if sameDir(cfg.secretKeyFile, cfg.dbPath) {
		return fmt.Errorf("-env production: the secret key file %s is in the folder of the store %s; "+
			"set COREBANK_SECRET_KEY (32 bytes in base64) or point -secret-key-file at a file in another folder", cfg.secretKeyFile, cfg.dbPath)
	}
	return nil
}

// sameDir reports whether files a and b are in the same folder, by path
// or, when both folders exist, as the same folder under other names.
func sameDir(a, b string) bool {
	da, errA := filepath.Abs(filepath.Dir(a))
	db, errB := filepath.Abs(filepath.Dir(b))
	if errA != nil || errB != nil || da == db {
		return true // a folder that cannot be resolved is not known to differ
	}
	sa, errA := os.Stat(da)
	sb, errB := os.Stat(db)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}

// loadSecretKey returns the key that seals secrets at rest (RSA private
// keys, webhook secrets, identity numbers, idempotency records).
// COREBANK_SECRET_KEY (base64) wins; otherwise the key file is read, or
// created with mode 0600 on first start. With no file (memory store) the key lives only as long as the
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
