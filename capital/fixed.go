package capital

import (
	"context"
	"time"

	"github.com/shopspring/decimal"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/internal/scope"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/storage"
)

// Due-queue kinds of fixed-return accounts.
const (
	dueAccrual  = "capital.accrual"
	dueMaturity = "capital.maturity"
	dueSettle   = "capital.settle"
)

// openFixed fills a's fixed-return fields for principal under terms t,
// starting at start (see doc.go "Fixed return").
func (s *Service) openFixed(a *accountRecord, t *FixedTerms, principal int64, waived bool, start time.Time) {
	basis := DayCountBasis(a.Currency)
	accrualEnd, maturity := Maturity(start, t.TenorDays)
	gross := Interest(principal, t.AnnualRate, t.TenorDays, basis)
	deductions := Withholding(gross, t.WithholdingRate)
	f := &FixedAccount{Principal: principal, AnnualRate: t.AnnualRate, DayCountBasis: basis, TenorDays: t.TenorDays,
		StartAt: start.UnixMilli(), MaturityAt: maturity.UnixMilli(), GrossInterest: gross, TotalDeductions: deductions,
		DueInterest: gross - deductions, ProjectedPayout: principal + gross - deductions, GrossPayout: principal + gross}
	if t.EarlyWithdrawalEnabled && !waived {
		f.EarlyWithdrawalAt = ptr(start.Add(days(max(t.EarlyWithdrawalMinDays, t.LockInDays))).UnixMilli())
	}
	a.FixedAccount = f
	a.Status = AccountStatus{State: StateActive, PayoutStatus: &PayoutStatus{}}
	a.PenaltyRate, a.WithholdingRate = t.EarlyWithdrawalPenaltyRate.String(), t.WithholdingRate.String()
	a.EarlyEnabled, a.Waived, a.AccrualEnd = t.EarlyWithdrawalEnabled, waived, accrualEnd.UnixMilli()
}

// scheduleFixed queues a new deposit's first accrual and its maturity.
func (s *Service) scheduleFixed(tx storage.Tx, a *accountRecord) error {
	if err := storage.Schedule(tx, dueAccrual, a.StartAt+days(1).Milliseconds(), a.ID); err != nil {
		return err
	}
	return storage.Schedule(tx, dueMaturity, a.MaturityAt, a.ID)
}

func (a *accountRecord) start() time.Time { return time.UnixMilli(a.StartAt).UTC() }

func rate(s string) decimal.Decimal {
	d, _ := decimal.NewFromString(s) // written by openFixed from a decimal
	return d
}

// accruedDays is the days a's interest has accrued for at now: elapsed
// days bounded by the tenor, frozen when withdrawn.
func (a *accountRecord) accruedDays(now time.Time) int {
	if a.Withdrawn {
		return a.WithdrawnDays
	}
	return DaysElapsed(a.start(), now, a.TenorDays)
}

func (a *accountRecord) accrued(days int) int64 {
	return Interest(a.Principal, a.AnnualRate, days, a.DayCountBasis)
}

// saveAccount stores a and appends capital_accounts.updated.
func (s *Service) saveAccount(tx storage.Tx, now time.Time, a *accountRecord) error {
	a.Updated = now.UnixMilli()
	if err := putAccount(tx, a); err != nil {
		return err
	}
	v, err := s.accountView(tx, now, a)
	if err != nil {
		return err
	}
	_, err = s.led.AppendEventTx(tx, now, EventAccountUpdated, a.EntityID, v)
	return err
}

