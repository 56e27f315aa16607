// Package verify is corebank's offline integrity check: it reads a whole
// store in one snapshot and reports every broken rule, as `server verify`
// does for an operator.
//
// # What it checks
//
// Each domain package checks its own layout (its VerifyStore function), and Run
// calls them in turn over one read transaction, so that what one domain
// expects of another (a card authorization's ledger hold) is read at the
// same instant:
//   - the ledger (ledger.VerifyStore): every journal entry balances; each
//     account's balance equals the sum of its entries and holds, its
//     history replays to it, and balances sum to zero per currency; the
//     pending holds are in the accounts' pending index; accounts and
//     account details agree with their indexes and counters;
//   - every other domain: its records agree with their indexes both ways
//     (every key names a record that must have it, every record has its
//     keys), each open object that reserves money (a card authorization, a
//     transfer, an inflow, a funding session, a refund) has its pending
//     hold for the amount, and each of its due items names a live object;
//   - across domains: every pending hold is owned by some object, and every
//     due item is of a kind some service runs.
//
// Every check is a read; nothing is repaired. Findings (storage.Finding)
// are handed to the caller as they are found, one per broken rule, so a
// store with millions of records streams its report. Memory grows with
// the number of accounts (one sum each) and of pending holds, not with
// entries, history or events.
package verify

import (
	"context"

	"github.com/corebank/corebank/acquiring"
	"github.com/corebank/corebank/capital"
	"github.com/corebank/corebank/cards"
	"github.com/corebank/corebank/entities"
	"github.com/corebank/corebank/funding"
	"github.com/corebank/corebank/httpapi"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/payments"
	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/webhooks"
)

// Summary is what Run checked.
type Summary struct {
	// Accounts, Entries and DueItems count the customer accounts, journal
	// entries and due items read.
	Accounts, Entries, DueItems int
	// Findings is how many broken rules were reported.
	Findings int
}

// checks are the domains' VerifyStore functions, in the order Run calls
// them: the ledger first, which puts every pending hold in
// ledger.HoldSet, then the domains that claim them. A new domain adds
// itself here (as it does in bank.New).
var checks = []func(tx storage.Tx, v *storage.Verifier) error{
	ledger.VerifyStore,
	entities.VerifyStore,
	funding.VerifyStore,
	payments.VerifyStore,
	acquiring.VerifyStore,
	cards.VerifyStore,
	capital.VerifyStore,
	webhooks.VerifyStore,
	httpapi.VerifyStore,
}

// Run checks db in one View and calls report with each finding. It
// returns an error only when the store cannot be read; a store with
// findings is a Summary with Findings > 0.
func Run(ctx context.Context, db storage.Backend, report func(storage.Finding)) (Summary, error) {
	return storage.View(ctx, db, func(tx storage.Tx) (Summary, error) {
		v := storage.NewVerifier(report)
		for _, check := range checks {
			if err := check(tx, v); err != nil {
				return Summary{}, err
			}
		}
		v.Unclaimed(ledger.HoldSet, "card authorization, transfer, inflow, funding session or refund")
		if err := storage.VerifyDueKinds(tx, v); err != nil {
			return Summary{}, err
		}
		return Summary{Accounts: v.Counted("accounts"), Entries: v.Counted("entries"),
			DueItems: v.Counted("due items"), Findings: v.Findings()}, nil
	})
}
