package acquiring

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/memory"
)

// untaggedAction is an action record exactly as the release before Card
// had json tags stored it (a card-acq confirmation awaiting its 3DS
// challenge): its card carries Go's field names.
const untaggedAction = `{"id":"01KKRNW4G0KCPGVVCHGZHR77S2","currency":"USD","amount":10000,"applicable_fee":30,"charge_amount":10000,"refunded_amount":0,"reference":"o-1","action":"confirm","category":"collections","payment_type":"card-acq","payment_type_data":{"auth_model":"3ds_required","payment_country":"US","last_four_digits":"4242","card_brand":"visa","card_type":"credit"},"status":"pending_user_action","status_reason":null,"entity_id":"E1","account_id":"01KKRNW4G0YN3N405HJ3CREWHW","payment_intent_id":"01KKRNW4G0KCPGVVCHGXHKJ9C2","requires_action":true,"next_action":{"type":"redirect_to_url","url":"/sandbox/challenge/r5vIoLXPYTYeWIneWF-bbkB-OO6kQZUBeE63jWv7j5E"},"return_url":"https://shop.example/back","created":1773576000000,"updated":1773576000000,"card":{"Brand":"visa","Type":"credit","BINCountry":"US","Last4":"4242","ExpMonth":12,"ExpYear":2030},"token":"r5vIoLXPYTYeWIneWF-bbkB-OO6kQZUBeE63jWv7j5E","expire_at":1773577800000}`

// TestCardRecord: an action stored before Card had json tags reads back
// with the same card; a card is now written under snake_case names and
// reads back as itself.
func TestCardRecord(t *testing.T) {
	want := Card{Brand: "visa", Type: "credit", BINCountry: "US", Last4: "4242", ExpMonth: 12, ExpYear: 2030}
	t.Run("Untagged", func(t *testing.T) {
		const id = "01KKRNW4G0KCPGVVCHGZHR77S2"
		db := memory.New()
		ctx := context.Background()
		if err := db.Update(ctx, func(tx storage.Tx) error {
			return tx.Put(actionBucket, []byte(id), []byte(untaggedAction))
		}); err != nil {
			t.Fatal(err)
		}
		a, err := storage.View(ctx, db, func(tx storage.Tx) (*actionRecord, error) { return getAction(tx, id) })
		if err != nil {
			t.Fatal(err)
		}
		if a.Card == nil {
			t.Fatal("the card is gone")
		}
		if diff := cmp.Diff(want, *a.Card); diff != "" {
			t.Errorf("card (-want +got)\n%s", diff)
		}
		if a.Token != "r5vIoLXPYTYeWIneWF-bbkB-OO6kQZUBeE63jWv7j5E" || a.Status != ActionPendingUserAction {
			t.Errorf("record %+v", a)
		}
	})
	t.Run("Tagged", func(t *testing.T) {
		raw, err := json.Marshal(want)
		if err != nil {
			t.Fatal(err)
		}
		const tagged = `{"brand":"visa","type":"credit","bin_country":"US","last4":"4242","exp_month":12,"exp_year":2030}`
		if string(raw) != tagged {
			t.Errorf("written as %s, want %s", raw, tagged)
		}
		var got Card
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("read back (-want +got)\n%s", diff)
		}
	})
}
