package payments_test

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/payments"
	"github.com/corebank/corebank/storage"
)

// downRail fails while down is set, and otherwise reports success; it
// counts its calls.
type downRail struct {
	down  atomic.Bool
	calls atomic.Int64
}

var errRailDown = errors.New("rail down")

func (r *downRail) Check(_ context.Context, _ *payments.Transfer, _ time.Time) (payments.PayoutResult, error) {
	r.calls.Add(1)
	if r.down.Load() {
		return payments.PayoutResult{}, errRailDown
	}
	return payments.PayoutResult{Status: payments.StatusSuccessful}, nil
}

func TestDueJobsOrder(t *testing.T) {
	e := newMemEnv(t)
	var kinds []string
	for _, j := range e.svc.DueJobs() {
		kinds = append(kinds, j.Kind)
	}
	if !slices.Equal(kinds, []string{"payments.quote", "payments.transfer"}) {
		t.Fatalf("kinds %v", kinds)
	}
	if d := storage.NewDue(e.db, e.clk, 0, e.svc.DueJobs()...); !slices.Equal(d.Kinds(), kinds) {
		t.Fatalf("runner kinds %v", d.Kinds())
	}
}

// TestPayoutErrorRetriesIn30s: a provider error is returned, the transfer
// stays as it is, and its next check is 30 s later, not before.
func TestPayoutErrorRetriesIn30s(t *testing.T) {
	rail := &downRail{}
	rail.down.Store(true)
	e := newEnv(t, openMemory(t), &payments.Options{Payouts: rail})
	a, d := setupUSD(t, e, 1_000)
	tr, err := e.svc.CreateTransfer(ctx, corebank.As("ent1"), newTransfer(a, d, 100, "retry"))
	if err != nil {
		t.Fatal(err)
	}
	// The provider's failure, marked unavailable (503 where an API route
	// runs the due work), not an internal error.
	if _, err := e.svc.RunDue(ctx, e.clk.Now()); !errors.Is(err, errRailDown) ||
		!errors.Is(err, payments.ErrPayoutProviderUnavailable) || corebank.KindOf(err) != corebank.KindUnavailable {
		t.Fatalf("RunDue: %v", err)
	}
	rail.down.Store(false)
	e.clk.Add(29 * time.Second)
	if n, err := e.svc.RunDue(ctx, e.clk.Now()); n != 0 || err != nil || rail.calls.Load() != 1 {
		t.Fatalf("before 30 s: %d %v, %d calls", n, err, rail.calls.Load())
	}
	e.clk.Add(time.Second)
	if n, err := e.svc.RunDue(ctx, e.clk.Now()); n != 1 || err != nil {
		t.Fatalf("at 30 s: %d %v", n, err)
	}
	got, _ := e.svc.GetTransfer(ctx, corebank.As("ent1"), "", tr.ID)
	if got.Status != payments.StatusSuccessful {
		t.Fatalf("%+v", got)
	}
	// Finished: nothing is left to check.
	e.clk.Add(time.Hour)
	if n, err := e.svc.RunDue(ctx, e.clk.Now()); n != 0 || err != nil || rail.calls.Load() != 2 {
		t.Fatalf("after: %d %v, %d calls", n, err, rail.calls.Load())
	}
}
