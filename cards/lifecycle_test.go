package cards_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/cards"
	"github.com/corebank/corebank/corebanktest"
)

func TestLifecycle(t *testing.T) {
	b := corebanktest.New(t)
	root := corebank.As(b.Root.EntityID)
	acct := b.FundedAccount("USD", 10000)
	v, err := b.Cards.CreateVirtual(ctx, root, virtual(acct.ID))
	if err != nil {
		t.Fatal(err)
	}
	type step struct {
		op        string
		amount    int64
		status    string
		authd     int64
		settled   int64
		available int64
		settledAc int64
	}
	moves := map[string]func(id string, amount int64) (*cards.Transaction, error){
		"clear":     func(id string, a int64) (*cards.Transaction, error) { return b.Cards.Clear(ctx, root, "", id, a) },
		"reverse":   func(id string, a int64) (*cards.Transaction, error) { return b.Cards.Reverse(ctx, root, "", id, a) },
		"expire":    func(id string, _ int64) (*cards.Transaction, error) { return b.Cards.Expire(ctx, root, "", id) },
		"increment": func(id string, a int64) (*cards.Transaction, error) { return b.Cards.Increment(ctx, root, "", id, a) },
		"refund":    func(id string, a int64) (*cards.Transaction, error) { return b.Cards.Refund(ctx, root, "", id, a) },
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"partial clear", []step{{"clear", 600, "settled", 1000, 600, 9400, 9400}}},
		{"clear larger", []step{{"clear", 1200, "settled", 1000, 1200, 8200, 8200}}},
		{"partial then full reversal", []step{{"reverse", 300, "pending", 700, 0, 7500, 8200}, {"reverse", 0, "voided", 0, 0, 8200, 8200}}},
		{"expire", []step{{"expire", 0, "expired", 0, 0, 8200, 8200}}},
		{"increment then clear", []step{{"increment", 500, "pending", 1500, 0, 6700, 8200}, {"clear", 0, "settled", 1500, 1500, 6700, 6700}}},
		{"refund", []step{{"clear", 0, "settled", 1000, 1000, 5700, 5700}, {"refund", 400, "settled", 1000, 1000, 6100, 6100}, {"refund", 0, "settled", 1000, 1000, 6700, 6700}}},
	} {
		tx, err := b.Cards.Authorize(ctx, root, "", v.ID, auth(1000, 5812))
		if err != nil || tx.Status != cards.TxPending {
			t.Fatalf("%s: %+v %v", tc.name, tx, err)
		}
		for i, st := range tc.steps {
			got, err := moves[st.op](tx.ID, st.amount)
			if err != nil {
				t.Fatalf("%s step %d: %v", tc.name, i, err)
			}
			bal, _ := b.Ledger.GetBalance(ctx, acct.ID)
			want := []int64{st.authd, st.settled, st.available, st.settledAc}
			if d := cmp.Diff(want, []int64{got.AmountAuthorized, got.AmountSettled, bal.Available(), bal.Settled}); d != "" || got.Status != st.status {
				t.Errorf("%s step %d %s: status %s (want %s); authorized, settled, available, account settled (-want +got):\n%s",
					tc.name, i, st.op, got.Status, st.status, d)
			}
		}
	}
	settled, _ := b.Cards.ListTransactions(ctx, root, "", v.ID)
	last := settled[len(settled)-1]
	for _, bad := range []struct {
		op     string
		amount int64
		kind   corebank.Kind
	}{{"clear", 0, corebank.KindConflict}, {"reverse", 0, corebank.KindConflict}, {"refund", 1, corebank.KindInvalid}, {"increment", 0, corebank.KindInvalid}} {
		if _, err := moves[bad.op](last.ID, bad.amount); kind(err) != bad.kind {
			t.Errorf("%s of a refunded settled transaction: %v", bad.op, err)
		}
	}
}

func TestClearAfterBlockedAndAutoExpiry(t *testing.T) {
	b := corebanktest.New(t)
	root := corebank.As(b.Root.EntityID)
	acct := b.FundedAccount("USD", 10000)
	d, _ := b.Cards.CreateDisposable(ctx, root, virtual(acct.ID))
	first, _ := b.Cards.Authorize(ctx, root, "", d.ID, auth(500, 5812))
	if c, _ := b.Cards.Get(ctx, root, "", d.ID); c.Status != cards.StatusBlocked {
		t.Fatalf("disposable card after use: %s", c.Status)
	}
	if got, err := b.Cards.Reverse(ctx, root, "", first.ID, 100); err != nil || got.AmountAuthorized != 400 {
		t.Fatalf("reverse on a blocked card: %+v %v", got, err)
	}
	if got, err := b.Cards.Clear(ctx, root, "", first.ID, 0); err != nil || got.Status != cards.TxSettled {
		t.Fatalf("clear on a blocked card: %+v %v", got, err)
	}

	v, _ := b.Cards.CreateVirtual(ctx, root, virtual(acct.ID))
	tx, _ := b.Cards.Authorize(ctx, root, "", v.ID, auth(700, 5812))
	b.Advance(7*24*time.Hour - time.Second)
	if l, _ := b.Cards.ListTransactions(ctx, root, "", v.ID); l[0].Status != cards.TxPending {
		t.Fatalf("before expiry: %s", l[0].Status)
	}
	b.Advance(time.Second)
	l, _ := b.Cards.ListTransactions(ctx, root, "", v.ID)
	bal, _ := b.Ledger.GetBalance(ctx, acct.ID)
	if l[0].ID != tx.ID || l[0].Status != cards.TxExpired || bal.Available() != 9600 {
		t.Errorf("after seven days: %+v, available %d", l[0], bal.Available())
	}
}

// Releasing yesterday's hold frees yesterday's window, not today's.
func TestReleaseKeepsItsWindow(t *testing.T) {
	b := corebanktest.New(t)
	root := corebank.As(b.Root.EntityID)
	acct := b.FundedAccount("USD", 10000)
	limit := int64(1000)
	in := virtual(acct.ID)
	in.IndividualControls = &cards.Controls{DailyAmountLimit: &limit}
	v, _ := b.Cards.CreateVirtual(ctx, root, in)
	yesterday, _ := b.Cards.Authorize(ctx, root, "", v.ID, auth(800, 5812))
	b.Clock.Add(24 * time.Hour)
	if tx, _ := b.Cards.Authorize(ctx, root, "", v.ID, auth(1000, 5812)); tx.Status != cards.TxPending {
		t.Fatalf("today: %+v", tx)
	}
	if _, err := b.Cards.Reverse(ctx, root, "", yesterday.ID, 0); err != nil {
		t.Fatal(err)
	}
	tx, _ := b.Cards.Authorize(ctx, root, "", v.ID, auth(1, 5812))
	if tx.DeclineReason == nil || *tx.DeclineReason != "individual_controls.daily_amount_limit" {
		t.Errorf("today's limit freed by yesterday's release: %+v", tx)
	}
}
