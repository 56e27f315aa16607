package cards_test

import (
	"errors"
	"strings"
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
	v, err := b.Cards.CreateVirtualCard(ctx, root, virtual(acct.ID))
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
		"clear": func(id string, a int64) (*cards.Transaction, error) {
			return b.Cards.ClearTransaction(ctx, root, "", id, a)
		},
		"reverse": func(id string, a int64) (*cards.Transaction, error) {
			return b.Cards.ReverseTransaction(ctx, root, "", id, a)
		},
		"expire": func(id string, _ int64) (*cards.Transaction, error) {
			return b.Cards.ExpireTransaction(ctx, root, "", id)
		},
		"increment": func(id string, a int64) (*cards.Transaction, error) {
			return b.Cards.IncrementTransaction(ctx, root, "", id, a)
		},
		"refund": func(id string, a int64) (*cards.Transaction, error) {
			return b.Cards.RefundTransaction(ctx, root, "", id, a)
		},
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
		tx, err := b.Cards.AuthorizeCard(ctx, root, "", v.ID, auth(1000, 5812))
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
	settled, _ := b.Cards.ListTransactions(ctx, root, cards.TransactionFilter{CardID: v.ID})
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
	d, _ := b.Cards.CreateDisposableCard(ctx, root, virtual(acct.ID))
	first, _ := b.Cards.AuthorizeCard(ctx, root, "", d.ID, auth(500, 5812))
	if c, _ := b.Cards.GetCard(ctx, root, "", d.ID); c.Status != cards.StatusBlocked {
		t.Fatalf("disposable card after use: %s", c.Status)
	}
	// Used up for good: unfreezing would make a single-use number reusable
	// (the simulator unfroze one and bought with it again).
	if _, err := b.Cards.UnfreezeCard(ctx, root, "", d.ID); !errors.Is(err, cards.ErrInvalidForState) {
		t.Fatalf("unfreeze a used disposable card: %v", err)
	}
	if again, _ := b.Cards.AuthorizeCard(ctx, root, "", d.ID, auth(300, 5812)); again.Status != cards.TxDeclined {
		t.Fatalf("a second purchase on a used disposable card: %s", again.Status)
	}
	// One frozen before its purchase can be unfrozen and then used.
	d2, _ := b.Cards.CreateDisposableCard(ctx, root, virtual(acct.ID))
	if _, err := b.Cards.FreezeCard(ctx, root, "", d2.ID, ""); err != nil {
		t.Fatal(err)
	}
	if c, err := b.Cards.UnfreezeCard(ctx, root, "", d2.ID); err != nil || c.Status != cards.StatusActive {
		t.Fatalf("unfreeze an unused disposable card: %+v %v", c, err)
	}
	if got, err := b.Cards.ReverseTransaction(ctx, root, "", first.ID, 100); err != nil || got.AmountAuthorized != 400 {
		t.Fatalf("reverse on a blocked card: %+v %v", got, err)
	}
	if got, err := b.Cards.ClearTransaction(ctx, root, "", first.ID, 0); err != nil || got.Status != cards.TxSettled {
		t.Fatalf("clear on a blocked card: %+v %v", got, err)
	}

	v, _ := b.Cards.CreateVirtualCard(ctx, root, virtual(acct.ID))
	tx, _ := b.Cards.AuthorizeCard(ctx, root, "", v.ID, auth(700, 5812))
	b.Advance(7*24*time.Hour - time.Second)
	if l, _ := b.Cards.ListTransactions(ctx, root, cards.TransactionFilter{CardID: v.ID}); l[0].Status != cards.TxPending {
		t.Fatalf("before expiry: %s", l[0].Status)
	}
	b.Advance(time.Second)
	l, _ := b.Cards.ListTransactions(ctx, root, cards.TransactionFilter{CardID: v.ID})
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
	v, _ := b.Cards.CreateVirtualCard(ctx, root, in)
	yesterday, _ := b.Cards.AuthorizeCard(ctx, root, "", v.ID, auth(800, 5812))
	b.Clock.Add(24 * time.Hour)
	if tx, _ := b.Cards.AuthorizeCard(ctx, root, "", v.ID, auth(1000, 5812)); tx.Status != cards.TxPending {
		t.Fatalf("today: %+v", tx)
	}
	if _, err := b.Cards.ReverseTransaction(ctx, root, "", yesterday.ID, 0); err != nil {
		t.Fatal(err)
	}
	tx, _ := b.Cards.AuthorizeCard(ctx, root, "", v.ID, auth(1, 5812))
	if tx.DeclineReason == nil || *tx.DeclineReason != "individual_controls.daily_amount_limit" {
		t.Errorf("today's limit freed by yesterday's release: %+v", tx)
	}
}

