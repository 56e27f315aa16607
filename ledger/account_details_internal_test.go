package ledger

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/ledger/coordinates"
	"github.com/corebank/corebank/service"
	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/memory"
)

// TestPendingFiatDetails covers a provider that answers pending for fiat
// (SPEC allows it): the account number is withheld until activation.
func TestPendingFiatDetails(t *testing.T) {
	ctx := context.Background()
	db := memory.New()
	t.Cleanup(func() { db.Close() })
	c := clock.NewMock()
	c.Set(time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC))
	s := NewService(db, &Options{Deps: service.Deps{Clock: c}})
	a, err := s.CreateAccount(ctx, corebank.System(), NewAccount{EntityID: "ent1", Type: TypeChecking, Currency: "USD", DisplayName: "Ops"})
	if err != nil {
		t.Fatal(err)
	}
	issued := &coordinates.Issued{
		AccountNumber: "123456789012",
		RoutingNumber: coordinates.SandboxRoutingNumber,
		Issuer:        coordinates.Issuer{Name: coordinates.SandboxBankName, Code: coordinates.SandboxRoutingNumber},
		Status:        coordinates.StatusPending,
	}
	r := newDetailsRecord("det1", c.Now().UnixMilli(), a, KindFiat, "Ops", &NewAccountDetails{AccountID: a.ID}, issued)
	if err := db.Update(ctx, func(tx storage.Tx) error { return insertDetailsTx(tx, r) }); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetAccountDetails(ctx, corebank.System(), "", "det1")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(got)
	if got.Status != DetailsPending || got.AccountNumber != "" || strings.Contains(string(raw), "account_number") || got.Capabilities.ReceiveInflows {
		t.Errorf("pending fiat details = %s", raw)
	}
	if got.RoutingNumber != coordinates.SandboxRoutingNumber {
		t.Errorf("routing_number = %q", got.RoutingNumber)
	}
	err = db.View(ctx, func(tx storage.Tx) error { return s.AcceptsInflowsTx(tx, c.Now(), "det1") })
	if code := errCodeOf(err); code != ErrAccountDetailsPending.Code {
		t.Errorf("AcceptsInflowsTx while pending = %v", err)
	}
	act, err := s.ActivateAccountDetails(ctx, corebank.System(), "", "det1")
	if err != nil {
		t.Fatal(err)
	}
	if act.Status != DetailsActive || act.AccountNumber != "123456789012" || !act.Capabilities.ReceiveInflows || act.StatusReason != "" {
		t.Errorf("activated = %+v", act)
	}
	// The withheld number was reserved at creation.
	if d, err := s.AccountDetailsByNumber(ctx, corebank.System(), "123456789012"); err != nil || d.ID != "det1" {
		t.Errorf("AccountDetailsByNumber = %+v, %v", d, err)
	}
	// A provider reissuing a number in use is refused.
	dup := newDetailsRecord("det2", c.Now().UnixMilli(), a, KindFiat, "Ops", &NewAccountDetails{AccountID: a.ID}, issued)
	err = db.Update(ctx, func(tx storage.Tx) error { return insertDetailsTx(tx, dup) })
	if code := errCodeOf(err); code != ErrAccountNumberTaken.Code {
		t.Errorf("duplicate number: %v", err)
	}
}

func errCodeOf(err error) string {
	var ce *corebank.Error
	if errors.As(err, &ce) {
		return ce.Code
	}
	return ""
}
