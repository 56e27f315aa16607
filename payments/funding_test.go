package payments_test

import (
	"testing"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/funding"
	"github.com/corebank/corebank/payments"
	"github.com/corebank/corebank/service"
)

// TestBookTransferWithFundingReceiver wires funding's ReceiveTx as the
// Receiver, as the server does: when RunDue settles the transfer, the
// receiver gets inflows.completed.
func TestBookTransferWithFundingReceiver(t *testing.T) {
	base := newMemEnv(t)
	fund := funding.NewService(base.db, base.led, &funding.Options{Deps: service.Deps{Clock: base.clk}})
	// *funding.Service is a Receiver as it is. One ledger, as in the
	// server: events of one millisecond sort in the order its ledger
	// appended them.
	e := &env{db: base.db, clk: base.clk, led: base.led, svc: payments.NewService(base.db, base.led,
		&payments.Options{Deps: service.Deps{Clock: base.clk, IDs: corebank.NewIDs(nil)}, Receiver: fund})}
	a, to, d := bookPair(t, e, "EUR")
	tr, err := e.svc.CreateTransfer(ctx, corebank.As("ent1"), newTransfer(a, d, 2_500, "bk1"))
	if err != nil {
		t.Fatal(err)
	}
	if tr.Status != "pending" {
		t.Fatalf("%+v", tr)
	}
	if n, err := e.svc.RunDue(ctx, e.clk.Now()); n != 1 || err != nil {
		t.Fatalf("RunDue: %d %v", n, err)
	}
	if b := e.balance(t, to.ID); b.Settled != 2_500 {
		t.Errorf("receiver %+v", b)
	}
	evs, _ := e.led.Events(ctx, "", 100)
	var got []string
	for _, ev := range evs {
		if ev.Type != "accounts.created" {
			got = append(got, ev.EntityID+":"+ev.Type)
		}
	}
	want := "[ent1:outflows.created ent2:inflows.completed ent1:outflows.completed]"
	if s := fmtSlice(got); s != want {
		t.Errorf("events %s, want %s", s, want)
	}
	e.checkBalanced(t)
}

func fmtSlice(s []string) string {
	out := "["
	for i, v := range s {
		if i > 0 {
			out += " "
		}
		out += v
	}
	return out + "]"
}
