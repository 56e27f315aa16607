package ledger_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/storage"
)

// TestMigrateSystemHistory: a store holding the history lines an earlier
// release wrote for system accounts loses them on migrating, and every
// customer account's history is untouched.
func TestMigrateSystemHistory(t *testing.T) {
	e := newEnv(t)
	a := e.MustAccount(t, "ent1", "USD")
	e.MustFund(t, a.ID, "USD", 500)
	bank := e.s.SystemAccount("USD", ledger.PurposeClearingBank)
	history := storage.Bucket("ledger.history")
	// An earlier release's system lines (their values are never read).
	if err := e.db.Update(ctx, func(tx storage.Tx) error {
		for _, k := range []string{bank + "/S/\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x01", bank + "/P/\x00\x00\x00\x00\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x02"} {
			if err := tx.Put(history, []byte(k), []byte{1}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := storage.Migrate(ctx, e.db, e.s.Migrations()...); err != nil {
		t.Fatal(err)
	}
	var keys []string
	if err := e.db.View(ctx, func(tx storage.Tx) error {
		return tx.Scan(history, storage.ScanOptions{}, func(k, _ []byte) error {
			keys = append(keys, string(k))
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
	if len(keys) != 1 || !strings.HasPrefix(keys[0], a.ID+"/S/") {
		t.Errorf("history keys after migrating: %q, want the customer's one line", keys)
	}
	n := 0
	if err := e.s.History(ctx, a.ID, nil, func(l ledger.HistoryLine) error {
		if l.Balance.Settled != 500 {
			t.Errorf("customer line %+v, want settled 500", l)
		}
		n++
		return nil
	}); err != nil || n != 1 {
		t.Errorf("customer history: %d lines, %v; want 1", n, err)
	}
	if err := e.s.History(ctx, bank, nil, func(l ledger.HistoryLine) error {
		t.Errorf("system account line %+v", l)
		return nil
	}); err != nil {
		t.Error(err)
	}
	if _, err := e.s.BalanceAt(ctx, bank, e.clock.Now()); !errors.Is(err, ledger.ErrAccountNotFound) {
		t.Errorf("BalanceAt(system) = %v, want ErrAccountNotFound", err)
	}
}
