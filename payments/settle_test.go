package payments_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/funding"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/payments"
	"github.com/corebank/corebank/service"
	"github.com/corebank/corebank/storage"
)

// settleEnv is an env whose store counts committed Updates, with a sender
// funded for many book transfers, a receiving account that accepts them
// and one whose receiver refuses them.
type settleEnv struct {
	*env
	commits          atomic.Int64
	from, to, refuse *ledger.Account
	toD, refuseD     *payments.PaymentDetail
}

func newSettleEnv(t *testing.T, db storage.Backend) *settleEnv {
	t.Helper()
	s := &settleEnv{}
	db = storage.WithUpdateHook(db, func(_ time.Duration, err error) {
		if err == nil {
			s.commits.Add(1)
		}
	})
	s.env = newReceiverEnv(t, db, func(in funding.NewInflow) error {
		if in.AccountID == s.refuse.ID {
			return ledger.ErrInflowsNotAllowed
		}
		return nil
	})
	s.from = s.account(t, "ent1", "USD")
	s.fund(t, s.from, 1_000_000)
	s.to, s.refuse = s.account(t, "ent2", "USD"), s.account(t, "ent2", "USD")
	cp := s.counterparty(t, "ent1")
	detail := func(a *ledger.Account) *payments.PaymentDetail {
		return s.detail(t, "ent1", payments.NewPaymentDetail{CounterpartyID: cp.ID, PaymentMethod: "book-transfer", Currency: "USD",
			AccountHolderName: "Bob", AccountNumber: a.ServiceBAN})
	}
	s.toD, s.refuseD = detail(s.to), detail(s.refuse)
	return s
}

// newReceiverEnv is newEnv with a Receiver that credits through the
// env's own ledger (so one ID source makes every ID) unless check refuses.
func newReceiverEnv(t *testing.T, db storage.Backend, check func(funding.NewInflow) error) *env {
	e := newEnv(t, db, nil)
	o := payments.Options{Deps: service.Deps{Clock: e.clk, IDs: corebank.NewIDs(nil)}, Receiver: ledgerReceiver(e, check)}
	e.svc = payments.NewService(db, e.led, &o)
	return e
}

// transfers creates n book transfers of 100 each, to the refusing account
// when refused(i), and returns their IDs.
func (s *settleEnv) transfers(t *testing.T, n int, refused func(i int) bool) []string {
	t.Helper()
	var ids []string
	for i := range n {
		d := s.toD
		if refused(i) {
			d = s.refuseD
		}
		tr, err := s.svc.CreateTransfer(ctx, corebank.As("ent1"), newTransfer(s.from, d, 100, fmt.Sprintf("r%d", i)))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, tr.ID)
	}
	return ids
}

// statuses are the transfers' statuses, a failed one's with its reason.
func (s *settleEnv) statuses(t *testing.T, ids []string) []string {
	t.Helper()
	var out []string
	for _, id := range ids {
		tr, err := s.svc.GetTransfer(ctx, corebank.As("ent1"), "", id)
		if err != nil {
			t.Fatal(err)
		}
		if tr.Status == payments.StatusFailed {
			out = append(out, tr.Status+" "+tr.StatusReason)
		} else {
			out = append(out, tr.Status)
		}
	}
	return out
}

