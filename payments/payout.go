package payments

import (
	"context"
	"time"

	"github.com/corebank/corebank/funding"
	"github.com/corebank/corebank/storage"
)

// PayoutProvider is the rail behind transfers. RunDue calls Check, outside
// any storage transaction, for each unfinished transfer whose next check
// fell due; Check must be idempotent per transfer ID (a real provider
// submits the transfer the first time it sees it). It returns the status
// the rail reports (pending, processing, successful or failed), a
// status_reason for failures, and when to ask again while unfinished.
// An error leaves the transfer as it is and retries 30 s later. A due
// runner with several workers (bank.Options.DueWorkers) calls Check from
// several goroutines at once, for different transfers.
type PayoutProvider interface {
	Check(ctx context.Context, t *Transfer, asOf time.Time) (PayoutResult, error)
}

// PayoutResult is what a PayoutProvider reports about one transfer.
type PayoutResult struct {
	Status       string
	StatusReason string
	// Next is when to check again while Status is pending or processing;
	// zero means one second after asOf.
	Next time.Time
}

// SandboxPayouts is the sandbox rail: a transfer is pending until
// ProcessingAfter, processing until SuccessAfter and then successful, each
// measured from the transfer's creation on the clock in use (RunDue's
// asOf). It never fails a transfer by itself; use Service.SimulateTransfer.
type SandboxPayouts struct {
	processing, success time.Duration
}

// SandboxPayoutsOptions sets the sandbox delays; zero fields keep the
// defaults of 1 s and 5 s.
type SandboxPayoutsOptions struct {
	ProcessingAfter time.Duration
	SuccessAfter    time.Duration
}

// NewSandboxPayouts returns the sandbox rail; opt may be nil.
func NewSandboxPayouts(opt *SandboxPayoutsOptions) *SandboxPayouts {
	p := &SandboxPayouts{processing: time.Second, success: 5 * time.Second}
	if opt != nil {
		if opt.ProcessingAfter > 0 {
			p.processing = opt.ProcessingAfter
		}
		if opt.SuccessAfter > 0 {
			p.success = opt.SuccessAfter
		}
	}
	if p.success < p.processing {
		p.success = p.processing
	}
	return p
}

// Check reports the sandbox status of t at asOf. It never fails.
func (p *SandboxPayouts) Check(_ context.Context, t *Transfer, asOf time.Time) (PayoutResult, error) {
	created := time.UnixMilli(t.Created)
	switch {
	case asOf.Before(created.Add(p.processing)):
		return PayoutResult{Status: StatusPending, Next: created.Add(p.processing)}, nil
	case asOf.Before(created.Add(p.success)):
		return PayoutResult{Status: StatusProcessing, Next: created.Add(p.success)}, nil
	}
	return PayoutResult{Status: StatusSuccessful}, nil
}

// Receiver credits the receiving account of a book transfer from the
// system account ledger.SystemAccount(currency, "clearing.book") and
// reports the inflow (inflows.completed), inside the storage transaction
// that settles the transfer (RunDue's, or SimulateTransfer's). A refusal, a
// corebank error of kind Invalid, NotFound or Rejected (such as
// ledger.ErrInflowsNotAllowed), rolls that transaction back and fails the
// transfer; any other error leaves the transfer pending for the next
// RunDue. The inflow's Source is "book-transfer" and its Reference the
// transfer's ID. *funding.Service is a Receiver.
type Receiver interface {
	ReceiveTx(tx storage.Tx, now time.Time, in funding.NewInflow) (*funding.Inflow, error)
}

// ReceiverFunc adapts a function to Receiver.
type ReceiverFunc func(tx storage.Tx, now time.Time, in funding.NewInflow) (*funding.Inflow, error)

// ReceiveTx calls f.
func (f ReceiverFunc) ReceiveTx(tx storage.Tx, now time.Time, in funding.NewInflow) (*funding.Inflow, error) {
	return f(tx, now, in)
}