// accountView is a as answered at now: accrued interest and market value
// computed.
func (s *Service) accountView(tx storage.Tx, now time.Time, a *accountRecord) (*Account, error) {
	v := a.Account
	st := a.Status
	if st.PayoutStatus != nil {
		st.PayoutStatus = &PayoutStatus{PayoutStatus: st.PayoutStatus.PayoutStatus}
	}
	if st.RefundStatus != nil {
		st.RefundStatus = &RefundStatus{RefundStatus: st.RefundStatus.RefundStatus}
	}
	v.Status = st
	if a.FixedAccount != nil {
		f := *a.FixedAccount
		f.AccruedInterest = a.accrued(a.accruedDays(now))
		v.FixedAccount = &f
	}
	if a.ShareAccount != nil {
		sh := *a.ShareAccount
		pr, err := getProduct(tx, a.ProductID)
		if err != nil {
			return nil, err
		}
		sh.MarketPrice, sh.MarketValue = nil, nil
		if pr.MarketPrice != nil {
			sh.MarketPrice, sh.MarketValue = ptr(*pr.MarketPrice), ptr(*pr.MarketPrice*sh.AllocatedShares)
		}
		v.ShareAccount = &sh
	}
	return &v, nil
}

// postAccruals writes the DAILY_ACCRUAL transactions of a from the day
// after the last posted through day upTo, each the difference of the
// running totals, so that they sum to the accrued interest of upTo days.
func (s *Service) postAccruals(tx storage.Tx, now time.Time, a *accountRecord, upTo int) error {
	for d := a.PostedDays + 1; d <= upTo; d++ {
		amount := a.accrued(d) - a.accrued(d-1)
		date := a.start().AddDate(0, 0, d-1).Format(time.DateOnly)
		if _, err := s.addTransaction(tx, now, a, EventDailyAccrual, amount, date); err != nil {
			return err
		}
		a.PostedDays = d
	}
	return nil
}

// accrue is the daily due work of a deposit: it posts the days elapsed
// and schedules the next day until the tenor's end. Accrual stops when
// the deposit is withdrawn.
func (s *Service) accrue(tx storage.Tx, now time.Time, it storage.DueItem) error {
	a, err := getAccount(tx, it.ID)
	if err != nil {
		return err
	}
	if a.FixedAccount == nil || a.Withdrawn {
		return nil
	}
	d := a.accruedDays(now)
	if err := s.postAccruals(tx, now, a, d); err != nil {
		return err
	}
	if d < a.TenorDays {
		if err := storage.Schedule(tx, dueAccrual, a.StartAt+days(d+1).Milliseconds(), a.ID); err != nil {
			return err
		}
	}
	return putAccount(tx, a) // accruals change no field a reader sees: no event
}

// mature is the due work of a deposit's maturity: ACTIVE becomes MATURED,
// with every day of the tenor posted.
func (s *Service) mature(tx storage.Tx, now time.Time, it storage.DueItem) error {
	a, err := getAccount(tx, it.ID)
	if err != nil {
		return err
	}
	if a.Status.State != StateActive {
		return nil
	}
	if err := s.postAccruals(tx, now, a, a.TenorDays); err != nil {
		return err
	}
	a.Status.State = StateMatured
	return s.saveAccount(tx, now, a)
}

// withdrawal is what withdrawing a pays at now: before maturity the
// interest of the days elapsed less the penalty, at or after it the
// tenor's interest with no penalty; withholding on the gross either way.
func (a *accountRecord) withdrawal(now time.Time) WithdrawalPreview {
	p := WithdrawalPreview{Principal: a.Principal, CapitalAccountID: a.ID, EntityID: a.EntityID, PenaltyRate: decimal.Zero}
	if a.Withdrawn {
		p.DaysElapsed, p.GrossInterest, p.PenaltyAmount, p.TotalDeductions = a.WithdrawnDays, a.PayGross, a.PayPenalty, a.PayWithheld
		if a.PayPenalty > 0 {
			p.PenaltyRate = rate(a.PenaltyRate)
		}
	} else {
		p.DaysElapsed = a.accruedDays(now)
		if now.UnixMilli() >= a.MaturityAt {
			p.DaysElapsed = a.TenorDays
		} else {
			p.PenaltyRate = rate(a.PenaltyRate)
		}
		p.GrossInterest = a.accrued(p.DaysElapsed)
		p.PenaltyAmount = Penalty(p.GrossInterest, p.PenaltyRate)
		p.TotalDeductions = Withholding(p.GrossInterest, rate(a.WithholdingRate))
	}
	p.NetPayout = NetPayout(p.Principal, p.GrossInterest, p.PenaltyAmount, p.TotalDeductions)
	return p
}

