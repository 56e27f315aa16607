package payments_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/funding"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/payments"
)

func TestCreateTransferValidation(t *testing.T) {
	e := newMemEnv(t)
	a, d := setupUSD(t, e, 100_000)
	eur := e.account(t, "ent1", "EUR")
	other := e.account(t, "ent2", "USD")
	momo := e.detail(t, "ent1", payments.NewPaymentDetail{CounterpartyID: d.CounterpartyID, PaymentMethod: "momo-transfer",
		Currency: "KES", Country: "KE", Scheme: "mpesa", AccountHolderName: "Ada", PhoneNumber: "+254712345678"})
	inactiveCP, err := e.svc.CreateCounterparty(ctx, corebank.As("ent1"), individual("Gone", "Away", "gone@example.com"))
	if err != nil {
		t.Fatal(err)
	}
	inactiveDetail := e.detail(t, "ent1", achDetail(inactiveCP.ID))
	if _, err := e.svc.DeactivateCounterparty(ctx, corebank.As("ent1"), "", inactiveCP.ID); err != nil {
		t.Fatal(err)
	}
	otherCP, err := e.svc.CreateCounterparty(ctx, corebank.As("ent1"), individual("Other", "Person", "other@example.com"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		edit   func(*payments.NewTransfer)
		fields []string
		code   string
	}{
		{"ErrAccountRequired", func(n *payments.NewTransfer) { n.AccountID = "" }, []string{"account_id"}, ""},
		{"ErrDetailRequired", func(n *payments.NewTransfer) { n.PaymentDetailID = "" }, []string{"payment_detail_id"}, ""},
		{"ErrAmountPositive", func(n *payments.NewTransfer) { n.Amount = 0 }, []string{"amount"}, ""},
		{"ErrPaymentTypeRequired", func(n *payments.NewTransfer) { n.PaymentType = "" }, []string{"payment_type"}, ""},
		{"ErrPaymentTypeUnknown", func(n *payments.NewTransfer) { n.PaymentType = "card" }, []string{"payment_type"}, ""},
		{"ErrNarrationRequired", func(n *payments.NewTransfer) { n.Narration = "" }, []string{"narration"}, ""},
		{"ErrNarrationTooLong", func(n *payments.NewTransfer) { n.Narration = fmt.Sprintf("%0101d", 0) }, []string{"narration"}, ""},
		{"ErrUniqueReferenceRequired", func(n *payments.NewTransfer) { n.UniqueReference = "" }, []string{"unique_reference"}, ""},
		{"ErrUniqueReferenceTooLong", func(n *payments.NewTransfer) { n.UniqueReference = fmt.Sprintf("%065d", 0) }, []string{"unique_reference"}, ""},
		{"ErrMethodMismatch", func(n *payments.NewTransfer) { n.PaymentType = "momo-transfer" }, []string{"payment_type"}, ""},
		{"ErrMethodMismatchDetail", func(n *payments.NewTransfer) { n.PaymentDetailID = momo.ID }, []string{"payment_type"}, ""},
		{"ErrCounterpartyMismatch", func(n *payments.NewTransfer) { n.CounterpartyID = otherCP.ID }, []string{"counterparty_id"}, ""},
		{"ErrCounterpartyInactive", func(n *payments.NewTransfer) { n.PaymentDetailID = inactiveDetail.ID }, []string{"counterparty_id"}, ""},
		{"ErrCurrencyMismatch", func(n *payments.NewTransfer) { n.Currency = "GBP" }, []string{"currency"}, ""},
		{"ErrQuoteRequired", func(n *payments.NewTransfer) { n.AccountID = eur.ID }, []string{"fx_quote_id"}, ""},
		{"ErrQuoteNotNeeded", func(n *payments.NewTransfer) { n.FXQuoteID = "01JB0000000000000000000000" }, []string{"fx_quote_id"}, ""},
		{"ErrAccountOfAnotherEntity", func(n *payments.NewTransfer) { n.AccountID = other.ID }, nil, "not_found"},
		{"ErrUnknownDetail", func(n *payments.NewTransfer) { n.PaymentDetailID = "01JB0000000000000000000000" }, nil, "not_found"},
		{"ErrUnknownQuote", func(n *payments.NewTransfer) { n.AccountID, n.FXQuoteID = eur.ID, "01JB0000000000000000000000" }, nil, "not_found"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := newTransfer(a, d, 1_000, fmt.Sprintf("v%d", i))
			tc.edit(&in)
			_, err := e.svc.CreateTransfer(ctx, corebank.As("ent1"), in)
			if tc.code != "" {
				if errCode(err) != tc.code {
					t.Fatalf("want %s, got %v", tc.code, err)
				}
				return
			}
			wantFields(t, err, tc.fields...)
		})
	}
	if b := e.balance(t, a.ID); b.PendingDebits != 0 {
		t.Errorf("a refused transfer held money: %+v", b)
	}
	t.Run("ErrStablecoinNeedsStablecoinAccount", func(t *testing.T) {
		sd := e.detail(t, "ent1", payments.NewPaymentDetail{CounterpartyID: d.CounterpartyID, PaymentMethod: "stablecoin-transfer",
			Currency: "USC", AccountHolderName: "Ada", BlockchainNetwork: "SOLANA_MAINNET", WalletAddress: solana})
		q, err := e.svc.CreateQuote(ctx, corebank.As("ent1"), payments.NewQuote{FromCurrency: "USD", ToCurrency: "USC", AmountFrom: 1000})
		if err != nil {
			t.Fatal(err)
		}
		in := newTransfer(a, sd, q.AmountTo, "sc1")
		in.FXQuoteID = q.ID
		_, err = e.svc.CreateTransfer(ctx, corebank.As("ent1"), in)
		wantFields(t, err, "account_id")
	})
}

