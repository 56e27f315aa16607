package funding_test

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/funding"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/service"
	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/memory"
)

type fixture struct {
	db   storage.Backend
	clk  *clock.Mock
	led  *ledger.Service
	fund *funding.Service
	acct *ledger.Account
	own  corebank.Caller // acts for acct's entity
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	db := memory.New()
	t.Cleanup(func() { db.Close() })
	clk := clock.NewMock()
	clk.Set(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	ids := corebank.NewIDs(rand.New(rand.NewSource(1)))
	led := ledger.NewService(db, &ledger.Options{Deps: service.Deps{Clock: clk, IDs: ids}})
	acct, err := led.CreateAccount(context.Background(), corebank.System(), ledger.NewAccount{
		EntityID: "01HZZZZZZZZZZZZZZZZZZZZZZZ", Type: "checking", Currency: "USD", DisplayName: "Ops"})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{db: db, clk: clk, led: led, fund: funding.NewService(db, led, &funding.Options{Deps: service.Deps{Clock: clk, IDs: ids}}), acct: acct,
		own: corebank.As(acct.EntityID)}
}

func (f *fixture) balance(t *testing.T) ledger.AccountBalance {
	t.Helper()
	b, err := f.led.GetBalance(context.Background(), f.acct.ID)
	if err != nil {
		t.Fatal(err)
	}
	return b.Summary()
}

func (f *fixture) events(t *testing.T, typ string) []ledger.Event {
	t.Helper()
	evs, err := f.led.Events(context.Background(), "", 100)
	if err != nil {
		t.Fatal(err)
	}
	var out []ledger.Event
	for _, e := range evs {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

func TestCreateInflow(t *testing.T) {
	ctx := context.Background()
	t.Run("OK settled", func(t *testing.T) {
		f := newFixture(t)
		in, err := f.fund.CreateInflow(ctx, f.own, funding.NewInflow{AccountID: f.acct.ID, Amount: 1500, Narration: "seed"})
		if err != nil {
			t.Fatal(err)
		}
		if in.Status != funding.StatusCompleted || in.Currency != "USD" || in.EntityID != f.acct.EntityID || in.CompletedAt == nil {
			t.Fatalf("inflow = %+v", in)
		}
		if diff := cmp.Diff(ledger.AccountBalance{Available: 1500, Current: 1500}, f.balance(t)); diff != "" {
			t.Fatalf("balance (-want +got)\n%s", diff)
		}
		if n := len(f.events(t, funding.EventInflowCompleted)); n != 1 {
			t.Fatalf("%d inflows.completed events, want 1", n)
		}
		got, err := f.fund.GetInflow(ctx, in.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(in, got); diff != "" {
			t.Fatalf("GetInflow (-want +got)\n%s", diff)
		}
	})
	t.Run("OK pending settles after the delay", func(t *testing.T) {
		f := newFixture(t)
		no := false
		in, err := f.fund.CreateInflow(ctx, f.own, funding.NewInflow{AccountID: f.acct.ID, Amount: 700, Settle: &no})
		if err != nil {
			t.Fatal(err)
		}
		if in.Status != funding.StatusPending || in.SettlesAt == nil || *in.SettlesAt != f.clk.Now().Add(time.Minute).UnixMilli() {
			t.Fatalf("inflow = %+v", in)
		}
		if diff := cmp.Diff(ledger.AccountBalance{Available: 0, Current: 700}, f.balance(t)); diff != "" {
			t.Fatalf("pending balance (-want +got)\n%s", diff)
		}
		if len(f.events(t, funding.EventInflowCompleted)) != 0 {
			t.Fatal("inflows.completed fired before settlement")
		}
		f.clk.Add(59 * time.Second)
		if n, err := f.fund.RunDue(ctx, f.clk.Now()); err != nil || n != 0 {
			t.Fatalf("RunDue before due = %d, %v", n, err)
		}
		f.clk.Add(time.Second)
		if n, err := f.fund.RunDue(ctx, f.clk.Now()); err != nil || n != 1 {
			t.Fatalf("RunDue when due = %d, %v", n, err)
		}
		if diff := cmp.Diff(ledger.AccountBalance{Available: 700, Current: 700}, f.balance(t)); diff != "" {
			t.Fatalf("settled balance (-want +got)\n%s", diff)
		}
		got, _ := f.fund.GetInflow(ctx, in.ID)
		if got.Status != funding.StatusCompleted {
			t.Fatalf("status = %q after settlement", got.Status)
		}
		if n := len(f.events(t, funding.EventInflowCompleted)); n != 1 {
			t.Fatalf("%d inflows.completed events, want 1", n)
		}
		if n, err := f.fund.RunDue(ctx, f.clk.Now().Add(time.Hour)); err != nil || n != 0 {
			t.Fatalf("second RunDue = %d, %v; settled twice?", n, err)
		}
	})
	t.Run("OK through active details", func(t *testing.T) {
		f := newFixture(t)
		d, err := f.led.CreateAccountDetails(ctx, corebank.System(), ledger.NewAccountDetails{AccountID: f.acct.ID})
		if err != nil {
			t.Fatal(err)
		}
		in, err := f.fund.CreateInflow(ctx, f.own, funding.NewInflow{AccountID: f.acct.ID, Amount: 10})
		if err != nil {
			t.Fatal(err)
		}
		if in.AccountDetailsID == nil || *in.AccountDetailsID != d.ID {
			t.Fatalf("account_details_id = %v, want %s", in.AccountDetailsID, d.ID)
		}
		stats, err := f.led.GetAccountDetailsStats(ctx, corebank.System(), "", d.ID)
		if err != nil || stats.TotalInflowsCount != 1 || stats.TotalInflowsAmount != 10 {
			t.Fatalf("stats = %+v, %v", stats, err)
		}
	})
	t.Run("ErrNoReceivingDetails when details expired", func(t *testing.T) {
		f := newFixture(t)
		days := 1
		if _, err := f.led.CreateAccountDetails(ctx, corebank.System(), ledger.NewAccountDetails{AccountID: f.acct.ID, TerminateAfter: &days}); err != nil {
			t.Fatal(err)
		}
		f.clk.Add(25 * time.Hour)
		_, err := f.fund.CreateInflow(ctx, f.own, funding.NewInflow{AccountID: f.acct.ID, Amount: 10})
		if !errors.Is(err, funding.ErrNoReceivingDetails) {
			t.Fatalf("err = %v, want ErrNoReceivingDetails", err)
		}
		if diff := cmp.Diff(ledger.AccountBalance{}, f.balance(t)); diff != "" {
			t.Fatalf("refused inflow moved money (-want +got)\n%s", diff)
		}
	})
	for _, tc := range []struct {
		name  string
		in    funding.NewInflow
		field string
	}{
		{"ErrInvalid amount zero", funding.NewInflow{Amount: 0}, "amount"},
		{"ErrInvalid amount negative", funding.NewInflow{Amount: -5}, "amount"},
		{"ErrInvalid amount too large", funding.NewInflow{Amount: ledger.MaxAmount + 1}, "amount"},
		{"ErrInvalid currency unknown", funding.NewInflow{Amount: 1, Currency: "XXX"}, "currency"},
		{"ErrInvalid currency of another account", funding.NewInflow{Amount: 1, Currency: "EUR"}, "currency"},
		{"ErrInvalid narration too long", funding.NewInflow{Amount: 1, Narration: string(make([]rune, 256))}, "narration"},
		{"ErrInvalid source", funding.NewInflow{Amount: 1, Source: "Bad Source"}, "source"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			tc.in.AccountID = f.acct.ID
			_, err := f.fund.CreateInflow(ctx, f.own, tc.in)
			var e *corebank.Error
			if !errors.As(err, &e) || e.Kind != corebank.KindInvalid || e.Fields[tc.field] == "" {
				t.Fatalf("err = %v, want a validation error naming %s", err, tc.field)
			}
		})
	}
	t.Run("ErrNotFound account", func(t *testing.T) {
		f := newFixture(t)
		_, err := f.fund.CreateInflow(ctx, f.own, funding.NewInflow{AccountID: "01HAAAAAAAAAAAAAAAAAAAAAAA", Amount: 1})
		if corebank.KindOf(err) != corebank.KindNotFound {
			t.Fatalf("err = %v, want not found", err)
		}
	})
	t.Run("OK ledger stays balanced", func(t *testing.T) {
		f := newFixture(t)
		no := false
		for i := 0; i < 5; i++ {
			if _, err := f.fund.CreateInflow(ctx, f.own, funding.NewInflow{AccountID: f.acct.ID, Amount: 100, Settle: &no, Source: "momo"}); err != nil {
				t.Fatal(err)
			}
		}
		f.clk.Add(time.Minute)
		if _, err := f.fund.RunDue(ctx, f.clk.Now()); err != nil {
			t.Fatal(err)
		}
		tb, err := f.led.TrialBalance(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var sum int64
		for _, b := range tb {
			sum += b.Settled + b.PendingCredits - b.PendingDebits
		}
		if sum != 0 {
			t.Fatalf("trial balance sums to %d, want 0: %+v", sum, tb)
		}
	})
}

func TestCreateInflowScope(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	missing := "01HAAAAAAAAAAAAAAAAAAAAAAA"
	errText := func(c corebank.Caller, id string) string {
		t.Helper()
		_, err := f.fund.CreateInflow(ctx, c, funding.NewInflow{AccountID: id, Amount: 1})
		if !errors.Is(err, ledger.ErrAccountNotFound) {
			t.Fatalf("err = %v, want ledger.ErrAccountNotFound", err)
		}
		return err.Error()
	}
	t.Run("ErrAccountNotFound foreign answers as missing", func(t *testing.T) {
		stranger := corebank.As("01HYYYYYYYYYYYYYYYYYYYYYYY")
		foreign := errText(stranger, f.acct.ID)
		f.acct.ID, missing = missing, f.acct.ID
		absent := errText(stranger, f.acct.ID)
		f.acct.ID, missing = missing, f.acct.ID
		if foreign != strings.Replace(absent, missing, f.acct.ID, 1) {
			t.Fatalf("foreign %q, missing %q", foreign, absent)
		}
		if diff := cmp.Diff(ledger.AccountBalance{}, f.balance(t)); diff != "" {
			t.Fatalf("foreign inflow moved money (-want +got)\n%s", diff)
		}
	})
	t.Run("ErrAccountNotFound zero caller", func(t *testing.T) {
		errText(corebank.Caller{}, f.acct.ID)
	})
	t.Run("ErrForbidden read-only", func(t *testing.T) {
		ro := f.own
		ro.ReadOnly = true
		if _, err := f.fund.CreateInflow(ctx, ro, funding.NewInflow{AccountID: f.acct.ID, Amount: 1}); !errors.Is(err, corebank.ErrForbidden) {
			t.Fatalf("err = %v, want ErrForbidden", err)
		}
	})
	t.Run("OK System", func(t *testing.T) {
		if _, err := f.fund.CreateInflow(ctx, corebank.System(), funding.NewInflow{AccountID: f.acct.ID, Amount: 1}); err != nil {
			t.Fatal(err)
		}
	})
}

// parentOf is a scope.Tree in which parent lies above child.
type parentOf struct{ parent, child string }

func (p parentOf) InTreeTx(_ storage.Tx, ancestorID, id string) (bool, error) {
	return ancestorID == id || (ancestorID == p.parent && id == p.child), nil
}

func TestCreateInflowTree(t *testing.T) {
	ctx := context.Background()
	const parent = "01HXXXXXXXXXXXXXXXXXXXXXXX"
	for _, tc := range []struct {
		name string
		tree bool
		ok   bool
	}{{"OK parent with a tree", true, true}, {"ErrAccountNotFound parent without a tree", false, false}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			o := &funding.Options{Deps: service.Deps{Clock: f.clk}}
			if tc.tree {
				o.Tree = parentOf{parent, f.acct.EntityID}
			}
			fund := funding.NewService(f.db, f.led, o)
			_, err := fund.CreateInflow(ctx, corebank.As(parent), funding.NewInflow{AccountID: f.acct.ID, Amount: 3})
			if tc.ok != (err == nil) || (!tc.ok && !errors.Is(err, ledger.ErrAccountNotFound)) {
				t.Fatalf("err = %v", err)
			}
		})
	}
}

func TestNewInflowJSON(t *testing.T) {
	var in funding.NewInflow
	body := `{"account_id":"A","amount":5,"currency":"USD","narration":"n","settle":false,"reference":"r","source":"s"}`
	if err := json.Unmarshal([]byte(body), &in); err != nil {
		t.Fatal(err)
	}
	no := false
	want := funding.NewInflow{AccountID: "A", Amount: 5, Currency: "USD", Narration: "n", Settle: &no}
	if diff := cmp.Diff(want, in); diff != "" {
		t.Fatalf("reference and source must not come from JSON (-want +got)\n%s", diff)
	}
}

func TestDueJobs(t *testing.T) {
	f := newFixture(t)
	var kinds []string
	for _, j := range f.fund.DueJobs() {
		kinds = append(kinds, j.Kind)
	}
	if diff := cmp.Diff([]string{"funding.inflow"}, kinds); diff != "" {
		t.Fatalf("kinds (-want +got)\n%s", diff)
	}
}

// TestSettledInflowIsItsEntry: a settled inflow is stored as the journal
// entry that credited it, under the inflow's ID, and no funding record;
// GetInflow rebuilds it exactly as CreateInflow answered and as its
// inflows.completed event carries it. An ID that names another entry, or
// nothing, is not an inflow.
func TestSettledInflowIsItsEntry(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		in      funding.NewInflow
		details bool
	}{
		{"narration", funding.NewInflow{Amount: 1500, Narration: "seed"}, false},
		{"no narration", funding.NewInflow{Amount: 1}, false},
		{"narration the default", funding.NewInflow{Amount: 2, Narration: "inflow"}, false},
		{"through details", funding.NewInflow{Amount: 3, Narration: "x"}, true},
		{"book transfer leg", funding.NewInflow{Amount: 4, Narration: "rent\nmay", Reference: "01HZZZZZZZZZZZZZZZZZZZZZZ1", Source: funding.SourceBook}, false},
		{"another rail", funding.NewInflow{Amount: 5, Source: "swift"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			if tt.details {
				if _, err := f.led.CreateAccountDetails(ctx, corebank.System(), ledger.NewAccountDetails{AccountID: f.acct.ID}); err != nil {
					t.Fatal(err)
				}
			}
			tt.in.AccountID = f.acct.ID
			in, err := storage.Update(ctx, f.db, func(tx storage.Tx) (*funding.Inflow, error) {
				return f.fund.ReceiveTx(tx, f.clk.Now(), tt.in)
			})
			if err != nil {
				t.Fatal(err)
			}
			if (in.AccountDetailsID != nil) != tt.details {
				t.Fatalf("account_details_id = %v", in.AccountDetailsID)
			}
			got, err := f.fund.GetInflow(ctx, in.ID)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(in, got); diff != "" {
				t.Fatalf("GetInflow (-want +got)\n%s", diff)
			}
			evs := f.events(t, funding.EventInflowCompleted)
			want, _ := json.Marshal(got)
			if len(evs) != 1 || string(evs[0].Object) != string(want) {
				t.Fatalf("inflows.completed = %v, want one carrying %s", evs, want)
			}
			if _, err := f.led.GetEntry(ctx, in.ID); err != nil {
				t.Fatalf("entry %s: %v", in.ID, err)
			}
			if err := f.db.View(ctx, func(tx storage.Tx) error {
				return tx.Scan("funding.inflows", storage.ScanOptions{}, func(k, _ []byte) error {
					t.Errorf("funding record %s stored beside the entry", k)
					return nil
				})
			}); err != nil {
				t.Fatal(err)
			}
		})
	}
	t.Run("not an inflow", func(t *testing.T) {
		f := newFixture(t)
		if _, err := f.fund.CreateInflow(ctx, f.own, funding.NewInflow{AccountID: f.acct.ID, Amount: 10}); err != nil {
			t.Fatal(err)
		}
		other, err := f.led.CreateAccount(ctx, corebank.System(), ledger.NewAccount{
			EntityID: f.acct.EntityID, Type: "checking", Currency: "USD", DisplayName: "Other"})
		if err != nil {
			t.Fatal(err)
		}
		move := func(meta map[string]string) string {
			j, err := f.led.Post(ctx, ledger.Entry{Lines: []ledger.Line{
				{AccountID: f.acct.ID, Side: ledger.Debit, Amount: 1},
				{AccountID: other.ID, Side: ledger.Credit, Amount: 1},
			}, Meta: meta})
			if err != nil {
				t.Fatal(err)
			}
			return j.ID
		}
		for _, id := range []string{move(nil), move(map[string]string{"source": "bank"}), "01HZZZZZZZZZZZZZZZZZZZZZZ9", "x"} {
			if _, err := f.fund.GetInflow(ctx, id); !errors.Is(err, funding.ErrInflowNotFound) {
				t.Errorf("GetInflow(%s) = %v, want ErrInflowNotFound", id, err)
			}
		}
	})
}
