package payments_test

import (
	"errors"
	"testing"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/payments"
	"github.com/corebank/corebank/service"
	"github.com/corebank/corebank/storage"
)

// parents is a scope.Tree over a fixed child -> parent map.
type parents map[string]string

func (p parents) InTreeTx(_ storage.Tx, ancestorID, id string) (bool, error) {
	for {
		if id == ancestorID {
			return true, nil
		}
		up, ok := p[id]
		if !ok {
			return id == ancestorID && id != "", nil
		}
		id = up
	}
}

// tree: root -> ent1 -> child, root -> ent2. ghost exists in no tree.
var tree = parents{"ent1": "root", "child": "ent1", "ent2": "root", "root": ""}

// TestScopeSentinelsDistinct: each resource's not-found error is its own
// under errors.Is, while all answer code not_found.
func TestScopeSentinelsDistinct(t *testing.T) {
	all := []error{payments.ErrCounterpartyNotFound, payments.ErrPaymentDetailNotFound,
		payments.ErrQuoteNotFound, payments.ErrTransferNotFound, payments.ErrAccountNotFound, corebank.ErrEntityNotFound}
	for i, a := range all {
		if corebank.KindOf(a) != corebank.KindNotFound || errCode(a) != corebank.CodeNotFound {
			t.Errorf("%v is not a not_found error", a)
		}
		for j, b := range all {
			if got := errors.Is(a, b); got != (i == j) {
				t.Errorf("errors.Is(%v, %v) = %v", a, b, got)
			}
		}
	}
	if !errors.Is(payments.ErrPaymentDetailNotFound.With("payment detail X not found"), payments.ErrPaymentDetailNotFound) {
		t.Error("a copy with a message is not its sentinel")
	}
}

// scopeEnv has, over the tree above, a funded USD account, a counterparty
// with a detail, a quote and a transfer for each of ent1, child and ent2.
type scopeEnv struct {
	*env
	objs map[string]scopeObjs
}

type scopeObjs struct{ account, cp, pd, quote, transfer string }

func newScopeEnv(t *testing.T) *scopeEnv {
	t.Helper()
	e := &scopeEnv{env: newEnv(t, openMemory(t), &payments.Options{Deps: service.Deps{Tree: tree}}), objs: map[string]scopeObjs{}}
	for _, ent := range []string{"ent1", "child", "ent2"} {
		a, d := setupFor(t, e.env, ent)
		q, err := e.svc.CreateQuote(ctx, corebank.As(ent), payments.NewQuote{FromCurrency: "USD", ToCurrency: "EUR", AmountFrom: 1000})
		if err != nil {
			t.Fatal(err)
		}
		tr, err := e.svc.CreateTransfer(ctx, corebank.As(ent), newTransfer(a, d, 100, "s-"+ent))
		if err != nil {
			t.Fatal(err)
		}
		e.objs[ent] = scopeObjs{a.ID, d.CounterpartyID, d.ID, q.ID, tr.ID}
	}
	return e
}

func setupFor(t *testing.T, e *env, ent string) (*ledger.Account, *payments.PaymentDetail) {
	t.Helper()
	acct := e.account(t, ent, "USD")
	e.fund(t, acct, 100_000)
	cp := e.counterparty(t, ent)
	return acct, e.detail(t, ent, achDetail(cp.ID))
}

// getters reads each kind of object as caller with entity_id entityID.
func (e *scopeEnv) getters(caller corebank.Caller, entityID string) map[string]func(id string) error {
	return map[string]func(string) error{
		"transfer": func(id string) error {
			_, err := e.svc.GetTransfer(ctx, caller, entityID, id)
			return err
		},
		"counterparty": func(id string) error {
			_, err := e.svc.GetCounterparty(ctx, caller, entityID, id)
			return err
		},
		"payment detail": func(id string) error {
			_, err := e.svc.GetPaymentDetail(ctx, caller, entityID, id)
			return err
		},
		"fx quote": func(id string) error {
			_, err := e.svc.GetQuote(ctx, caller, entityID, id)
			return err
		},
	}
}

func (o scopeObjs) id(kind string) string {
	return map[string]string{"transfer": o.transfer, "counterparty": o.cp, "payment detail": o.pd, "fx quote": o.quote}[kind]
}

var notFoundOf = map[string]error{"transfer": payments.ErrTransferNotFound, "counterparty": payments.ErrCounterpartyNotFound,
	"payment detail": payments.ErrPaymentDetailNotFound, "fx quote": payments.ErrQuoteNotFound}

