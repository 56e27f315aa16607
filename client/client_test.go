package client_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/corebank/corebank/client"
	"github.com/corebank/corebank/corebanktest"
)

// vendor makes a business counterparty with an ACH payment detail, the
// usual payee of a payout, and returns the detail's ID.
func vendor(t *testing.T, ctx context.Context, c *client.Client) string {
	t.Helper()
	cp, err := c.PostCounterparties(ctx, client.PostCounterpartiesJSONRequestBody{
		Type: "business",
		Profile: client.NewCounterpartyProfile{LegalName: client.Ptr("Acme Inc"), Relationship: "vendor", Email: "ap@acme.example",
			RegisteredAddress: &client.NewCounterpartyProfileRegisteredAddress{Line1: client.Ptr("1 Market St"), City: client.Ptr("San Francisco"), Country: client.Ptr("US")}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	pd, err := c.PostPaymentDetails(ctx, client.PostPaymentDetailsJSONRequestBody{
		CounterpartyId: cp.Id, PaymentMethod: "bank-transfer", Currency: "USD", Country: client.Ptr("US"),
		Scheme: client.Ptr("ach"), AccountHolderName: "Acme Inc", RoutingNumber: client.Ptr("091000019"),
		AccountNumber: client.Ptr("123456789"), AccountType: client.Ptr(client.PostPaymentDetailsJSONBodyAccountTypeChecking),
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return pd.Id
}

// TestPayAndList pays a vendor and reads 250 transfers back through the
// iterator, which crosses 13 pages of 20, in order and each once.
func TestPayAndList(t *testing.T) {
	ctx := context.Background()
	b := corebanktest.New(t)
	c := b.API()
	acct := b.FundedAccount("USD", 1_000_000)
	detail := vendor(t, ctx, c)
	var made []string
	for i := range 250 {
		tr, err := c.PostTransfers(ctx, client.PostTransfersJSONRequestBody{
			AccountId: acct.ID, PaymentDetailId: detail, PaymentType: "bank-transfer", Amount: 100 + i,
			Narration: "invoice", UniqueReference: fmt.Sprintf("inv-%d", i),
		}, nil)
		if err != nil {
			t.Fatalf("transfer %d: %v", i, err)
		}
		if tr.Status != "pending" || tr.Amount != 100+i {
			t.Fatalf("transfer %d: %+v", i, tr)
		}
		made = append(made, tr.Id)
	}
	var got []string
	for tr, err := range c.GetTransfers(ctx, &client.GetTransfersParams{AccountId: &acct.ID}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, tr.Id)
	}
	slices.Sort(got)
	slices.Sort(made)
	if !slices.Equal(got, made) {
		t.Fatalf("listed %d transfers, want the %d made, each once", len(got), len(made))
	}
	p, err := c.GetTransfersPage(ctx, &client.GetTransfersParams{AccountId: &acct.ID, Limit: client.Ptr(100)})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Items) != 100 || !p.HasNext || p.NextCursor == "" || p.Limit != 100 {
		t.Errorf("first page of 100: %d items, has_next %v, next %q, limit %d", len(p.Items), p.HasNext, p.NextCursor, p.Limit)
	}
	// Breaking out stops the fetching: no error, exactly the items taken.
	n := 0
	for _, err := range c.GetTransfers(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		if n++; n == 30 {
			break
		}
	}
}

// TestListShapes iterates a list of each shape the API answers: the
// array in data.items, in data.cards, and in data.transactions (one page,
// no cursor); data itself is TestPayAndList's.
func TestListShapes(t *testing.T) {
	ctx := context.Background()
	b := corebanktest.New(t)
	c := b.API()
	acct := b.FundedAccount("USD", 1_000_000)
	var intents, cards []string
	for i := range 23 {
		intents = append(intents, b.CardPayment(acct.ID, int64(100+i), "4242").ID)
	}
	for range 8 { // under the sandbox's card creation limit
		cards = append(cards, b.IssueCard(acct.ID).ID)
	}
	var auths []string
	for i := range 3 {
		tx, err := c.PostSandboxCardsAuthorizations(ctx, cards[0], client.PostSandboxCardsAuthorizationsJSONRequestBody{
			Amount: 100 + i, Mcc: 5411, MerchantName: "Grocer"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		auths = append(auths, tx.Id)
	}
	ten := client.Ptr(10)
	check := func(name string, want []string, got []string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s: listed %d (%v), want %d (%v)", name, len(got), got, len(want), want)
		}
	}
	var got []string
	var err error
	for pi, e := range c.GetPaymentIntents(ctx, &client.GetPaymentIntentsParams{Limit: ten}) {
		if err = e; e != nil {
			break
		}
		got = append(got, pi.Id)
	}
	check("payment intents (data.items)", intents, got, err)
	got = nil
	for card, e := range c.GetCards(ctx, &client.GetCardsParams{Limit: client.Ptr(3)}) {
		if err = e; e != nil {
			break
		}
		got = append(got, card.Id)
	}
	check("cards (data.cards)", cards, got, err)
	got = nil
	for tx, e := range c.GetCardsTransactions(ctx, cards[0], nil) {
		if err = e; e != nil {
			break
		}
		got = append(got, tx.Id)
	}
	check("card transactions (data.transactions)", auths, got, err)
}

// TestErrors checks the refusals come back as *APIError with what the
// server said, whichever of its two error forms it used.
func TestErrors(t *testing.T) {
	ctx := context.Background()
	b := corebanktest.New(t)
	c := b.API()
	_, err := c.PostTransfers(ctx, client.PostTransfersJSONRequestBody{Amount: -1}, nil)
	var e *client.APIError
	if !errors.As(err, &e) || e.StatusCode != 422 || e.Code != "validation_error" || e.Details["account_id"] == "" || e.RequestID == "" {
		t.Errorf("an invalid transfer: %#v", err)
	}
	_, err = c.GetTransfersById(ctx, "tr_missing", &client.GetTransfersByIdParams{XRequestId: client.Ptr("req-404")})
	if !errors.As(err, &e) || e.StatusCode != 404 || e.Code != "not_found" || e.RequestID != "req-404" {
		t.Errorf("a missing transfer: %#v", err)
	}
	anon, err := client.New(b.Server.URL, "sk_sandbox_wrong", &client.Options{HTTPClient: b.Server.Client()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = anon.GetAccountsPage(ctx, nil)
	if !errors.As(err, &e) || e.StatusCode != 401 || e.Code != "unauthorized" || e.Message == "" {
		t.Errorf("a wrong key: %#v", err)
	}
	for _, bad := range []string{"", "ftp://x", "localhost:8080", "http://"} {
		if _, err := client.New(bad, "", nil); err == nil {
			t.Errorf("New(%q): no error", bad)
		}
	}
}