// fixedAccount returns the fixed-return capital account of order o, which
// the caller loaded (scope.Get): ErrInvalidForState when it has none.
func fixedAccount(tx storage.Tx, o *orderRecord) (*accountRecord, error) {
	if o.CapitalAccountID == "" {
		return nil, ErrInvalidForState.With("the order has no capital account (it is " + o.Status + ")")
	}
	a, err := getAccount(tx, o.CapitalAccountID)
	if err != nil {
		return nil, err
	}
	if a.FixedAccount == nil {
		return nil, ErrInvalidForState.With("only a fixed-return account can be withdrawn")
	}
	return a, nil
}

// PreviewWithdrawal computes what WithdrawOrder would pay now, with no side
// effects; for an account already withdrawn, what its withdrawal pays.
//
// Errors: corebank.ErrEntityNotFound; ErrOrderNotFound;
// ErrInvalidForState for an order without a fixed-return capital account.
func (s *Service) PreviewWithdrawal(ctx context.Context, caller corebank.Caller, entityID, id string) (*WithdrawalPreview, error) {
	now := s.o.Clock.Now()
	return storage.View(ctx, s.db, func(tx storage.Tx) (*WithdrawalPreview, error) {
		o, err := scope.Get(tx, s.o.Tree, caller, entityID, id, getOrder, ErrOrderNotFound)
		if err != nil {
			return nil, err
		}
		a, err := fixedAccount(tx, o)
		if err != nil {
			return nil, err
		}
		p := a.withdrawal(now)
		return &p, nil
	})
}

// WithdrawOrder withdraws order id's fixed-return capital account. ACTIVE
// before maturity becomes EARLY_LIQUIDATING, with PENALTY, WITHHOLDING and
// PAYOUT transactions; MATURED becomes CLOSING with WITHHOLDING and PAYOUT
// (no penalty). Either way the payout is pending and the settlement job
// pays it to the funding account at settlement_at. It answers the order
// with its capital account.
//
// Errors: corebank.ErrForbidden; corebank.ErrEntityNotFound;
// ErrOrderNotFound; ErrInvalidForState for every refusal SPEC.md lists:
// no fixed-return account, an account locked (early withdrawal waived) or
// inside its lock-in, early withdrawal disabled, before the earliest
// action day, ACTIVE at or after maturity, already EARLY_LIQUIDATING,
// CLOSING or CLOSED.
func (s *Service) WithdrawOrder(ctx context.Context, caller corebank.Caller, entityID, id string) (*Order, error) {
	if err := caller.CheckWrite(); err != nil {
		return nil, err
	}
	now := s.o.Clock.Now()
	return storage.Update(ctx, s.db, func(tx storage.Tx) (*Order, error) {
		o, err := scope.Get(tx, s.o.Tree, caller, entityID, id, getOrder, ErrOrderNotFound)
		if err != nil {
			return nil, err
		}
		a, err := fixedAccount(tx, o)
		if err != nil {
			return nil, err
		}
		if err := a.canWithdraw(now); err != nil {
			return nil, err
		}
		p := a.withdrawal(now)
		if err := s.postAccruals(tx, now, a, p.DaysElapsed); err != nil {
			return nil, err
		}
		if a.Status.State == StateActive {
			a.Status.State = StateEarlyLiquidating
		} else {
			a.Status.State = StateClosing
		}
		a.Withdrawn, a.WithdrawnDays = true, p.DaysElapsed
		a.PayGross, a.PayPenalty, a.PayWithheld = p.GrossInterest, p.PenaltyAmount, p.TotalDeductions
		at := now.Add(s.o.SettlementDelay)
		a.PayoutAmount, a.SettlementAt = ptr(p.NetPayout), ptr(at.UnixMilli())
		a.Status.PayoutStatus = &PayoutStatus{PayoutStatus: ptr(PayPending)}
		for _, t := range []struct {
			typ    string
			amount int64
		}{{EventPenalty, p.PenaltyAmount}, {EventWithholding, p.TotalDeductions}, {EventPayout, p.NetPayout}} {
			if t.typ == EventPenalty && a.Status.State != StateEarlyLiquidating {
				continue
			}
			if _, err := s.addTransaction(tx, now, a, t.typ, t.amount, ""); err != nil {
				return nil, err
			}
		}
		if err := storage.Schedule(tx, dueSettle, at.UnixMilli(), a.ID); err != nil {
			return nil, err
		}
		if err := s.saveAccount(tx, now, a); err != nil {
			return nil, err
		}
		return s.orderView(tx, now, o, true)
	})
}

