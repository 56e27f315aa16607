package funding

import (
	"time"

	"github.com/benbjohnson/clock"
	"github.com/shopspring/decimal"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/internal/scope"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/service"
	"github.com/corebank/corebank/storage"
)

// The package has two services, on purpose: Service records inflows, and
// SessionService runs funding sessions on top of it. A SessionService has
// no dependencies of its own beyond its rails: it reads the inflow
// service's store, ledger, clock, IDs and tree, and a settled session is
// one of its inflows. It is separate so that an embedder that takes money
// in through its own rails builds the inflow Service alone, without the
// four rail providers and the sessions' due work.

// Options are the Service's optional dependencies.
type Options struct {
	// Deps are the clock, IDs, tree and logger every service shares; the
	// clock defaults to the ledger's. The tree decides the scope of
	// CreateInflow and of the sessions.
	service.Deps
	// SettleDelay is how long an unsettled inflow stays pending; default 60 s.
	SettleDelay time.Duration
}

// Service records inflows and moves their money through the ledger.
type Service struct {
	db     storage.Backend
	led    *ledger.Service
	clock  clock.Clock
	ids    *corebank.IDs
	settle time.Duration
	tree   scope.Tree
}

// NewService returns a funding service over db that posts through led. It
// starts no goroutines; call RunDue to settle pending inflows.
func NewService(db storage.Backend, led *ledger.Service, opt *Options) *Service {
	var o Options
	if opt != nil {
		o = *opt
	}
	o.Deps = o.Deps.WithDefaults(led.Clock())
	if o.SettleDelay <= 0 {
		o.SettleDelay = time.Minute
	}
	return &Service{db: db, led: led, clock: o.Clock, ids: o.IDs, settle: o.SettleDelay, tree: o.Tree}
}

// SessionOptions are the SessionService's optional dependencies.
type SessionOptions struct {
	// OpenBanking, Momo, Crypto and ETransfer are the rails' providers;
	// nil means the sandbox provider of the rail.
	OpenBanking OpenBankingProvider
	Momo        MomoProvider
	Crypto      CryptoProvider
	ETransfer   ETransferProvider
	// CheckoutBase is the URL the sandbox checkout pages are served under
	// (checkout_url is CheckoutBase + "/sandbox/checkout/<token>"); ""
	// gives a path from the server's root.
	CheckoutBase string
	// CheckoutTTL is how long an open-banking session waits for its payer;
	// default 30 minutes.
	CheckoutTTL time.Duration
	// MomoPromptTTL is how long a momo push prompt waits for an answer;
	// default 60 s.
	MomoPromptTTL time.Duration
	// ETransferTTL is how long an e-Transfer waits to be validated;
	// default 30 days.
	ETransferTTL time.Duration
	// PayerDelay is when the sandbox payers answer by themselves (a momo
	// prompt approved or refused, a magic crypto amount paid); default 5 s.
	PayerDelay time.Duration
	// SettleDelay is how long a session stays pending_settlement before it
	// settles by itself; default 60 s. Negative: never by itself (a real
	// provider reports settled).
	SettleDelay time.Duration
	// UnderpaymentTolerance is the fraction of a crypto invoice a payer
	// may fall short by and still settle (what arrived); default 0.
	UnderpaymentTolerance decimal.Decimal
}

// SessionService runs funding sessions over the inflow service's store,
// ledger, clock, IDs and tree: a settled session is an inflow of its
// account.
type SessionService struct {
	in *Service
	o  SessionOptions
}

// NewSessionService returns the funding-session service over in. It
// starts no goroutines: expiry, the sandbox payers and settlement are due
// work (DueJobs).
func NewSessionService(in *Service, opt *SessionOptions) *SessionService {
	var o SessionOptions
	if opt != nil {
		o = *opt
	}
	if o.CheckoutTTL <= 0 {
		o.CheckoutTTL = 30 * time.Minute
	}
	if o.MomoPromptTTL <= 0 {
		o.MomoPromptTTL = time.Minute
	}
	if o.ETransferTTL <= 0 {
		o.ETransferTTL = 30 * 24 * time.Hour
	}
	if o.PayerDelay <= 0 {
		o.PayerDelay = 5 * time.Second
	}
	if o.SettleDelay == 0 {
		o.SettleDelay = time.Minute
	}
	sb := sandboxRails{base: o.CheckoutBase, payerDelay: o.PayerDelay}
	if o.OpenBanking == nil {
		o.OpenBanking = sb
	}
	if o.Momo == nil {
		o.Momo = sb
	}
	if o.Crypto == nil {
		o.Crypto = sb
	}
	if o.ETransfer == nil {
		o.ETransfer = sb
	}
	return &SessionService{in: in, o: o}
}
