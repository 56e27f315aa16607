package capital

import (
	"context"
	"time"

	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/service"
	"github.com/corebank/corebank/storage"
)

// Directory tells capital an entity's type ("individual" or "business")
// and whether it is active (approved), for eligibility and inactive
// owners. entities.Gate implements it.
type Directory interface {
	// EntityProfileTx returns entity id's type and status; an unknown id
	// is corebank.ErrEntityNotFound.
	EntityProfileTx(tx storage.Tx, id string) (typ, status string, err error)
}

// Options are the Service's optional dependencies.
type Options struct {
	// Deps are the clock, IDs, tree and logger every service shares; the
	// clock defaults to the ledger's.
	service.Deps
	// Directory gives entities' types and statuses (entities.Gate{}); nil
	// treats every entity as an active business.
	Directory Directory
	// ReservationTTL is how long an order reserves; default 15 minutes.
	ReservationTTL time.Duration
	// RecoveryDelay is how long after a confirmation's debit the recovery
	// job completes an order still CONFIRMING or RECOVERY_REQUIRED;
	// default one minute.
	RecoveryDelay time.Duration
	// SettlementDelay is how long after a withdrawal the settlement job
	// pays out; default 0 (the next due run).
	SettlementDelay time.Duration
	// AfterDebit, when set, runs between a confirmation's debit and its
	// capital account (tests inject failures with it): an error leaves the
	// order RECOVERY_REQUIRED for the recovery job.
	AfterDebit func(orderID string) error
}

// Service runs capital products, orders and capital accounts over one
// store, moving their money through the ledger.
type Service struct {
	db  storage.Backend
	led *ledger.Service
	o   Options
}

// NewService returns the capital service over db, posting through led.
// It starts no goroutines: expiry, accrual, maturity, settlement, refunds
// and lock ends are due work (DueJobs).
func NewService(db storage.Backend, led *ledger.Service, opt *Options) *Service {
	var o Options
	if opt != nil {
		o = *opt
	}
	o.Deps = o.Deps.WithDefaults(led.Clock())
	if o.ReservationTTL <= 0 {
		o.ReservationTTL = 15 * time.Minute
	}
	if o.RecoveryDelay <= 0 {
		o.RecoveryDelay = time.Minute
	}
	return &Service{db: db, led: led, o: o}
}

// Migrations returns capital's one-time changes to stores written by
// earlier releases: none yet (the package is new).
func (s *Service) Migrations() []storage.Migration { return nil }

// DueJobs returns capital's due work, in this order at one instant:
// "capital.recover" completes a confirmation left after its debit
// (CONFIRMING or RECOVERY_REQUIRED, Options.RecoveryDelay after the
// debit); "capital.expire" expires an unconfirmed reservation, releasing
// its inventory; "capital.accrual" posts a deposit's DAILY_ACCRUAL
// transactions day by day; "capital.maturity" moves an ACTIVE deposit to
// MATURED; "capital.settle" pays a withdrawal to the funding account and
// closes the deposit; "capital.refund" refunds a share holding's
// unallocated value after the allotment; "capital.lock" makes a share
// holding TRANSFERABLE when its lock ends. Accruals run before maturity
// so that a deposit matures with every day posted.
func (s *Service) DueJobs() []storage.DueJob {
	return []storage.DueJob{{Kind: dueRecover, Tx: s.recover}, {Kind: dueExpire, Tx: s.expire},
		{Kind: dueAccrual, Tx: s.accrue}, {Kind: dueMaturity, Tx: s.mature}, {Kind: dueSettle, Tx: s.settle},
		{Kind: dueRefund, Tx: s.refundDue}, {Kind: dueLock, Tx: s.lockDue}}
}

// RunDue does capital's due work at or before asOf and returns how many
// items it handled.
func (s *Service) RunDue(ctx context.Context, asOf time.Time) (int, error) {
	return storage.NewDue(s.db, s.o.Clock, 0, s.DueJobs()...).RunDue(ctx, asOf)
}
