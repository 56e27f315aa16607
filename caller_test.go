package corebank_test

import (
	"errors"
	"testing"

	"github.com/corebank/corebank"
)

func TestCallerCheckWrite(t *testing.T) {
	if err := corebank.As("e").CheckWrite(); err != nil {
		t.Fatalf("read-write caller: %v", err)
	}
	if err := (corebank.Caller{EntityID: "e", ReadOnly: true}).CheckWrite(); !errors.Is(err, corebank.ErrForbidden) {
		t.Fatalf("read-only caller: %v; want ErrForbidden", err)
	}
	if !corebank.System().IsSystem() || (corebank.Caller{}).IsSystem() || corebank.As("e").IsSystem() {
		t.Fatal("only System() is system")
	}
}

// TestNotFoundResources: each resource's not-found is its own error under
// errors.Is, while all share code not_found.
func TestNotFoundResources(t *testing.T) {
	acct, detail := corebank.NotFound("account"), corebank.NotFound("payment detail")
	if errors.Is(detail, acct) || errors.Is(acct, detail) {
		t.Fatal("two resources' not-found errors match each other")
	}
	if !errors.Is(acct.With("account X not found"), acct) {
		t.Fatal("a copy with another message no longer matches its sentinel")
	}
	if acct.Code != detail.Code || corebank.KindOf(detail) != corebank.KindNotFound {
		t.Fatal("not-found errors must share code and kind")
	}
}
