package cards_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/cards"
	"github.com/corebank/corebank/corebanktest"
)

// TestPropertyLimits runs random authorizations, clearings, reversals,
// expiries, increments and refunds over several cards with controls and
// checks, after every step, that no limit's used plus hold passes the
// limit, no account's available balance is negative, and each card's
// counters equal those recomputed from its transactions.
func TestPropertyLimits(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 1))
	b := corebanktest.New(t)
	root := corebank.As(b.Root.EntityID)
	n := func(v int64) *int64 { return &v }
	accts := []string{b.FundedAccount("USD", 6000).ID, b.FundedAccount("USD", 20000).ID}
	var ids []string
	for i := range 4 {
		in := virtual(accts[i%2])
		in.IndividualControls = &cards.Controls{DailyAmountLimit: n(4000), DailyTransactionCount: n(6), CycleTransactionCount: n(15),
			TransactionAmountLimit: n(2500)}
		in.IndividualMCCControls = []cards.MCCControl{{MCC: 5812, Limits: cards.Limits{DailyAmountLimit: n(1500), Amount: n(3000)}}}
		in.MCCGroupControls = []cards.GroupControl{{GroupName: "airlines", Limits: cards.Limits{Amount: n(5000), DailyTransactionCount: n(2)}}}
		c, err := b.Cards.CreateVirtualCard(ctx, root, in)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, c.ID)
	}
	mccs := []int{5812, 3001, 5411}
	for step := range 400 {
		card := ids[rng.IntN(len(ids))]
		list, err := b.Cards.ListTransactions(ctx, root, cards.TransactionFilter{CardID: card})
		if err != nil {
			t.Fatal(err)
		}
		var pick *cards.Transaction
		if len(list) > 0 {
			pick = &list[rng.IntN(len(list))]
		}
		op := rng.IntN(8)
		var what string
		switch {
		case op <= 2 || pick == nil:
			a := auth(1+rng.Int64N(2000), mccs[rng.IntN(len(mccs))])
			what = fmt.Sprintf("authorize %d at %d", a.Amount, *a.MCC)
			_, err = b.Cards.AuthorizeCard(ctx, root, "", card, a)
		case op == 3:
			a := rng.Int64N(pick.AmountAuthorized + 500) // some larger than authorized
			what = fmt.Sprintf("clear %s %d", pick.ID, a)
			_, err = b.Cards.ClearTransaction(ctx, root, "", pick.ID, a)
		case op == 4:
			a := rng.Int64N(pick.AmountAuthorized + 1)
			what = fmt.Sprintf("reverse %s %d", pick.ID, a)
			_, err = b.Cards.ReverseTransaction(ctx, root, "", pick.ID, a)
		case op == 5:
			what = "expire " + pick.ID
			_, err = b.Cards.ExpireTransaction(ctx, root, "", pick.ID)
		case op == 6:
			a := 1 + rng.Int64N(500)
			what = fmt.Sprintf("increment %s %d", pick.ID, a)
			_, err = b.Cards.IncrementTransaction(ctx, root, "", pick.ID, a)
			if corebank.KindOf(err) == corebank.KindConflict {
				err = nil // declined or not pending
			}
		default:
			what = "refund " + pick.ID
			_, err = b.Cards.RefundTransaction(ctx, root, "", pick.ID, 0)
		}
		if err != nil && corebank.KindOf(err) != corebank.KindConflict && corebank.KindOf(err) != corebank.KindInvalid {
			t.Fatalf("step %d %s: %v", step, what, err)
		}
		if rng.IntN(10) == 0 {
			b.Advance(time.Duration(rng.IntN(30)) * time.Hour)
		}
		checkInvariants(t, b, root, accts, ids, fmt.Sprintf("step %d (%s)", step, what))
		if t.Failed() {
			t.Fatalf("seed %d", seed)
		}
	}
}

func checkInvariants(t *testing.T, b *corebanktest.Bank, root corebank.Caller, accts, ids []string, at string) {
	t.Helper()
	for _, a := range accts {
		if bal, _ := b.Ledger.GetBalance(ctx, a); bal.Available() < 0 {
			t.Errorf("%s: account %s available %d", at, a, bal.Available())
		}
	}
	now := b.Clock.Now().UTC()
	day, month := now.Format(time.DateOnly), now.Format("2006-01")
	for _, id := range ids {
		c, err := b.Cards.GetCard(ctx, root, "", id)
		if err != nil {
			t.Fatal(err)
		}
		u := c.IndividualControls.Usage
		ic := c.IndividualControls
		within := func(name string, used, hold int64, limit *int64) {
			if limit != nil && used+hold > *limit {
				t.Errorf("%s: card %s %s used %d + hold %d > %d", at, id, name, used, hold, *limit)
			}
		}
		within("daily_amount_limit", u.DailyAmountLimitUsed, u.DailyAmountLimitHold, ic.DailyAmountLimit)
		within("daily_transaction_count", u.DailyTransactionCountUsed, u.DailyTransactionCountHold, ic.DailyTransactionCount)
		within("cycle_transaction_count", u.CycleTransactionCountUsed, u.CycleTransactionCountHold, ic.CycleTransactionCount)
		for _, m := range c.IndividualMCCControls {
			within("mcc daily_amount_limit", m.DailyAmountLimitUsed, m.DailyAmountLimitHold, m.DailyAmountLimit)
			within("mcc amount", m.AmountUsed, m.AmountHold, m.Amount)
		}
		for _, g := range c.MCCGroupControls {
			within("group amount", g.AmountUsed, g.AmountHold, g.Amount)
			within("group daily_transaction_count", g.DailyTransactionCountUsed, g.DailyTransactionCountHold, g.DailyTransactionCount)
		}
		// Recompute the individual counters of today and this month.
		var want cards.Usage
		list, _ := b.Cards.ListTransactions(ctx, root, cards.TransactionFilter{CardID: id})
		for _, x := range list {
			created := time.UnixMilli(x.Created).UTC()
			var hold, used, ch, cu int64
			switch x.Status {
			case cards.TxPending:
				hold, ch = x.AmountAuthorized, 1
			case cards.TxSettled:
				used, cu = x.AmountSettled, 1
				for _, e := range x.Events {
					if e.Type == cards.EventRefund {
						used -= e.Amount
					}
				}
			}
			if created.Format(time.DateOnly) == day {
				want.DailyAmountLimitHold += hold
				want.DailyAmountLimitUsed += used
				want.DailyTransactionCountHold += ch
				want.DailyTransactionCountUsed += cu
			}
			if created.Format("2006-01") == month {
				want.AmountHold += hold
				want.AmountUsed += used
				want.CycleTransactionCountHold += ch
				want.CycleTransactionCountUsed += cu
			}
		}
		got := *u
		got.AmountBalance, got.DailyAmountLimitBalance, got.DailyTransactionCountBalance, got.CycleTransactionCountBalance = nil, nil, nil, nil
		if got != want {
			t.Errorf("%s: card %s counters %+v, recomputed %+v", at, id, got, want)
		}
	}
}
