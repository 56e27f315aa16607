package payments

import (
	"context"
	"testing"

	"github.com/benbjohnson/clock"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/service"
	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/memory"
)

// TestAccountRefsEqualPlainRead: accountTx, cold and warm, answers exactly
// as readAccount for a funded, an empty, a deleted, a held-to-zero and a
// missing account.
func TestAccountRefsEqualPlainRead(t *testing.T) {
	ctx := context.Background()
	db := memory.New()
	clk := clock.NewMock()
	led := ledger.NewService(db, &ledger.Options{Deps: service.Deps{Clock: clk}})
	s := NewService(db, led, &Options{Deps: service.Deps{Clock: clk}})
	open := func(entity string) *ledger.Account {
		a, err := led.CreateAccount(ctx, corebank.System(), ledger.NewAccount{EntityID: entity, Type: ledger.TypeChecking, Currency: "USD", DisplayName: "a"})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	fund := func(a *ledger.Account, amount int64) {
		if _, err := led.Post(ctx, ledger.Entry{Lines: []ledger.Line{
			{AccountID: led.SystemAccount("USD", ledger.PurposeClearingBank), Side: ledger.Debit, Amount: amount},
			{AccountID: a.ID, Side: ledger.Credit, Amount: amount},
		}, Narration: "funding"}); err != nil {
			t.Fatal(err)
		}
	}
	funded, empty, deleted, other := open("ent1"), open("ent1"), open("ent1"), open("ent2")
	fund(funded, 1_000)
	fund(other, 1_000)
	ids := []string{funded.ID, empty.ID, deleted.ID, other.ID, "01HZZZZZZZZZZZZZZZZZZZZZZZ", "nope"}
	compare := func(when string) {
		t.Helper()
		err := db.View(ctx, func(tx storage.Tx) error {
			for _, id := range ids {
				want, wantErr := s.readAccount(tx, id)
				got, gotErr := s.accountTx(tx, id)
				if got != want || errString(gotErr) != errString(wantErr) {
					t.Errorf("%s, %s: accountTx %+v %v, readAccount %+v %v", when, id, got, gotErr, want, wantErr)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	compare("cold")
	compare("warm")
	// Deleting an account that was seen must not be hidden by the refs.
	if _, err := led.DeleteAccount(ctx, corebank.System(), "", deleted.ID); err != nil {
		t.Fatal(err)
	}
	compare("after a deletion")
	if _, ok := s.accounts.get(funded.ID); !ok {
		t.Fatal("the funded account was not remembered")
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
