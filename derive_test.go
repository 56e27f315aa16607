package corebank_test

import (
	"bytes"
	"testing"

	"github.com/corebank/corebank"
)

func TestDeriveKey(t *testing.T) {
	secret := bytes.Repeat([]byte{7}, 32)
	a, err := corebank.DeriveKey(secret, "cursors")
	if err != nil || len(a) != 32 {
		t.Fatalf("DeriveKey = %x, %v", a, err)
	}
	again, _ := corebank.DeriveKey(secret, "cursors")
	other, _ := corebank.DeriveKey(secret, "webhooks")
	if !bytes.Equal(a, again) {
		t.Fatal("DeriveKey is not deterministic")
	}
	if bytes.Equal(a, other) || bytes.Equal(a, secret) {
		t.Fatal("purposes share a key")
	}
}
