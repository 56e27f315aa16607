package capital_test

import (
	"errors"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank/bank"
	"github.com/corebank/corebank/capital"
	"github.com/corebank/corebank/corebanktest"
)

// TestConfirmExactlyOnce: 20 concurrent confirms of one order end with one
// debit, one capital account and one PURCHASE; each call answers the
// APPROVED order or ErrAlreadyProcessing.
func TestConfirmExactlyOnce(t *testing.T) {
	e := newEnv(t)
	p := e.product(deposit())
	acct := e.FundedAccount("USD", 1_000_000)
	o := e.depositOrder(p, acct.ID, 100_000, false)
	var wg sync.WaitGroup
	results := make([]error, 20)
	accounts := make([]string, 20)
	for i := range results {
		wg.Go(func() {
			got, err := e.Capital.ConfirmOrder(ctx, e.root, "", o.ID, capital.Confirmation{})
			results[i] = err
			if err == nil && got.CapitalAccount != nil {
				accounts[i] = got.CapitalAccount.ID
			}
		})
	}
	wg.Wait()
	got := e.get(o.ID)
	if got.Status != capital.OrderApproved {
		t.Fatalf("status %s, want APPROVED", got.Status)
	}
	for i, err := range results {
		switch {
		case err == nil && accounts[i] != got.CapitalAccount.ID:
			t.Errorf("call %d answered account %q, want %q", i, accounts[i], got.CapitalAccount.ID)
		case err != nil && !errors.Is(err, capital.ErrAlreadyProcessing):
			t.Errorf("call %d: %v", i, err)
		}
	}
	if b := e.balance(acct.ID); b != 900_000 {
		t.Fatalf("balance %d, want 900000 (one debit)", b)
	}
	if n, total := sum(e.transactions(o.ID), capital.EventPurchase); n != 1 || total != 100_000 {
		t.Fatalf("%d PURCHASE transactions of %d, want one of 100000", n, total)
	}
	// A confirm after approval answers the order again and debits nothing.
	if again := e.confirm(o.ID); again.CapitalAccount.ID != got.CapitalAccount.ID || e.balance(acct.ID) != 900_000 {
		t.Fatal("a confirm after approval changed something")
	}
}

// TestConfirmRecovery: a failure between the debit and the capital
// account leaves the order RECOVERY_REQUIRED; confirms get
// ErrAlreadyProcessing until the recovery job completes it, with one
// debit and the secondary_id the first confirm gave.
func TestConfirmRecovery(t *testing.T) {
	fail := true
	e := newEnv(t, corebanktest.WithOptions(func(o *bank.Options) {
		o.Capital.AfterDebit = func(string) error {
			if fail {
				return errors.New("injected crash")
			}
			return nil
		}
	}))
	p := e.product(deposit())
	acct := e.FundedAccount("USD", 1_000_000)
	o := e.depositOrder(p, acct.ID, 100_000, false)
	if _, err := e.Capital.ConfirmOrder(ctx, e.root, "", o.ID, capital.Confirmation{SecondaryID: "ext-1"}); !errors.Is(err, capital.ErrAlreadyProcessing) {
		t.Fatalf("confirm with a failure after the debit: %v", err)
	}
	if got := e.get(o.ID); got.Status != capital.OrderRecoveryRequired || got.CapitalAccount != nil {
		t.Fatalf("status %s, want RECOVERY_REQUIRED without an account", got.Status)
	}
	fail = false
	if _, err := e.Capital.ConfirmOrder(ctx, e.root, "", o.ID, capital.Confirmation{}); !errors.Is(err, capital.ErrAlreadyProcessing) {
		t.Fatalf("confirm in recovery: %v", err)
	}
	if b := e.balance(acct.ID); b != 900_000 {
		t.Fatalf("balance %d after the failed confirm, want 900000", b)
	}
	e.Advance(time.Minute)
	got := e.get(o.ID)
	if got.Status != capital.OrderApproved || got.CapitalAccount == nil || got.CapitalAccount.SecondaryID == nil || *got.CapitalAccount.SecondaryID != "ext-1" {
		t.Fatalf("after recovery: %+v", got)
	}
	if got.CapitalAccount.StartAt != corebanktest.Start.UnixMilli() {
		t.Fatalf("start_at %d, want the debit's time %d", got.CapitalAccount.StartAt, corebanktest.Start.UnixMilli())
	}
	if b := e.balance(acct.ID); b != 900_000 {
		t.Fatalf("balance %d after recovery, want 900000 (one debit)", b)
	}
	if again := e.confirm(o.ID); again.Status != capital.OrderApproved {
		t.Fatalf("confirm after recovery: %s", again.Status)
	}
}

