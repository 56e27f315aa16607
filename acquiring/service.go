package acquiring

import (
	"context"
	"crypto/rsa"
	"time"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/internal/scope"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/payments"
	"github.com/corebank/corebank/service"
	"github.com/corebank/corebank/storage"
)

// CardKeys gives the RSA private key of the API key a caller
// authenticated with, to decrypt the card data it sent
// (*entities.Service implements it).
type CardKeys interface {
	// CardKey returns the private key of API key keyID.
	CardKey(ctx context.Context, keyID string) (*rsa.PrivateKey, error)
}

// Options are the Service's optional dependencies.
type Options struct {
	// Deps are the clock, IDs, tree and logger every service shares; the
	// clock defaults to the ledger's.
	service.Deps
	// Keys decrypts card data with the calling API key's private key; nil
	// refuses card-acq confirmations (ErrNoCardKey).
	Keys CardKeys
	// Fees is the fee schedule, keyed by payment type ("card-acq",
	// "walletpay-acq", "*"); applicable_fee is Fees.For(payment_type).Of
	// (amount). Nil charges nothing.
	Fees payments.FeeSchedule
	// ChallengeBase is the URL the sandbox 3DS challenge pages are served
	// under (next_action.url is ChallengeBase + "/sandbox/challenge/<token>");
	// "" gives a path from the server's root.
	ChallengeBase string
	// ChallengeTTL is how long a 3DS challenge waits for the cardholder
	// before the action fails with authentication_timeout; default 30
	// minutes.
	ChallengeTTL time.Duration
	// DisputeDelay is how long after a charge by the "dispute" test card
	// completes its dispute opens (due work); default one minute.
	DisputeDelay time.Duration
	// DisputeEvidenceWindow is how long a dispute needs_response before it
	// goes under_review by itself (its evidence_due_by); default 7 days.
	DisputeEvidenceWindow time.Duration
	// RefundDelay is how long after creation the sandbox acquirer answers
	// a pending refund (due work): a refund of the refund_fails test card
	// fails, any other succeeds. Default 5 seconds.
	RefundDelay time.Duration
}

// Service runs payment intents and intent actions over one store, moving
// their money through the ledger.
type Service struct {
	db   storage.Backend
	led  *ledger.Service
	o    Options
	ids  *corebank.IDs
	tree scope.Tree
}

// NewService returns the acquiring service over db, posting through led.
// It starts no goroutines: challenge expiry is due work (DueJobs).
func NewService(db storage.Backend, led *ledger.Service, opt *Options) *Service {
	var o Options
	if opt != nil {
		o = *opt
	}
	o.Deps = o.Deps.WithDefaults(led.Clock())
	if o.ChallengeTTL <= 0 {
		o.ChallengeTTL = 30 * time.Minute
	}
	if o.DisputeDelay <= 0 {
		o.DisputeDelay = time.Minute
	}
	if o.DisputeEvidenceWindow <= 0 {
		o.DisputeEvidenceWindow = 7 * 24 * time.Hour
	}
	if o.RefundDelay <= 0 {
		o.RefundDelay = 5 * time.Second
	}
	return &Service{db: db, led: led, o: o, ids: o.IDs, tree: o.Tree}
}

// Migrations returns acquiring's one-time changes to stores written by
// earlier releases: none yet (the package is new).
func (s *Service) Migrations() []storage.Migration { return nil }

// dueChallenge is the due-queue kind of a 3DS challenge's expiry.
const dueChallenge = "acquiring.challenge"

// DueJobs returns acquiring's due work, in this order at one instant:
// kind "acquiring.challenge" fails an action whose 3DS challenge nobody
// answered within ChallengeTTL (status_reason authentication_timeout,
// payment_intent.failed); "acquiring.refund" is the sandbox acquirer's
// answer to a refund RefundDelay after it was made (see CreateRefund);
// "acquiring.dispute" disputes a charge of the "dispute" test card
// DisputeDelay after it completed (less what refunds took by then);
// "acquiring.evidence" puts a dispute still needs_response at its
// evidence_due_by under_review.
func (s *Service) DueJobs() []storage.DueJob {
	return []storage.DueJob{{Kind: dueChallenge, Tx: s.expireChallenge}, {Kind: dueRefund, Tx: s.answerRefund},
		{Kind: dueDispute, Tx: s.openCardDispute}, {Kind: dueEvidence, Tx: s.reviewDispute}}
}

// RunDue does acquiring's due work at or before asOf and returns how many
// items it handled.
func (s *Service) RunDue(ctx context.Context, asOf time.Time) (int, error) {
	return storage.NewDue(s.db, s.o.Clock, 0, s.DueJobs()...).RunDue(ctx, asOf)
}
