package verify_test

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/corebank/corebank/bank/verify"
	"github.com/corebank/corebank/corebanktest"
	"github.com/corebank/corebank/payments"
	"github.com/corebank/corebank/storage"
)

// fixture is a bank after a realistic mix of work, with the IDs the
// damage tests corrupt.
type fixture struct {
	b        *corebanktest.Bank
	account  string // funded USD account
	pending  string // a pending transfer
	settled  string // a settled transfer
	auth     string // a pending card authorization
	card     string
	inflow   string // a pending inflow
	details  string // account details
	order    string // an approved capital order
	detailID string // a payment detail
}

// mixedBank builds a bank and does what a day of business does: accounts
// opened and funded, inflows settled and pending, transfers settled,
// failed and pending, card authorizations approved, cleared and declined,
// funding sessions settled, a card payment with a refund, account details
// and a capital order.
func mixedBank(t *testing.T) *fixture {
	t.Helper()
	b := corebanktest.New(t)
	hooks := b.CaptureWebhooks()
	f := &fixture{b: b}
	usd := b.FundedAccount("USD", 10_000_000)
	f.account = usd.ID
	eur := b.FundedAccount("EUR", 500_000)

	var inflow struct{ ID string }
	b.Call(http.StatusCreated, "POST", "/sandbox/inflows", map[string]any{"account_id": usd.ID, "amount": 7_000, "settle": false}, &inflow)
	f.inflow = inflow.ID
	var settledInflow struct{ ID string }
	b.Call(http.StatusCreated, "POST", "/sandbox/inflows", map[string]any{"account_id": eur.ID, "amount": 3_000, "settle": false}, &settledInflow)

	var vendor, detail struct{ ID string }
	b.Call(http.StatusCreated, "POST", "/counterparties", map[string]any{"type": "individual", "profile": map[string]any{
		"first_name": "Ada", "last_name": "Lovelace", "relationship": "employee", "email": "ada@example.com",
		"address": map[string]any{"line1": "12 St James's Sq", "city": "London", "country": "GB"},
	}}, &vendor)
	b.Call(http.StatusCreated, "POST", "/payment-details", map[string]any{
		"counterparty_id": vendor.ID, "payment_method": payments.BankTransfer, "currency": "USD", "country": "US",
		"scheme": payments.SchemeACH, "account_holder_name": "Ada Lovelace",
		"routing_number": "091000019", "account_number": "987654321", "account_type": "savings",
	}, &detail)
	f.detailID = detail.ID
	transfer := func(amount int64) string {
		var tr struct{ ID string }
		b.Call(http.StatusCreated, "POST", "/transfers", map[string]any{
			"account_id": usd.ID, "payment_detail_id": detail.ID, "amount": amount,
			"payment_type": payments.BankTransfer, "narration": "Salary", "unique_reference": "pay-" + strconv.FormatInt(amount, 10),
		}, &tr)
		return tr.ID
	}
	f.settled = transfer(10_000)
	// A book transfer to another account of the bank, and one reversed.
	other := b.FundedAccount("USD", 1_000)
	var book struct{ ID string }
	b.Call(http.StatusCreated, "POST", "/payment-details", map[string]any{
		"counterparty_id": vendor.ID, "payment_method": payments.BookTransfer, "currency": "USD",
		"account_holder_name": "Ada Lovelace", "account_number": other.ServiceBAN,
	}, &book)
	b.Call(http.StatusCreated, "POST", "/transfers", map[string]any{
		"account_id": usd.ID, "payment_detail_id": book.ID, "amount": 4_000,
		"payment_type": payments.BookTransfer, "narration": "Rent", "unique_reference": "book-1",
	}, nil)
	reversed := transfer(15_000)
	b.Call(http.StatusOK, "POST", "/sandbox/transfers/"+reversed+"/simulate", map[string]any{"outcome": "successful"}, nil)
	b.Call(http.StatusOK, "POST", "/sandbox/transfers/"+reversed+"/simulate", map[string]any{"outcome": "reversed"}, nil)
	failed := transfer(20_000)
	b.Call(http.StatusOK, "POST", "/sandbox/transfers/"+failed+"/simulate", map[string]any{"outcome": "failed"}, nil)

	card := b.IssueCard(usd.ID)
	f.card = card.ID
	authorize := func(amount int64) string {
		var tx struct{ ID string }
		b.Call(http.StatusCreated, "POST", "/sandbox/cards/"+card.ID+"/authorizations",
			map[string]any{"amount": amount, "mcc": 5812, "merchant_name": "Cafe"}, &tx)
		return tx.ID
	}
	cleared := authorize(1_500)
	b.Call(http.StatusOK, "POST", "/sandbox/card-transactions/"+cleared+"/clear", map[string]any{"amount": 1_200}, nil)
	authorize(100_000_000) // declined: more than the balance

	b.SettledSession("open-banking", usd.ID, 25_000)
	intent := b.CardPayment(usd.ID, 5_000, "4242")
	if intent.IntentAction != nil {
		b.RefundCardPayment(intent.IntentAction.ID, 1_000, true)
	}
	var det struct{ ID string }
	b.Call(http.StatusCreated, "POST", "/account-details", map[string]any{"account_id": usd.ID, "terminate_after": 30}, &det)
	f.details = det.ID

	product := b.FixedReturnProduct("USD", 90, "0.10")
	f.order = b.ApprovedOrder(product.ID, usd.ID, 100_000).ID

	b.Advance(61 * time.Second) // the first transfer settles, the pending inflows too
	b.Call(http.StatusCreated, "POST", "/sandbox/inflows", map[string]any{"account_id": usd.ID, "amount": 7_000, "settle": false}, &inflow)
	f.inflow = inflow.ID
	f.pending = transfer(30_000)
	f.auth = authorize(2_500)
	hooks.Wait("outflows.created")
	return f
}

// findings runs verify over db and returns the findings as lines.
func findings(t *testing.T, db storage.Backend) ([]string, verify.Summary) {
	t.Helper()
	var got []string
	sum, err := verify.Run(context.Background(), db, func(f storage.Finding) { got = append(got, f.String()) })
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	return got, sum
}

// TestClean: a bank after a realistic mix of work has nothing to report.
func TestClean(t *testing.T) {
	f := mixedBank(t)
	got, sum := findings(t, f.b.DB)
	for _, l := range got {
		t.Error(l)
	}
	if sum.Accounts < 3 || sum.Entries < 5 || sum.DueItems < 5 {
		t.Errorf("summary %+v: checked too little", sum)
	}
	t.Logf("%+v", sum)
}