// TestDepositEarlyWithdrawal is the whole life of a 30-day deposit on the
// mock clock: order, confirm, 10 days of accrual, early withdrawal with
// penalty and withholding, settlement to the funding account.
func TestDepositEarlyWithdrawal(t *testing.T) {
	e := newEnv(t)
	p := e.product(deposit())
	acct := e.FundedAccount("USD", 2_000_000)
	o := e.depositOrder(p, acct.ID, 1_000_000, false)
	o = e.confirm(o.ID)
	start := corebanktest.Start
	want := &capital.FixedAccount{Principal: 1_000_000, AnnualRate: *dec("0.10"), DayCountBasis: 360, TenorDays: 30,
		StartAt: start.UnixMilli(), MaturityAt: start.AddDate(0, 0, 30).UnixMilli(),
		EarlyWithdrawalAt: ptr(start.AddDate(0, 0, 5).UnixMilli()),
		// 1,000,000 × 0.10 × 30 / 360 = 8,333.33 -> 8,333; 10% withheld.
		GrossInterest: 8_333, TotalDeductions: 833, DueInterest: 7_500, ProjectedPayout: 1_007_500, GrossPayout: 1_008_333}
	if diff := cmp.Diff(want, o.CapitalAccount.FixedAccount); diff != "" {
		t.Fatalf("account (-want +got)\n%s", diff)
	}
	if o.CapitalAccount.Status.State != capital.StateActive || e.balance(acct.ID) != 1_000_000 {
		t.Fatalf("after confirm: %s, balance %d", o.CapitalAccount.Status.State, e.balance(acct.ID))
	}
	e.days(3)
	if _, err := e.Capital.WithdrawOrder(ctx, e.root, "", o.ID); !errors.Is(err, capital.ErrInvalidForState) {
		t.Fatalf("withdraw before the earliest day: %v", err)
	}
	e.days(7)
	o = e.get(o.ID)
	// 1,000,000 × 0.10 × 10 / 360 = 2,777.78 -> 2,777.
	n, posted := sum(e.transactions(o.ID), capital.EventDailyAccrual)
	if o.CapitalAccount.AccruedInterest != 2_777 || n != 10 || posted != 2_777 {
		t.Fatalf("day 10: accrued %d, %d accruals posted summing %d; want 2777, 10, 2777", o.CapitalAccount.AccruedInterest, n, posted)
	}
	preview, err := e.Capital.PreviewWithdrawal(ctx, e.root, "", o.ID)
	if err != nil {
		t.Fatal(err)
	}
	wantPreview := &capital.WithdrawalPreview{Principal: 1_000_000, GrossInterest: 2_777, PenaltyRate: *dec("0.5"),
		PenaltyAmount: 1_388, TotalDeductions: 277, NetPayout: 1_001_112, DaysElapsed: 10,
		CapitalAccountID: o.CapitalAccount.ID, EntityID: e.Root.EntityID}
	if diff := cmp.Diff(wantPreview, preview); diff != "" {
		t.Fatalf("preview (-want +got)\n%s", diff)
	}
	o, err = e.Capital.WithdrawOrder(ctx, e.root, "", o.ID)
	if err != nil {
		t.Fatal(err)
	}
	a := o.CapitalAccount
	if a.Status.State != capital.StateEarlyLiquidating || *a.Status.PayoutStatus.PayoutStatus != capital.PayPending ||
		*a.PayoutAmount != 1_001_112 || a.SettlementAt == nil {
		t.Fatalf("after withdrawal: %+v", a)
	}
	if _, err := e.Capital.WithdrawOrder(ctx, e.root, "", o.ID); !errors.Is(err, capital.ErrInvalidForState) {
		t.Fatalf("second withdrawal: %v", err)
	}
	ts := e.transactions(o.ID)
	for typ, amount := range map[string]int64{capital.EventPenalty: 1_388, capital.EventWithholding: 277, capital.EventPayout: 1_001_112} {
		if n, total := sum(ts, typ); n != 1 || total != amount {
			t.Errorf("%s: %d transactions of %d, want one of %d", typ, n, total, amount)
		}
	}
	e.Advance(time.Second)
	o = e.get(o.ID)
	if o.CapitalAccount.Status.State != capital.StateClosed || *o.CapitalAccount.Status.PayoutStatus.PayoutStatus != capital.PayCompleted {
		t.Fatalf("after settlement: %+v", o.CapitalAccount.Status)
	}
	if b := e.balance(acct.ID); b != 1_000_000+1_001_112 {
		t.Fatalf("balance %d, want %d", b, 1_000_000+1_001_112)
	}
	// Nothing accrues after the withdrawal.
	e.days(25)
	if n, _ := sum(e.transactions(o.ID), capital.EventDailyAccrual); n != 10 {
		t.Fatalf("%d accruals after the withdrawal, want 10", n)
	}
}