// TestBatchedSettlement: book transfers settle a claim (16) at a time in
// one transaction each, with one worker or several; a transfer whose
// receiver refuses fails alone, the others of its claim succeed.
func TestBatchedSettlement(t *testing.T) {
	for _, b := range backends {
		for _, workers := range []int{1, 4} {
			t.Run(fmt.Sprintf("%s/workers=%d", b.name, workers), func(t *testing.T) {
				s := newSettleEnv(t, b.open(t))
				const n = 40 // claims of 16, 16 and 8
				refused := func(i int) bool { return i%10 == 3 || i == 15 }
				ids := s.transfers(t, n, refused)
				s.commits.Store(0)
				due := storage.NewDue(s.db, s.clk, 0, s.svc.DueJobs()...).Workers(workers)
				if got, err := due.RunDue(ctx, s.clk.Now()); got != n || err != nil {
					t.Fatalf("RunDue = %d, %v; want %d", got, err, n)
				}
				// The quote kind's (empty) transaction, then the claims
				// (one per 16 transfers with one worker; one for all
				// with four, which are all free then) and a settlement per
				// 16 transfers: not one per transfer.
				claims := 3
				if workers == 4 {
					claims = 1
				}
				if c, want := s.commits.Load(), int64(1+claims+3); c != want {
					t.Errorf("%d transactions committed, want %d", c, want)
				}
				failed := 0
				for i, st := range s.statuses(t, ids) {
					want := payments.StatusSuccessful
					if refused(i) {
						want = payments.StatusFailed + " inflows_not_allowed"
						failed++
					}
					if st != want {
						t.Errorf("transfer %d is %q, want %q", i, st, want)
					}
				}
				if b := s.balance(t, s.to.ID); b.Settled != int64(100*(n-failed)) {
					t.Errorf("receiver %+v, want %d settled", b, 100*(n-failed))
				}
				if b := s.balance(t, s.from.ID); b.Settled != 1_000_000-int64(100*(n-failed)) || b.PendingDebits != 0 {
					t.Errorf("sender %+v", b)
				}
				if b := s.balance(t, s.refuse.ID); b != (ledger.Balance{}) {
					t.Errorf("refusing receiver %+v", b)
				}
				s.checkBalanced(t)
				s.clk.Add(time.Hour)
				if got, err := due.RunDue(ctx, s.clk.Now()); got != 0 || err != nil {
					t.Errorf("RunDue again = %d, %v; want nothing", got, err)
				}
			})
		}
	}
}

// TestBatchedSettlementLeaseLost: a transfer whose check another node took
// over while this one waited is left to that node; the others of the claim
// settle.
func TestBatchedSettlementLeaseLost(t *testing.T) {
	s := newSettleEnv(t, openMemory(t))
	ids := s.transfers(t, 5, func(int) bool { return false })
	jobs := s.svc.DueJobs()
	var stolen string
	for i, j := range jobs {
		if j.Batch == nil {
			continue
		}
		batch := j.Batch
		jobs[i].Batch = func(ctx context.Context, now time.Time, items []storage.DueItem) (int, error) {
			// Another node takes the third item over meanwhile.
			it := items[2]
			stolen = it.ID
			if err := s.db.Update(ctx, func(tx storage.Tx) error {
				_, err := storage.LeaseTx(tx, j.Kind, it, storage.DueLease{Node: "other", Until: now.Add(time.Hour).UnixMilli()})
				return err
			}); err != nil {
				return 0, err
			}
			return batch(ctx, now, items)
		}
	}
	if got, err := storage.NewDue(s.db, s.clk, 0, jobs...).Lease("me", 0).RunDue(ctx, s.clk.Now()); got != 4 || err != nil {
		t.Fatalf("RunDue = %d, %v; want 4", got, err)
	}
	for i, st := range s.statuses(t, ids) {
		want := payments.StatusSuccessful
		if ids[i] == stolen {
			want = payments.StatusPending
		}
		if st != want {
			t.Errorf("transfer %d is %q, want %q", i, st, want)
		}
	}
	s.checkBalanced(t)
}

// TestBatchedSettlementError: an error that is not a refusal (the store,
// a bug) fails the claim's transaction; the transfers before the failing
// one are then applied one by one, and the rest given back at once, so a
// later run (on any node) settles them.
func TestBatchedSettlementError(t *testing.T) {
	s := newSettleEnv(t, openMemory(t))
	ids := s.transfers(t, 5, func(int) bool { return false })
	disk := errors.New("disk on fire")
	// Transfer 2's credit fails, whichever service tries it.
	s.svc = newReceiverEnv(t, s.db, func(in funding.NewInflow) error {
		if in.Reference == ids[2] {
			return disk
		}
		return nil
	}).svc
	if _, err := storage.NewDue(s.db, s.clk, 0, s.svc.DueJobs()...).Lease("n1", 0).RunDue(ctx, s.clk.Now()); !errors.Is(err, disk) {
		t.Fatalf("RunDue: %v, want %v", err, disk)
	}
	want := []string{"successful", "successful", "pending", "pending", "pending"}
	if got := s.statuses(t, ids); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("statuses %q, want %q", got, want)
	}
	leases, err := storage.View(ctx, s.db, func(tx storage.Tx) (int, error) {
		n := 0
		err := tx.Scan(storage.BucketDueLease, storage.ScanOptions{}, func(_, _ []byte) error { n++; return nil })
		return n, err
	})
	if leases != 0 || err != nil {
		t.Errorf("%d leases left (%v): the rest were not given back", leases, err)
	}
	// Another node takes the rest at once, transfer 2 failing again.
	if got, err := storage.NewDue(s.db, s.clk, 0, s.svc.DueJobs()...).Lease("n2", 0).RunDue(ctx, s.clk.Now()); got != 0 || !errors.Is(err, disk) {
		t.Fatalf("RunDue on n2 = %d, %v", got, err)
	}
	s.checkBalanced(t)
}

