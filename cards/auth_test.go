package cards_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/cards"
	"github.com/corebank/corebank/corebanktest"
)

func auth(amount int64, mcc int) cards.Authorization {
	return cards.Authorization{Amount: amount, MCC: &mcc, MerchantName: "Cafe"}
}

func TestAuthorize(t *testing.T) {
	b := corebanktest.New(t)
	root := corebank.As(b.Root.EntityID)
	acct := b.FundedAccount("USD", 10000)
	limit := int64(3000)
	in := virtual(acct.ID)
	in.IndividualControls = &cards.Controls{TransactionAmountLimit: &limit}
	in.IndividualMCCControls = []cards.MCCControl{{MCC: 7995, Open: new(bool)}}
	v, err := b.Cards.CreateVirtualCard(ctx, root, in)
	if err != nil {
		t.Fatal(err)
	}
	frozen, err := b.Cards.CreateVirtualCard(ctx, root, virtual(acct.ID))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Cards.FreezeCard(ctx, root, "", frozen.ID, ""); err != nil {
		t.Fatal(err)
	}
	deleted, _ := b.Cards.CreateVirtualCard(ctx, root, virtual(acct.ID))
	if _, err := b.Cards.DeleteCard(ctx, root, "", deleted.ID); err != nil {
		t.Fatal(err)
	}
	old := virtual(acct.ID)
	now := b.Clock.Now().UTC()
	old.ExpirationMonth, old.ExpirationYear = cards.Flex(now.Format("01")), cards.Flex(now.Format("06"))
	expiring, err := b.Cards.CreateVirtualCard(ctx, root, old)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		card   string
		in     cards.Authorization
		reason string
		avail  int64
	}{
		{"approved", v.ID, auth(2000, 5812), "", 8000},
		{"over the transaction limit", v.ID, auth(3001, 5812), "individual_controls.transaction_amount_limit", 8000},
		{"blocked MCC", v.ID, auth(100, 7995), "individual_mcc_controls.7995.open", 8000},
		{"frozen card", frozen.ID, auth(100, 5812), cards.DeclineCardFrozen, 8000},
		{"deleted card", deleted.ID, auth(100, 5812), cards.DeclineCardDeleted, 8000},
		{"approved at the limit", v.ID, auth(3000, 5812), "", 5000},
		{"insufficient funds", expiring.ID, auth(5001, 5812), cards.DeclineInsufficientFunds, 5000},
		{"all of it", expiring.ID, auth(5000, 5812), "", 0},
	} {
		tx, err := b.Cards.AuthorizeCard(ctx, root, "", tc.card, tc.in)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got, want := "", cards.TxPending
		if tx.DeclineReason != nil {
			got = *tx.DeclineReason
		}
		if tc.reason != "" {
			want = cards.TxDeclined
		}
		if got != tc.reason || tx.Status != want {
			t.Errorf("%s: status %s reason %q, want %s %q", tc.name, tx.Status, got, want, tc.reason)
		}
		bal, _ := b.Ledger.GetBalance(ctx, acct.ID)
		if bal.Available() != tc.avail {
			t.Errorf("%s: available %d, want %d", tc.name, bal.Available(), tc.avail)
		}
	}
	// The card expires when its expiry month ends.
	b.Clock.Add(40 * 24 * time.Hour)
	tx, _ := b.Cards.AuthorizeCard(ctx, root, "", expiring.ID, auth(1, 5812))
	if tx.DeclineReason == nil || *tx.DeclineReason != cards.DeclineCardExpired {
		t.Errorf("expired card: %+v", tx)
	}
	list, err := b.Cards.ListTransactions(ctx, root, cards.TransactionFilter{CardID: v.ID})
	if err != nil {
		t.Fatal(err)
	}
	var statuses []string
	for _, x := range list {
		statuses = append(statuses, x.Status)
	}
	if d := cmp.Diff([]string{"pending", "declined", "declined", "pending"}, statuses); d != "" {
		t.Errorf("transactions (-want +got):\n%s", d)
	}
	if list[0].AmountAuthorized != 2000 || list[0].Merchant.MCC != 5812 || len(list[0].Events) != 1 {
		t.Errorf("first: %+v", list[0])
	}
}

func TestDisposableUsedUp(t *testing.T) {
	b := corebanktest.New(t)
	root := corebank.As(b.Root.EntityID)
	acct := b.FundedAccount("USD", 10000)
	d, err := b.Cards.CreateDisposableCard(ctx, root, virtual(acct.ID))
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{cards.TxPending, cards.TxPending, cards.TxPending, cards.TxDeclined} {
		amount := []int64{1, 1, 500, 500}[i]
		tx, err := b.Cards.AuthorizeCard(ctx, root, "", d.ID, auth(amount, 5812))
		if err != nil || tx.Status != want {
			t.Fatalf("authorization %d: %+v %v, want %s", i, tx, err, want)
		}
	}
	c, _ := b.Cards.GetCard(ctx, root, "", d.ID)
	if c.Status != cards.StatusBlocked {
		t.Errorf("status %s, want blocked", c.Status)
	}
}