func TestCrossCurrencyTransfer(t *testing.T) {
	fees, _ := payments.ParseFeeSchedule("bank-transfer=100+25bps")
	e := newEnv(t, openMemory(t), &payments.Options{Fees: fees})
	usd := e.account(t, "ent1", "USD")
	e.fund(t, usd, 1_000_000)
	cp := e.counterparty(t, "ent1")
	fps := e.detail(t, "ent1", payments.NewPaymentDetail{CounterpartyID: cp.ID, PaymentMethod: "bank-transfer", Currency: "GBP",
		Country: "GB", Scheme: "fps", AccountHolderName: "Ada", SortCode: "040099", AccountNumber: "12345678"})
	q, err := e.svc.CreateQuote(ctx, corebank.As("ent1"), payments.NewQuote{FromCurrency: "USD", ToCurrency: "GBP", AmountFrom: 100_000, AccountID: usd.ID})
	if err != nil {
		t.Fatal(err)
	}
	t.Run("ErrAmountMustEqualQuote", func(t *testing.T) {
		in := newTransfer(usd, fps, q.AmountTo+1, "x1")
		in.FXQuoteID = q.ID
		_, err := e.svc.CreateTransfer(ctx, corebank.As("ent1"), in)
		wantFields(t, err, "amount")
	})
	t.Run("ErrQuotePairMismatch", func(t *testing.T) {
		q2, err := e.svc.CreateQuote(ctx, corebank.As("ent1"), payments.NewQuote{FromCurrency: "EUR", ToCurrency: "GBP", AmountFrom: 100_000})
		if err != nil {
			t.Fatal(err)
		}
		in := newTransfer(usd, fps, q2.AmountTo, "x2")
		in.FXQuoteID = q2.ID
		_, err = e.svc.CreateTransfer(ctx, corebank.As("ent1"), in)
		wantFields(t, err, "fx_quote_id")
	})
	in := newTransfer(usd, fps, q.AmountTo, "fx1")
	in.FXQuoteID = q.ID
	tr, err := e.svc.CreateTransfer(ctx, corebank.As("ent1"), in)
	if err != nil {
		t.Fatal(err)
	}
	wantFee := int64(100 + 100_000*25/10_000)
	if tr.Currency != "GBP" || tr.Amount != q.AmountTo || tr.ApplicableFee != wantFee || tr.SourceAmount != 100_000 || tr.SourceCurrency != "USD" || tr.FXQuoteID != q.ID {
		t.Fatalf("%+v", tr)
	}
	if b := e.balance(t, usd.ID); b.Available() != 1_000_000-100_000-wantFee {
		t.Fatalf("usd %+v", b)
	}
	used, _ := e.svc.GetQuote(ctx, corebank.As("ent1"), "", q.ID)
	if used.Quote.Status != "used" || used.Quote.UsedInPaymentID == nil || *used.Quote.UsedInPaymentID != tr.ID || used.Quote.UsedAt == nil || used.Quote.ValidFor != 0 {
		t.Fatalf("quote %+v", used.Quote)
	}
	e.checkBalanced(t)
	t.Run("ErrQuoteAlreadyUsed", func(t *testing.T) {
		in := newTransfer(usd, fps, q.AmountTo, "fx2")
		in.FXQuoteID = q.ID
		_, err := e.svc.CreateTransfer(ctx, corebank.As("ent1"), in)
		wantFields(t, err, "fx_quote_id")
	})
	e.clk.Add(10 * time.Second)
	if _, err := e.svc.RunDue(ctx, e.clk.Now()); err != nil {
		t.Fatal(err)
	}
	if got, _ := e.svc.GetTransfer(ctx, corebank.As("ent1"), "", tr.ID); got.Status != "successful" {
		t.Fatalf("%+v", got)
	}
	if b := e.balance(t, e.led.SystemAccount("GBP", ledger.PurposeClearingBank)); b.Settled != q.AmountTo {
		t.Errorf("GBP clearing %+v", b)
	}
	if b := e.balance(t, e.led.SystemAccount("USD", ledger.PurposeFX)); b.Settled != 100_000 {
		t.Errorf("USD fx %+v", b)
	}
	if b := e.balance(t, e.led.SystemAccount("GBP", ledger.PurposeFX)); b.Settled != -q.AmountTo {
		t.Errorf("GBP fx %+v", b)
	}
	e.checkBalanced(t)
	t.Run("ErrExpiredQuote", func(t *testing.T) {
		q3, err := e.svc.CreateQuote(ctx, corebank.As("ent1"), payments.NewQuote{FromCurrency: "USD", ToCurrency: "GBP", AmountFrom: 100_000})
		if err != nil {
			t.Fatal(err)
		}
		e.clk.Add(181 * time.Second)
		in := newTransfer(usd, fps, q3.AmountTo, "fx3")
		in.FXQuoteID = q3.ID
		_, err = e.svc.CreateTransfer(ctx, corebank.As("ent1"), in)
		wantFields(t, err, "fx_quote_id")
	})
	t.Run("PayoutOnlyCurrency", func(t *testing.T) {
		spei := e.detail(t, "ent1", payments.NewPaymentDetail{CounterpartyID: cp.ID, PaymentMethod: "bank-transfer", Currency: "MXN",
			Country: "MX", AccountHolderName: "Ada", AccountNumber: clabe})
		q, err := e.svc.CreateQuote(ctx, corebank.As("ent1"), payments.NewQuote{FromCurrency: "USD", ToCurrency: "MXN", AmountTo: 50_000})
		if err != nil {
			t.Fatal(err)
		}
		in := newTransfer(usd, spei, 50_000, "mx1")
		in.FXQuoteID = q.ID
		tr, err := e.svc.CreateTransfer(ctx, corebank.As("ent1"), in)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.svc.SimulateTransfer(ctx, corebank.As("ent1"), "", tr.ID, "successful", ""); err != nil {
			t.Fatal(err)
		}
		e.checkBalanced(t)
	})
}

