package capital

import (
	"context"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/internal/scope"
	"github.com/corebank/corebank/ledger"
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
	// Clock is the time source; default the ledger's.
	Clock clock.Clock
	// IDs makes product, order, account and transaction IDs; default
	// crypto-random ULIDs.
	IDs *corebank.IDs
	// Tree places entities in their tree for the scope checks
	// (entities.Gate{}); nil: a caller reaches only its own entity.
	Tree scope.Tree
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
	if o.Clock == nil {
		o.Clock = led.Clock()
	}
	if o.IDs == nil {
		o.IDs = corebank.NewIDs(nil)
	}
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

// DueJobs returns capital's due work (see doc.go "Due work" for the
// order).
func (s *Service) DueJobs() []storage.DueJob { return nil }

// RunDue does capital's due work at or before asOf and returns how many
// items it handled.
func (s *Service) RunDue(ctx context.Context, asOf time.Time) (int, error) {
	return storage.NewDue(s.db, s.o.Clock, 0, s.DueJobs()...).RunDue(ctx, asOf)
}

// CreateProduct creates a product owned by entityID (the caller's when
// "") from in (POST /sandbox/products), active.
//
// Errors: corebank.ErrForbidden; corebank.ErrEntityNotFound; a validation
// error naming each bad field.
func (s *Service) CreateProduct(ctx context.Context, caller corebank.Caller, entityID string, in NewProduct) (*Product, error) {
	return nil, errNotBuilt
}

// GetProduct returns product id with its documents as entity entityID
// (the caller's when "") sees it.
//
// Errors: corebank.ErrEntityNotFound; ErrProductNotFound (also for an
// inactive, ineligible, inactive-owner or misconfigured product).
func (s *Service) GetProduct(ctx context.Context, caller corebank.Caller, entityID, id string) (*Product, error) {
	return nil, errNotBuilt
}

// ListProducts returns one page (default 25) of the products entity
// entityID may order, oldest first, without documents: hidden, inactive,
// ineligible, inactive-owner and zero-inventory products are left out;
// sold-out offerings are listed with orderable false.
//
// Errors: corebank.ErrEntityNotFound; a validation error naming type,
// currency, limit or cursor.
func (s *Service) ListProducts(ctx context.Context, caller corebank.Caller, entityID string, f ProductFilter, opts corebank.ListOptions) (*ProductPage, error) {
	return nil, errNotBuilt
}

// DeactivateProduct makes product id inactive (sandbox): it leaves lists,
// answers 404 and refuses new orders and confirmations; holdings go on.
//
// Errors: corebank.ErrForbidden; corebank.ErrEntityNotFound;
// ErrProductNotFound (the caller must reach the product's owner).
func (s *Service) DeactivateProduct(ctx context.Context, caller corebank.Caller, entityID, id string) (*Product, error) {
	return nil, errNotBuilt
}

// SetPrice sets share offering id's market price per share (sandbox):
// every holding's market_value becomes allocated_shares × price.
//
// Errors: as DeactivateProduct; a validation error on price;
// ErrInvalidForState for a fixed-return product.
func (s *Service) SetPrice(ctx context.Context, caller corebank.Caller, entityID, id string, price int64) (*Product, error) {
	return nil, errNotBuilt
}

// Allot makes the final allotment of share offering id (sandbox):
// allottedShares shares split pro rata over its LOCKED holdings (Allot,
// in order of confirmation). A holding allotted fewer shares than it
// bought becomes ALLOTMENT_ADJUSTED with a pending refund of its
// unallocated value; the others ALLOTMENT_CONFIRMED.
//
// Errors: as DeactivateProduct; a validation error on allotted_shares;
// ErrInvalidForState for a fixed-return product or one already allotted.
func (s *Service) Allot(ctx context.Context, caller corebank.Caller, entityID, id string, allottedShares int64) (*Product, error) {
	return nil, errNotBuilt
}

// Unlock ends share offering id's lock now (sandbox): its holdings
// become TRANSFERABLE (paying any pending refund first).
//
// Errors: as DeactivateProduct; ErrInvalidForState for a fixed-return
// product.
func (s *Service) Unlock(ctx context.Context, caller corebank.Caller, entityID, id string) (*Product, error) {
	return nil, errNotBuilt
}

// CreateOrder reserves an order (POST /product-orders) for
// Options.ReservationTTL; no money moves.
//
// Errors: corebank.ErrForbidden; corebank.ErrEntityNotFound;
// ErrProductNotFound; ledger.ErrAccountNotFound; ledger.ErrAccountDeleted;
// a validation error naming each bad field (principal, amount,
// waive_early_withdrawal, account_id, affirmations.N.document_id,
// affirmations.N.version, affirmations); ErrInvalidForState for a
// product off sale.
func (s *Service) CreateOrder(ctx context.Context, caller corebank.Caller, in NewOrder) (*Order, error) {
	return nil, errNotBuilt
}

// GetOrder returns order id with its agreements and capital account.
//
// Errors: corebank.ErrEntityNotFound; ErrOrderNotFound.
func (s *Service) GetOrder(ctx context.Context, caller corebank.Caller, entityID, id string) (*Order, error) {
	return nil, errNotBuilt
}

// ListOrders returns one page (default 25) of entity entityID's orders,
// oldest first, without agreements.
//
// Errors: corebank.ErrEntityNotFound; a validation error naming status,
// type, limit or cursor.
func (s *Service) ListOrders(ctx context.Context, caller corebank.Caller, entityID string, f OrderFilter, opts corebank.ListOptions) (*OrderPage, error) {
	return nil, errNotBuilt
}

// Confirm confirms order id: it debits the funding account exactly once,
// creates the capital account and its PURCHASE transaction, and answers
// the APPROVED order. An APPROVED order is answered as it is. A confirm
// that finds the product, its owner, the entity's eligibility or the
// sale window no longer passing answers the order REJECTED.
//
// Errors: corebank.ErrForbidden; corebank.ErrEntityNotFound;
// ErrOrderNotFound; ErrInvalidForState for an EXPIRED or REJECTED order;
// ErrAlreadyProcessing while CONFIRMING elsewhere or RECOVERY_REQUIRED;
// ledger.ErrInsufficientFunds (the order stays RESERVED).
func (s *Service) Confirm(ctx context.Context, caller corebank.Caller, entityID, id string, in Confirmation) (*Order, error) {
	return nil, errNotBuilt
}

// PreviewWithdrawal computes what Withdraw would pay now, with no side
// effects.
//
// Errors: corebank.ErrEntityNotFound; ErrOrderNotFound;
// ErrInvalidForState for an order without a fixed-return capital account.
func (s *Service) PreviewWithdrawal(ctx context.Context, caller corebank.Caller, entityID, id string) (*WithdrawalPreview, error) {
	return nil, errNotBuilt
}

// Withdraw withdraws order id's fixed-return capital account: before
// maturity EARLY_LIQUIDATING with PENALTY, WITHHOLDING and PAYOUT
// transactions, when MATURED CLOSING; the settlement job then pays out.
// An account already CLOSING or CLOSED is answered as it is.
//
// Errors: corebank.ErrForbidden; corebank.ErrEntityNotFound;
// ErrOrderNotFound; ErrInvalidForState for every refusal SPEC.md lists.
func (s *Service) Withdraw(ctx context.Context, caller corebank.Caller, entityID, id string) (*Order, error) {
	return nil, errNotBuilt
}

// ListTransactions returns one page (default 25) of the capital
// transactions of order id's capital account, oldest first (an empty page
// before it is approved).
//
// Errors: corebank.ErrEntityNotFound; ErrOrderNotFound; a validation
// error naming limit or cursor.
func (s *Service) ListTransactions(ctx context.Context, caller corebank.Caller, entityID, id string, opts corebank.ListOptions) (*TransactionPage, error) {
	return nil, errNotBuilt
}

// Portfolio returns entity entityID's holdings and totals per currency,
// accrued at request time.
//
// Errors: corebank.ErrEntityNotFound; a validation error naming currency.
func (s *Service) Portfolio(ctx context.Context, caller corebank.Caller, entityID string, f PortfolioFilter) (*Portfolio, error) {
	return nil, errNotBuilt
}