func TestAuthorizeInvalid(t *testing.T) {
	b := corebanktest.New(t)
	root := corebank.As(b.Root.EntityID)
	acct := b.FundedAccount("USD", 10000)
	v, _ := b.Cards.CreateVirtualCard(ctx, root, virtual(acct.ID))
	bad := auth(0, 10000)
	bad.MerchantName = ""
	_, err := b.Cards.AuthorizeCard(ctx, root, "", v.ID, bad)
	if d := cmp.Diff(map[string]string{"amount": "must be between 1 and 9007199254740991",
		"mcc": "must be a four-digit merchant category code", "merchant_name": "is required"}, fields(err)); d != "" {
		t.Errorf("fields (-want +got):\n%s", d)
	}
	eur := auth(1, 5812)
	eur.Currency = "EUR"
	if _, err := b.Cards.AuthorizeCard(ctx, root, "", v.ID, eur); fields(err)["currency"] == "" {
		t.Errorf("currency: %v", err)
	}
	if list, _ := b.Cards.ListTransactions(ctx, root, cards.TransactionFilter{CardID: v.ID}); len(list) != 0 {
		t.Errorf("an invalid authorization was stored: %+v", list)
	}
}

func TestControlsAndUsage(t *testing.T) {
	b := corebanktest.New(t)
	root := corebank.As(b.Root.EntityID)
	acct := b.FundedAccount("USD", 100000)
	n := func(v int64) *int64 { return &v }
	in := virtual(acct.ID)
	in.IndividualControls = &cards.Controls{DailyAmountLimit: n(5000), DailyTransactionCount: n(3), CycleTransactionCount: n(5),
		BillingCycle: "Weekly", BillingCycleDay: "Monday", TimeZone: "America/New_York"}
	in.IndividualMCCControls = []cards.MCCControl{{MCC: 5812, Limits: cards.Limits{DailyAmountLimit: n(1500)}}}
	in.MCCGroupControls = []cards.GroupControl{{GroupName: "gambling", Open: new(bool)}, {GroupName: "airlines", Limits: cards.Limits{Amount: n(2500)}}}
	v, err := b.Cards.CreateVirtualCard(ctx, root, in)
	if err != nil {
		t.Fatal(err)
	}
	// Move to 23:00 New York time on a Sunday.
	ny, _ := time.LoadLocation("America/New_York")
	now := b.Clock.Now().In(ny)
	next := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, ny)
	for next.Weekday() != time.Monday || !next.After(now) {
		next = next.AddDate(0, 0, 1)
	}
	b.Clock.Set(next.Add(-time.Hour))
	for _, tc := range []struct {
		amount int64
		mcc    int
		reason string
	}{
		{1000, 5812, ""},
		{600, 5812, "individual_mcc_controls.5812.daily_amount_limit"},
		{100, 7995, "mcc_group_controls.gambling.open"},
		{2000, 3001, ""},
		{600, 4511, "mcc_group_controls.airlines.amount"},
		{2001, 5411, "individual_controls.daily_amount_limit"},
		{2000, 5411, ""},
		{1, 5411, "individual_controls.daily_amount_limit"},
	} {
		tx, err := b.Cards.AuthorizeCard(ctx, root, "", v.ID, auth(tc.amount, tc.mcc))
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if tx.DeclineReason != nil {
			got = *tx.DeclineReason
		}
		if got != tc.reason {
			t.Errorf("%d at %d: reason %q, want %q", tc.amount, tc.mcc, got, tc.reason)
		}
	}
	c, _ := b.Cards.GetCard(ctx, root, "", v.ID)
	u := c.IndividualControls.Usage
	if d := cmp.Diff(&cards.Usage{AmountHold: 5000, DailyTransactionCountHold: 3, DailyTransactionCountBalance: n(0),
		DailyAmountLimitHold: 5000, DailyAmountLimitBalance: n(0), CycleTransactionCountHold: 3, CycleTransactionCountBalance: n(2)}, u); d != "" {
		t.Errorf("usage (-want +got):\n%s", d)
	}
	// Midnight in New York opens a new day and (Monday) a new week.
	b.Clock.Add(time.Hour)
	tx, _ := b.Cards.AuthorizeCard(ctx, root, "", v.ID, auth(1400, 5812))
	if tx.Status != cards.TxPending {
		t.Errorf("after midnight: %+v", tx)
	}
	c, _ = b.Cards.GetCard(ctx, root, "", v.ID)
	if u := c.IndividualControls.Usage; u.DailyAmountLimitHold != 1400 || u.CycleTransactionCountHold != 1 || *c.IndividualMCCControls[0].DailyAmountLimitBalance != 100 {
		t.Errorf("new day usage: %+v %+v", u, c.IndividualMCCControls[0].Usage)
	}
}
