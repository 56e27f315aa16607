package ledger_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/storage"
)

// TestComposeTx places an amount hold and a fee hold in one transaction,
// as payments does: both or neither.
func TestComposeTx(t *testing.T) {
	e := newEnv(t)
	a := e.MustAccount(t, "e1", "USD").ID
	bank := e.s.SystemAccount("USD", ledger.PurposeClearingBank)
	fees := e.s.SystemAccount("USD", ledger.PurposeFees)
	e.MustFund(t, a, "USD", 1000)
	transfer := func(amount, fee int64) ([2]*ledger.Hold, error) {
		var out [2]*ledger.Hold
		err := e.db.Update(ctx, func(tx storage.Tx) error {
			now := e.clock.Now()
			var err error
			if out[0], err = e.s.HoldTx(tx, now, ledger.HoldRequest{DebitAccountID: a, CreditAccountID: bank, Amount: amount}); err != nil {
				return err
			}
			out[1], err = e.s.HoldTx(tx, now, ledger.HoldRequest{DebitAccountID: a, CreditAccountID: fees, Amount: fee})
			return err
		})
		return out, err
	}
	t.Run("ErrInsufficientFunds", func(t *testing.T) {
		before := e.snapshot(t, a, bank, fees)
		if _, err := transfer(990, 11); !errors.Is(err, ledger.ErrInsufficientFunds) {
			t.Fatalf("err = %v", err)
		}
		if diff := cmp.Diff(before, e.snapshot(t, a, bank, fees)); diff != "" {
			t.Errorf("half a transfer was kept (-before +after):\n%s", diff)
		}
	})
	t.Run("OK", func(t *testing.T) {
		hs, err := transfer(990, 10)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(ledger.Balance{Settled: 1000, PendingDebits: 1000}, e.MustBalance(t, a)); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
		err = e.db.Update(ctx, func(tx storage.Tx) error {
			for _, h := range hs {
				if _, err := e.s.PostHoldTx(tx, e.clock.Now(), h.ID, 0); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(ledger.Balance{Settled: 10}, e.MustBalance(t, fees)); diff != "" {
			t.Errorf("fees (-want +got):\n%s", diff)
		}
	})
}

// switchGate vetoes movement while blocked is set.
type switchGate struct{ blocked *bool }

func (g switchGate) CanOpenAccount(storage.Tx, string) error { return nil }
func (g switchGate) CanMoveMoney(storage.Tx, string) error {
	if *g.blocked {
		return errSuspended
	}
	return nil
}

// TestGateMovement: a suspended entity starts no new movement, but holds
// already placed still complete.
func TestGateMovement(t *testing.T) {
	blocked := false
	e := newEnvOn(t, newMemory(t), switchGate{&blocked})
	a, b := e.MustAccount(t, "e1", "USD").ID, e.MustAccount(t, "e2", "USD").ID
	e.MustFund(t, a, "USD", 100)
	h1, _ := e.s.Hold(ctx, ledger.HoldRequest{DebitAccountID: a, CreditAccountID: b, Amount: 10})
	h2, _ := e.s.Hold(ctx, ledger.HoldRequest{DebitAccountID: a, CreditAccountID: b, Amount: 20, Timeout: time.Second})
	blocked = true
	if _, err := e.s.Hold(ctx, ledger.HoldRequest{DebitAccountID: a, CreditAccountID: b, Amount: 1}); !errors.Is(err, errSuspended) || len(fields(err)) != 0 {
		t.Errorf("hold while suspended: %v", err)
	}
	if _, err := e.s.PostHold(ctx, h1.ID, 0); err != nil {
		t.Errorf("post while suspended: %v", err)
	}
	e.clock.Add(time.Second)
	if n, err := e.s.RunDue(ctx, e.clock.Now()); n != 1 || err != nil {
		t.Errorf("RunDue while suspended = %d, %v", n, err)
	}
	if diff := cmp.Diff(ledger.Balance{Settled: 90}, e.MustBalance(t, a)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	_ = h2
}
