package payments_test

import (
	"context"
	"errors"
	"math/rand"
	"path/filepath"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/payments"
	"github.com/corebank/corebank/service"
	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/bolt"
	"github.com/corebank/corebank/storage/memory"
)

var ctx = context.Background()

// start is the mock clock's start: 2026-01-02 03:04:05 UTC.
var start = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

type env struct {
	db  storage.Backend
	clk *clock.Mock
	led *ledger.Service
	svc *payments.Service
}

func openMemory(tb testing.TB) storage.Backend { return memory.New() }

func openBolt(tb testing.TB) storage.Backend {
	tb.Helper()
	db, err := bolt.Open(filepath.Join(tb.TempDir(), "db"), nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

var backends = []struct {
	name string
	open func(testing.TB) storage.Backend
}{{"memory", openMemory}, {"bolt", openBolt}}

func newEnv(tb testing.TB, db storage.Backend, opt *payments.Options) *env {
	tb.Helper()
	clk := clock.NewMock()
	clk.Set(start)
	ids := corebank.NewIDs(rand.New(rand.NewSource(1)))
	led := ledger.NewService(db, &ledger.Options{Deps: service.Deps{Clock: clk, IDs: ids}})
	var o payments.Options
	if opt != nil {
		o = *opt
	}
	o.Clock, o.IDs = clk, ids
	return &env{db: db, clk: clk, led: led, svc: payments.NewService(db, led, &o)}
}

func newMemEnv(tb testing.TB) *env { return newEnv(tb, memory.New(), nil) }

func (e *env) account(tb testing.TB, entity, currency string) *ledger.Account {
	tb.Helper()
	a, err := e.led.CreateAccount(ctx, corebank.System(), ledger.NewAccount{EntityID: entity, Type: ledger.TypeChecking, Currency: currency, DisplayName: currency + " account"})
	if err != nil {
		tb.Fatal(err)
	}
	return a
}

// fund credits amount to an account from its currency's bank clearing.
func (e *env) fund(tb testing.TB, a *ledger.Account, amount int64) {
	tb.Helper()
	_, err := e.led.Post(ctx, ledger.Entry{Lines: []ledger.Line{
		{AccountID: e.led.SystemAccount(a.Currency, ledger.PurposeClearingBank), Side: ledger.Debit, Amount: amount},
		{AccountID: a.ID, Side: ledger.Credit, Amount: amount},
	}, Narration: "funding"})
	if err != nil {
		tb.Fatal(err)
	}
}

func (e *env) balance(tb testing.TB, id string) ledger.Balance {
	tb.Helper()
	b, err := e.led.GetBalance(ctx, id)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// checkBalanced asserts that per currency every balance sums to zero.
func (e *env) checkBalanced(tb testing.TB) {
	tb.Helper()
	tbal, err := e.led.TrialBalance(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	for cur, b := range tbal {
		if b.Settled != 0 || b.Current() != 0 || b.PendingCredits != b.PendingDebits {
			tb.Errorf("currency %s does not balance: %+v", cur, b)
		}
	}
}

func individual(first, last, email string) payments.NewCounterparty {
	return payments.NewCounterparty{Type: "individual", Profile: payments.Profile{
		FirstName: first, LastName: last, Relationship: "vendor", Email: email,
		Address: &payments.Address{Line1: "1 Main St", City: "London", Country: "GB"},
	}}
}

func (e *env) counterparty(tb testing.TB, entity string) *payments.Counterparty {
	tb.Helper()
	c, err := e.svc.CreateCounterparty(ctx, corebank.As(entity), individual("Ada", "Lovelace", "ada"+entity+"@example.com"))
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

func (e *env) detail(tb testing.TB, entity string, in payments.NewPaymentDetail) *payments.PaymentDetail {
	tb.Helper()
	d, err := e.svc.CreatePaymentDetail(ctx, corebank.As(entity), in)
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

// achDetail is a valid USD ACH detail of counterparty cp.
func achDetail(cp string) payments.NewPaymentDetail {
	return payments.NewPaymentDetail{CounterpartyID: cp, PaymentMethod: "bank-transfer", Currency: "USD",
		Country: "US", Scheme: "ach", AccountHolderName: "Ada Lovelace", RoutingNumber: "091000019",
		AccountNumber: "123456789", AccountType: "checking"}
}

func errCode(err error) string {
	var e *corebank.Error
	if errors.As(err, &e) {
		return e.Code
	}
	if err == nil {
		return ""
	}
	return "plain: " + err.Error()
}

// wantFields asserts err is a validation error naming exactly fields.
func wantFields(tb testing.TB, err error, fields ...string) {
	tb.Helper()
	var e *corebank.Error
	if !errors.As(err, &e) || e.Code != corebank.CodeValidation {
		tb.Fatalf("want validation error on %v, got %v", fields, err)
	}
	for _, f := range fields {
		if _, ok := e.Fields[f]; !ok {
			tb.Errorf("want field %q named, got %v", f, e.Fields)
		}
	}
	if len(e.Fields) != len(fields) {
		tb.Errorf("want exactly %v, got %v", fields, e.Fields)
	}
}

type storageTx = storage.Tx