// TestBookTransfer: a book transfer answers pending with only its funds
// held; the next RunDue credits the receiving account (through the
// Receiver when there is one) and makes it successful.
func TestBookTransfer(t *testing.T) {
	var received []funding.NewInflow
	for _, withReceiver := range []bool{false, true} {
		t.Run(fmt.Sprintf("Receiver=%v", withReceiver), func(t *testing.T) {
			var e *env
			if withReceiver {
				e = newEnv(t, openMemory(t), nil)
				e = newEnv(t, e.db, &payments.Options{Receiver: ledgerReceiver(e, func(in funding.NewInflow) error {
					received = append(received[:0], in)
					return nil
				})})
			} else {
				e = newMemEnv(t)
			}
			a, to, d := bookPair(t, e, "USD")
			tr, err := e.svc.CreateTransfer(ctx, corebank.As("ent1"), newTransfer(a, d, 4_000, "b1"))
			if err != nil {
				t.Fatal(err)
			}
			if tr.Status != payments.StatusPending || tr.StatusReason != payments.ReasonAwaitingProcessing {
				t.Fatalf("created %+v", tr)
			}
			if b := e.balance(t, to.ID); b != (ledger.Balance{}) {
				t.Errorf("receiver before RunDue %+v", b)
			}
			if b := e.balance(t, a.ID); b.Settled != 10_000 || b.PendingDebits != 4_000 {
				t.Errorf("sender before RunDue %+v", b)
			}
			if len(received) != 0 && withReceiver {
				t.Errorf("received before RunDue: %+v", received)
			}
			if got := e.eventTypes(t, "ent1", "ent2"); fmt.Sprint(got) != "[ent1:outflows.created]" {
				t.Errorf("events before RunDue %v", got)
			}
			e.checkBalanced(t)

			// Due at once: no external rail, no clock move needed.
			if n, err := e.svc.RunDue(ctx, e.clk.Now()); n != 1 || err != nil {
				t.Fatalf("RunDue: %d %v", n, err)
			}
			got, err := e.svc.GetTransfer(ctx, corebank.As("ent1"), "", tr.ID)
			if err != nil || got.Status != payments.StatusSuccessful || got.StatusReason != "" {
				t.Fatalf("after RunDue %+v %v", got, err)
			}
			if b := e.balance(t, to.ID); b.Settled != 4_000 {
				t.Errorf("receiver %+v", b)
			}
			if b := e.balance(t, a.ID); b.Settled != 6_000 || b.PendingDebits != 0 {
				t.Errorf("sender %+v", b)
			}
			if b := e.balance(t, e.led.SystemAccount("USD", ledger.PurposeClearingBook)); b.Settled != 0 {
				t.Errorf("clearing.book %+v", b)
			}
			if withReceiver && (len(received) != 1 || received[0].AccountID != to.ID || received[0].Source != "book-transfer" ||
				received[0].Amount != 4_000 || received[0].Reference != tr.ID) {
				t.Errorf("receiver got %+v", received)
			}
			e.checkBalanced(t)
			if got := e.eventTypes(t, "ent1", "ent2"); fmt.Sprint(got) != "[ent1:outflows.created ent1:outflows.completed]" {
				t.Errorf("events %v", got)
			}
			if _, err := e.svc.SimulateTransfer(ctx, corebank.As("ent1"), "", tr.ID, "reversed", ""); !errors.Is(err, payments.ErrInvalidForState) {
				t.Errorf("reverse a book transfer: %v", err)
			}
			// Settled once: nothing is left to do.
			e.clk.Add(time.Hour)
			if n, err := e.svc.RunDue(ctx, e.clk.Now()); n != 0 || err != nil {
				t.Fatalf("RunDue again: %d %v", n, err)
			}
			if b := e.balance(t, to.ID); b.Settled != 4_000 {
				t.Errorf("receiver credited twice %+v", b)
			}
		})
	}
}