// canWithdraw refuses what SPEC.md refuses.
func (a *accountRecord) canWithdraw(now time.Time) error {
	switch a.Status.State {
	case StateMatured:
		return nil
	case StateActive:
	default:
		return ErrInvalidForState.With("the account is " + a.Status.State)
	}
	switch {
	case now.UnixMilli() >= a.MaturityAt:
		return ErrInvalidForState.With("the account is at maturity; it can be withdrawn once MATURED")
	case !a.EarlyEnabled:
		return ErrInvalidForState.With("the product does not allow early withdrawal")
	case a.Waived:
		return ErrInvalidForState.With("the account is locked: early withdrawal was waived")
	case a.EarlyWithdrawalAt == nil || now.UnixMilli() < *a.EarlyWithdrawalAt:
		return ErrInvalidForState.With("the account cannot be withdrawn before its early_withdrawal_at")
	}
	return nil
}

// settle is the due work of a withdrawal: it pays the payout to the
// funding account (principal from the deposits' pool, interest net of the
// penalty from capital.interest, the withholding to capital.withholding)
// and closes the account. A payout the ledger refuses (the funding
// account deleted) is marked failed and the account stays as it is.
func (s *Service) settle(tx storage.Tx, now time.Time, it storage.DueItem) error {
	a, err := getAccount(tx, it.ID)
	if err != nil {
		return err
	}
	if a.FixedAccount == nil || a.Status.PayoutStatus == nil || a.Status.PayoutStatus.PayoutStatus == nil ||
		*a.Status.PayoutStatus.PayoutStatus != PayPending {
		return nil
	}
	net := *a.PayoutAmount
	var lines []ledger.Line
	add := func(acct string, side ledger.Side, amount int64) {
		if amount < 0 {
			amount, side = -amount, map[ledger.Side]ledger.Side{ledger.Debit: ledger.Credit, ledger.Credit: ledger.Debit}[side]
		}
		if amount > 0 {
			lines = append(lines, ledger.Line{AccountID: acct, Side: side, Amount: amount})
		}
	}
	add(s.led.SystemAccount(a.Currency, PurposeFixedReturn), ledger.Debit, a.Principal)
	add(s.led.SystemAccount(a.Currency, PurposeInterest), ledger.Debit, net+a.PayWithheld-a.Principal)
	add(s.led.SystemAccount(a.Currency, PurposeWithholding), ledger.Credit, a.PayWithheld)
	add(a.FundingAccountID, ledger.Credit, net)
	status := PayCompleted
	if _, err := s.led.PostTx(tx, now, ledger.Entry{Key: "capital.payout:" + a.ID, Lines: lines,
		Narration: "capital payout"}); err != nil {
		if corebank.KindOf(err) == corebank.KindInternal {
			return err
		}
		status = PayFailed
	} else {
		a.Status.State = StateClosed
	}
	a.Status.PayoutStatus = &PayoutStatus{PayoutStatus: ptr(status)}
	return s.saveAccount(tx, now, a)
}
