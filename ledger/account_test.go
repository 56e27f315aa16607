package ledger_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/storage"
)

func TestCreateAccount(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		e := newEnv(t)
		a, err := e.s.CreateAccount(ctx, sys, ledger.NewAccount{EntityID: "ent1", Type: "checking", Currency: "USD", DisplayName: "Ops", Meta: map[string]string{"k": "v"}})
		if err != nil {
			t.Fatal(err)
		}
		if !a.IsDefault || a.Deleted != 0 || a.Created != start.UnixMilli() || a.Updated != a.Created {
			t.Errorf("account = %+v", a)
		}
		if !ledger.ValidServiceBAN(a.ServiceBAN) || len(a.ServiceBAN) != 10 {
			t.Errorf("service_ban %q is not a 10-digit checked number", a.ServiceBAN)
		}
		if a.ID == "" || !strings.HasPrefix(a.BalanceID, "bal_") {
			t.Errorf("id %q balance_id %q", a.ID, a.BalanceID)
		}
		raw, _ := json.Marshal(a)
		var m map[string]any
		json.Unmarshal(raw, &m)
		for _, f := range []string{"id", "entity_id", "type", "currency", "display_name", "service_ban", "balance", "meta", "deleted", "created", "updated", "is_default", "balance_id", "configuration", "stablecoin_balance", "maintenance_fee_exempt", "internal_metadata"} {
			if _, ok := m[f]; !ok {
				t.Errorf("JSON lacks %q: %s", f, raw)
			}
		}
		if diff := cmp.Diff(map[string]any{"available": 0.0, "current": 0.0}, m["balance"]); diff != "" {
			t.Errorf("balance (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(map[string]any{}, m["stablecoin_balance"]); diff != "" {
			t.Errorf("fiat stablecoin_balance (-want +got):\n%s", diff)
		}
		b, err := e.s.CreateAccount(ctx, sys, ledger.NewAccount{EntityID: "ent1", Type: "safeguard", Currency: "USC", DisplayName: "Coins"})
		if err != nil {
			t.Fatal(err)
		}
		if b.IsDefault || b.StablecoinBalance.Decimals != 6 || b.ServiceBAN == a.ServiceBAN {
			t.Errorf("second account = %+v", b)
		}
		got, err := e.s.AccountByServiceBAN(ctx, sys, b.ServiceBAN)
		if err != nil || got.ID != b.ID {
			t.Errorf("AccountByServiceBAN = %v, %v", got, err)
		}
		evs, err := e.s.Events(ctx, "", 10)
		if err != nil || len(evs) != 2 || evs[0].Type != ledger.EventAccountCreated || evs[0].EntityID != "ent1" {
			t.Fatalf("events = %+v, %v", evs, err)
		}
		var obj ledger.Account
		json.Unmarshal(evs[1].Object, &obj)
		if diff := cmp.Diff(*b, obj); diff != "" {
			t.Errorf("event object (-want +got):\n%s", diff)
		}
	})
	for _, tc := range []struct {
		name string
		in   ledger.NewAccount
		want []string
	}{
		{"ErrEmpty", ledger.NewAccount{}, []string{"currency", "display_name", "entity_id", "type"}},
		{"ErrValues", ledger.NewAccount{EntityID: "e", Type: "savings", Currency: "XXX", DisplayName: strings.Repeat("x", 101)}, []string{"currency", "display_name", "type"}},
		{"ErrBlankName", ledger.NewAccount{EntityID: "e", Type: "debit", Currency: "GBP", DisplayName: "  "}, []string{"display_name"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			_, err := e.s.CreateAccount(ctx, sys, tc.in)
			if code(err) != corebank.CodeValidation {
				t.Fatalf("err = %v", err)
			}
			var got []string
			for f := range fields(err) {
				got = append(got, f)
			}
			if diff := cmp.Diff(tc.want, got, cmpSorted); diff != "" {
				t.Errorf("fields (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("OK100Runes", func(t *testing.T) {
		e := newEnv(t)
		if _, err := e.s.CreateAccount(ctx, sys, ledger.NewAccount{EntityID: "e", Type: "debit", Currency: "CAD", DisplayName: strings.Repeat("é", 100)}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("ErrGate", func(t *testing.T) {
		e := newEnvOn(t, newMemory(t), gate{open: errNotApproved})
		_, err := e.s.CreateAccount(ctx, sys, ledger.NewAccount{EntityID: "e", Type: "debit", Currency: "USD", DisplayName: "x"})
		if !errors.Is(err, errNotApproved) {
			t.Fatalf("err = %v", err)
		}
		if n, _ := e.s.CountAccounts(ctx, sys, ledger.AccountFilter{}); n != 0 {
			t.Errorf("count = %d after veto", n)
		}
	})
}

var errNotApproved = corebank.E(corebank.KindRejected, "entity_not_approved", "no")
var errSuspended = corebank.E(corebank.KindRejected, "entity_suspended", "no")

type gate struct{ open, move error }

func (g gate) CanOpenAccount(storage.Tx, string) error { return g.open }
func (g gate) CanMoveMoney(storage.Tx, string) error   { return g.move }

var cmpSorted = cmp.Transformer("sort", func(in []string) []string {
	out := append([]string(nil), in...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
})

func TestGetAccount(t *testing.T) {
	e := newEnv(t)
	a := e.MustAccount(t, "e1", "EUR")
	t.Run("OK", func(t *testing.T) {
		got, err := e.s.GetAccount(ctx, sys, "", a.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(a, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("ErrAccountNotFound", func(t *testing.T) {
		for _, id := range []string{"nope", "", "a/b", e.s.SystemAccount("USD", "fees")} {
			_, err := e.s.GetAccount(ctx, sys, "", id)
			if !errors.Is(err, ledger.ErrAccountNotFound) || corebank.KindOf(err) != corebank.KindNotFound {
				t.Errorf("GetAccount(%q) err = %v", id, err)
			}
		}
		if _, err := e.s.AccountByServiceBAN(ctx, sys, "1234567890"); !errors.Is(err, ledger.ErrAccountNotFound) {
			t.Errorf("AccountByServiceBAN err = %v", err)
		}
	})
}

func ids(p *corebank.Page[ledger.Account]) []string {
	var out []string
	for _, a := range p.Items {
		out = append(out, a.ID)
	}
	return out
}

func TestListAccounts(t *testing.T) {
	e := newEnv(t)
	var all, e1, e1usd []string
	for i := range 12 {
		ent := []string{"e1", "e2"}[i%2]
		cur := []string{"USD", "USD", "GBP"}[i%3]
		a, err := e.s.CreateAccount(ctx, sys, ledger.NewAccount{EntityID: ent, Type: []string{"checking", "debit"}[i%4/2], Currency: cur, DisplayName: "a"})
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, a.ID)
		if ent == "e1" {
			e1 = append(e1, a.ID)
			if cur == "USD" {
				e1usd = append(e1usd, a.ID)
			}
		}
	}
	t.Run("OKFilters", func(t *testing.T) {
		for _, tc := range []struct {
			f    ledger.AccountFilter
			want []string
		}{
			{ledger.AccountFilter{}, all},
			{ledger.AccountFilter{EntityID: "e1"}, e1},
			{ledger.AccountFilter{EntityID: "e1", Currency: "USD"}, e1usd},
			{ledger.AccountFilter{EntityID: "e3"}, nil},
		} {
			p, err := e.s.ListAccounts(ctx, sys, tc.f, corebank.ListOptions{Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, ids(p)); diff != "" {
				t.Errorf("%+v (-want +got):\n%s", tc.f, diff)
			}
			if p.Total != int64(len(tc.want)) || p.HasNext || p.HasPrevious {
				t.Errorf("%+v: total %d next %v prev %v", tc.f, p.Total, p.HasNext, p.HasPrevious)
			}
		}
	})
	t.Run("OKPages", func(t *testing.T) {
		p1, err := e.s.ListAccounts(ctx, sys, ledger.AccountFilter{}, corebank.ListOptions{Limit: 5})
		if err != nil {
			t.Fatal(err)
		}
		p2, _ := e.s.ListAccounts(ctx, sys, ledger.AccountFilter{}, corebank.ListOptions{Limit: 5, After: p1.Next})
		p3, _ := e.s.ListAccounts(ctx, sys, ledger.AccountFilter{}, corebank.ListOptions{Limit: 5, After: p2.Next})
		if diff := cmp.Diff(all, append(append(ids(p1), ids(p2)...), ids(p3)...)); diff != "" {
			t.Errorf("forward (-want +got):\n%s", diff)
		}
		if !p1.HasNext || p1.HasPrevious || !p2.HasNext || !p2.HasPrevious || p3.HasNext || !p3.HasPrevious || p3.Next != "" {
			t.Errorf("flags: %v %v / %v %v / %v %v", p1.HasNext, p1.HasPrevious, p2.HasNext, p2.HasPrevious, p3.HasNext, p3.HasPrevious)
		}
		back, _ := e.s.ListAccounts(ctx, sys, ledger.AccountFilter{}, corebank.ListOptions{Limit: 5, Before: p3.Previous})
		if diff := cmp.Diff(ids(p2), ids(back)); diff != "" || !back.HasNext || !back.HasPrevious {
			t.Errorf("backward (-want +got):\n%s next %v prev %v", diff, back.HasNext, back.HasPrevious)
		}
		first, _ := e.s.ListAccounts(ctx, sys, ledger.AccountFilter{}, corebank.ListOptions{Limit: 5, Before: back.Previous})
		if diff := cmp.Diff(ids(p1), ids(first)); diff != "" || first.HasPrevious || first.Previous != "" {
			t.Errorf("first page back (-want +got):\n%s prev %v", diff, first.HasPrevious)
		}
	})
	t.Run("ErrValidation", func(t *testing.T) {
		for _, o := range []corebank.ListOptions{{Limit: 101}, {Limit: -1}, {After: "a/b"}, {After: "x", Before: "y"}} {
			if _, err := e.s.ListAccounts(ctx, sys, ledger.AccountFilter{}, o); code(err) != corebank.CodeValidation {
				t.Errorf("%+v: err = %v", o, err)
			}
		}
	})
}

func TestUpdateAccount(t *testing.T) {
	e := newEnv(t)
	a := e.MustAccount(t, "e1", "USD")
	t.Run("OK", func(t *testing.T) {
		e.clock.Add(time.Second)
		got, ch, err := e.s.UpdateAccount(ctx, sys, "", a.ID, ledger.AccountPatch{DisplayName: new("Renamed")})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(&ledger.AccountChange{Field: "display_name", From: "Main USD", To: "Renamed"}, ch); diff != "" {
			t.Errorf("change (-want +got):\n%s", diff)
		}
		if got.DisplayName != "Renamed" || got.Updated == a.Updated {
			t.Errorf("account = %+v", got)
		}
		all, _ := e.s.Events(ctx, "", 10)
		evs, _ := e.s.Events(ctx, all[0].ID, 10)
		if len(evs) != 1 || evs[0].Type != ledger.EventAccountUpdated {
			t.Errorf("events = %+v", evs)
		}
	})
	t.Run("ErrValidation", func(t *testing.T) {
		_, _, err := e.s.UpdateAccount(ctx, sys, "", a.ID, ledger.AccountPatch{DisplayName: new("")})
		if code(err) != corebank.CodeValidation || fields(err)["display_name"] == "" {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("ErrAccountNotFound", func(t *testing.T) {
		if _, _, err := e.s.UpdateAccount(ctx, sys, "", "nope", ledger.AccountPatch{DisplayName: new("x")}); !errors.Is(err, ledger.ErrAccountNotFound) {
			t.Errorf("err = %v", err)
		}
	})
}

func TestDeleteAccount(t *testing.T) {
	e := newEnv(t)
	a := e.MustAccount(t, "e1", "USD")
	b := e.MustAccount(t, "e1", "USD")
	t.Run("ErrAccountNotEmptyBalance", func(t *testing.T) {
		e.MustFund(t, a.ID, "USD", 100)
		if _, err := e.s.DeleteAccount(ctx, sys, "", a.ID); !errors.Is(err, ledger.ErrAccountNotEmpty) || corebank.KindOf(err) != corebank.KindRejected {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("ErrAccountNotEmptyPendingCredit", func(t *testing.T) {
		h, err := e.s.Hold(ctx, ledger.HoldRequest{DebitAccountID: a.ID, CreditAccountID: b.ID, Amount: 100})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.s.DeleteAccount(ctx, sys, "", b.ID); !errors.Is(err, ledger.ErrAccountNotEmpty) {
			t.Fatalf("err = %v", err)
		}
		if _, err := e.s.VoidHold(ctx, h.ID); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("OK", func(t *testing.T) {
		e.clock.Add(5 * time.Second)
		got, err := e.s.DeleteAccount(ctx, sys, "", b.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Deleted != e.clock.Now().UnixMilli() {
			t.Errorf("deleted = %d", got.Deleted)
		}
		again, err := e.s.GetAccount(ctx, sys, "", b.ID)
		if err != nil || again.Deleted != got.Deleted {
			t.Errorf("GetAccount after delete = %+v, %v", again, err)
		}
		p, _ := e.s.ListAccounts(ctx, sys, ledger.AccountFilter{EntityID: "e1"}, corebank.ListOptions{})
		if diff := cmp.Diff([]string{a.ID}, ids(p)); diff != "" || p.Total != 1 {
			t.Errorf("list after delete (-want +got):\n%s total %d", diff, p.Total)
		}
		if _, err := e.s.DeleteAccount(ctx, sys, "", b.ID); err != nil {
			t.Errorf("second delete: %v", err)
		}
		evs, _ := e.s.Events(ctx, "", 100)
		if last := evs[len(evs)-1]; last.Type != ledger.EventAccountDeleted || len(evs) != 3 {
			t.Errorf("events: %d, last %s", len(evs), last.Type)
		}
	})
	t.Run("ErrAccountDeleted", func(t *testing.T) {
		_, err := e.s.Hold(ctx, ledger.HoldRequest{DebitAccountID: a.ID, CreditAccountID: b.ID, Amount: 1})
		// A refusal of state names the account in its message, not as a
		// request field (callers name their own fields).
		if !errors.Is(err, ledger.ErrAccountDeleted) || !strings.Contains(err.Error(), b.ID) || len(fields(err)) != 0 {
			t.Errorf("hold to deleted: %v", err)
		}
		if _, _, err := e.s.UpdateAccount(ctx, sys, "", b.ID, ledger.AccountPatch{DisplayName: new("x")}); !errors.Is(err, ledger.ErrAccountDeleted) {
			t.Errorf("rename deleted: %v", err)
		}
	})
}
