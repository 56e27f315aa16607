package main_test

import (
	"bytes"
	"fmt"
	"testing"
)

// TestNoIssuedCardDataAtRest issues virtual and disposable cards through
// the server binary on a bolt store, with and without an Idempotency-Key
// (each keyed creation asked again and replayed), moves them (freeze,
// unfreeze, reassign, delete) and reads them (get, list, events), then
// stops the server and scans the store's folder (the bolt file and its
// write-ahead logs), the server's log, every answer but the creations
// themselves, and the replays, for each full card number in every form
// secretForms knows, and for each CVV as a JSON value or a cvv field.
func TestNoIssuedCardDataAtRest(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server binary")
	}
	t.Parallel()
	p, dataDir, c, _ := startBolt(t)
	acct := c.must(201, "POST", "/accounts", "", map[string]any{"type": "checking", "currency": "USD", "display_name": "Cards"}).data("id")
	other := c.must(201, "POST", "/accounts", "", map[string]any{"type": "checking", "currency": "USD", "display_name": "Other"}).data("id")

	var responses bytes.Buffer
	keep := func(r *rawResp) *rawResp { responses.Write(r.raw); responses.WriteByte('\n'); return r }
	type issued struct{ number, cvv string }
	var cards []issued
	for i, path := range []string{"/virtual-cards", "/disposable-cards", "/virtual-cards", "/disposable-cards"} {
		body := map[string]any{"account_id": acct, "card_name": fmt.Sprintf("Card %d", i), "currency": "USD",
			"cardholder":       map[string]any{"first_name": "Ada", "last_name": "Lovelace", "email": "ada@example.com", "phone_number": "+442071838750"},
			"expiration_month": "09", "expiration_year": "31"}
		idem := ""
		if i < 2 {
			idem = fmt.Sprintf("issue-%d", i)
		}
		first := c.must(201, "POST", path, idem, body) // the only answer with the number: not scanned
		cd := issued{first.data("number"), first.data("cvv")}
		cards = append(cards, cd)
		id := first.data("id")
		if idem != "" {
			again := keep(c.must(201, "POST", path, idem, body))
			if !again.replayed || again.data("id") != id {
				t.Errorf("replay of %s: %s", idem, again.raw)
			}
		}
		keep(c.must(200, "GET", "/cards/"+id, "", nil))
		keep(c.must(200, "POST", "/cards/"+id+"/freeze", "freeze-"+id, nil))
		keep(c.must(200, "POST", "/cards/"+id+"/unfreeze", "", nil))
		keep(c.must(200, "POST", "/cards/"+id+"/reassign", "", map[string]any{"account_id": other}))
		keep(c.must(200, "GET", "/cards/"+id+"/transactions", "", nil))
		if i == 3 {
			keep(c.must(200, "DELETE", "/cards/"+id, "", nil))
		}
	}
	keep(c.must(200, "GET", "/cards?limit=100", "", nil))
	keep(c.must(200, "GET", "/events?limit=100", "", nil))

	files := stopAndRead(t, p, dataDir, map[string][]byte{"responses": responses.Bytes()})
	for _, cd := range cards {
		scanCard(t, files, cd.number, cd.cvv)
	}
}
