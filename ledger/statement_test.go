package ledger_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/ledger"
)

func i64(v int64) *int64 { return &v }

func TestStatement(t *testing.T) {
	e := newEnv(t)
	oct := time.Date(2026, 10, 15, 12, 0, 0, 0, time.UTC)
	e.clock.Set(oct)
	acct := e.MustAccount(t, "e1", "USD")
	a := acct.ID
	b := e.MustAccount(t, "e2", "USD").ID
	e.MustFund(t, a, "USD", 1000)

	at := func(day, hour int) time.Time { return time.Date(2026, 11, day, hour, 0, 0, 0, time.UTC) }
	e.clock.Set(at(1, 0)) // first instant of November
	fund := e.MustFund(t, a, "USD", 500)
	e.clock.Set(at(3, 10))
	rent, err := e.s.Post(ctx, ledger.Entry{Lines: []ledger.Line{{AccountID: a, Side: ledger.Debit, Amount: 200}, {AccountID: b, Side: ledger.Credit, Amount: 200}}, Narration: "rent", Reference: "r-1"})
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Set(at(5, 10))
	pending, _ := e.s.Hold(ctx, ledger.HoldRequest{DebitAccountID: a, CreditAccountID: b, Amount: 100, Narration: "card", Reference: "c-1"})
	e.clock.Set(at(6, 10))
	partial, _ := e.s.Hold(ctx, ledger.HoldRequest{DebitAccountID: a, CreditAccountID: b, Amount: 50, Narration: "fuel"})
	voided, _ := e.s.Hold(ctx, ledger.HoldRequest{DebitAccountID: a, CreditAccountID: b, Amount: 70})
	e.clock.Set(at(7, 10))
	e.s.PostHold(ctx, partial.ID, 30)
	e.s.VoidHold(ctx, voided.ID)
	e.clock.Set(time.Date(2026, 11, 30, 23, 59, 59, 999e6, time.UTC)) // last instant of November
	last := e.MustFund(t, a, "USD", 1)
	e.clock.Set(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	e.MustFund(t, a, "USD", 7) // December: not on November's statement

	now := time.Date(2026, 12, 2, 8, 0, 0, 0, time.UTC)
	e.clock.Set(now)
	settled := []ledger.StatementTransaction{
		{ID: fund.ID, Created: at(1, 0).UnixMilli(), Type: "credit", Amount: 500, RunningBalance: i64(1500), Status: "completed", Narration: "funding"},
		{ID: rent.ID, Created: at(3, 10).UnixMilli(), Type: "debit", Amount: 200, RunningBalance: i64(1300), Status: "completed", Narration: "rent", Reference: "r-1"},
		{ID: partial.ID, Created: at(7, 10).UnixMilli(), Type: "debit", Amount: 30, RunningBalance: i64(1270), Status: "completed", Narration: "fuel"},
		{ID: last.ID, Created: time.Date(2026, 11, 30, 23, 59, 59, 999e6, time.UTC).UnixMilli(), Type: "credit", Amount: 1, RunningBalance: i64(1271), Status: "completed", Narration: "funding"},
	}
	pendingTx := ledger.StatementTransaction{ID: pending.ID, Created: at(5, 10).UnixMilli(), Type: "debit", Amount: 100, Status: "pending", Narration: "card", Reference: "c-1"}
	want := &ledger.Statement{
		AccountID: a, AccountName: "Main USD", Currency: "USD", ServiceBAN: acct.ServiceBAN,
		EntityID:     acct.EntityID,
		GeneratedAt:  "2026-12-02T08:00:00Z",
		Period:       ledger.StatementPeriod{Start: "2026-11-01", End: "2026-11-30"},
		Summary:      ledger.StatementSummary{OpeningBalance: 1000, ClosingBalance: 1271, TotalCredits: 501, TotalDebits: 230},
		Transactions: settled,
		Pagination:   ledger.StatementPagination{Limit: 20},
	}
	t.Run("OK", func(t *testing.T) {
		got, err := e.s.Statement(ctx, sys, a, ledger.StatementQuery{Year: 2026, Month: 11})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("OKIncludePending", func(t *testing.T) {
		got, err := e.s.Statement(ctx, sys, a, ledger.StatementQuery{Year: 2026, Month: 11, IncludePending: true})
		if err != nil {
			t.Fatal(err)
		}
		w := *want
		w.Transactions = []ledger.StatementTransaction{settled[0], settled[1], pendingTx, settled[2], settled[3]}
		if diff := cmp.Diff(&w, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("OKPages", func(t *testing.T) {
		all := []ledger.StatementTransaction{settled[0], settled[1], pendingTx, settled[2], settled[3]}
		var got []ledger.StatementTransaction
		q := ledger.StatementQuery{Year: 2026, Month: 11, IncludePending: true, ListOptions: corebank.ListOptions{Limit: 2}}
		var pages []*ledger.Statement
		for {
			st, err := e.s.Statement(ctx, sys, a, q)
			if err != nil {
				t.Fatal(err)
			}
			pages = append(pages, st)
			got = append(got, st.Transactions...)
			if st.Pagination.HasPrevious != (len(pages) > 1) {
				t.Errorf("page %d has_previous = %v", len(pages), st.Pagination.HasPrevious)
			}
			if !st.Pagination.HasNext {
				if st.Pagination.NextCursor != nil {
					t.Errorf("next_cursor on last page")
				}
				break
			}
			q.After = *st.Pagination.NextCursor
		}
		if diff := cmp.Diff(all, got); diff != "" || len(pages) != 3 {
			t.Errorf("forward (-want +got):\n%s", diff)
		}
		// Walk back from the last page.
		q.After = ""
		q.Before = *pages[2].Pagination.PreviousCursor
		back, err := e.s.Statement(ctx, sys, a, q)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(pages[1].Transactions, back.Transactions); diff != "" || !back.Pagination.HasNext || !back.Pagination.HasPrevious {
			t.Errorf("backward (-want +got):\n%s %+v", diff, back.Pagination)
		}
		q.Before = *back.Pagination.PreviousCursor
		first, _ := e.s.Statement(ctx, sys, a, q)
		if diff := cmp.Diff(pages[0].Transactions, first.Transactions); diff != "" || first.Pagination.HasPrevious || first.Pagination.PreviousCursor != nil {
			t.Errorf("first (-want +got):\n%s %+v", diff, first.Pagination)
		}
	})
	t.Run("OKPendingResolvedLeaves", func(t *testing.T) {
		if _, err := e.s.PostHold(ctx, pending.ID, 0); err != nil {
			t.Fatal(err)
		}
		got, _ := e.s.Statement(ctx, sys, a, ledger.StatementQuery{Year: 2026, Month: 11, IncludePending: true})
		if diff := cmp.Diff(settled, got.Transactions); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
		dec, _ := e.s.Statement(ctx, sys, a, ledger.StatementQuery{Year: 2026, Month: 12})
		if diff := cmp.Diff(ledger.StatementSummary{OpeningBalance: 1271, ClosingBalance: 1178, TotalCredits: 7, TotalDebits: 100}, dec.Summary); diff != "" {
			t.Errorf("december summary (-want +got):\n%s", diff)
		}
	})
	t.Run("OKEmptyMonth", func(t *testing.T) {
		got, _ := e.s.Statement(ctx, sys, a, ledger.StatementQuery{Year: 2025, Month: 1})
		if diff := cmp.Diff(ledger.StatementSummary{}, got.Summary); diff != "" || len(got.Transactions) != 0 {
			t.Errorf("(-want +got):\n%s", diff)
		}
		got, _ = e.s.Statement(ctx, sys, a, ledger.StatementQuery{Year: 2027, Month: 3})
		if diff := cmp.Diff(ledger.StatementSummary{OpeningBalance: 1178, ClosingBalance: 1178}, got.Summary); diff != "" {
			t.Errorf("future (-want +got):\n%s", diff)
		}
	})
	t.Run("ErrValidation", func(t *testing.T) {
		for _, q := range []ledger.StatementQuery{
			{Year: 2026, Month: 13}, {Year: 1900, Month: 1}, {Year: 2026, Month: 1, ListOptions: corebank.ListOptions{Limit: 500}},
			{Year: 2026, Month: 1, ListOptions: corebank.ListOptions{After: "!!"}},
		} {
			if _, err := e.s.Statement(ctx, sys, a, q); code(err) != corebank.CodeValidation {
				t.Errorf("%+v: err = %v", q, err)
			}
		}
		if _, err := e.s.Statement(ctx, sys, "nope", ledger.StatementQuery{Year: 2026, Month: 1}); code(err) != corebank.CodeNotFound {
			t.Errorf("unknown account: %v", err)
		}
	})
}