// bookPair opens ent1's account a, funded with 10,000, and ent2's account
// to, both in currency, and returns them with ent1's book-transfer detail
// paying to.
func bookPair(tb testing.TB, e *env, currency string) (a, to *ledger.Account, d *payments.PaymentDetail) {
	tb.Helper()
	a = e.account(tb, "ent1", currency)
	e.fund(tb, a, 10_000)
	to = e.account(tb, "ent2", currency)
	cp := e.counterparty(tb, "ent1")
	d = e.detail(tb, "ent1", payments.NewPaymentDetail{CounterpartyID: cp.ID, PaymentMethod: "book-transfer", Currency: currency,
		AccountHolderName: "Bob", AccountNumber: to.ServiceBAN})
	return a, to, d
}

// ledgerReceiver is a Receiver that credits through e's ledger from
// clearing.book, as funding does, unless check refuses the inflow first.
func ledgerReceiver(e *env, check func(funding.NewInflow) error) payments.ReceiverFunc {
	return func(tx storageTx, now time.Time, in funding.NewInflow) (*funding.Inflow, error) {
		if err := check(in); err != nil {
			return nil, err
		}
		_, err := e.led.PostTx(tx, now, ledger.Entry{Lines: []ledger.Line{
			{AccountID: e.led.SystemAccount(in.Currency, ledger.PurposeClearingBook), Side: ledger.Debit, Amount: in.Amount},
			{AccountID: in.AccountID, Side: ledger.Credit, Amount: in.Amount},
		}})
		return nil, err
	}
}

