package payments

import (
	"context"
	"time"

	"github.com/corebank/corebank/storage"
)

// PayoutProvider is the rail behind transfers. RunDue calls Check, outside
// any storage transaction, for each unfinished transfer whose next check
// fell due; Check must be idempotent per transfer ID (a real provider
// submits the transfer the first time it sees it). It returns the status
// the rail reports (pending, processing, successful or failed), a
// status_reason for failures, and when to ask again while unfinished.
// An error leaves the transfer as it is and retries 30 s later.
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
// asOf). It never fails a transfer by itself; use Service.Simulate.
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

// Inflow is a credit to a corebank account, as a book transfer's receiving
// side. Its fields are those of funding.NewInflow (Settle aside).
type Inflow struct {
	AccountID string
	Amount    int64
	Currency  string
	Narration string
	Reference string
	// Source is "book-transfer".
	Source string
}

// Receiver credits the receiving account of a book transfer from the
// system account ledger.SystemAccount(currency, "clearing.book") and
// reports the inflow (inflows.completed), inside the transfer's storage
// transaction; an error aborts the transfer. funding.Service plugs in
// through ReceiverFunc:
//
//	payments.ReceiverFunc(func(tx storage.Tx, now time.Time, in payments.Inflow) error {
//		_, err := fund.ReceiveTx(tx, now, funding.NewInflow{AccountID: in.AccountID,
//			Amount: in.Amount, Currency: in.Currency, Narration: in.Narration,
//			Reference: in.Reference, Source: in.Source})
//		return err
//	})
type Receiver interface {
	ReceiveTx(tx storage.Tx, now time.Time, in Inflow) error
}

// ReceiverFunc adapts a function to Receiver.
type ReceiverFunc func(tx storage.Tx, now time.Time, in Inflow) error

// ReceiveTx calls f.
func (f ReceiverFunc) ReceiveTx(tx storage.Tx, now time.Time, in Inflow) error { return f(tx, now, in) }
