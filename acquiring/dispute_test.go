package acquiring_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/acquiring"
	"github.com/corebank/corebank/ledger"
)

// charge completes a payment of amount by the card ending in last4.
func (e *env) charge(ref string, amount int64, last4 string) *acquiring.Action {
	e.t.Helper()
	number := map[string]string{"0259": "4000000000000259", "4242": "4242424242424242"}[last4]
	in, err := e.svc.CreateIntent(context.Background(), e.caller, acquiring.NewIntent{Currency: "USD", Amount: amount,
		AccountID: e.acct, Reference: ref, IntentAction: cardParams(encrypt(e.t, number), acquiring.Auth3DSDisabled)})
	if err != nil {
		e.t.Fatal(err)
	}
	if in.IntentAction.Status != acquiring.ActionCompleted {
		e.t.Fatalf("charge: %+v", in.IntentAction)
	}
	return in.IntentAction
}

// disputeEvent is one payment_dispute.* event, its object decoded.
type disputeEvent struct {
	Type    string
	Dispute acquiring.Dispute
}

// disputeEvents returns the payment_dispute.* events, oldest first.
func (e *env) disputeEvents() []disputeEvent {
	e.t.Helper()
	evs, err := e.led.Events(context.Background(), "", 1000)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []disputeEvent
	for _, ev := range evs {
		if !strings.HasPrefix(ev.Type, "payment_dispute.") {
			continue
		}
		de := disputeEvent{Type: ev.Type}
		if err := json.Unmarshal(ev.Object, &de.Dispute); err != nil {
			e.t.Fatal(err)
		}
		out = append(out, de)
	}
	return out
}

func amount(n int64) *int64 { return &n }

// TestDisputeByRoute: a dispute opened by the sandbox debits the merchant
// once with payment_dispute.created; won credits it back once with
// payment_dispute.completed; deciding it again changes nothing, and the
// other outcome is refused.
func TestDisputeByRoute(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	a := e.charge("d-1", 5000, "4242")
	d, err := e.svc.OpenDispute(ctx, e.caller, a.ID, acquiring.NewDispute{Amount: amount(2000), Reason: "duplicate"})
	if err != nil {
		t.Fatal(err)
	}
	now := e.clock.Now()
	want := &acquiring.Dispute{ID: d.ID, PaymentIntentActionID: a.ID, PaymentIntentID: a.PaymentIntentID, Reference: "d-1",
		Amount: 2000, Currency: "USD", Reason: "duplicate", Status: acquiring.DisputeNeedsResponse,
		EvidenceDueBy: now.Add(7 * 24 * time.Hour).UnixMilli(), EntityID: "E1", AccountID: e.acct,
		Created: now.UnixMilli(), Updated: now.UnixMilli()}
	if diff := cmp.Diff(want, d); diff != "" {
		t.Fatalf("dispute (-want +got)\n%s", diff)
	}
	clearing := e.led.SystemAccount("USD", acquiring.PurposeClearingDisputes)
	if got := []int64{e.balance(e.acct), e.balance(clearing)}; !cmp.Equal(got, []int64{3000, 2000}) {
		t.Fatalf("after open: account, clearing = %v", got)
	}
	if _, err := e.svc.OpenDispute(ctx, e.caller, a.ID, acquiring.NewDispute{}); !errors.Is(err, acquiring.ErrAlreadyDisputed) {
		t.Errorf("second dispute: %v", err)
	}
	e.clock.Add(time.Hour)
	var won *acquiring.Dispute
	for range 2 {
		if won, err = e.svc.SimulateDispute(ctx, e.caller, "", d.ID, acquiring.DisputeWon); err != nil {
			t.Fatal(err)
		}
	}
	wantWon := *want
	wantWon.Status, wantWon.Updated = acquiring.DisputeWon, e.clock.Now().UnixMilli()
	if diff := cmp.Diff(&wantWon, won); diff != "" {
		t.Errorf("won (-want +got)\n%s", diff)
	}
	if _, err := e.svc.SimulateDispute(ctx, e.caller, "", d.ID, acquiring.DisputeLost); !errors.Is(err, acquiring.ErrInvalidForState) {
		t.Errorf("lost after won: %v", err)
	}
	if got := []int64{e.balance(e.acct), e.balance(clearing)}; !cmp.Equal(got, []int64{5000, 0}) {
		t.Errorf("after won: account, clearing = %v", got)
	}
	wantEv := []disputeEvent{{acquiring.EventDisputeCreated, *want}, {acquiring.EventDisputeCompleted, wantWon}}
	if diff := cmp.Diff(wantEv, e.disputeEvents()); diff != "" {
		t.Errorf("events (-want +got)\n%s", diff)
	}
}