// eventTypes lists the outbox's events of entities, as entity:type, less
// the accounts' own (accounts.*).
func (e *env) eventTypes(tb testing.TB, entities ...string) []string {
	tb.Helper()
	evs, err := e.led.Events(ctx, "", 1000)
	if err != nil {
		tb.Fatal(err)
	}
	var out []string
	for _, ev := range evs {
		for _, ent := range entities {
			if ev.EntityID == ent && !strings.HasPrefix(ev.Type, "accounts.") {
				out = append(out, ev.EntityID+":"+ev.Type)
			}
		}
	}
	return out
}

// TestBookTransferRefusedAtSettlement: when the receiving side refuses
// the credit by the time the transfer settles, RunDue fails the transfer
// and releases its holds (outflows.failed), as a rail's failure does, and
// Simulate's successful outcome answers the refusal and changes nothing.
func TestBookTransferRefusedAtSettlement(t *testing.T) {
	var refuse error // what the receiver answers
	for _, c := range []struct {
		name   string
		refuse func(e *env, to *ledger.Account) // between creation and settlement
		reason string
		code   string // Simulate's answer
	}{
		{"ReceiverDeleted", func(e *env, to *ledger.Account) {
			if _, err := e.led.DeleteAccount(ctx, corebank.As("ent2"), "", to.ID); err != nil {
				t.Fatal(err)
			}
		}, "invalid_account_details", "account_deleted"},
		{"ReceiverRefusesInflows", func(e *env, to *ledger.Account) { refuse = ledger.ErrInflowsNotAllowed },
			"inflows_not_allowed", "inflows_not_allowed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			refuse = nil
			e := newEnv(t, openMemory(t), nil)
			e = newEnv(t, e.db, &payments.Options{Fees: payments.FeeSchedule{"book-transfer": {Fixed: 10}},
				Receiver: ledgerReceiver(e, func(funding.NewInflow) error { return refuse })})
			a, to, d := bookPair(t, e, "USD")
			tr, err := e.svc.CreateTransfer(ctx, corebank.As("ent1"), newTransfer(a, d, 4_000, "b1"))
			if err != nil || tr.Status != payments.StatusPending {
				t.Fatalf("%+v %v", tr, err)
			}
			c.refuse(e, to)

			_, err = e.svc.SimulateTransfer(ctx, corebank.As("ent1"), "", tr.ID, "successful", "")
			if errCode(err) != c.code {
				t.Errorf("Simulate successful: %v, want %s", err, c.code)
			}
			if got, _ := e.svc.GetTransfer(ctx, corebank.As("ent1"), "", tr.ID); got.Status != payments.StatusPending {
				t.Errorf("after a refused Simulate %+v", got)
			}

			if n, err := e.svc.RunDue(ctx, e.clk.Now()); n != 1 || err != nil {
				t.Fatalf("RunDue: %d %v", n, err)
			}
			got, err := e.svc.GetTransfer(ctx, corebank.As("ent1"), "", tr.ID)
			if err != nil || got.Status != payments.StatusFailed || got.StatusReason != c.reason {
				t.Fatalf("after RunDue %+v %v, want failed %s", got, err, c.reason)
			}
			if b := e.balance(t, a.ID); b.Settled != 10_000 || b.PendingDebits != 0 {
				t.Errorf("sender %+v: holds not released", b)
			}
			if b := e.balance(t, to.ID); b != (ledger.Balance{}) {
				t.Errorf("receiver %+v", b)
			}
			e.checkBalanced(t)
			if got := e.eventTypes(t, "ent1", "ent2"); fmt.Sprint(got) != "[ent1:outflows.created ent1:outflows.failed]" {
				t.Errorf("events %v", got)
			}
			p, err := e.svc.ListTransfers(ctx, corebank.As("ent1"), payments.TransferFilter{Status: "failed"}, corebank.ListOptions{})
			if err != nil || len(p.Items) != 1 || p.Items[0].ID != tr.ID {
				t.Errorf("failed list %+v %v", p, err)
			}
			e.clk.Add(time.Hour)
			if n, err := e.svc.RunDue(ctx, e.clk.Now()); n != 0 || err != nil {
				t.Fatalf("RunDue again: %d %v", n, err)
			}
		})
	}
}

