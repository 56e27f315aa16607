package ledger_test

import (
	"context"
	"encoding/json"
	"math/rand"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/service"
	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/memory"
)

var ctx = context.Background()

// sys is the trusted in-process caller the tests act as.
var sys = corebank.System()

// start is the mock clock's start: 2026-11-01T09:00:00Z.
var start = time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)

type env struct {
	s     *ledger.Service
	clock *clock.Mock
	db    storage.Backend
}

func newEnv(tb testing.TB) *env {
	tb.Helper()
	db := memory.New()
	tb.Cleanup(func() { db.Close() })
	return newEnvOn(tb, db, nil)
}

func newEnvOn(tb testing.TB, db storage.Backend, gate ledger.EntityGate) *env {
	tb.Helper()
	return newSeededEnv(tb, db, gate, 1)
}

// newSeededEnv is newEnvOn with IDs drawn from a source seeded with seed.
func newSeededEnv(tb testing.TB, db storage.Backend, gate ledger.EntityGate, seed int64) *env {
	tb.Helper()
	c := clock.NewMock()
	c.Set(start)
	s := ledger.NewService(db, &ledger.Options{Deps: service.Deps{Clock: c, IDs: corebank.NewIDs(rand.New(rand.NewSource(seed)))}, Gate: gate})
	return &env{s: s, clock: c, db: db}
}

// MustAccount opens a checking account for entity in currency.
func (e *env) MustAccount(tb testing.TB, entity, currency string) *ledger.Account {
	tb.Helper()
	a, err := e.s.CreateAccount(ctx, sys, ledger.NewAccount{EntityID: entity, Type: ledger.TypeChecking, Currency: currency, DisplayName: "Main " + currency})
	if err != nil {
		tb.Fatalf("CreateAccount: %v", err)
	}
	return a
}

// MustFund credits amount to account from the bank clearing account.
func (e *env) MustFund(tb testing.TB, account string, currency string, amount int64) *ledger.JournalEntry {
	tb.Helper()
	j, err := e.s.Post(ctx, ledger.Entry{Lines: []ledger.Line{
		{AccountID: e.s.SystemAccount(currency, ledger.PurposeClearingBank), Side: ledger.Debit, Amount: amount},
		{AccountID: account, Side: ledger.Credit, Amount: amount},
	}, Narration: "funding"})
	if err != nil {
		tb.Fatalf("fund: %v", err)
	}
	return j
}

func (e *env) MustBalance(tb testing.TB, account string) ledger.Balance {
	tb.Helper()
	b, err := e.s.GetBalance(ctx, account)
	if err != nil {
		tb.Fatalf("GetBalance(%s): %v", account, err)
	}
	return b
}

// code returns err's corebank code, or "" for nil.
func code(err error) string {
	if err == nil {
		return ""
	}
	if e, ok := err.(*corebank.Error); ok {
		return e.Code
	}
	return "plain: " + err.Error()
}

func fields(err error) map[string]string {
	if e, ok := err.(*corebank.Error); ok {
		return e.Fields
	}
	return nil
}

func newMemory(tb testing.TB) storage.Backend {
	db := memory.New()
	tb.Cleanup(func() { db.Close() })
	return db
}

type storageTx = storage.Tx

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// newMemoryShared returns a memory store that outlives one benchmark, for
// fixtures built once per process.
func newMemoryShared() storage.Backend { return memory.New() }
