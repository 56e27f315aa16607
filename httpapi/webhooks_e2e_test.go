package httpapi_test

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/corebank/corebank/storage/bolt"
	"github.com/corebank/corebank/webhooks"
	"github.com/google/go-cmp/cmp"
)

// TestWebhookEndToEnd runs the whole path over HTTP in process: services
// writing through the commit-hooked store, wh.Run delivering in the
// background, a TLS receiver, and the sandbox clock driving the transfer.
func TestWebhookEndToEnd(t *testing.T) {
	t.Run("Memory", func(t *testing.T) { endToEnd(t, newHookEnv(t, true)) })
	t.Run("Bolt", func(t *testing.T) {
		db, err := bolt.Open(filepath.Join(t.TempDir(), "db"), nil)
		if err != nil {
			t.Fatal(err)
		}
		endToEnd(t, newHookEnvDB(t, db, true))
	})
}

func endToEnd(t *testing.T, e *hookEnv) {
	acct := e.account(e.key, "", "USD")
	hook, secret := e.createHook(e.key, "", "inflows.completed", "outflows.created", "outflows.completed")

	// Money in: inflows.completed goes out right after the commit, on a
	// clock that has not moved.
	inflow := e.must(201, "POST", "/sandbox/inflows", e.key, map[string]any{"account_id": acct, "amount": 100000}).str("id")
	e.recv.wait(t, 1)

	// Money out: counterparty, payment detail, transfer.
	cp := e.must(201, "POST", "/counterparties", e.key, map[string]any{"type": "individual", "profile": map[string]any{
		"first_name": "Ada", "last_name": "Lovelace", "relationship": "vendor", "email": "ada@example.com",
		"address": map[string]any{"line1": "1 Main St", "city": "London", "country": "GB"},
	}}).str("data", "id")
	pd := e.must(201, "POST", "/payment-details", e.key, map[string]any{"counterparty_id": cp,
		"payment_method": "bank-transfer", "currency": "USD", "country": "US", "scheme": "ach",
		"account_holder_name": "Ada Lovelace", "routing_number": "091000019", "account_number": "123456789",
		"account_type": "checking"})
	pdID := pd.str("id")
	if pdID == "" {
		pdID = pd.str("data", "id")
	}
	transfer := e.must(201, "POST", "/transfers", e.key, map[string]any{"account_id": acct, "payment_detail_id": pdID,
		"counterparty_id": cp, "amount": 2500, "payment_type": "bank-transfer", "narration": "Invoice 7",
		"unique_reference": "inv-7"}).str("data", "id")
	e.recv.wait(t, 2)

	// The sandbox rail completes the transfer 5 s after creation.
	e.must(200, "POST", "/sandbox/clock/advance", e.key, map[string]any{"seconds": 10})
	hits := e.recv.wait(t, 3)
	if got := e.must(200, "GET", "/transfers/"+transfer, e.key, nil).str("data", "status"); got != "successful" {
		t.Fatalf("transfer status %q", got)
	}
	want := []string{"inflows.completed", "outflows.created", "outflows.completed"}
	if diff := cmp.Diff(want, eventTypes(hits)); diff != "" {
		t.Fatalf("deliveries (-want +got):\n%s", diff)
	}
	wantIDs := []string{inflow, transfer, transfer}
	for i, h := range hits {
		if err := e.verify(h, secret); err != nil {
			t.Errorf("delivery %d (%s): %v", i, want[i], err)
		}
		var body struct {
			Event string `json:"event"`
			Data  struct {
				ID string `json:"id"`
			} `json:"data"`
		}
		if err := json.Unmarshal(h.Body, &body); err != nil || body.Data.ID != wantIDs[i] {
			t.Errorf("delivery %d body %s: %v", i, h.Body, err)
		}
		if h.Header.Get(webhooks.HeaderEventID) == "" || h.Header.Get("Content-Type") != "application/json" {
			t.Errorf("delivery %d headers %v", i, h.Header)
		}
	}

	// The API agrees: three successful deliveries, and the events listed.
	// (The receiver answers before the dispatcher records the outcome.)
	r := e.waitDeliveries(hook, 3)
	var dTypes []string
	for _, it := range r.Body["data"].([]any) {
		d := it.(map[string]any)
		if d["status"] != webhooks.DeliverySucceeded {
			t.Errorf("delivery %v", d)
		}
		dTypes = append(dTypes, d["event_type"].(string))
	}
	if diff := cmp.Diff(want, dTypes); diff != "" {
		t.Errorf("deliveries list (-want +got):\n%s", diff)
	}
	if got := events(t, e.must(200, "GET", "/events?type=outflows.completed", e.key, nil)); len(got) != 1 {
		t.Errorf("events: %v", got)
	}

	// After rotate_secret the old secret no longer verifies a delivery.
	rotated := e.must(200, "POST", "/entity-webhooks/"+hook+"/rotate_secret", e.key, nil).str("data", "secret")
	if rotated == "" || rotated == secret {
		t.Fatalf("rotated secret %q", rotated)
	}
	e.must(201, "POST", "/sandbox/inflows", e.key, map[string]any{"account_id": acct, "amount": 1})
	last := e.recv.wait(t, 4)[3]
	if eventTypes([]hit{last})[0] != "inflows.completed" {
		t.Fatalf("fourth delivery: %s", last.Body)
	}
	if err := e.verify(last, secret); !errors.Is(err, webhooks.ErrInvalidSignature) {
		t.Errorf("old secret after rotation: %v, want ErrInvalidSignature", err)
	}
	if err := e.verify(last, rotated); err != nil {
		t.Errorf("new secret: %v", err)
	}
}

// waitDeliveries polls the webhook's deliveries until n are finished and
// returns that answer. The deadline only ends a test that would hang.
func (e *hookEnv) waitDeliveries(hook string, n int) resp {
	e.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		r := e.must(200, "GET", "/entity-webhooks/"+hook+"/deliveries", e.key, nil)
		done := 0
		for _, it := range r.Body["data"].([]any) {
			if it.(map[string]any)["status"] != webhooks.DeliveryPending {
				done++
			}
		}
		if done >= n {
			return r
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("%d of %d deliveries finished: %s", done, n, r.Raw)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
