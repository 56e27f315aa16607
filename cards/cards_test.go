package cards_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/bank"
	"github.com/corebank/corebank/cards"
	"github.com/corebank/corebank/corebanktest"
	"github.com/corebank/corebank/entities"
	"github.com/corebank/corebank/internal/luhn"
	"github.com/corebank/corebank/ledger"
)

var ctx = context.Background()

func holder() *cards.Cardholder {
	return &cards.Cardholder{FirstName: "Ada", LastName: "Lovelace", Email: "ada@example.com", PhoneNumber: "+442071838750"}
}

func virtual(account string) cards.NewCard {
	return cards.NewCard{AccountID: account, CardName: "Travel", Currency: "USD", Cardholder: holder(),
		ExpirationMonth: "07", ExpirationYear: "29"}
}

// errInvalid matches any validation error.
var errInvalid = corebank.E(corebank.KindInvalid, "", "")

func kind(err error) corebank.Kind { return corebank.KindOf(err) }

func fields(err error) map[string]string {
	var e *corebank.Error
	if errors.As(err, &e) {
		return e.Fields
	}
	return nil
}

func TestIssueVirtualAndDisposable(t *testing.T) {
	b := corebanktest.New(t)
	root := corebank.As(b.Root.EntityID)
	acct := b.FundedAccount("USD", 10000)
	in := virtual(acct.ID)
	five := int64(5000)
	in.IndividualControls = &cards.Controls{BillingCycle: "Monthly", BillingCycleDay: "1", DailyAmountLimit: &five}
	in.IndividualMCCControls = []cards.MCCControl{{MCC: 5812}}
	in.MCCGroupControls = []cards.GroupControl{{GroupName: "gambling", Open: new(bool)}}
	v, err := b.Cards.CreateVirtualCard(ctx, root, in)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Number) != 16 || !strings.HasPrefix(v.Number, "400000") || !luhn.Valid(v.Number) {
		t.Errorf("number %q: want 16 Luhn-valid digits under the BIN", v.Number)
	}
	if len(v.CVV) != 3 || strings.Trim(v.CVV, "0123456789") != "" {
		t.Errorf("cvv %q", v.CVV)
	}
	if v.Status != cards.StatusActive || v.Type != cards.TypeVirtual || v.Shipping != nil {
		t.Errorf("card: %+v", v)
	}
	if !*v.IndividualMCCControls[0].Open || *v.MCCGroupControls[0].Open {
		t.Errorf("open defaults: %+v %+v", v.IndividualMCCControls, v.MCCGroupControls)
	}
	got, err := b.Cards.GetCard(ctx, root, "", v.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := *v
	want.Number, want.CVV = "************"+v.Number[12:], ""
	if diff := cmp.Diff(&want, got); diff != "" {
		t.Errorf("Get (-want +got):\n%s", diff)
	}
	ev := b.LastEvent(cards.EventCreated)
	if ev == nil || strings.Contains(string(mustJSON(t, ev)), v.Number) || strings.Contains(string(mustJSON(t, ev)), `"cvv"`) {
		t.Errorf("cards.created: %s", mustJSON(t, ev))
	}

	d, err := b.Cards.CreateDisposableCard(ctx, root, virtual(acct.ID))
	if err != nil {
		t.Fatal(err)
	}
	raw := string(mustJSON(t, d))
	for _, s := range []string{`"individual_controls":{}`, `"shipping":null`, `"type":"disposable"`, `"expiration_month":"07"`, `"expiration_year":"29"`} {
		if !strings.Contains(raw, s) {
			t.Errorf("disposable lacks %s: %s", s, raw)
		}
	}
	if d.Number == v.Number {
		t.Error("two cards share a number")
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func TestExpiryAcceptsNumbers(t *testing.T) {
	var in cards.NewCard
	if err := json.Unmarshal([]byte(`{"expiration_month": 7, "expiration_year": 31}`), &in); err != nil {
		t.Fatal(err)
	}
	b := corebanktest.New(t)
	acct := b.FundedAccount("USD", 1)
	in.AccountID, in.CardName, in.Currency, in.Cardholder = acct.ID, "n", "USD", holder()
	c, err := b.Cards.CreateDisposableCard(ctx, corebank.As(b.Root.EntityID), in)
	if err != nil {
		t.Fatal(err)
	}
	if c.ExpirationMonth != "07" || c.ExpirationYear != "31" {
		t.Errorf("expiry %q/%q, want 07/31", c.ExpirationMonth, c.ExpirationYear)
	}
}

func TestCreateValidation(t *testing.T) {
	b := corebanktest.New(t) // the clock starts in January 2026
	root := corebank.As(b.Root.EntityID)
	acct := b.FundedAccount("USD", 1)
	eur := b.FundedAccount("EUR", 1)
	for _, tc := range []struct {
		name  string
		edit  func(*cards.NewCard)
		field string
	}{
		{"no account", func(c *cards.NewCard) { c.AccountID = "" }, "account_id"},
		{"no name", func(c *cards.NewCard) { c.CardName = "" }, "card_name"},
		{"no currency", func(c *cards.NewCard) { c.Currency = "" }, "currency"},
		{"other currency", func(c *cards.NewCard) { c.AccountID = eur.ID }, "currency"},
		{"no cardholder", func(c *cards.NewCard) { c.Cardholder = nil }, "cardholder"},
		{"no first name", func(c *cards.NewCard) { c.Cardholder.FirstName = "" }, "cardholder.first_name"},
		{"bad email", func(c *cards.NewCard) { c.Cardholder.Email = "ada" }, "cardholder.email"},
		{"local phone", func(c *cards.NewCard) { c.Cardholder.PhoneNumber = "020 7183 8750" }, "cardholder.phone_number"},
		{"month 13", func(c *cards.NewCard) { c.ExpirationMonth = "13" }, "expiration_month"},
		{"no month", func(c *cards.NewCard) { c.ExpirationMonth = "" }, "expiration_month"},
		{"year in the past", func(c *cards.NewCard) { c.ExpirationYear = "25" }, "expiration_year"},
		{"month in the past", func(c *cards.NewCard) { c.ExpirationMonth, c.ExpirationYear = "12", "25" }, "expiration_year"},
		{"year of three digits", func(c *cards.NewCard) { c.ExpirationYear = "229" }, "expiration_year"},
		{"bad mcc", func(c *cards.NewCard) { c.IndividualMCCControls = []cards.MCCControl{{MCC: 0}} }, "individual_mcc_controls.0.mcc"},
		{"no group name", func(c *cards.NewCard) { c.MCCGroupControls = []cards.GroupControl{{}} }, "mcc_group_controls.0.group_name"},
		{"unknown group", func(c *cards.NewCard) { c.MCCGroupControls = []cards.GroupControl{{GroupName: "casinos"}} }, "mcc_group_controls.0.group_name"},
		{"bad weekday", func(c *cards.NewCard) {
			c.IndividualControls = &cards.Controls{BillingCycle: "Weekly", BillingCycleDay: "Funday"}
		}, "individual_controls.billing_cycle_day"},
		{"bad month day", func(c *cards.NewCard) { c.IndividualControls = &cards.Controls{BillingCycleDay: "32"} }, "individual_controls.billing_cycle_day"},
		{"bad zone", func(c *cards.NewCard) { c.IndividualControls = &cards.Controls{TimeZone: "Mars/Olympus"} }, "individual_controls.time_zone"},
		{"bad cycle", func(c *cards.NewCard) { c.IndividualControls = &cards.Controls{BillingCycle: "Hourly"} }, "individual_controls.billing_cycle"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := virtual(acct.ID)
			in.Cardholder = holder()
			tc.edit(&in)
			_, err := b.Cards.CreateVirtualCard(ctx, root, in)
			if kind(err) != corebank.KindBadRequest || fields(err)[tc.field] == "" {
				t.Fatalf("got %v (fields %v), want 400 naming %s", err, fields(err), tc.field)
			}
		})
	}
	in := virtual(acct.ID)
	in.IndividualControls = &cards.Controls{}
	if _, err := b.Cards.CreateDisposableCard(ctx, root, in); kind(err) != corebank.KindBadRequest {
		t.Errorf("disposable with controls: %v", err)
	}
	page, err := b.Cards.ListCards(ctx, root, cards.CardFilter{}, corebank.ListOptions{})
	if err != nil || len(page.Items) != 0 {
		t.Errorf("invalid requests created cards: %v %v", page, err)
	}
}

func TestCreateLimitPerEntityPerRollingHour(t *testing.T) {
	b := corebanktest.New(t, corebanktest.WithOptions(func(o *bank.Options) { o.Cards.CreateLimit = 2 }))
	root := corebank.As(b.Root.EntityID)
	acct := b.FundedAccount("USD", 1)
	if _, err := b.Cards.CreateVirtualCard(ctx, root, virtual(acct.ID)); err != nil {
		t.Fatal(err)
	}
	b.Advance(20 * time.Minute)
	if _, err := b.Cards.CreateDisposableCard(ctx, root, virtual(acct.ID)); err != nil {
		t.Fatal(err)
	}
	b.Advance(10 * time.Minute)
	_, err := b.Cards.CreateVirtualCard(ctx, root, virtual(acct.ID))
	var e *corebank.Error
	if !errors.As(err, &e) || e.Kind != corebank.KindRateLimited {
		t.Fatalf("third card: %v, want the creation limit", err)
	}
	want := &cards.RateLimit{RetryAfter: 30 * 60, LimitType: cards.LimitTypeCreate, CurrentCount: 2, Limit: 2}
	if diff := cmp.Diff(want, e.Data); diff != "" {
		t.Errorf("429 data (-want +got):\n%s", diff)
	}
	// Another entity has a limit of its own.
	_, ca := childAccount(t, b)
	if _, err := b.Cards.CreateVirtualCard(ctx, root, virtual(ca.ID)); err != nil {
		t.Errorf("the child's first card: %v", err)
	}
	// The first creation leaves the window an hour after it was made.
	b.Advance(30*time.Minute - time.Millisecond)
	if _, err := b.Cards.CreateVirtualCard(ctx, root, virtual(acct.ID)); kind(err) != corebank.KindRateLimited {
		t.Errorf("just before the hour: %v", err)
	}
	b.Advance(time.Millisecond)
	if _, err := b.Cards.CreateVirtualCard(ctx, root, virtual(acct.ID)); err != nil {
		t.Errorf("an hour after the first: %v", err)
	}
}

func TestFreezeUnfreezeDelete(t *testing.T) {
	b := corebanktest.New(t)
	root := corebank.As(b.Root.EntityID)
	acct := b.FundedAccount("USD", 1)
	c := b.IssueCard(acct.ID)
	steps := []struct {
		name   string
		do     func() (*cards.Card, error)
		status string
		event  string
		err    error
	}{
		{"unfreeze active", func() (*cards.Card, error) { return b.Cards.UnfreezeCard(ctx, root, "", c.ID) }, cards.StatusActive, "", nil},
		{"freeze", func() (*cards.Card, error) { return b.Cards.FreezeCard(ctx, root, "", c.ID, "") }, cards.StatusBlocked, cards.EventFrozen, nil},
		{"freeze again", func() (*cards.Card, error) { return b.Cards.FreezeCard(ctx, root, "", c.ID, "blocked") }, cards.StatusBlocked, "", nil},
		{"unfreeze", func() (*cards.Card, error) { return b.Cards.UnfreezeCard(ctx, root, "", c.ID) }, cards.StatusActive, cards.EventUnfrozen, nil},
		{"bad status", func() (*cards.Card, error) { return b.Cards.FreezeCard(ctx, root, "", c.ID, "lost") }, "", "", errInvalid},
		{"fraud", func() (*cards.Card, error) { return b.Cards.FreezeCard(ctx, root, "", c.ID, "fraud") }, cards.StatusFraud, cards.EventFrozen, nil},
		{"unfreeze fraud", func() (*cards.Card, error) { return b.Cards.UnfreezeCard(ctx, root, "", c.ID) }, "", "", cards.ErrInvalidForState},
		{"block fraud", func() (*cards.Card, error) { return b.Cards.FreezeCard(ctx, root, "", c.ID, "") }, "", "", cards.ErrInvalidForState},
		{"delete", func() (*cards.Card, error) { return b.Cards.DeleteCard(ctx, root, "", c.ID) }, cards.StatusFraud, cards.EventDeleted, nil},
		{"freeze deleted", func() (*cards.Card, error) { return b.Cards.FreezeCard(ctx, root, "", c.ID, "fraud") }, "", "", cards.ErrInvalidForState},
		{"read-only", func() (*cards.Card, error) {
			return b.Cards.DeleteCard(ctx, corebank.Caller{EntityID: b.Root.EntityID, ReadOnly: true}, "", c.ID)
		}, "", "", corebank.ErrForbidden},
	}
	for _, st := range steps {
		before := b.LastEvent(st.event)
		got, err := st.do()
		if st.err != nil {
			if st.err == errInvalid && kind(err) != corebank.KindInvalid || st.err != errInvalid && !errors.Is(err, st.err) {
				t.Errorf("%s: %v, want %v", st.name, err, st.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if got.Status != st.status {
			t.Errorf("%s: status %s, want %s", st.name, got.Status, st.status)
		}
		if st.event != "" {
			after := b.LastEvent(st.event)
			if after == nil || (before != nil && after.ID == before.ID) {
				t.Errorf("%s: no %s event", st.name, st.event)
			}
		}
	}
	got, err := b.Cards.GetCard(ctx, root, "", c.ID)
	if err != nil || !got.Deleted {
		t.Errorf("deleted card reads %+v, %v", got, err)
	}
	page, err := b.Cards.ListCards(ctx, root, cards.CardFilter{}, corebank.ListOptions{})
	if err != nil || len(page.Items) != 0 {
		t.Errorf("the list shows a deleted card: %+v %v", page, err)
	}
}

func TestReassign(t *testing.T) {
	b := corebanktest.New(t)
	root := corebank.As(b.Root.EntityID)
	a1, a2, eur := b.FundedAccount("USD", 1), b.FundedAccount("USD", 1), b.FundedAccount("EUR", 1)
	c := b.IssueCard(a1.ID)
	got, err := b.Cards.ReassignCard(ctx, root, "", c.ID, a2.ID)
	if err != nil || got.AccountID != a2.ID {
		t.Fatalf("reassign: %+v %v", got, err)
	}
	if _, err := b.Cards.ReassignCard(ctx, root, "", c.ID, eur.ID); kind(err) != corebank.KindInvalid {
		t.Errorf("to another currency: %v", err)
	}
	if _, err := b.Cards.ReassignCard(ctx, root, "", c.ID, "01HZZZZZZZZZZZZZZZZZZZZZZZ"); !errors.Is(err, ledger.ErrAccountNotFound) {
		t.Errorf("to a missing account: %v", err)
	}
	child, ca := childAccount(t, b)
	if _, err := b.Cards.ReassignCard(ctx, root, "", c.ID, ca.ID); kind(err) != corebank.KindInvalid {
		t.Errorf("to another entity's account: %v", err)
	}
	// The child sees neither the card nor, through it, the root's accounts.
	if _, err := b.Cards.GetCard(ctx, corebank.As(child), "", c.ID); !errors.Is(err, cards.ErrCardNotFound) {
		t.Errorf("foreign card: %v", err)
	}
	page, err := b.Cards.ListCards(ctx, root, cards.CardFilter{AccountID: a2.ID}, corebank.ListOptions{})
	if err != nil || len(page.Items) != 1 {
		t.Errorf("list of a2: %+v %v", page, err)
	}
	page, err = b.Cards.ListCards(ctx, root, cards.CardFilter{AccountID: a1.ID}, corebank.ListOptions{})
	if err != nil || len(page.Items) != 0 {
		t.Errorf("list of a1: %+v %v", page, err)
	}
}

func TestListPages(t *testing.T) {
	b := corebanktest.New(t)
	root := corebank.As(b.Root.EntityID)
	acct := b.FundedAccount("USD", 1)
	var ids []string
	for range 5 {
		ids = append(ids, b.IssueCard(acct.ID).ID)
		b.Advance(time.Second)
	}
	var got []string
	opts := corebank.ListOptions{Limit: 2}
	for {
		p, err := b.Cards.ListCards(ctx, root, cards.CardFilter{}, opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range p.Items {
			if c.CVV != "" || !strings.HasPrefix(c.Number, "************") {
				t.Errorf("listed card shows its number: %+v", c)
			}
			got = append(got, c.ID)
		}
		if !p.HasNext {
			break
		}
		opts.After = p.Next
	}
	if diff := cmp.Diff(ids, got); diff != "" {
		t.Errorf("pages (-want +got):\n%s", diff)
	}
	txs, err := b.Cards.ListTransactions(ctx, root, cards.TransactionFilter{CardID: ids[0]})
	if err != nil || len(txs) != 0 {
		t.Errorf("transactions: %v %v", txs, err)
	}
}

// childAccount makes an approved business below the root and a USD
// account of it.
func childAccount(t *testing.T, b *corebanktest.Bank) (string, *ledger.Account) {
	t.Helper()
	root := corebank.As(b.Root.EntityID)
	child, err := b.Entities.CreateBusiness(ctx, root, entities.NewBusiness{Name: "Child", Business: &entities.BusinessInput{LegalName: "Child Co", Type: "llc"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Entities.ReviewEntity(ctx, corebank.System(), child.Entity.ID, "approved"); err != nil {
		t.Fatal(err)
	}
	ca, err := b.Ledger.CreateAccount(ctx, root, ledger.NewAccount{EntityID: child.Entity.ID, Type: ledger.TypeChecking, Currency: "USD", DisplayName: "c"})
	if err != nil {
		t.Fatal(err)
	}
	return child.Entity.ID, ca
}