// TestDepositToMaturity: a deposit whose tenor ends on a Saturday matures
// the next Monday without earning the weekend, then is withdrawn without
// penalty and settled.
func TestDepositToMaturity(t *testing.T) {
	thursday := time.Date(2026, time.January, 8, 9, 0, 0, 0, time.UTC)
	e := newEnv(t, corebanktest.WithClockStart(thursday))
	p := e.product(deposit())
	acct := e.FundedAccount("USD", 1_000_000)
	o := e.confirm(e.depositOrder(p, acct.ID, 1_000_000, true).ID)
	if o.CapitalAccount.EarlyWithdrawalAt != nil {
		t.Fatal("a waived deposit has an early_withdrawal_at")
	}
	monday := time.Date(2026, time.February, 9, 9, 0, 0, 0, time.UTC)
	if o.CapitalAccount.MaturityAt != monday.UnixMilli() {
		t.Fatalf("maturity %s, want %s", time.UnixMilli(o.CapitalAccount.MaturityAt).UTC(), monday)
	}
	e.days(10)
	if _, err := e.Capital.WithdrawOrder(ctx, e.root, "", o.ID); !errors.Is(err, capital.ErrInvalidForState) {
		t.Fatalf("withdraw a locked deposit: %v", err)
	}
	e.days(20) // Saturday: the tenor's end
	o = e.get(o.ID)
	if o.CapitalAccount.Status.State != capital.StateActive || o.CapitalAccount.AccruedInterest != 8_333 {
		t.Fatalf("at the tenor's end: %s, accrued %d", o.CapitalAccount.Status.State, o.CapitalAccount.AccruedInterest)
	}
	e.days(2) // Monday: maturity
	o = e.get(o.ID)
	n, posted := sum(e.transactions(o.ID), capital.EventDailyAccrual)
	if o.CapitalAccount.Status.State != capital.StateMatured || o.CapitalAccount.AccruedInterest != 8_333 || n != 30 || posted != 8_333 {
		t.Fatalf("at maturity: %s, accrued %d, %d accruals of %d", o.CapitalAccount.Status.State, o.CapitalAccount.AccruedInterest, n, posted)
	}
	preview, err := e.Capital.PreviewWithdrawal(ctx, e.root, "", o.ID)
	if err != nil || !preview.PenaltyRate.IsZero() || preview.PenaltyAmount != 0 || preview.DaysElapsed != 30 || preview.NetPayout != 1_007_500 {
		t.Fatalf("preview at maturity: %+v %v", preview, err)
	}
	o, err = e.Capital.WithdrawOrder(ctx, e.root, "", o.ID)
	if err != nil || o.CapitalAccount.Status.State != capital.StateClosing {
		t.Fatalf("withdraw at maturity: %+v %v", o, err)
	}
	if n, _ := sum(e.transactions(o.ID), capital.EventPenalty); n != 0 {
		t.Fatal("a PENALTY at maturity")
	}
	e.Advance(time.Second)
	o = e.get(o.ID)
	if o.CapitalAccount.Status.State != capital.StateClosed || e.balance(acct.ID) != 1_007_500 {
		t.Fatalf("after settlement: %s, balance %d", o.CapitalAccount.Status.State, e.balance(acct.ID))
	}
	portfolio, err := e.Capital.GetPortfolio(ctx, e.root, capital.PortfolioFilter{})
	if err != nil || len(portfolio.Holdings) != 0 {
		t.Fatalf("a CLOSED deposit in the portfolio: %+v %v", portfolio, err)
	}
}

