package payments

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/internal/scope"
	"github.com/corebank/corebank/storage"
)

// RateProvider prices currency conversion. Rate returns the mid-market
// rate (units of to per unit of from) and the spread, a fraction of the
// rate (0.005 is 50 bps) taken off the mid for the customer. It is called
// outside any storage transaction. An error of kind KindInvalid is passed
// to the caller as is (an unsupported pair); any other error makes
// CreateQuote return ErrFXProviderUnavailable.
type RateProvider interface {
	Rate(ctx context.Context, from, to string) (mid, spread decimal.Decimal, err error)
}

// Decimal is a decimal.Decimal that encodes to JSON as a number (SPEC's
// rate is a number) and decodes from a number or a string.
type Decimal struct{ decimal.Decimal }

// MarshalJSON writes the decimal as a JSON number.
func (d Decimal) MarshalJSON() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalJSON reads a JSON number or string.
func (d *Decimal) UnmarshalJSON(b []byte) error { return d.Decimal.UnmarshalJSON(b) }

// Quote statuses (SPEC "FX quote").
const (
	QuoteActive  = "active"
	QuoteUsed    = "used"
	QuoteExpired = "expired"
)

// MinQuoteAmountFrom is the smallest amount_from a quote may be asked for.
const MinQuoteAmountFrom = 100

// Quote is a locked FX rate (SPEC "FX quote"). Status and ValidFor inside
// Quote are computed from the clock on every read.
type Quote struct {
	ID         string     `json:"id"`
	EntityID   string     `json:"entity_id"`
	From       string     `json:"from"`
	To         string     `json:"to"`
	AmountFrom int64      `json:"amount_from"`
	AmountTo   int64      `json:"amount_to"`
	Rate       Decimal    `json:"rate"`
	Quote      QuoteState `json:"quote"`
	// AccountID is the source account of a corridor quote, "" for an
	// indicative quote.
	AccountID string `json:"account_id"`
	Created   int64  `json:"created"`
	Updated   int64  `json:"updated"`
}

// QuoteState is the quote object of a Quote.
type QuoteState struct {
	Status    string `json:"status"`
	ExpiresAt int64  `json:"expires_at"`
	// ValidFor is the whole seconds left before ExpiresAt; 0 once used or
	// expired.
	ValidFor        int64   `json:"valid_for"`
	UsedAt          *int64  `json:"used_at"`
	UsedInPaymentID *string `json:"used_in_payment_id"`
}

// NewQuote is the body of POST /fx-quotes. Exactly one of AmountFrom
// (at least 100 smallest units of FromCurrency) and AmountTo is set; the
// other is computed.
type NewQuote struct {
	// EntityID is the entity the quote is for ("" is the caller's); with
	// AccountID the quote is for the account's owner, which must lie in
	// EntityID's tree.
	EntityID     string `json:"entity_id,omitempty"`
	FromCurrency string `json:"from_currency"`
	ToCurrency   string `json:"to_currency"`
	AmountFrom   int64  `json:"amount_from,omitempty"`
	AmountTo     int64  `json:"amount_to,omitempty"`
	AccountID    string `json:"account_id,omitempty"`
}

// view sets the computed fields for instant now.
func (q *Quote) view(now time.Time) {
	ms := corebank.Millis(now)
	q.Quote.ValidFor = 0
	if q.Quote.Status != QuoteActive {
		return
	}
	if ms >= q.Quote.ExpiresAt {
		q.Quote.Status = QuoteExpired
		return
	}
	q.Quote.ValidFor = (q.Quote.ExpiresAt - ms) / 1000
}

// rateDigits is how many significant digits a quoted rate keeps.
const rateDigits = 10

// customerRate is mid less spread (and margin), truncated to rateDigits
// significant digits.
func customerRate(mid, spread decimal.Decimal) decimal.Decimal {
	r := mid.Mul(decimal.NewFromInt(1).Sub(spread))
	intDigits := r.NumDigits() + int(r.Exponent())
	return r.Truncate(int32(rateDigits - intDigits))
}

