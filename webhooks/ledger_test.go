package webhooks_test

import (
	"testing"
	"time"

	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/service"
	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/webhooks"
)

func TestLedgerOutbox(t *testing.T) {
	db := openBolt(t, boltPath(t))
	defer db.Close()
	e := newEnv(t, db, nil, nil)
	led := ledger.NewService(db, &ledger.Options{Deps: service.Deps{Clock: e.clk}})
	e.svc = webhooks.NewService(db, webhooks.LedgerOutbox(led), mustSealer(t), &e.opts)
	w := e.mustCreate(t, entityA, events(false, "accounts.created"))
	var ev *ledger.Event
	err := db.Update(ctx, func(tx storage.Tx) error {
		var err error
		ev, err = led.AppendEventTx(tx, e.clk.Now(), "accounts.created", entityA, map[string]string{"id": "acc_1"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := e.mustDrain(t); n != 1 {
		t.Fatalf("Drain sent %d, want 1", n)
	}
	h := e.recv.Hits()[0]
	if h.Header.Get(webhooks.HeaderEventID) != ev.ID || string(h.Body) != `{"event":"accounts.created","data":{"id":"acc_1"}}` {
		t.Errorf("delivered %s (id %s)", h.Body, h.Header.Get(webhooks.HeaderEventID))
	}
	if err := webhooks.Verify(w.Secret, h.Header.Get(webhooks.HeaderTimestamp), h.Header.Get(webhooks.HeaderSignature), h.Body, time.Minute, e.clk.Now()); err != nil {
		t.Error(err)
	}
	if n := e.mustDrain(t); n != 0 {
		t.Errorf("second Drain sent %d, want 0", n)
	}
}