// TestWithdrawRefusals: every refusal SPEC.md lists is ErrInvalidForState.
func TestWithdrawRefusals(t *testing.T) {
	e := newEnv(t)
	acct := e.FundedAccount("USD", 10_000_000)
	disabled := deposit()
	disabled.EarlyWithdrawalEnabled = ptr(false)
	lockIn := deposit()
	lockIn.LockInDays = ptr(20)
	orders := map[string]string{}
	for name, in := range map[string]struct {
		p     capital.NewProduct
		waive bool
	}{"Disabled": {disabled, false}, "LockIn": {lockIn, false}, "Waived": {deposit(), true}, "Active": {deposit(), false}} {
		p := e.product(in.p)
		orders[name] = e.confirm(e.depositOrder(p, acct.ID, 100_000, in.waive).ID).ID
	}
	share := e.product(offering(10))
	orders["Shares"] = e.confirm(e.order(capital.NewOrder{ProductID: share.ID, AccountID: acct.ID, Amount: ptr(int64(500))}).ID).ID
	orders["Reserved"] = e.depositOrder(e.product(deposit()), acct.ID, 100_000, false).ID
	e.days(10)
	for _, name := range []string{"Disabled", "LockIn", "Waived", "Shares", "Reserved"} {
		if _, err := e.Capital.WithdrawOrder(ctx, e.root, "", orders[name]); !errors.Is(err, capital.ErrInvalidForState) {
			t.Errorf("%s: got %v, want ErrInvalidForState", name, err)
		}
	}
	if _, err := e.Capital.WithdrawOrder(ctx, e.root, "", orders["Active"]); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Capital.WithdrawOrder(ctx, e.root, "", orders["Active"]); !errors.Is(err, capital.ErrInvalidForState) {
		t.Errorf("EARLY_LIQUIDATING: %v", err)
	}
	e.Advance(time.Second)
	if _, err := e.Capital.WithdrawOrder(ctx, e.root, "", orders["Active"]); !errors.Is(err, capital.ErrInvalidForState) {
		t.Errorf("CLOSED: %v", err)
	}
}

