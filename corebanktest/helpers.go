package corebanktest

import (
	"context"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/funding"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/webhooks"
)

// FundedAccount opens a checking account of the root entity in currency
// and credits it with amount (smallest units) by a sandbox inflow that
// settles at once, acting as the root's full-access key does over HTTP
// (POST /accounts, then POST /sandbox/inflows): balances, ledger entries
// and events (accounts.created, inflows.completed) are real. It returns
// the account as read after the credit, and fails the test on any error.
func (b *Bank) FundedAccount(currency string, amount int64) *ledger.Account {
	b.t.Helper()
	ctx := context.Background()
	root := corebank.As(b.Root.EntityID)
	a, err := b.Ledger.CreateAccount(ctx, root, ledger.NewAccount{
		EntityID: b.Root.EntityID, Type: ledger.TypeChecking, Currency: currency, DisplayName: currency + " account",
	})
	if err != nil {
		b.t.Fatalf("corebanktest: open %s account: %v", currency, err)
	}
	if _, err := b.Funding.CreateInflow(ctx, root, funding.NewInflow{AccountID: a.ID, Amount: amount}); err != nil {
		b.t.Fatalf("corebanktest: fund %s account with %d: %v", currency, amount, err)
	}
	a, err = b.Ledger.GetAccount(ctx, root, "", a.ID)
	if err != nil {
		b.t.Fatalf("corebanktest: read account %s: %v", a.ID, err)
	}
	return a
}

// LastEvent returns the newest event of type eventType
// ("outflows.completed") about the root entity or any entity below it, as
// GET /events lists them, or nil when there is none. It first has the
// webhook dispatcher read the outbox (webhooks.Service.Drain), so every
// event committed before the call is seen.
func (b *Bank) LastEvent(eventType string) *webhooks.Event {
	b.t.Helper()
	ctx := context.Background()
	if _, err := b.Webhooks.Drain(ctx); err != nil {
		b.t.Fatalf("corebanktest: read the outbox: %v", err)
	}
	var last *webhooks.Event
	opts := corebank.ListOptions{Limit: corebank.MaxLimit}
	for {
		page, err := b.Webhooks.ListEvents(ctx, corebank.System(), webhooks.EventFilter{EntityID: b.Root.EntityID, Type: eventType}, opts)
		if err != nil {
			b.t.Fatalf("corebanktest: list %s events: %v", eventType, err)
		}
		if n := len(page.Items); n > 0 {
			last = &page.Items[n-1]
		}
		if !page.HasNext {
			return last
		}
		opts.After = page.Next
	}
}

// SettledSession opens a funding session of rail ("open-banking", "momo",
// "crypto"; "" is open-banking) for amount on account, a root account of
// the right currency, and settles it as the sandbox simulate route does
// (POST /funding-sessions, then POST
// /sandbox/funding-sessions/{id}/simulate {"outcome": "settled"}): the
// account is credited through the ledger, with funding_sessions.updated
// and inflows.completed. A momo session pays from a Kenyan M-Pesa number.
// It returns the settled session, and fails the test on any error.
func (b *Bank) SettledSession(rail, accountID string, amount int64) *funding.Session {
	b.t.Helper()
	ctx := context.Background()
	root := corebank.As(b.Root.EntityID)
	acct, err := b.Ledger.GetAccount(ctx, root, "", accountID)
	if err != nil {
		b.t.Fatalf("corebanktest: read account %s: %v", accountID, err)
	}
	in := funding.NewSession{Amount: amount, Currency: acct.Currency, AccountID: accountID, FundingType: rail,
		UniqueReference: "corebanktest-" + corebank.NewIDs(nil).New(b.Clock.Now()), RedirectURL: "https://example.com/return"}
	if rail == funding.Momo {
		in.RedirectURL = ""
		in.Meta = map[string]string{"channel": "KE-SAFARICOM-C2B", "msisdn": "+254712345678"}
	}
	s, err := b.FundingSessions.CreateSession(ctx, root, in)
	if err != nil {
		b.t.Fatalf("corebanktest: open a %s session: %v", rail, err)
	}
	s, err = b.FundingSessions.SimulateSession(ctx, root, "", s.ID, funding.SessionSettled, "")
	if err != nil {
		b.t.Fatalf("corebanktest: settle session %s: %v", s.ID, err)
	}
	return s
}