// TestBookTransferToClosedReceiver: what is known at creation is refused
// at creation, writing nothing.
func TestBookTransferToClosedReceiver(t *testing.T) {
	e := newMemEnv(t)
	a := e.account(t, "ent1", "USD")
	e.fund(t, a, 10_000)
	closed, err := e.led.CreateAccount(ctx, corebank.System(), ledger.NewAccount{EntityID: "ent2", Type: ledger.TypeChecking,
		Currency: "USD", DisplayName: "no inflows", Configuration: &ledger.AccountConfiguration{AllowOutflows: true}})
	if err != nil {
		t.Fatal(err)
	}
	cp := e.counterparty(t, "ent1")
	d := e.detail(t, "ent1", payments.NewPaymentDetail{CounterpartyID: cp.ID, PaymentMethod: "book-transfer", Currency: "USD",
		AccountHolderName: "Bob", AccountNumber: closed.ServiceBAN})
	if _, err := e.svc.CreateTransfer(ctx, corebank.As("ent1"), newTransfer(a, d, 1_000, "c1")); !errors.Is(err, ledger.ErrInflowsNotAllowed) {
		t.Fatalf("want inflows_not_allowed, got %v", err)
	}
	if b := e.balance(t, a.ID); b.Settled != 10_000 || b.PendingDebits != 0 {
		t.Errorf("sender %+v", b)
	}
	if got := e.eventTypes(t, "ent1"); len(got) != 0 {
		t.Errorf("events %v", got)
	}
}

