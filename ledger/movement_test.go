package ledger_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/service"
)

// snapshot captures everything a rejected operation must leave untouched.
type snapshot struct {
	Trial    map[string]ledger.Balance
	Balances map[string]ledger.Balance
	Lines    map[string]int
	Events   int
}

func (e *env) snapshot(t *testing.T, accounts ...string) snapshot {
	t.Helper()
	tb, err := e.s.TrialBalance(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s := snapshot{Trial: tb, Balances: map[string]ledger.Balance{}, Lines: map[string]int{}}
	for _, a := range accounts {
		s.Balances[a] = e.MustBalance(t, a)
		e.s.History(ctx, a, nil, func(ledger.HistoryLine) error { s.Lines[a]++; return nil })
	}
	evs, _ := e.s.Events(ctx, "", 1000)
	s.Events = len(evs)
	return s
}

func TestPost(t *testing.T) {
	e := newEnv(t)
	a := e.MustAccount(t, "e1", "USD")
	b := e.MustAccount(t, "e2", "USD")
	g := e.MustAccount(t, "e2", "GBP")
	bank := e.s.SystemAccount("USD", ledger.PurposeClearingBank)
	e.MustFund(t, a.ID, "USD", 1000)
	move := func(key string, amount int64) ledger.Entry {
		return ledger.Entry{Key: key, Lines: []ledger.Line{
			{AccountID: a.ID, Side: ledger.Debit, Amount: amount},
			{AccountID: b.ID, Side: ledger.Credit, Amount: amount},
		}, Narration: "rent"}
	}
	t.Run("OK", func(t *testing.T) {
		j, err := e.s.Post(ctx, move("", 400))
		if err != nil {
			t.Fatal(err)
		}
		if j.Lines[0].Currency != "USD" || j.Created != start.UnixMilli() {
			t.Errorf("entry = %+v", j)
		}
		if diff := cmp.Diff(ledger.Balance{Settled: 600}, e.MustBalance(t, a.ID)); diff != "" {
			t.Errorf("a (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(ledger.Balance{Settled: -1000}, e.MustBalance(t, bank)); diff != "" {
			t.Errorf("bank (-want +got):\n%s", diff)
		}
		got, err := e.s.GetEntry(ctx, j.ID)
		if diff := cmp.Diff(j, got); diff != "" || err != nil {
			t.Errorf("GetEntry (-want +got):\n%s %v", diff, err)
		}
	})
	withID := func(id string, amount int64) ledger.Entry {
		m := move("", amount)
		m.ID = id
		return m
	}
	const mine = "01J0000000000000000000000A"
	t.Run("OKCallerID", func(t *testing.T) {
		j, err := e.s.Post(ctx, withID(mine, 1))
		if err != nil || j.ID != mine {
			t.Fatalf("Post = %+v, %v; want the entry %s", j, err, mine)
		}
		got, err := e.s.GetEntry(ctx, mine)
		if diff := cmp.Diff(j, got); diff != "" || err != nil {
			t.Errorf("GetEntry (-want +got):\n%s %v", diff, err)
		}
	})
	for _, tc := range []struct {
		name   string
		entry  ledger.Entry
		code   string
		fields []string
	}{
		{"ErrValidation", ledger.Entry{Lines: []ledger.Line{{Side: "up", Amount: 0}}}, corebank.CodeValidation,
			[]string{"lines", "lines.0.account_id", "lines.0.amount", "lines.0.side"}},
		{"ErrUnbalancedEntry", ledger.Entry{Lines: []ledger.Line{{AccountID: a.ID, Side: ledger.Debit, Amount: 5}, {AccountID: b.ID, Side: ledger.Credit, Amount: 4}}},
			"unbalanced_entry", []string{"lines"}},
		{"ErrUnbalancedEntryCurrencies", ledger.Entry{Lines: []ledger.Line{{AccountID: a.ID, Side: ledger.Debit, Amount: 5}, {AccountID: g.ID, Side: ledger.Credit, Amount: 5}}},
			"unbalanced_entry", []string{"lines"}},
		{"ErrCurrencyMismatch", ledger.Entry{Lines: []ledger.Line{{AccountID: a.ID, Side: ledger.Debit, Amount: 5, Currency: "GBP"}, {AccountID: g.ID, Side: ledger.Credit, Amount: 5}}},
			"currency_mismatch", []string{"lines.0.currency"}},
		{"ErrAccountNotFound", ledger.Entry{Lines: []ledger.Line{{AccountID: a.ID, Side: ledger.Debit, Amount: 5}, {AccountID: "ghost", Side: ledger.Credit, Amount: 5}}},
			corebank.CodeNotFound, []string{"lines.1.account_id"}},
		{"ErrAccountNotFoundBadSystem", ledger.Entry{Lines: []ledger.Line{{AccountID: a.ID, Side: ledger.Debit, Amount: 5}, {AccountID: e.s.SystemAccount("XXX", "fees"), Side: ledger.Credit, Amount: 5}}},
			corebank.CodeNotFound, []string{"lines.1.account_id"}},
		{"ErrInsufficientFunds", move("", 601), "insufficient_funds", nil},
		{"ErrValidationID", withID("01j0000000000000000000000b", 1), corebank.CodeValidation, []string{"id"}},
		{"ErrValidationIDTaken", withID(mine, 1), corebank.CodeValidation, []string{"id"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := e.snapshot(t, a.ID, b.ID, bank)
			_, err := e.s.Post(ctx, tc.entry)
			if code(err) != tc.code {
				t.Fatalf("err = %v, want code %s", err, tc.code)
			}
			var got []string
			for f := range fields(err) {
				got = append(got, f)
			}
			if diff := cmp.Diff(tc.fields, got, cmpSorted); diff != "" {
				t.Errorf("fields (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, e.snapshot(t, a.ID, b.ID, bank)); diff != "" {
				t.Errorf("state changed (-before +after):\n%s", diff)
			}
		})
	}
	t.Run("OKIdempotentReplay", func(t *testing.T) {
		j1, err := e.s.Post(ctx, move("k1", 100))
		if err != nil {
			t.Fatal(err)
		}
		before := e.snapshot(t, a.ID, b.ID)
		e.clock.Add(time.Minute)
		j2, err := e.s.Post(ctx, move("k1", 100))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(j1, j2); diff != "" {
			t.Errorf("replay (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(before, e.snapshot(t, a.ID, b.ID)); diff != "" {
			t.Errorf("replay wrote (-before +after):\n%s", diff)
		}
	})
	t.Run("ErrIdempotencyKeyReused", func(t *testing.T) {
		m := move("k1", 101)
		m.ID = "01J0000000000000000000000C"
		m.Narration = "other"
		_, err := e.s.Post(ctx, m)
		if !errors.Is(err, ledger.ErrIdempotencyKeyReused) || corebank.KindOf(err) != corebank.KindConflict {
			t.Fatalf("err = %v", err)
		}
		if diff := cmp.Diff(map[string]string{"id": "differs from the original request", "lines": "differs from the original request", "narration": "differs from the original request"}, fields(err)); diff != "" {
			t.Errorf("fields (-want +got):\n%s", diff)
		}
		_, err = e.s.Hold(ctx, ledger.HoldRequest{Key: "k1", DebitAccountID: a.ID, CreditAccountID: b.ID, Amount: 1})
		if !errors.Is(err, ledger.ErrIdempotencyKeyReused) {
			t.Errorf("hold with entry key: %v", err)
		}
	})
	t.Run("ErrGate", func(t *testing.T) {
		e2 := newEnvOn(t, newMemory(t), gate{move: errSuspended})
		x := e2.MustAccount(t, "e", "USD")
		_, err := e2.s.Post(ctx, ledger.Entry{Lines: []ledger.Line{{AccountID: e2.s.SystemAccount("USD", "fees"), Side: ledger.Debit, Amount: 1}, {AccountID: x.ID, Side: ledger.Credit, Amount: 1}}})
		if !errors.Is(err, errSuspended) {
			t.Errorf("err = %v", err)
		}
	})
}

func TestHold(t *testing.T) {
	type step struct {
		name string
		do   func(e *env, a, b string) (*ledger.Hold, error)
		code string
		a, b ledger.Balance // balances after
	}
	hold := func(amount int64) func(e *env, a, b string) (*ledger.Hold, error) {
		return func(e *env, a, b string) (*ledger.Hold, error) {
			return e.s.Hold(ctx, ledger.HoldRequest{DebitAccountID: a, CreditAccountID: b, Amount: amount})
		}
	}
	var last *ledger.Hold
	post := func(amount int64) func(e *env, a, b string) (*ledger.Hold, error) {
		return func(e *env, a, b string) (*ledger.Hold, error) { return e.s.PostHold(ctx, last.ID, amount) }
	}
	void := func(e *env, a, b string) (*ledger.Hold, error) { return e.s.VoidHold(ctx, last.ID) }
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"PostFull", []step{
			{"hold", hold(300), "", ledger.Balance{Settled: 1000, PendingDebits: 300}, ledger.Balance{PendingCredits: 300}},
			{"post", post(0), "", ledger.Balance{Settled: 700}, ledger.Balance{Settled: 300}},
			{"retry", post(0), "", ledger.Balance{Settled: 700}, ledger.Balance{Settled: 300}},
			{"post other amount", post(5), "hold_not_pending", ledger.Balance{Settled: 700}, ledger.Balance{Settled: 300}},
			{"void posted", void, "hold_not_pending", ledger.Balance{Settled: 700}, ledger.Balance{Settled: 300}},
		}},
		{"PostPartial", []step{
			{"hold", hold(300), "", ledger.Balance{Settled: 1000, PendingDebits: 300}, ledger.Balance{PendingCredits: 300}},
			{"too much", post(301), corebank.CodeValidation, ledger.Balance{Settled: 1000, PendingDebits: 300}, ledger.Balance{PendingCredits: 300}},
			{"post", post(120), "", ledger.Balance{Settled: 880}, ledger.Balance{Settled: 120}},
		}},
		{"Void", []step{
			{"hold", hold(1000), "", ledger.Balance{Settled: 1000, PendingDebits: 1000}, ledger.Balance{PendingCredits: 1000}},
			{"second hold", hold(1), "insufficient_funds", ledger.Balance{Settled: 1000, PendingDebits: 1000}, ledger.Balance{PendingCredits: 1000}},
			{"void", void, "", ledger.Balance{Settled: 1000}, ledger.Balance{}},
			{"void again", void, "", ledger.Balance{Settled: 1000}, ledger.Balance{}},
			{"post voided", post(0), "hold_not_pending", ledger.Balance{Settled: 1000}, ledger.Balance{}},
		}},
		{"ErrInsufficientFunds", []step{
			{"hold", hold(1001), "insufficient_funds", ledger.Balance{Settled: 1000}, ledger.Balance{}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			a, b := e.MustAccount(t, "e1", "USD").ID, e.MustAccount(t, "e2", "USD").ID
			e.MustFund(t, a, "USD", 1000)
			for _, st := range tc.steps {
				before := e.snapshot(t, a, b)
				h, err := st.do(e, a, b)
				if code(err) != st.code {
					t.Fatalf("%s: err = %v, want %q", st.name, err, st.code)
				}
				if err == nil {
					last = h
				} else if diff := cmp.Diff(before, e.snapshot(t, a, b)); diff != "" {
					t.Errorf("%s: failed step wrote (-before +after):\n%s", st.name, diff)
				}
				if diff := cmp.Diff(st.a, e.MustBalance(t, a)); diff != "" {
					t.Errorf("%s: debit account (-want +got):\n%s", st.name, diff)
				}
				if diff := cmp.Diff(st.b, e.MustBalance(t, b)); diff != "" {
					t.Errorf("%s: credit account (-want +got):\n%s", st.name, diff)
				}
			}
		})
	}
	t.Run("ErrValidation", func(t *testing.T) {
		e := newEnv(t)
		_, err := e.s.Hold(ctx, ledger.HoldRequest{DebitAccountID: "x", CreditAccountID: "x", Amount: -1, Timeout: -1, OnTimeout: "explode"})
		var got []string
		for f := range fields(err) {
			got = append(got, f)
		}
		if diff := cmp.Diff([]string{"amount", "credit_account_id", "on_timeout", "timeout"}, got, cmpSorted); diff != "" {
			t.Errorf("fields (-want +got):\n%s", diff)
		}
	})
	t.Run("ErrCurrencyMismatch", func(t *testing.T) {
		e := newEnv(t)
		a, g := e.MustAccount(t, "e1", "USD").ID, e.MustAccount(t, "e1", "GBP").ID
		if _, err := e.s.Hold(ctx, ledger.HoldRequest{DebitAccountID: a, CreditAccountID: g, Amount: 1}); !errors.Is(err, ledger.ErrCurrencyMismatch) {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("ErrHoldNotFound", func(t *testing.T) {
		e := newEnv(t)
		if _, err := e.s.PostHold(ctx, "nope", 0); !errors.Is(err, ledger.ErrHoldNotFound) {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("OKIdempotentReplay", func(t *testing.T) {
		e := newEnv(t)
		a, b := e.MustAccount(t, "e1", "USD").ID, e.MustAccount(t, "e2", "USD").ID
		e.MustFund(t, a, "USD", 1000)
		req := ledger.HoldRequest{Key: "h1", DebitAccountID: a, CreditAccountID: b, Amount: 600, Timeout: time.Minute}
		h1, err := e.s.Hold(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		h2, err := e.s.Hold(ctx, req) // would be insufficient if applied twice
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(h1, h2); diff != "" {
			t.Errorf("replay (-want +got):\n%s", diff)
		}
		req.Amount, req.Timeout = 5, 0
		_, err = e.s.Hold(ctx, req)
		if diff := cmp.Diff(map[string]string{"amount": "differs from the original request", "timeout": "differs from the original request"}, fields(err)); diff != "" || !errors.Is(err, ledger.ErrIdempotencyKeyReused) {
			t.Errorf("conflict %v (-want +got):\n%s", err, diff)
		}
	})
}

func TestRunDue(t *testing.T) {
	e := newEnv(t)
	a, b := e.MustAccount(t, "e1", "USD").ID, e.MustAccount(t, "e2", "USD").ID
	bank := e.s.SystemAccount("USD", ledger.PurposeClearingBank)
	e.MustFund(t, a, "USD", 1000)
	voidMe, err := e.s.Hold(ctx, ledger.HoldRequest{DebitAccountID: a, CreditAccountID: b, Amount: 100, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	inflow, err := e.s.Hold(ctx, ledger.HoldRequest{DebitAccountID: bank, CreditAccountID: b, Amount: 50, Timeout: 60 * time.Second, OnTimeout: ledger.TimeoutPost})
	if err != nil {
		t.Fatal(err)
	}
	postedEarly, err := e.s.Hold(ctx, ledger.HoldRequest{DebitAccountID: a, CreditAccountID: b, Amount: 10, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.PostHold(ctx, postedEarly.ID, 0); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(ledger.Balance{Settled: 10, PendingCredits: 150}, e.MustBalance(t, b)); diff != "" {
		t.Errorf("b before (-want +got):\n%s", diff)
	}
	for _, st := range []struct {
		advance time.Duration
		n       int
		a, b    ledger.Balance
	}{
		{29 * time.Second, 0, ledger.Balance{Settled: 990, PendingDebits: 100}, ledger.Balance{Settled: 10, PendingCredits: 150}},
		{time.Second, 1, ledger.Balance{Settled: 990}, ledger.Balance{Settled: 10, PendingCredits: 50}},
		{29 * time.Second, 0, ledger.Balance{Settled: 990}, ledger.Balance{Settled: 10, PendingCredits: 50}},
		{time.Second, 1, ledger.Balance{Settled: 990}, ledger.Balance{Settled: 60}},
		{time.Hour, 0, ledger.Balance{Settled: 990}, ledger.Balance{Settled: 60}},
	} {
		e.clock.Add(st.advance)
		n, err := e.s.RunDue(ctx, e.clock.Now())
		if err != nil || n != st.n {
			t.Fatalf("after %v: RunDue = %d, %v; want %d", st.advance, n, err, st.n)
		}
		if diff := cmp.Diff(st.a, e.MustBalance(t, a)); diff != "" {
			t.Errorf("a (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(st.b, e.MustBalance(t, b)); diff != "" {
			t.Errorf("b (-want +got):\n%s", diff)
		}
	}
	for id, want := range map[string]ledger.HoldStatus{voidMe.ID: ledger.HoldExpired, inflow.ID: ledger.HoldPosted, postedEarly.ID: ledger.HoldPosted} {
		h, err := e.s.GetHold(ctx, id)
		if err != nil || h.Status != want {
			t.Errorf("hold %s = %+v, %v; want %s", id, h, err, want)
		}
	}
	if _, err := e.s.VoidHold(ctx, voidMe.ID); !errors.Is(err, ledger.ErrHoldNotPending) {
		t.Errorf("void expired: %v", err)
	}
}

func TestRunDueBatches(t *testing.T) {
	db := newMemory(t)
	e := newEnvOn(t, db, nil)
	e.s = ledger.NewService(db, &ledger.Options{Deps: service.Deps{Clock: e.clock}, DueBatch: 3})
	a := e.MustAccount(t, "e1", "USD").ID
	bank := e.s.SystemAccount("USD", ledger.PurposeClearingBank)
	for range 10 {
		if _, err := e.s.Hold(ctx, ledger.HoldRequest{DebitAccountID: bank, CreditAccountID: a, Amount: 7, Timeout: time.Second, OnTimeout: ledger.TimeoutPost}); err != nil {
			t.Fatal(err)
		}
	}
	e.clock.Add(time.Second)
	n, err := e.s.RunDue(ctx, e.clock.Now())
	if n != 10 || err != nil {
		t.Fatalf("RunDue = %d, %v", n, err)
	}
	if diff := cmp.Diff(ledger.Balance{Settled: 70}, e.MustBalance(t, a)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestBalanceAt(t *testing.T) {
	e := newEnv(t)
	a, b := e.MustAccount(t, "e1", "USD").ID, e.MustAccount(t, "e2", "USD").ID
	t0 := e.clock.Now()
	e.clock.Add(time.Second)
	e.MustFund(t, a, "USD", 500) // t0+1s
	e.clock.Add(time.Second)
	h, _ := e.s.Hold(ctx, ledger.HoldRequest{DebitAccountID: a, CreditAccountID: b, Amount: 200}) // t0+2s
	e.clock.Add(time.Second)
	if _, err := e.s.PostHold(ctx, h.ID, 150); err != nil { // t0+3s
		t.Fatal(err)
	}
	for _, tc := range []struct {
		at   time.Duration
		a, b ledger.Balance
	}{
		{-time.Hour, ledger.Balance{}, ledger.Balance{}},
		{0, ledger.Balance{}, ledger.Balance{}},
		{time.Second - time.Millisecond, ledger.Balance{}, ledger.Balance{}},
		{time.Second, ledger.Balance{Settled: 500}, ledger.Balance{}},
		{2*time.Second + 500*time.Millisecond, ledger.Balance{Settled: 500, PendingDebits: 200}, ledger.Balance{PendingCredits: 200}},
		{3 * time.Second, ledger.Balance{Settled: 350}, ledger.Balance{Settled: 150}},
		{time.Hour, ledger.Balance{Settled: 350}, ledger.Balance{Settled: 150}},
	} {
		for acct, want := range map[string]ledger.Balance{a: tc.a, b: tc.b} {
			got, err := e.s.BalanceAt(ctx, acct, t0.Add(tc.at))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("at t0%+v (-want +got):\n%s", tc.at, diff)
			}
		}
	}
	if _, err := e.s.BalanceAt(ctx, "nope", t0); !errors.Is(err, ledger.ErrAccountNotFound) {
		t.Errorf("err = %v", err)
	}
}

func TestEventsOrder(t *testing.T) {
	e := newEnv(t)
	var want []string
	for i := range 5 {
		a := e.MustAccount(t, "e1", "USD")
		want = append(want, ledger.EventAccountCreated+" "+a.ID)
		if i%2 == 0 {
			e.s.UpdateAccount(ctx, sys, "", a.ID, ledger.AccountPatch{DisplayName: new("renamed")})
			want = append(want, ledger.EventAccountUpdated+" "+a.ID)
		}
	}
	// Events appended by a composing caller in the same tx as its change.
	if err := e.db.Update(ctx, func(tx storageTx) error {
		_, err := e.s.AppendEventTx(tx, e.clock.Now(), "custom.happened", "e1", map[string]string{"id": "x"})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	want = append(want, "custom.happened x")
	var got []string
	var after string
	for {
		evs, err := e.s.Events(ctx, after, 3)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) == 0 {
			break
		}
		for _, ev := range evs {
			if ev.ID <= after {
				t.Fatalf("event %s after %s", ev.ID, after)
			}
			after = ev.ID
			var obj struct{ ID string }
			if err := jsonUnmarshal(ev.Object, &obj); err != nil {
				t.Fatal(err)
			}
			got = append(got, ev.Type+" "+obj.ID)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestRunDueOrder checks DueJobs' documented order (hold timeouts before
// account details expiry) and that one RunDue does both kinds.
func TestRunDueOrder(t *testing.T) {
	e := newEnv(t)
	var kinds []string
	for _, j := range e.s.DueJobs() {
		kinds = append(kinds, j.Kind)
	}
	if diff := cmp.Diff([]string{"ledger.hold", "ledger.details", "ledger.fold"}, kinds); diff != "" {
		t.Errorf("DueJobs kinds (-want +got):\n%s", diff)
	}

	a := e.MustAccount(t, "e1", "USD")
	bank := e.s.SystemAccount("USD", ledger.PurposeClearingBank)
	days := 1
	if _, err := e.s.CreateAccountDetails(ctx, sys, ledger.NewAccountDetails{AccountID: a.ID, TerminateAfter: &days}); err != nil {
		t.Fatal(err)
	}
	e.clock.Add(time.Hour)
	if _, err := e.s.Hold(ctx, ledger.HoldRequest{DebitAccountID: bank, CreditAccountID: a.ID, Amount: 5, Timeout: time.Hour, OnTimeout: ledger.TimeoutPost}); err != nil {
		t.Fatal(err)
	}
	before, err := e.s.Events(ctx, "", 1000)
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Add(48 * time.Hour)
	if n, err := e.s.RunDue(ctx, e.clock.Now()); n != 2 || err != nil {
		t.Fatalf("RunDue = %d, %v; want 2", n, err)
	}
	if diff := cmp.Diff(ledger.Balance{Settled: 5}, e.MustBalance(t, a.ID)); diff != "" {
		t.Errorf("balance (-want +got):\n%s", diff)
	}
	after, err := e.s.Events(ctx, before[len(before)-1].ID, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, ev := range after {
		types = append(types, ev.Type)
	}
	// Posting a hold appends no event; the details' expiry appends one.
	if diff := cmp.Diff([]string{ledger.EventAccountDetailsUpdated}, types); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}