// Convert returns the amounts of a conversion at rate between currencies
// with exponents expFrom and expTo: given amountFrom (> 0) it returns
// amountTo = amountFrom*rate*10^(expTo-expFrom); given amountTo it returns
// amountFrom = amountTo/rate*10^(expFrom-expTo). The computed side is
// rounded toward zero; a result beyond 2^53-1 (the largest amount JSON
// carries exactly) is returned as -1.
func Convert(rate decimal.Decimal, expFrom, expTo int, amountFrom, amountTo int64) (int64, int64) {
	if amountFrom > 0 {
		v := decimal.NewFromInt(amountFrom).Mul(rate).Shift(int32(expTo - expFrom))
		return amountFrom, clampAmount(v.Truncate(0))
	}
	num := decimal.NewFromInt(amountTo).Shift(int32(expFrom - expTo))
	q, _ := num.QuoRem(rate, 0)
	return clampAmount(q), amountTo
}

func clampAmount(v decimal.Decimal) int64 {
	if v.GreaterThan(decimal.NewFromInt(maxAmount)) {
		return -1
	}
	return v.IntPart()
}

// maxAmount bounds amounts so they survive a JSON float round trip.
const maxAmount = 1<<53 - 1

// CreateQuote prices and stores an active quote, valid for
// Options.QuoteValidity, for the owner of in.AccountID (a corridor quote;
// the account must lie in the tree of in.EntityID, the caller's own entity
// when "") or else for in.EntityID (an indicative quote). It returns
// corebank.ErrForbidden for a read-only caller, corebank.ErrEntityNotFound
// for an entity_id outside the caller's tree, ErrAccountNotFound for an
// account missing or outside that tree alike (both checked before the
// body) or deleted, a validation error naming from_currency, to_currency,
// amount_from, amount_to or account_id (an unsupported pair, from == to,
// both or neither amount, amount_from below 100, an account in another
// currency), and ErrFXProviderUnavailable when the rate provider fails.
func (s *Service) CreateQuote(ctx context.Context, caller corebank.Caller, in NewQuote) (*Quote, error) {
	if err := caller.CheckWrite(); err != nil {
		return nil, err
	}
	// Scope first, so that a foreign entity_id or account answers the same
	// whatever the body holds; the rate provider is asked outside any
	// transaction, and the account is checked again when the quote is
	// stored.
	entityID, err := storage.View(ctx, s.db, func(tx storage.Tx) (string, error) {
		return actsFor(s, tx, caller, in.EntityID, in.AccountID, s.ledgerAccount, accountNotFound(in.AccountID))
	})
	if err != nil {
		return nil, err
	}
	p := corebank.Problems{}
	from, okFrom := CurrencyInfo(in.FromCurrency)
	to, okTo := CurrencyInfo(in.ToCurrency)
	switch {
	case in.FromCurrency == "":
		p.Add("from_currency", "is required")
	case !okFrom:
		p.Add("from_currency", "is not a supported currency")
	}
	switch {
	case in.ToCurrency == "":
		p.Add("to_currency", "is required")
	case !okTo:
		p.Add("to_currency", "is not a supported currency")
	case in.ToCurrency == in.FromCurrency:
		p.Add("to_currency", "must differ from from_currency")
	}
	switch {
	case in.AmountFrom != 0 && in.AmountTo != 0:
		p.Add("amount_to", "give exactly one of amount_from and amount_to")
	case in.AmountFrom == 0 && in.AmountTo == 0:
		p.Add("amount_from", "give exactly one of amount_from and amount_to")
	case in.AmountFrom != 0 && in.AmountFrom < MinQuoteAmountFrom:
		p.Add("amount_from", "must be at least 100 smallest units")
	case in.AmountFrom > maxAmount:
		p.Add("amount_from", "must be at most "+strconv.FormatInt(maxAmount, 10)+" smallest units")
	case in.AmountTo < 0 || in.AmountTo > maxAmount:
		p.Add("amount_to", "must be a positive number of smallest units")
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	mid, spread, err := s.rates.Rate(ctx, in.FromCurrency, in.ToCurrency)
	if err != nil {
		if corebank.KindOf(err) == corebank.KindInvalid {
			return nil, err
		}
		e := *ErrFXProviderUnavailable
		e.Err = err
		return nil, &e
	}
	if !mid.IsPositive() || spread.IsNegative() || spread.GreaterThanOrEqual(decimal.NewFromInt(1)) {
		return nil, ErrFXProviderUnavailable.With("the rate provider returned an unusable rate")
	}
	now := s.clock.Now()
	q := &Quote{ID: s.ids.New(now), EntityID: entityID, From: in.FromCurrency, To: in.ToCurrency,
		AccountID: in.AccountID, Created: corebank.Millis(now), Updated: corebank.Millis(now)}
	if in.AccountID != "" {
		spread = spread.Add(decimal.New(s.margin, -4))
	}
	rate := customerRate(mid, spread)
	if !rate.IsPositive() {
		return nil, ErrFXProviderUnavailable.With("the rate provider returned an unusable rate")
	}
	q.Rate = Decimal{rate}
	q.AmountFrom, q.AmountTo = Convert(rate, from.Exponent, to.Exponent, in.AmountFrom, in.AmountTo)
	if q.AmountTo < 0 {
		return nil, corebank.InvalidField("amount_from", "converts to more "+in.ToCurrency+" than an amount may hold")
	}
	if q.AmountTo == 0 {
		return nil, corebank.InvalidField("amount_from", "is too small to convert to any "+in.ToCurrency)
	}
	if q.AmountFrom <= 0 || q.AmountFrom > maxAmount {
		return nil, corebank.InvalidField("amount_to", "converts to an unusable amount of "+in.FromCurrency)
	}
	if q.AmountFrom < MinQuoteAmountFrom {
		// The minimum binds the source amount however the quote is asked
		// for; otherwise amount_to would be a way around it.
		return nil, corebank.InvalidField("amount_to", "converts to less than the minimum amount_from of 100 smallest units of "+in.FromCurrency)
	}
	q.Quote = QuoteState{Status: QuoteActive, ExpiresAt: corebank.Millis(now.Add(s.validity))}
	// The stored quote comes back from the transaction, so that the retry of
	// an idempotent request whose quote committed answers that quote.
	q, err = storage.Update(ctx, s.db, func(tx storage.Tx) (*Quote, error) {
		if in.AccountID != "" {
			acct, err := s.accountOf(tx, entityID, in.AccountID)
			if err != nil {
				return nil, err
			}
			if acct.Currency != in.FromCurrency {
				return nil, corebank.InvalidField("account_id", "holds "+acct.Currency+", not from_currency "+in.FromCurrency)
			}
		}
		if err := storage.Schedule(tx, dueQuote, q.Quote.ExpiresAt, q.ID); err != nil {
			return nil, err
		}
		return q, storage.PutJSON(tx, bucketQuotes, []byte(q.ID), q)
	})
	if err != nil {
		return nil, err
	}
	q.view(now)
	return q, nil
}

// Owner returns the entity the quote was made for (scope.Owned).
func (q *Quote) Owner() string { return q.EntityID }

// getQuote reads quote id, or ErrQuoteNotFound.
func getQuote(tx storage.Tx, id string) (*Quote, error) {
	return getRecord[Quote](tx, bucketQuotes, id, ErrQuoteNotFound)
}

// GetQuote returns quote id as of now when it lies in the tree of entityID
// (the caller's own entity when ""): an active quote past expires_at reads
// as expired, and valid_for is the seconds left. It returns
// corebank.ErrEntityNotFound for an entityID outside the caller's tree and
// ErrQuoteNotFound for a missing quote or one outside the entity's tree
// alike.
func (s *Service) GetQuote(ctx context.Context, caller corebank.Caller, entityID, id string) (*Quote, error) {
	now := s.clock.Now()
	q, err := storage.View(ctx, s.db, func(tx storage.Tx) (*Quote, error) {
		return scope.Get(tx, s.tree, caller, entityID, id, getQuote, ErrQuoteNotFound)
	})
	if err != nil {
		return nil, err
	}
	q.view(now)
	return q, nil
}

// dueQuote is the due-work kind of a quote's expiry, scheduled at
// expires_at and removed when a transfer uses the quote.
const dueQuote = "payments.quote"

// expireQuoteTx marks the quote of a due item expired, unless a transfer
// used it meanwhile.
func expireQuoteTx(tx storage.Tx, now time.Time, item storage.DueItem) error {
	q, err := getQuote(tx, item.ID)
	if errors.Is(err, ErrQuoteNotFound) {
		return nil
	}
	if err != nil || q.Quote.Status != QuoteActive {
		return err
	}
	q.Quote.Status, q.Updated = QuoteExpired, corebank.Millis(now)
	return storage.PutJSON(tx, bucketQuotes, []byte(q.ID), q)
}

// SandboxRates is a RateProvider with a table of mid rates against USD
// and a spread per currency; a pair's mid crosses through USD and its
// spread is the sum of both currencies' spreads. Stablecoins are 1:1 with
// USD and carry no spread by default. It is safe for concurrent use.
type SandboxRates struct {
	mu     sync.RWMutex
	perUSD map[string]decimal.Decimal
	spread map[string]int64
	outage bool
}

// SandboxRatesOptions overrides the sandbox's default table. PerUSD gives
// units of a currency per 1 USD; SpreadBps a currency's spread in basis
// points.
type SandboxRatesOptions struct {
	PerUSD    map[string]decimal.Decimal
	SpreadBps map[string]int64
}

// DefaultSandboxRates returns the sandbox's default table: units of each
// supported currency per 1 USD, and each currency's spread in bps.
func DefaultSandboxRates() (perUSD map[string]decimal.Decimal, spreadBps map[string]int64) {
	d := decimal.RequireFromString
	perUSD = map[string]decimal.Decimal{
		"USD": d("1"), "USC": d("1"), "UST": d("1"), "RLD": d("1"),
		"GBP": d("0.79"), "EUR": d("0.92"), "CAD": d("1.37"), "AED": d("3.6725"),
		"ZAR": d("18.20"), "NGN": d("1550"), "KES": d("129.50"), "MXN": d("17.10"),
		"GHS": d("15.50"), "TZS": d("2650"), "UGX": d("3700"),
	}
	spreadBps = map[string]int64{
		"USD": 0, "USC": 0, "UST": 0, "RLD": 0,
		"GBP": 20, "EUR": 20, "CAD": 25, "AED": 25, "ZAR": 75, "NGN": 150,
		"KES": 100, "MXN": 60, "GHS": 150, "TZS": 150, "UGX": 150,
	}
	return perUSD, spreadBps
}

// NewSandboxRates returns a sandbox provider with the default table
// overridden by opt (nil for none).
func NewSandboxRates(opt *SandboxRatesOptions) *SandboxRates {
	perUSD, spread := DefaultSandboxRates()
	if opt != nil {
		for k, v := range opt.PerUSD {
			perUSD[k] = v
		}
		for k, v := range opt.SpreadBps {
			spread[k] = v
		}
	}
	return &SandboxRates{perUSD: perUSD, spread: spread}
}

// OutageSimulator is a RateProvider whose outage can be switched on and
// off, as SandboxRates' can.
type OutageSimulator interface {
	SetOutage(down bool)
}

// SetFXOutage switches the rate provider's simulated outage (POST
// /sandbox/fx/outage). It returns false, changing nothing, when the
// provider cannot simulate one (it is not the sandbox).
func (s *Service) SetFXOutage(down bool) bool {
	o, ok := s.rates.(OutageSimulator)
	if ok {
		o.SetOutage(down)
	}
	return ok
}

// SetOutage makes Rate fail (true) or work (false), simulating the
// provider being down (POST /sandbox/fx/outage).
func (r *SandboxRates) SetOutage(down bool) {
	r.mu.Lock()
	r.outage = down
	r.mu.Unlock()
}

// Outage reports whether SetOutage(true) is in force.
func (r *SandboxRates) Outage() bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.outage
}