func TestSimulateInvalidMoves(t *testing.T) {
	e := newMemEnv(t)
	a, d := setupUSD(t, e, 10_000)
	tr, err := e.svc.CreateTransfer(ctx, corebank.As("ent1"), newTransfer(a, d, 1_000, "s1"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.SimulateTransfer(ctx, corebank.As("ent1"), "", tr.ID, "reversed", ""); errCode(err) != "error_operation_invalid_for_state" {
		t.Fatalf("reverse pending: %v", err)
	}
	_, err = e.svc.SimulateTransfer(ctx, corebank.As("ent1"), "", tr.ID, "lost", "")
	wantFields(t, err, "outcome")
	if _, err := e.svc.SimulateTransfer(ctx, corebank.As("ent2"), "", tr.ID, "processing", ""); !errors.Is(err, payments.ErrTransferNotFound) {
		t.Fatalf("other entity: %v", err)
	}
	got, err := e.svc.SimulateTransfer(ctx, corebank.As("ent1"), "", tr.ID, "processing", "")
	if err != nil || got.Status != "processing" {
		t.Fatalf("%v %+v", err, got)
	}
	if _, err := e.svc.SimulateTransfer(ctx, corebank.As("ent1"), "", tr.ID, "processing", ""); !errors.Is(err, payments.ErrInvalidForState) {
		t.Fatalf("processing twice: %v", err)
	}
	got, err = e.svc.SimulateTransfer(ctx, corebank.As("ent1"), "", tr.ID, "successful", "")
	if err != nil || got.Status != "successful" {
		t.Fatalf("%v %+v", err, got)
	}
	// The provider's later reports do not move it back.
	e.clk.Add(time.Minute)
	if _, err := e.svc.RunDue(ctx, e.clk.Now()); err != nil {
		t.Fatal(err)
	}
	if got, _ := e.svc.GetTransfer(ctx, corebank.As("ent1"), "", tr.ID); got.Status != "successful" {
		t.Fatalf("%+v", got)
	}
}

func TestListTransfers(t *testing.T) {
	e := newMemEnv(t)
	a, d := setupUSD(t, e, 100_000)
	b := e.account(t, "ent1", "USD")
	e.fund(t, b, 100_000)
	var ids []string
	for i := 0; i < 6; i++ {
		acct := a
		if i%2 == 1 {
			acct = b
		}
		tr, err := e.svc.CreateTransfer(ctx, corebank.As("ent1"), newTransfer(acct, d, 100, fmt.Sprint(i)))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, tr.ID)
	}
	if _, err := e.svc.SimulateTransfer(ctx, corebank.As("ent1"), "", ids[0], "failed", ""); err != nil {
		t.Fatal(err)
	}
	count := func(f payments.TransferFilter) int {
		t.Helper()
		p, err := e.svc.ListTransfers(ctx, corebank.As(f.EntityID), f, corebank.ListOptions{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		return len(p.Items)
	}
	checks := []struct {
		f    payments.TransferFilter
		want int
	}{
		{payments.TransferFilter{EntityID: "ent1"}, 6},
		{payments.TransferFilter{EntityID: "ent2"}, 0},
		{payments.TransferFilter{EntityID: "ent1", AccountID: a.ID}, 3},
		{payments.TransferFilter{EntityID: "ent1", Status: "pending"}, 5},
		{payments.TransferFilter{EntityID: "ent1", Status: "failed"}, 1},
		{payments.TransferFilter{EntityID: "ent1", AccountID: a.ID, Status: "pending"}, 2},
		{payments.TransferFilter{EntityID: "ent1", AccountID: b.ID, Status: "failed"}, 0},
	}
	for _, c := range checks {
		if got := count(c.f); got != c.want {
			t.Errorf("%+v: got %d, want %d", c.f, got, c.want)
		}
	}
	p, err := e.svc.ListTransfers(ctx, corebank.As("ent1"), payments.TransferFilter{EntityID: "ent1"}, corebank.ListOptions{Limit: 4})
	if err != nil || len(p.Items) != 4 || !p.HasNext || p.Items[0].ID != ids[0] {
		t.Fatalf("%v %+v", err, p)
	}
	p, err = e.svc.ListTransfers(ctx, corebank.As("ent1"), payments.TransferFilter{EntityID: "ent1"}, corebank.ListOptions{Limit: 4, After: p.Next})
	if err != nil || len(p.Items) != 2 || p.HasNext || p.Items[1].ID != ids[5] {
		t.Fatalf("%v %+v", err, p)
	}
	_, err = e.svc.ListTransfers(ctx, corebank.As("ent1"), payments.TransferFilter{EntityID: "ent1", Status: "done"}, corebank.ListOptions{})
	wantFields(t, err, "status")
}

// TestConcurrentDuplicateReferences posts 50 transfers with 10 distinct
// references from 50 goroutines: exactly 10 debits happen.
func TestConcurrentDuplicateReferences(t *testing.T) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			e := newEnv(t, be.open(t), nil)
			a, d := setupUSD(t, e, 1_000_000)
			var wg sync.WaitGroup
			var created, dups atomic.Int64
			errs := make(chan error, 50)
			for i := 0; i < 50; i++ {
				wg.Add(1)
				go func(i int) {
					defer wg.Done()
					_, err := e.svc.CreateTransfer(ctx, corebank.As("ent1"), newTransfer(a, d, 100, fmt.Sprintf("ref-%d", i%10)))
					switch {
					case err == nil:
						created.Add(1)
					case errors.Is(err, payments.ErrDuplicateReference):
						dups.Add(1)
					default:
						errs <- err
					}
				}(i)
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			if created.Load() != 10 || dups.Load() != 40 {
				t.Fatalf("created %d, duplicates %d", created.Load(), dups.Load())
			}
			if b := e.balance(t, a.ID); b.PendingDebits != 1_000 {
				t.Fatalf("pending debits %d, want 10 x 100", b.PendingDebits)
			}
			p, _ := e.svc.ListTransfers(ctx, corebank.As("ent1"), payments.TransferFilter{EntityID: "ent1"}, corebank.ListOptions{Limit: 100})
			if len(p.Items) != 10 {
				t.Fatalf("%d transfers stored", len(p.Items))
			}
			e.checkBalanced(t)
		})
	}
}

