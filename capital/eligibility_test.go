package capital_test

import (
	"errors"
	"testing"
	"time"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/capital"
	"github.com/corebank/corebank/entities"
	"github.com/corebank/corebank/ledger"
)

// child makes an approved entity below the root (an individual, or a
// business) with a funded USD account.
func (e *env) child(individual bool) (string, *ledger.Account) {
	e.t.Helper()
	var c *entities.Composite
	var err error
	if individual {
		c, err = e.Entities.CreateIndividual(ctx, e.root, entities.NewIndividual{Name: "Ada Obi",
			Person: &entities.PersonInput{FirstName: "Ada", LastName: "Obi", DateOfBirth: "1990-05-17",
				Email: "ada@example.com", Nationality: "NG", Gender: "f", Phonenumber: "+2348012345678"}})
	} else {
		c, err = e.Entities.CreateBusiness(ctx, e.root, entities.NewBusiness{Name: "Child",
			Business: &entities.BusinessInput{LegalName: "Child Co", Type: "llc"}})
	}
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.Entities.ReviewEntity(ctx, corebank.System(), c.Entity.ID, "approved"); err != nil {
		e.t.Fatal(err)
	}
	a, err := e.Ledger.CreateAccount(ctx, e.root, ledger.NewAccount{EntityID: c.Entity.ID, Type: ledger.TypeChecking, Currency: "USD", DisplayName: "c"})
	if err != nil {
		e.t.Fatal(err)
	}
	return c.Entity.ID, a
}

// TestEligibility: products by entity type and tree, an inactive owner's
// products, and an order REJECTED when its entity stops being eligible.
func TestEligibility(t *testing.T) {
	e := newEnv(t)
	person, _ := e.child(true)
	owner, ownerAcct := e.child(false)
	forPeople := deposit()
	forPeople.EligibleEntityTypes = []string{capital.EntityIndividual}
	people := e.product(forPeople)
	theirsIn := offering(10)
	theirsIn.EntityID = owner
	theirs, err := e.Capital.CreateProduct(ctx, e.root, theirsIn)
	if err != nil {
		t.Fatal(err)
	}
	ids := func(entity string) []string {
		page, err := e.Capital.ListProducts(ctx, e.root, capital.ProductFilter{EntityID: entity}, corebank.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, p := range page.Items {
			out = append(out, p.ID)
		}
		return out
	}
	if got := ids(person); len(got) != 1 || got[0] != people.ID {
		t.Fatalf("the individual sees %v, want only %s (the child business's offering is outside its tree)", got, people.ID)
	}
	if got := ids(""); len(got) != 0 {
		t.Fatalf("the root (a business, above the offering's owner) sees %v, want none", got)
	}
	if got := ids(owner); len(got) != 1 || got[0] != theirs.ID {
		t.Fatalf("the owner sees %v, want only %s", got, theirs.ID)
	}
	if _, err := e.Capital.GetProduct(ctx, e.root, person, theirs.ID); !errors.Is(err, capital.ErrProductNotFound) {
		t.Fatalf("an offering outside the tree: %v", err)
	}
	// The owner orders its own offering, then is suspended: the product
	// disappears and the confirm is REJECTED.
	o := e.order(capital.NewOrder{ProductID: theirs.ID, AccountID: ownerAcct.ID, EntityID: owner, Amount: ptr(int64(500))})
	if _, err := e.Entities.ReviewEntity(ctx, corebank.System(), owner, "suspended"); err != nil {
		t.Fatal(err)
	}
	if got := ids(owner); len(got) != 0 {
		t.Fatalf("an inactive owner's product is listed: %v", got)
	}
	acct := e.FundedAccount("USD", 100_000)
	got := e.confirm(o.ID)
	if got.Status != capital.OrderRejected || *got.StatusReason != "the product's owner is inactive" {
		t.Fatalf("confirm after the owner was suspended: %s %v", got.Status, got.StatusReason)
	}
	// A sale window that closes before the confirm rejects too.
	window := deposit()
	window.SaleEndsAt = ptr(e.Clock.Now().Add(10 * time.Minute).UnixMilli())
	w := e.product(window)
	o = e.depositOrder(w, acct.ID, 20_000, false)
	e.Advance(10 * time.Minute)
	if got := e.confirm(o.ID); got.Status != capital.OrderRejected || *got.StatusReason != "the product's sale window is closed" {
		t.Fatalf("confirm after the sale window: %s %v", got.Status, got.StatusReason)
	}
	if e.balance(acct.ID) != 100_000 {
		t.Fatal("a rejected order moved money")
	}
}

// TestAccrualProperty: over random steps of the clock, the posted
// DAILY_ACCRUAL transactions always sum to accrued_interest on read, and
// never exceed the tenor's interest.
func TestAccrualProperty(t *testing.T) {
	e := newEnv(t)
	p := e.product(deposit())
	acct := e.FundedAccount("USD", 10_000_000)
	o := e.confirm(e.depositOrder(p, acct.ID, 7_777_777, false).ID)
	gross := o.CapitalAccount.GrossInterest
	for step := 0; step < 60; step++ {
		e.Advance(time.Duration(1+step*7%31) * time.Hour)
		o = e.get(o.ID)
		_, posted := sum(e.transactions(o.ID), capital.EventDailyAccrual)
		if posted != o.CapitalAccount.AccruedInterest || posted > gross {
			t.Fatalf("step %d at %s: posted %d, accrued %d, gross %d", step, e.Clock.Now(), posted, o.CapitalAccount.AccruedInterest, gross)
		}
	}
}