// SetRate sets the units of currency per 1 USD and its spread in bps.
func (r *SandboxRates) SetRate(currency string, perUSD decimal.Decimal, spreadBps int64) {
	r.mu.Lock()
	r.perUSD[currency], r.spread[currency] = perUSD, spreadBps
	r.mu.Unlock()
}

// errSandboxOutage is what Rate returns during a simulated outage.
var errSandboxOutage = corebank.E(corebank.KindUnavailable, "fx_provider_unavailable", "sandbox FX outage")

// Rate returns mid = perUSD[to]/perUSD[from] (to 16 decimal places) and
// spread = (spread[from]+spread[to]) bps. It returns a validation error
// naming from_currency or to_currency for a currency not in the table, and
// an Unavailable error during an outage.
func (r *SandboxRates) Rate(ctx context.Context, from, to string) (decimal.Decimal, decimal.Decimal, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.outage {
		return decimal.Zero, decimal.Zero, errSandboxOutage
	}
	f, ok := r.perUSD[from]
	if !ok || !f.IsPositive() {
		return decimal.Zero, decimal.Zero, corebank.InvalidField("from_currency", "the pair "+from+"/"+to+" is not supported")
	}
	t, ok := r.perUSD[to]
	if !ok || !t.IsPositive() {
		return decimal.Zero, decimal.Zero, corebank.InvalidField("to_currency", "the pair "+from+"/"+to+" is not supported")
	}
	mid := t.DivRound(f, 16)
	if from == "USD" {
		mid = t
	}
	return mid, decimal.New(r.spread[from]+r.spread[to], -4), nil
}
