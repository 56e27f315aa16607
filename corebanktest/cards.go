package corebanktest

import (
	"context"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/cards"
)

// IssueCard issues a virtual card of the root entity on accountID (in the
// account's currency), for cardholder Ada Lovelace, acting as the root's
// full-access key does over HTTP (POST /virtual-cards). The answer is the
// creation's, with the full number and CVV. It fails the test on any
// error.
func (b *Bank) IssueCard(accountID string) *cards.Card {
	b.t.Helper()
	c, err := b.Cards.CreateVirtualCard(context.Background(), corebank.As(b.Root.EntityID), cards.NewCard{
		AccountID: accountID, CardName: "Test card", Currency: b.currencyOf(accountID),
		Cardholder: &cards.Cardholder{FirstName: "Ada", LastName: "Lovelace", Email: "ada@example.com", PhoneNumber: "+14155550100"},
	})
	if err != nil {
		b.t.Fatalf("corebanktest: issue a card on %s: %v", accountID, err)
	}
	return c
}
