package cards

import (
	"context"
	"strings"
	"testing"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/memory"
)

// TestNumberClashDrawsAgain issues two cards whose first draws are the
// same digits: the second card draws again and gets the next number.
func TestNumberClashDrawsAgain(t *testing.T) {
	db := memory.New()
	led := ledger.NewService(db, nil)
	key := make([]byte, 32)
	sealer, err := corebank.NewSealer(key)
	if err != nil {
		t.Fatal(err)
	}
	s := NewService(db, led, sealer, &Options{BIN: "12345678"})
	draws := []string{"1111111", "1111111", "2222222"}
	s.digits = func(n int) string { d := draws[0]; draws = draws[1:]; return d[:n] }
	ctx := context.Background()
	sys := corebank.System()
	a, err := led.CreateAccount(ctx, sys, ledger.NewAccount{EntityID: "e1", Type: ledger.TypeChecking, Currency: "USD", DisplayName: "a"})
	if err != nil {
		t.Fatal(err)
	}
	in := NewCard{AccountID: a.ID, CardName: "c", Currency: "USD", EntityID: "e1",
		Cardholder: &Cardholder{FirstName: "A", LastName: "B", Email: "a@b.c", PhoneNumber: "+14155550100"}}
	c1, err := s.CreateVirtualCard(ctx, sys, in)
	if err != nil {
		t.Fatal(err)
	}
	c2, err := s.CreateVirtualCard(ctx, sys, in)
	if err != nil {
		t.Fatal(err)
	}
	// The store holds the number and CVV sealed, bound to the card.
	for _, c := range []*Card{c1, c2} {
		r, err := storage.View(ctx, db, func(tx storage.Tx) (*record, error) { return getCard(tx, c.ID) })
		if err != nil {
			t.Fatal(err)
		}
		sec, err := s.unseal(c.ID, r.Sealed)
		if err != nil || sec != (secret{Number: c.Number, CVV: c.CVV}) {
			t.Errorf("sealed %+v, %v; want %s/%s", sec, err, c.Number, c.CVV)
		}
		if _, err := s.unseal(c1.ID+c2.ID, r.Sealed); err == nil {
			t.Error("a card's seal opens under another ID")
		}
	}
	if !strings.HasPrefix(c1.Number, "123456781111111") || !strings.HasPrefix(c2.Number, "123456782222222") || len(draws) != 0 {
		t.Errorf("numbers %s, %s; draws left %v", c1.Number, c2.Number, draws)
	}
}
