package cards

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/memory"
)

// TestDecodedCards: reading a card through the cache answers what getCard
// does, before and after the card changes, and a caller setting a field of
// what it got does not change what the next reader gets.
func TestDecodedCards(t *testing.T) {
	db := memory.New()
	ctx := context.Background()
	limit := int64(500)
	put := func(r *record) {
		t.Helper()
		if err := db.Update(ctx, func(tx storage.Tx) error { return putCard(tx, r) }); err != nil {
			t.Fatal(err)
		}
	}
	var d decodedCards
	read := func() {
		t.Helper()
		err := db.View(ctx, func(tx storage.Tx) error {
			want, err := getCard(tx, "c1")
			if err != nil {
				return err
			}
			for range 2 {
				got, err := d.get(tx, "c1")
				if err != nil {
					return err
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("cached card differs (-getCard +cache):\n%s", diff)
				}
				got.Status, got.Updated = "changed", -1
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	r := &record{Card: Card{ID: "c1", Status: StatusActive, Type: TypeVirtual, Currency: "USD",
		IndividualControls: ControlsView{Controls: Controls{DailyAmountLimit: &limit}},
		MCCGroupControls:   []GroupControlView{{GroupControl: GroupControl{GroupName: "gambling", Open: new(bool)}}}},
		LastFour: "1234", Updated: 1}
	put(r)
	read()
	r.Status, r.Updated = StatusBlocked, 2
	r.MCCGroupControls = nil
	put(r)
	read()
	err := db.View(ctx, func(tx storage.Tx) error {
		_, err := d.get(tx, "nope")
		return err
	})
	if err != ErrCardNotFound {
		t.Errorf("unknown card: %v, want ErrCardNotFound", err)
	}
}
