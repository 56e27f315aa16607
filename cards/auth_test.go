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
	v, err := b.Cards.CreateVirtual(ctx, root, in)
	if err != nil {
		t.Fatal(err)
	}
	frozen, err := b.Cards.CreateVirtual(ctx, root, virtual(acct.ID))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Cards.Freeze(ctx, root, "", frozen.ID, ""); err != nil {
		t.Fatal(err)
	}
	deleted, _ := b.Cards.CreateVirtual(ctx, root, virtual(acct.ID))
	if _, err := b.Cards.Delete(ctx, root, "", deleted.ID); err != nil {
		t.Fatal(err)
	}
	old := virtual(acct.ID)
	now := b.Clock.Now().UTC()
	old.ExpirationMonth, old.ExpirationYear = cards.Flex(now.Format("01")), cards.Flex(now.Format("06"))
	expiring, err := b.Cards.CreateVirtual(ctx, root, old)
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
		{"over the transaction limit", v.ID, auth(3001, 5812), cards.DeclineTransactionLimit, 8000},
		{"blocked MCC", v.ID, auth(100, 7995), cards.DeclineMCCBlocked, 8000},
		{"frozen card", frozen.ID, auth(100, 5812), cards.DeclineCardFrozen, 8000},
		{"deleted card", deleted.ID, auth(100, 5812), cards.DeclineCardDeleted, 8000},
		{"approved at the limit", v.ID, auth(3000, 5812), "", 5000},
		{"insufficient funds", expiring.ID, auth(5001, 5812), cards.DeclineInsufficientFunds, 5000},
		{"all of it", expiring.ID, auth(5000, 5812), "", 0},
	} {
		tx, err := b.Cards.Authorize(ctx, root, "", tc.card, tc.in)
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
	tx, _ := b.Cards.Authorize(ctx, root, "", expiring.ID, auth(1, 5812))
	if tx.DeclineReason == nil || *tx.DeclineReason != cards.DeclineCardExpired {
		t.Errorf("expired card: %+v", tx)
	}
	list, err := b.Cards.ListTransactions(ctx, root, "", v.ID)
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
	d, err := b.Cards.CreateDisposable(ctx, root, virtual(acct.ID))
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{cards.TxPending, cards.TxPending, cards.TxPending, cards.TxDeclined} {
		amount := []int64{1, 1, 500, 500}[i]
		tx, err := b.Cards.Authorize(ctx, root, "", d.ID, auth(amount, 5812))
		if err != nil || tx.Status != want {
			t.Fatalf("authorization %d: %+v %v, want %s", i, tx, err, want)
		}
	}
	c, _ := b.Cards.Get(ctx, root, "", d.ID)
	if c.Status != cards.StatusBlocked {
		t.Errorf("status %s, want blocked", c.Status)
	}
}

func TestAuthorizeInvalid(t *testing.T) {
	b := corebanktest.New(t)
	root := corebank.As(b.Root.EntityID)
	acct := b.FundedAccount("USD", 10000)
	v, _ := b.Cards.CreateVirtual(ctx, root, virtual(acct.ID))
	bad := auth(0, 10000)
	bad.MerchantName = ""
	_, err := b.Cards.Authorize(ctx, root, "", v.ID, bad)
	if d := cmp.Diff(map[string]string{"amount": "must be between 1 and 9007199254740991",
		"mcc": "must be a four-digit merchant category code", "merchant_name": "is required"}, fields(err)); d != "" {
		t.Errorf("fields (-want +got):\n%s", d)
	}
	eur := auth(1, 5812)
	eur.Currency = "EUR"
	if _, err := b.Cards.Authorize(ctx, root, "", v.ID, eur); fields(err)["currency"] == "" {
		t.Errorf("currency: %v", err)
	}
	if list, _ := b.Cards.ListTransactions(ctx, root, "", v.ID); len(list) != 0 {
		t.Errorf("an invalid authorization was stored: %+v", list)
	}
}
