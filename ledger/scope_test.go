package ledger_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/service"
	"github.com/corebank/corebank/storage"
)

// tree is a fixed entity tree: child -> parent.
type tree map[string]string

func (t tree) InTreeTx(_ storage.Tx, ancestor, id string) (bool, error) {
	if _, known := t[id]; !known {
		return false, nil
	}
	for ; id != ""; id = t[id] {
		if id == ancestor {
			return true, nil
		}
	}
	return false, nil
}

// scopeEnv is root -> a -> a1 and root -> b, with a USD account each for
// a, a1 and b, and details on a's and b's.
type scopeEnv struct {
	*env
	acctA, acctA1, acctB *ledger.Account
	detA, detB           *ledger.AccountDetails
}

func newScopeEnv(t *testing.T) *scopeEnv {
	t.Helper()
	e := newEnv(t)
	e.s = ledger.NewService(e.db, &ledger.Options{Deps: service.Deps{Clock: e.clock, Tree: tree{"root": "", "a": "root", "a1": "a", "b": "root"}}})
	se := &scopeEnv{env: e, acctA: e.MustAccount(t, "a", "USD"), acctA1: e.MustAccount(t, "a1", "USD"), acctB: e.MustAccount(t, "b", "USD")}
	se.detA = e.details(t, ledger.NewAccountDetails{AccountID: se.acctA.ID})
	se.detB = e.details(t, ledger.NewAccountDetails{AccountID: se.acctB.ID})
	return se
}

const missingID = "01HZZZZZZZZZZZZZZZZZZZZZZZ"

// sameAs reports whether err answers exactly as want once the IDs in their
// messages are masked: a foreign object must look like a missing one.
func sameAs(err, want error, ids ...string) bool {
	if !errors.Is(err, want) {
		return false
	}
	mask := func(err error) string {
		s := err.Error()
		for _, id := range ids {
			s = strings.ReplaceAll(s, id, "ID")
		}
		return s
	}
	return mask(err) == mask(want)
}