// TestAllotment: random oversubscribed books allot no more than the
// allotment, never rewrite shares_purchased, and each applicant's
// allocated value, fees and refund add up to what it paid; the refund
// reaches its funding account once.
func TestAllotment(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	for round := range 5 {
		e := newEnv(t)
		inventory := int64(50 + rng.IntN(200))
		p := e.product(offering(inventory))
		type applicant struct {
			account string
			order   string
			paid    int64
		}
		var book []applicant
		for range 2 + rng.IntN(8) {
			pr, err := e.Capital.GetProduct(ctx, e.root, "", p.ID)
			if err != nil {
				t.Fatal(err)
			}
			if pr.Inventory.Quantity == 0 {
				break
			}
			acct := e.FundedAccount("USD", 1_000_000)
			o := e.confirm(e.order(capital.NewOrder{ProductID: p.ID, AccountID: acct.ID, Amount: ptr(int64(150 + rng.IntN(10_000)))}).ID)
			book = append(book, applicant{acct.ID, o.ID, o.TotalDebit})
		}
		allotted := rng.Int64N(inventory)
		if _, err := e.Capital.AllotProduct(ctx, e.root, "", p.ID, allotted); err != nil {
			t.Fatal(err)
		}
		if _, err := e.Capital.AllotProduct(ctx, e.root, "", p.ID, allotted); !errors.Is(err, capital.ErrInvalidForState) {
			t.Fatalf("second allotment: %v", err)
		}
		e.Advance(time.Second)
		e.Advance(time.Second) // a second run pays nothing twice
		var total int64
		for _, a := range book {
			o := e.get(a.order)
			h := o.CapitalAccount
			total += h.AllocatedShares
			n, refunded := sum(e.transactions(a.order), capital.EventRefund)
			if h.SharesPurchased != *o.AllocatedShares {
				t.Fatalf("round %d: shares_purchased %d rewritten (ordered %d)", round, h.SharesPurchased, *o.AllocatedShares)
			}
			if h.AllocatedValue+h.BrokerageFee+h.CrossDealFee+refunded != a.paid || h.AllocatedValue != h.AllocatedShares*100 {
				t.Fatalf("round %d: value %d + fees %d + %d + refund %d != paid %d", round, h.AllocatedValue, h.BrokerageFee, h.CrossDealFee, refunded, a.paid)
			}
			if e.balance(a.account) != 1_000_000-a.paid+refunded || n > 1 {
				t.Fatalf("round %d: balance %d, want %d (%d refunds)", round, e.balance(a.account), 1_000_000-a.paid+refunded, n)
			}
			if h.Status.State != capital.StateAllotmentConfirmed || (n == 1) != (h.Status.RefundStatus.RefundStatus != nil) {
				t.Fatalf("round %d: %+v after %d refunds", round, h.Status, n)
			}
		}
		if total > allotted {
			t.Fatalf("round %d: %d shares allotted of %d", round, total, allotted)
		}
	}
}

// TestShareLife: lock, price, unlock and the portfolio's totals.
func TestShareLife(t *testing.T) {
	e := newEnv(t)
	p := e.product(offering(100))
	acct := e.FundedAccount("USD", 1_000_000)
	o := e.confirm(e.order(capital.NewOrder{ProductID: p.ID, AccountID: acct.ID, Amount: ptr(int64(1_015))}).ID)
	h := o.CapitalAccount
	if h.Status.State != capital.StateLocked || h.AllocatedShares != 10 || h.MarketValue != nil || h.CostBasis != 1_015 || h.AverageCost != 101 {
		t.Fatalf("after confirm: %+v %+v", h.Status, h.ShareAccount)
	}
	if _, err := e.Capital.SetProductPrice(ctx, e.root, "", p.ID, 120); err != nil {
		t.Fatal(err)
	}
	dep := e.product(deposit())
	e.confirm(e.depositOrder(dep, acct.ID, 360_000, false).ID)
	e.days(1)
	pf, err := e.Capital.GetPortfolio(ctx, e.root, capital.PortfolioFilter{})
	if err != nil {
		t.Fatal(err)
	}
	// 360,000 × 0.10 × 1 / 360 = 100.
	if diff := cmp.Diff([]capital.PortfolioTotal{{Currency: "USD", Principal: 361_000, AccruedInterest: 100, MarketValue: 1_200}}, pf.Totals); diff != "" || len(pf.Holdings) != 2 {
		t.Fatalf("totals (-want +got)\n%s", diff)
	}
	e.days(29)
	if got := e.get(o.ID).CapitalAccount; got.Status.State != capital.StateTransferable || *got.MarketValue != 1_200 {
		t.Fatalf("after the lock: %+v", got.Status)
	}
}

// TestUnlock: the sandbox ends a lock now.
func TestUnlock(t *testing.T) {
	e := newEnv(t)
	p := e.product(offering(100))
	acct := e.FundedAccount("USD", 1_000_000)
	o := e.confirm(e.order(capital.NewOrder{ProductID: p.ID, AccountID: acct.ID, Amount: ptr(int64(1_015))}).ID)
	if _, err := e.Capital.UnlockProduct(ctx, e.root, "", p.ID); err != nil {
		t.Fatal(err)
	}
	if got := e.get(o.ID).CapitalAccount; got.Status.State != capital.StateTransferable {
		t.Fatalf("after unlock: %+v", got.Status)
	}
	if _, err := e.Capital.AllotProduct(ctx, e.root, "", p.ID, 5); !errors.Is(err, capital.ErrInvalidForState) {
		t.Fatalf("allot after unlock: %v", err)
	}
}