func TestScopeReads(t *testing.T) {
	e := newScopeEnv(t)
	const missing = "01HZZZZZZZZZZZZZZZZZZZZZZZ"
	cases := []struct {
		name     string
		caller   corebank.Caller
		entityID string
		owner    string
		want     error // nil: found
	}{
		{"own", corebank.As("ent1"), "", "ent1", nil},
		{"own with entity_id", corebank.As("ent1"), "ent1", "ent1", nil},
		{"parent reads child", corebank.As("ent1"), "", "child", nil},
		{"parent names child", corebank.As("ent1"), "child", "child", nil},
		{"root reads grandchild", corebank.As("root"), "", "child", nil},
		{"system reads any", corebank.System(), "", "ent2", nil},
		{"system names the owner", corebank.System(), "ent2", "ent2", nil},
		{"read-only reads", corebank.Caller{EntityID: "ent1", ReadOnly: true}, "", "ent1", nil},
		{"child reads parent", corebank.As("child"), "", "ent1", errKind},
		{"sibling", corebank.As("ent2"), "", "ent1", errKind},
		{"zero caller", corebank.Caller{}, "", "ent1", errKind},
		{"entity_id narrows", corebank.As("ent1"), "child", "ent1", errKind},
		{"system, other entity", corebank.System(), "ent2", "ent1", errKind},
		{"foreign entity_id", corebank.As("ent2"), "ent1", "ent1", corebank.ErrEntityNotFound},
		{"unknown entity_id", corebank.As("ent1"), "ghost", "ent1", corebank.ErrEntityNotFound},
		{"entity_id up the tree", corebank.As("child"), "ent1", "child", corebank.ErrEntityNotFound},
	}
	for _, c := range cases {
		for kind, get := range e.getters(c.caller, c.entityID) {
			err := get(e.objs[c.owner].id(kind))
			gone := get(missing)
			want := c.want
			if want == errKind {
				want = notFoundOf[kind]
			}
			switch {
			case want == nil && err != nil:
				t.Errorf("%s: %s: %v", c.name, kind, err)
			case want != nil && !errors.Is(err, want):
				t.Errorf("%s: %s: got %v, want %v", c.name, kind, err, want)
			case want != nil && err.Error() != gone.Error():
				// A foreign object answers exactly as a missing one.
				t.Errorf("%s: %s: existing %q, missing %q", c.name, kind, err, gone)
			}
		}
	}
}

// errKind stands for the resource's own not-found error in a case table.
var errKind = errors.New("the resource's not found")

func TestScopeWrites(t *testing.T) {
	e := newScopeEnv(t)
	ro := corebank.Caller{EntityID: "ent1", ReadOnly: true}
	o := e.objs["ent1"]
	nick := "x"
	writes := map[string]func(c corebank.Caller) error{
		"CreateCounterparty": func(c corebank.Caller) error {
			_, err := e.svc.CreateCounterparty(ctx, c, individual("Ro", "Only", "ro@example.com"))
			return err
		},
		"UpdateCounterparty": func(c corebank.Caller) error {
			_, err := e.svc.UpdateCounterparty(ctx, c, "", o.cp, payments.CounterpartyPatch{Nickname: &nick})
			return err
		},
		"DeactivateCounterparty": func(c corebank.Caller) error {
			_, err := e.svc.DeactivateCounterparty(ctx, c, "", o.cp)
			return err
		},
		"CreatePaymentDetail": func(c corebank.Caller) error {
			_, err := e.svc.CreatePaymentDetail(ctx, c, achDetail(o.cp))
			return err
		},
		"UpdatePaymentDetail": func(c corebank.Caller) error {
			_, err := e.svc.UpdatePaymentDetail(ctx, c, "", o.pd, payments.PaymentDetailPatch{BankName: &nick})
			return err
		},
		"CreateQuote": func(c corebank.Caller) error {
			_, err := e.svc.CreateQuote(ctx, c, payments.NewQuote{FromCurrency: "USD", ToCurrency: "EUR", AmountFrom: 1000})
			return err
		},
		"CreateTransfer": func(c corebank.Caller) error {
			_, err := e.svc.CreateTransfer(ctx, c, payments.NewTransfer{AccountID: o.account, PaymentDetailID: o.pd,
				Amount: 1, PaymentType: "bank-transfer", Narration: "ro", UniqueReference: "ro"})
			return err
		},
		"SimulateTransfer": func(c corebank.Caller) error {
			_, err := e.svc.SimulateTransfer(ctx, c, "", o.transfer, payments.OutcomeProcessing, "")
			return err
		},
	}
	for name, w := range writes {
		if err := w(ro); !errors.Is(err, corebank.ErrForbidden) {
			t.Errorf("%s by a read-only caller: %v", name, err)
		}
		// The sibling's tree holds none of ent1's objects.
		if name != "CreateCounterparty" && name != "CreateQuote" {
			if err := w(corebank.As("ent2")); corebank.KindOf(err) != corebank.KindNotFound {
				t.Errorf("%s by a sibling: %v", name, err)
			}
		}
	}
	// Nothing changed.
	if tr, _ := e.svc.GetTransfer(ctx, corebank.System(), "", o.transfer); tr.Status != payments.StatusPending {
		t.Errorf("transfer moved: %+v", tr)
	}
}