// TestSettlementConcurrentRunners: runners of several nodes, each with
// several workers, settle every book transfer once (run with -race).
func TestSettlementConcurrentRunners(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			s := newSettleEnv(t, b.open(t))
			const n = 200
			ids := s.transfers(t, n, func(i int) bool { return i%17 == 5 })
			var wg sync.WaitGroup
			var total atomic.Int64
			for node := range 3 {
				due := storage.NewDue(s.db, s.clk, 0, s.svc.DueJobs()...).Lease(fmt.Sprintf("n%d", node), 0).Workers(4)
				for range 2 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						got, err := due.RunDue(ctx, s.clk.Now())
						if err != nil {
							t.Error(err)
						}
						total.Add(int64(got))
					}()
				}
			}
			wg.Wait()
			if total.Load() != n {
				t.Errorf("runners moved %d transfers, want %d", total.Load(), n)
			}
			for i, st := range s.statuses(t, ids) {
				if st == payments.StatusPending {
					t.Errorf("transfer %d still pending", i)
				}
			}
			s.checkBalanced(t)
			evs, err := s.led.Events(ctx, "", 1000)
			if err != nil {
				t.Fatal(err)
			}
			done := 0
			for _, ev := range evs {
				if ev.Type == payments.EventOutflowCompleted || ev.Type == payments.EventOutflowFailed {
					done++
				}
			}
			if done != n {
				t.Errorf("%d outflows completed or failed, want %d", done, n)
			}
		})
	}
}

// TestSettlementMixedClaim: a claim of book transfers and payouts settles
// the book transfers in its first transaction, asks the provider about the
// payouts alone, and applies its answers in a second.
func TestSettlementMixedClaim(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			s := newSettleEnv(t, b.open(t))
			rail := &downRail{}
			o := payments.Options{Deps: service.Deps{Clock: s.clk, IDs: corebank.NewIDs(nil)}, Payouts: rail,
				Receiver: ledgerReceiver(s.env, func(funding.NewInflow) error { return nil })}
			s.svc = payments.NewService(s.db, s.led, &o)
			cp, err := s.svc.CreateCounterparty(ctx, corebank.As("ent1"), individual("Ach", "Payee", "ach@example.com"))
			if err != nil {
				t.Fatal(err)
			}
			ach := s.detail(t, "ent1", achDetail(cp.ID))
			var ids []string
			for i := range 10 {
				d := s.toD
				if i%3 == 1 {
					d = ach
				}
				tr, err := s.svc.CreateTransfer(ctx, corebank.As("ent1"), newTransfer(s.from, d, 100, fmt.Sprintf("m%d", i)))
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, tr.ID)
			}
			s.commits.Store(0)
			if got, err := s.svc.RunDue(ctx, s.clk.Now()); got != 10 || err != nil {
				t.Fatalf("RunDue = %d, %v; want 10", got, err)
			}
			if c := rail.calls.Load(); c != 3 {
				t.Errorf("the provider was asked %d times, want 3 (the payouts)", c)
			}
			// The quote kind's transaction, the claim, the book transfers'
			// and the payouts' answers.
			if c := s.commits.Load(); c != 4 {
				t.Errorf("%d transactions committed, want 4", c)
			}
			for i, st := range s.statuses(t, ids) {
				if st != payments.StatusSuccessful {
					t.Errorf("transfer %d is %q", i, st)
				}
			}
			if b := s.balance(t, s.to.ID); b.Settled != 700 {
				t.Errorf("receiver %+v, want 700 settled", b)
			}
			s.checkBalanced(t)
		})
	}
}