// TestDisputeLostKeepsDebit: a lost dispute keeps the money debited; the
// whole charge is disputed by default.
func TestDisputeLostKeepsDebit(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	a := e.charge("d-2", 5000, "4242")
	d, err := e.svc.OpenDispute(ctx, e.caller, a.ID, acquiring.NewDispute{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Amount != 5000 || d.Reason != acquiring.DefaultDisputeReason {
		t.Fatalf("defaults: %+v", d)
	}
	for range 2 {
		if _, err := e.svc.SimulateDispute(ctx, e.caller, "", d.ID, acquiring.DisputeLost); err != nil {
			t.Fatal(err)
		}
	}
	if got := e.balance(e.acct); got != 0 {
		t.Errorf("account after lost: %d", got)
	}
	if n := len(e.disputeEvents()); n != 2 {
		t.Errorf("%d events, want 2", n)
	}
}

// TestDisputeShortfall: a merchant account that has spent the money pays
// what it has; disputes.receivable carries the rest, and a win returns
// each part where it came from.
func TestDisputeShortfall(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	a := e.charge("d-3", 5000, "4242")
	out := e.led.SystemAccount("USD", ledger.PurposeClearingBank)
	if _, err := e.led.Post(ctx, ledger.Entry{Lines: []ledger.Line{{AccountID: e.acct, Side: ledger.Debit, Amount: 4000},
		{AccountID: out, Side: ledger.Credit, Amount: 4000}}}); err != nil {
		t.Fatal(err)
	}
	d, err := e.svc.OpenDispute(ctx, e.caller, a.ID, acquiring.NewDispute{})
	if err != nil {
		t.Fatal(err)
	}
	recv := e.led.SystemAccount("USD", acquiring.PurposeDisputesReceivable)
	if got := []int64{e.balance(e.acct), e.balance(recv)}; !cmp.Equal(got, []int64{0, -4000}) {
		t.Fatalf("after open: account, receivable = %v", got)
	}
	if _, err := e.svc.SimulateDispute(ctx, e.caller, "", d.ID, acquiring.DisputeWon); err != nil {
		t.Fatal(err)
	}
	if got := []int64{e.balance(e.acct), e.balance(recv)}; !cmp.Equal(got, []int64{1000, 0}) {
		t.Errorf("after won: account, receivable = %v", got)
	}
}

// TestDisputeByTestCard: a charge by the "dispute" card is disputed
// DisputeDelay after it completes, through the due queue, once, for the
// card's reason; at evidence_due_by it goes under_review by itself.
func TestDisputeByTestCard(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	a := e.charge("d-4", 700, "0259")
	e.charge("d-5", 300, "4242")
	e.clock.Add(59 * time.Second)
	if n, err := e.svc.RunDue(ctx, e.clock.Now()); n != 0 || err != nil {
		t.Fatalf("early: %d %v", n, err)
	}
	e.clock.Add(time.Second)
	if n, err := e.svc.RunDue(ctx, e.clock.Now()); n != 1 || err != nil {
		t.Fatalf("due: %d %v", n, err)
	}
	page, err := e.svc.ListDisputes(ctx, e.caller, acquiring.Filter{}, corebank.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Items) != 1 {
		t.Fatalf("disputes %+v", page.Items)
	}
	d := page.Items[0]
	if d.PaymentIntentActionID != a.ID || d.Amount != 700 || d.Reason != "fraudulent" || d.Status != acquiring.DisputeNeedsResponse {
		t.Errorf("card dispute %+v", d)
	}
	if got := e.balance(e.acct); got != 300 {
		t.Errorf("account %d, want 300", got)
	}
	e.clock.Add(7 * 24 * time.Hour)
	if n, err := e.svc.RunDue(ctx, e.clock.Now()); n != 1 || err != nil {
		t.Fatalf("evidence due: %d %v", n, err)
	}
	got, err := e.svc.GetDispute(ctx, e.caller, "", d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != acquiring.DisputeUnderReview {
		t.Errorf("status %s, want under_review", got.Status)
	}
	if _, err := e.svc.SimulateDispute(ctx, e.caller, "", d.ID, acquiring.DisputeLost); err != nil {
		t.Fatal(err)
	}
	lost, err := e.svc.GetDispute(ctx, e.caller, "", d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]disputeEvent{{acquiring.EventDisputeCreated, d}, {acquiring.EventDisputeCompleted, *lost}},
		e.disputeEvents()); diff != "" {
		t.Errorf("events (-want +got)\n%s", diff)
	}
}

// TestDisputeRefused: bad input names its field and changes nothing; a
// foreign caller sees a missing action or dispute; a read-only caller
// writes nothing; filters select.
func TestDisputeRefused(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	a := e.charge("d-6", 1000, "4242")
	in, err := e.svc.CreateIntent(ctx, e.caller, acquiring.NewIntent{Currency: "USD", Amount: 100, AccountID: e.acct, Reference: "open",
		IntentAction: cardParams(encrypt(t, "4242424242424242"), acquiring.Auth3DSRequired)})
	if err != nil {
		t.Fatal(err)
	}
	other := corebank.Caller{EntityID: "E2"}
	for _, c := range []struct {
		name   string
		caller corebank.Caller
		action string
		in     acquiring.NewDispute
		field  string
		want   error
	}{
		{"zero amount", e.caller, a.ID, acquiring.NewDispute{Amount: amount(0)}, "amount", nil},
		{"over charge", e.caller, a.ID, acquiring.NewDispute{Amount: amount(1001)}, "amount", nil},
		{"reason", e.caller, a.ID, acquiring.NewDispute{Reason: "because"}, "reason", nil},
		{"not completed", e.caller, in.IntentAction.ID, acquiring.NewDispute{}, "", acquiring.ErrInvalidForState},
		{"foreign", other, a.ID, acquiring.NewDispute{}, "", acquiring.ErrActionNotFound},
		{"read-only", corebank.Caller{EntityID: "E1", ReadOnly: true}, a.ID, acquiring.NewDispute{}, "", corebank.ErrForbidden},
	} {
		_, err := e.svc.OpenDispute(ctx, c.caller, c.action, c.in)
		var ce *corebank.Error
		switch {
		case c.field != "" && (!errors.As(err, &ce) || ce.Fields[c.field] == ""):
			t.Errorf("%s: %v, want a problem with %s", c.name, err, c.field)
		case c.want != nil && !errors.Is(err, c.want):
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	if got := e.balance(e.acct); got != 1000 {
		t.Fatalf("refusals moved money: %d", got)
	}
	d, err := e.svc.OpenDispute(ctx, e.caller, a.ID, acquiring.NewDispute{Amount: amount(1000)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.GetDispute(ctx, other, "", d.ID); !errors.Is(err, acquiring.ErrDisputeNotFound) {
		t.Errorf("foreign get: %v", err)
	}
	if _, err := e.svc.SimulateDispute(ctx, other, "", d.ID, acquiring.DisputeWon); !errors.Is(err, acquiring.ErrDisputeNotFound) {
		t.Errorf("foreign simulate: %v", err)
	}
	var ce *corebank.Error
	if _, err := e.svc.SimulateDispute(ctx, e.caller, "", d.ID, "draw"); !errors.As(err, &ce) || ce.Fields["outcome"] == "" {
		t.Errorf("bad outcome: %v", err)
	}
	if page, err := e.svc.ListDisputes(ctx, other, acquiring.Filter{}, corebank.ListOptions{}); err != nil || len(page.Items) != 0 {
		t.Errorf("foreign list: %v %v", page, err)
	}
	for _, c := range []struct {
		f    acquiring.Filter
		want int
	}{
		{acquiring.Filter{Status: acquiring.DisputeNeedsResponse}, 1},
		{acquiring.Filter{Status: acquiring.DisputeWon}, 0},
		{acquiring.Filter{PaymentIntentActionID: a.ID}, 1},
		{acquiring.Filter{PaymentIntentActionID: in.IntentAction.ID}, 0},
		{acquiring.Filter{AccountID: e.acct, DateFrom: d.Created, DateTo: d.Created}, 1},
		{acquiring.Filter{DateFrom: d.Created + 1}, 0},
	} {
		page, err := e.svc.ListDisputes(ctx, e.caller, c.f, corebank.ListOptions{})
		if err != nil || len(page.Items) != c.want {
			t.Errorf("filter %+v: %d items, %v; want %d", c.f, len(page.Items), err, c.want)
		}
	}
	if _, err := e.svc.ListDisputes(ctx, e.caller, acquiring.Filter{Status: "open"}, corebank.ListOptions{}); !errors.As(err, &ce) || ce.Fields["status"] == "" {
		t.Errorf("bad status filter: %v", err)
	}
}