// The part of a clearing above the authorization, and an increment, must
// fit the controls and the available balance. A refused clearing changes
// nothing; a declined increment is recorded on the transaction.
func TestExcessClearingAndDeclinedIncrement(t *testing.T) {
	b := corebanktest.New(t)
	root := corebank.As(b.Root.EntityID)
	acct := b.FundedAccount("USD", 3000)
	limit := int64(1500)
	in := virtual(acct.ID)
	in.IndividualControls = &cards.Controls{DailyAmountLimit: &limit}
	v, _ := b.Cards.CreateVirtualCard(ctx, root, in)
	tx, _ := b.Cards.AuthorizeCard(ctx, root, "", v.ID, auth(1000, 5812))
	before, _ := b.Cards.ListTransactions(ctx, root, cards.TransactionFilter{CardID: v.ID})
	balBefore, _ := b.Ledger.GetBalance(ctx, acct.ID)
	reason := func(err error) string {
		var e *corebank.Error
		if !errors.As(err, &e) {
			return ""
		}
		return e.Code + ": " + e.Message
	}
	if _, err := b.Cards.ClearTransaction(ctx, root, "", tx.ID, 1501); !strings.Contains(reason(err), "card_clearing_declined: clearing above the authorization declined: individual_controls.daily_amount_limit") {
		t.Errorf("clearing past the daily limit: %v", err)
	}
	if _, err := b.Cards.IncrementTransaction(ctx, root, "", tx.ID, 501); !strings.Contains(reason(err), "card_increment_declined: increment declined: individual_controls.daily_amount_limit") {
		t.Errorf("increment past the daily limit: %v", err)
	}
	after, _ := b.Cards.ListTransactions(ctx, root, cards.TransactionFilter{CardID: v.ID})
	balAfter, _ := b.Ledger.GetBalance(ctx, acct.ID)
	want := before[0]
	why := "individual_controls.daily_amount_limit"
	want.Events = append(want.Events, cards.TxEvent{Type: cards.EventIncDeclined, Amount: 501, Time: want.Created, DeclineReason: &why})
	if d := cmp.Diff([]cards.Transaction{want}, after); d != "" || balAfter != balBefore {
		t.Errorf("declines changed the transaction beyond the declined event (-want +got):\n%s\nbalance %+v -> %+v", d, balBefore, balAfter)
	}

	// Within the limit but past the balance: 1000 held, 2000 more available.
	limit2 := int64(10000)
	in.IndividualControls = &cards.Controls{DailyAmountLimit: &limit2}
	w, _ := b.Cards.CreateVirtualCard(ctx, root, in)
	tx2, _ := b.Cards.AuthorizeCard(ctx, root, "", w.ID, auth(500, 5812))
	if _, err := b.Cards.ClearTransaction(ctx, root, "", tx2.ID, 2501); !strings.Contains(reason(err), "insufficient_funds") {
		t.Errorf("clearing past the balance: %v", err)
	}
	got, err := b.Cards.ClearTransaction(ctx, root, "", tx2.ID, 2000)
	bal, _ := b.Ledger.GetBalance(ctx, acct.ID)
	if err != nil || got.AmountSettled != 2000 || bal.Available() != 0 {
		t.Errorf("clearing 1500 above the authorization with 1500 available: %+v %v, available %d", got, err, bal.Available())
	}
}