func TestScope(t *testing.T) {
	e := newScopeEnv(t)
	a := corebank.As("a")
	t.Run("OKDownTheTree", func(t *testing.T) {
		if _, err := e.s.GetAccount(ctx, a, "", e.acctA1.ID); err != nil {
			t.Errorf("GetAccount(child's) = %v", err)
		}
		if _, err := e.s.GetAccount(ctx, a, "a1", e.acctA1.ID); err != nil {
			t.Errorf("GetAccount(child's, entity a1) = %v", err)
		}
		if _, err := e.s.CreateAccount(ctx, a, ledger.NewAccount{EntityID: "a1", Type: "checking", Currency: "EUR", DisplayName: "x"}); err != nil {
			t.Errorf("CreateAccount(for child) = %v", err)
		}
		p, err := e.s.ListAccounts(ctx, a, ledger.AccountFilter{}, corebank.ListOptions{})
		if err != nil || len(p.Items) != 1 || p.Items[0].ID != e.acctA.ID || p.Total != 1 {
			t.Errorf("ListAccounts(own) = %+v, %v; want only a's account", p, err)
		}
		if n, err := e.s.CountAccounts(ctx, a, ledger.AccountFilter{EntityID: "a1"}); n != 2 || err != nil {
			t.Errorf("CountAccounts(a1) = %d, %v", n, err)
		}
		if _, err := e.s.GetAccountDetails(ctx, a, "", e.detA.ID); err != nil {
			t.Errorf("GetAccountDetails(own) = %v", err)
		}
	})
	t.Run("ErrAccountNotFound", func(t *testing.T) {
		// Up, across, narrowed away, and the zero caller: each answers as
		// a missing account does.
		for _, c := range []struct {
			name     string
			caller   corebank.Caller
			id, with string
		}{
			{"Across", a, e.acctB.ID, ""},
			{"Up", corebank.As("a1"), e.acctA.ID, ""},
			{"Narrowed", a, e.acctA.ID, "a1"},
			{"Zero", corebank.Caller{}, e.acctA.ID, ""},
		} {
			_, missing := e.s.GetAccount(ctx, c.caller, c.with, missingID)
			checks := map[string]error{}
			_, checks["GetAccount"] = e.s.GetAccount(ctx, c.caller, c.with, c.id)
			_, _, checks["UpdateAccount"] = e.s.UpdateAccount(ctx, c.caller, c.with, c.id, ledger.AccountPatch{DisplayName: new("x")})
			_, checks["DeleteAccount"] = e.s.DeleteAccount(ctx, c.caller, c.with, c.id)
			_, checks["Statement"] = e.s.Statement(ctx, c.caller, c.id, ledger.StatementQuery{Year: 2026, Month: 11, EntityID: c.with})
			_, checks["CreateAccountDetails"] = e.s.CreateAccountDetails(ctx, c.caller, ledger.NewAccountDetails{AccountID: c.id, EntityID: c.with})
			_, checks["ListAccountDetails"] = e.s.ListAccountDetails(ctx, c.caller, ledger.AccountDetailsFilter{AccountID: c.id, EntityID: c.with}, corebank.ListOptions{})
			for name, err := range checks {
				if !sameAs(err, missing, c.id, missingID) {
					t.Errorf("%s: %s = %v; want %v", c.name, name, err, missing)
				}
			}
		}
		a, _ := e.s.GetAccount(ctx, sys, "", e.acctB.ID)
		if _, err := e.s.AccountByServiceBAN(ctx, corebank.As("a"), a.ServiceBAN); !errors.Is(err, ledger.ErrAccountNotFound) {
			t.Errorf("AccountByServiceBAN(foreign) = %v", err)
		}
	})
	t.Run("ErrAccountDetailsNotFound", func(t *testing.T) {
		_, missing := e.s.GetAccountDetails(ctx, a, "", missingID)
		checks := map[string]error{}
		_, checks["GetAccountDetails"] = e.s.GetAccountDetails(ctx, a, "", e.detB.ID)
		_, checks["GetAccountDetailsStats"] = e.s.GetAccountDetailsStats(ctx, a, "", e.detB.ID)
		_, checks["ActivateAccountDetails"] = e.s.ActivateAccountDetails(ctx, a, "", e.detB.ID)
		_, checks["DeleteAccountDetails"] = e.s.DeleteAccountDetails(ctx, a, "", e.detB.ID)
		_, checks["Narrowed"] = e.s.GetAccountDetails(ctx, a, "a1", e.detA.ID)
		for name, err := range checks {
			if !sameAs(err, missing, e.detA.ID, e.detB.ID, missingID) {
				t.Errorf("%s = %v; want %v", name, err, missing)
			}
		}
		if _, err := e.s.AccountDetailsByNumber(ctx, a, e.detB.AccountNumber); !errors.Is(err, ledger.ErrAccountDetailsNotFound) {
			t.Errorf("AccountDetailsByNumber(foreign) = %v", err)
		}
	})
	t.Run("ErrEntityNotFound", func(t *testing.T) {
		// A foreign or unknown entity_id answers entity not found whether
		// the object exists (the caller's own, another tree's) or not.
		for _, with := range []string{"b", "root", "nobody"} {
			checks := map[string]error{}
			for _, id := range []string{e.acctA.ID, e.acctB.ID, missingID} {
				_, checks["GetAccount "+id] = e.s.GetAccount(ctx, a, with, id)
				_, _, checks["UpdateAccount "+id] = e.s.UpdateAccount(ctx, a, with, id, ledger.AccountPatch{DisplayName: new("x")})
				_, checks["DeleteAccount "+id] = e.s.DeleteAccount(ctx, a, with, id)
				_, checks["Statement "+id] = e.s.Statement(ctx, a, id, ledger.StatementQuery{Year: 2026, Month: 11, EntityID: with})
				_, checks["CreateAccountDetails "+id] = e.s.CreateAccountDetails(ctx, a, ledger.NewAccountDetails{AccountID: id, EntityID: with})
				_, checks["ListAccountDetails "+id] = e.s.ListAccountDetails(ctx, a, ledger.AccountDetailsFilter{AccountID: id, EntityID: with}, corebank.ListOptions{})
			}
			for _, id := range []string{e.detA.ID, e.detB.ID, missingID} {
				_, checks["GetAccountDetails "+id] = e.s.GetAccountDetails(ctx, a, with, id)
				_, checks["DeleteAccountDetails "+id] = e.s.DeleteAccountDetails(ctx, a, with, id)
			}
			_, checks["ListAccounts"] = e.s.ListAccounts(ctx, a, ledger.AccountFilter{EntityID: with}, corebank.ListOptions{})
			_, checks["CountAccounts"] = e.s.CountAccounts(ctx, a, ledger.AccountFilter{EntityID: with})
			_, checks["ListAccountDetails"] = e.s.ListAccountDetails(ctx, a, ledger.AccountDetailsFilter{EntityID: with}, corebank.ListOptions{})
			_, checks["CreateAccount"] = e.s.CreateAccount(ctx, a, ledger.NewAccount{EntityID: with, Type: "checking", Currency: "USD", DisplayName: "x"})
			for name, err := range checks {
				if err != corebank.ErrEntityNotFound {
					t.Errorf("entity %s: %s = %v; want corebank.ErrEntityNotFound", with, name, err)
				}
			}
		}
	})
	t.Run("ErrForbidden", func(t *testing.T) {
		ro := corebank.Caller{EntityID: "a", ReadOnly: true}
		checks := map[string]error{}
		_, checks["CreateAccount"] = e.s.CreateAccount(ctx, ro, ledger.NewAccount{Type: "checking", Currency: "USD", DisplayName: "x"})
		_, _, checks["UpdateAccount"] = e.s.UpdateAccount(ctx, ro, "", e.acctA.ID, ledger.AccountPatch{DisplayName: new("x")})
		_, checks["DeleteAccount"] = e.s.DeleteAccount(ctx, ro, "", e.acctA.ID)
		_, checks["CreateAccountDetails"] = e.s.CreateAccountDetails(ctx, ro, ledger.NewAccountDetails{AccountID: e.acctA.ID})
		_, checks["ActivateAccountDetails"] = e.s.ActivateAccountDetails(ctx, ro, "", e.detA.ID)
		_, checks["DeleteAccountDetails"] = e.s.DeleteAccountDetails(ctx, ro, "", e.detA.ID)
		for name, err := range checks {
			if !errors.Is(err, corebank.ErrForbidden) {
				t.Errorf("%s = %v; want corebank.ErrForbidden", name, err)
			}
		}
		if _, err := e.s.GetAccount(ctx, ro, "", e.acctA.ID); err != nil {
			t.Errorf("read-only GetAccount = %v", err)
		}
	})
}

// TestNotFoundSentinels checks that each resource's not-found error is its
// own under errors.Is, while all share the code not_found.
func TestNotFoundSentinels(t *testing.T) {
	all := map[string]*corebank.Error{
		"account":         ledger.ErrAccountNotFound,
		"account details": ledger.ErrAccountDetailsNotFound,
		"hold":            ledger.ErrHoldNotFound,
		"journal entry":   ledger.ErrEntryNotFound,
		"entity":          corebank.ErrEntityNotFound,
	}
	for na, a := range all {
		for nb, b := range all {
			if got := errors.Is(a, b); got != (na == nb) {
				t.Errorf("errors.Is(%s, %s) = %v", na, nb, got)
			}
		}
		if diff := cmp.Diff(na+" not found", a.Message); diff != "" || a.Code != corebank.CodeNotFound {
			t.Errorf("%s: code %s, message (-want +got):\n%s", na, a.Code, diff)
		}
	}
}