// TestRacingTransfersNeverOverdraw races transfers against one account:
// the total accepted never exceeds the funds.
func TestRacingTransfersNeverOverdraw(t *testing.T) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			fees, _ := payments.ParseFeeSchedule("bank-transfer=7")
			e := newEnv(t, be.open(t), &payments.Options{Fees: fees})
			const funded = 10_000
			a, d := setupUSD(t, e, funded)
			var wg sync.WaitGroup
			var accepted, refused atomic.Int64
			for i := 0; i < 64; i++ {
				wg.Add(1)
				go func(i int) {
					defer wg.Done()
					amount := int64(300 + 37*(i%9))
					_, err := e.svc.CreateTransfer(ctx, corebank.As("ent1"), newTransfer(a, d, amount, fmt.Sprintf("race-%d", i)))
					switch {
					case err == nil:
						accepted.Add(amount + 7)
					case errors.Is(err, ledger.ErrInsufficientFunds):
						refused.Add(1)
					default:
						t.Error(err)
					}
				}(i)
			}
			wg.Wait()
			if accepted.Load() > funded || refused.Load() == 0 {
				t.Fatalf("accepted %d of %d (refused %d)", accepted.Load(), funded, refused.Load())
			}
			b := e.balance(t, a.ID)
			if b.PendingDebits != accepted.Load() || b.Available() < 0 {
				t.Fatalf("balance %+v, accepted %d", b, accepted.Load())
			}
			e.clk.Add(10 * time.Second)
			if _, err := e.svc.RunDue(ctx, e.clk.Now()); err != nil {
				t.Fatal(err)
			}
			if b := e.balance(t, a.ID); b.Settled != funded-accepted.Load() || b.PendingDebits != 0 {
				t.Fatalf("after settlement %+v", b)
			}
			e.checkBalanced(t)
		})
	}
}