// TestScopeTransferActsForOwner: a parent creating a transfer from a
// child's account acts for the child, with the child's detail only.
func TestScopeTransferActsForOwner(t *testing.T) {
	e := newScopeEnv(t)
	child, parent := e.objs["child"], e.objs["ent1"]
	in := payments.NewTransfer{AccountID: child.account, PaymentDetailID: child.pd, Amount: 1,
		PaymentType: "bank-transfer", Narration: "for the child", UniqueReference: "p-1"}
	tr, err := e.svc.CreateTransfer(ctx, corebank.As("ent1"), in)
	if err != nil {
		t.Fatal(err)
	}
	if tr.EntityID != "child" {
		t.Fatalf("acts for %s, want child", tr.EntityID)
	}
	// With entity_id naming the child, too.
	in.EntityID, in.UniqueReference = "child", "p-2"
	if _, err := e.svc.CreateTransfer(ctx, corebank.As("ent1"), in); err != nil {
		t.Fatal(err)
	}
	// The parent's own detail cannot be paid from the child's account.
	in.EntityID, in.PaymentDetailID, in.UniqueReference = "", parent.pd, "p-3"
	if _, err := e.svc.CreateTransfer(ctx, corebank.As("ent1"), in); !errors.Is(err, payments.ErrPaymentDetailNotFound) {
		t.Fatalf("parent's detail: %v", err)
	}
	// The child cannot debit its parent's account, and a foreign entity_id
	// answers entity not found whatever the account.
	in = payments.NewTransfer{AccountID: parent.account, PaymentDetailID: child.pd, Amount: 1,
		PaymentType: "bank-transfer", Narration: "up", UniqueReference: "c-1"}
	if _, err := e.svc.CreateTransfer(ctx, corebank.As("child"), in); !errors.Is(err, payments.ErrAccountNotFound) {
		t.Fatalf("child debits parent: %v", err)
	}
	in.EntityID = "ent1"
	if _, err := e.svc.CreateTransfer(ctx, corebank.As("child"), in); !errors.Is(err, corebank.ErrEntityNotFound) {
		t.Fatalf("foreign entity_id: %v", err)
	}
	// A list by account lists for the account's owner.
	page, err := e.svc.ListTransfers(ctx, corebank.As("ent1"), payments.TransferFilter{AccountID: child.account}, corebank.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if page.EntityID != "child" || len(page.Items) != 3 {
		t.Fatalf("list by the child's account: %s, %d items", page.EntityID, len(page.Items))
	}
	if _, err := e.svc.ListTransfers(ctx, corebank.As("ent2"), payments.TransferFilter{AccountID: child.account}, corebank.ListOptions{}); !errors.Is(err, payments.ErrAccountNotFound) {
		t.Fatalf("a sibling lists by the child's account: %v", err)
	}
}

// TestScopeDeletedAccount: a deleted account's transfers stay listable by
// account_id, while nothing new may use it.
func TestScopeDeletedAccount(t *testing.T) {
	e := newScopeEnv(t)
	a := e.account(t, "ent1", "USD")
	e.fund(t, a, 100)
	tr, err := e.svc.CreateTransfer(ctx, corebank.As("ent1"), newTransfer(a, mustDetail(t, e, "ent1"), 100, "all"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.SimulateTransfer(ctx, corebank.As("ent1"), "", tr.ID, payments.OutcomeSuccessful, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := e.led.DeleteAccount(ctx, corebank.System(), "", a.ID); err != nil {
		t.Fatal(err)
	}
	page, err := e.svc.ListTransfers(ctx, corebank.As("root"), payments.TransferFilter{AccountID: a.ID}, corebank.ListOptions{})
	if err != nil || page.EntityID != "ent1" || len(page.Items) != 1 {
		t.Fatalf("list by a deleted account: %v %+v", err, page)
	}
	_, err = e.svc.CreateQuote(ctx, corebank.As("ent1"), payments.NewQuote{FromCurrency: "USD", ToCurrency: "EUR", AmountFrom: 1000, AccountID: a.ID})
	if !errors.Is(err, payments.ErrAccountNotFound) {
		t.Fatalf("quote on a deleted account: %v", err)
	}
	if _, err := e.svc.CreateTransfer(ctx, corebank.As("ent1"), newTransfer(a, mustDetail(t, e, "ent1"), 1, "after")); !errors.Is(err, payments.ErrAccountNotFound) {
		t.Fatalf("transfer from a deleted account: %v", err)
	}
}

func mustDetail(t *testing.T, e *scopeEnv, ent string) *payments.PaymentDetail {
	t.Helper()
	d, err := e.svc.GetPaymentDetail(ctx, corebank.As(ent), "", e.objs[ent].pd)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
