package capital

import (
	"fmt"
	"time"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/storage"
)

// bucket holds every capital record and index:
//
//	p/<product>               productRecord (JSON)
//	pl/<product>              products, in creation order (list index)
//	ph/<product>/<account>    the product's holdings, in confirmation order
//	o/<order>                 orderRecord (JSON)
//	ol/<entity>/<order>       the entity's orders (list index)
//	a/<account>               accountRecord (JSON)
//	ae/<entity>/<account>     the entity's holdings (portfolio)
//	t/<account>/<transaction> Transaction (JSON), oldest first
const bucket = storage.Bucket("capital")

// System account purposes capital moves money through
// (ledger.SystemAccount(currency, purpose)).
const (
	// PurposeFixedReturn holds deposits' principal.
	PurposeFixedReturn = "capital.fixed_return"
	// PurposeInterest pays interest (it goes negative by what was paid).
	PurposeInterest = "capital.interest"
	// PurposeShareOffering holds money paid for shares.
	PurposeShareOffering = "capital.share_offering"
	// PurposeWithholding receives tax withheld from interest.
	PurposeWithholding = "capital.withholding"
)

// productRecord is a stored product: the product (documents included;
// Orderable and Inventory are computed on read) and its inventory counts.
type productRecord struct {
	Product
	// Reserved is the shares held by RESERVED or CONFIRMING orders; Sold
	// the shares of approved orders (as bought, before any allotment).
	Reserved int64 `json:"reserved_shares,omitempty"`
	Sold     int64 `json:"sold_shares,omitempty"`
	// Allotted and Unlocked record the sandbox's final allotment and lock
	// end, each done once.
	Allotted bool `json:"allotted,omitempty"`
	Unlocked bool `json:"unlocked,omitempty"`
}

// orderRecord is a stored order (CapitalAccount is never stored; the
// account is read on answer).
type orderRecord struct {
	Order
	CapitalAccountID string `json:"capital_account_id_ref,omitempty"`
	// SecondaryID is the confirm body's secondary_id, persisted by the
	// debit step so that recovery gives it to the account.
	SecondaryID string `json:"secondary_id_ref,omitempty"`
	// DebitedAt is when the funding account was debited (the account's
	// start), 0 before.
	DebitedAt int64 `json:"debited_at,omitempty"`
}

// accountRecord is a stored capital account. AccruedInterest, MarketPrice
// and MarketValue are computed on read.
type accountRecord struct {
	Account
	FundingAccountID string `json:"funding_account_id"`
	// Fixed return: terms locked at purchase, accruals posted, and the
	// withdrawal's figures.
	PenaltyRate     string `json:"penalty_rate,omitempty"`
	WithholdingRate string `json:"withholding_rate,omitempty"`
	EarlyEnabled    bool   `json:"early_enabled,omitempty"`
	Waived          bool   `json:"waived,omitempty"`
	AccrualEnd      int64  `json:"accrual_end,omitempty"`
	PostedDays      int    `json:"posted_days,omitempty"`
	// Withdrawn is set by a withdrawal, with the days elapsed then
	// (accrual stops there) and the payout's figures.
	Withdrawn     bool  `json:"withdrawn,omitempty"`
	WithdrawnDays int   `json:"withdrawn_days,omitempty"`
	PayGross      int64 `json:"pay_gross,omitempty"`
	PayPenalty    int64 `json:"pay_penalty,omitempty"`
	PayWithheld   int64 `json:"pay_withheld,omitempty"`
	// Share offering: the value and fees still held for the refund.
	RefundValue int64 `json:"refund_value,omitempty"`
	RefundFees  int64 `json:"refund_fees,omitempty"`
}

func productKey(id string) []byte            { return storage.Key("p", id) }
func productListKey(id string) []byte        { return storage.Key("pl", id) }
func holdingKey(product, acct string) []byte { return storage.Key("ph", product, acct) }
func orderKey(id string) []byte              { return storage.Key("o", id) }
func orderListKey(entity, id string) []byte  { return storage.Key("ol", entity, id) }
func accountKey(id string) []byte            { return storage.Key("a", id) }
func entityHoldingKey(entity, acct string) []byte {
	return storage.Key("ae", entity, acct)
}
func transactionKey(acct, id string) []byte { return storage.Key("t", acct, id) }

// Owner is the entity that offers the product: its tree may move it
// (scope.Get; reading it is eligibility's, see visibleProduct).
func (r *productRecord) Owner() string { return r.OwnerEntityID }

// Owner is the entity that placed the order (scope.Get).
func (o *orderRecord) Owner() string { return o.EntityID }

func getProduct(tx storage.Tx, id string) (*productRecord, error) {
	return storage.LoadJSON[productRecord](tx, bucket, productKey(id), ErrProductNotFound)
}

func getOrder(tx storage.Tx, id string) (*orderRecord, error) {
	return storage.LoadJSON[orderRecord](tx, bucket, orderKey(id), ErrOrderNotFound)
}

// getAccount reads capital account id, which an order or index names: its
// absence is corruption, not a caller's mistake.
func getAccount(tx storage.Tx, id string) (*accountRecord, error) {
	return storage.LoadJSON[accountRecord](tx, bucket, accountKey(id), fmt.Errorf("capital: account %s missing: %w", id, storage.ErrCorrupt))
}

func putProduct(tx storage.Tx, r *productRecord) error {
	return storage.PutJSON(tx, bucket, productKey(r.ID), r)
}

func putOrder(tx storage.Tx, r *orderRecord) error {
	return storage.PutJSON(tx, bucket, orderKey(r.ID), r)
}

func putAccount(tx storage.Tx, r *accountRecord) error {
	return storage.PutJSON(tx, bucket, accountKey(r.ID), r)
}

// accountsUnder calls fn on every capital account an index names below
// prefix ("ph/<product>/", "ae/<entity>/"), in key order.
func accountsUnder(tx storage.Tx, prefix []byte, fn func(a *accountRecord) error) error {
	var ids []string
	err := tx.Scan(bucket, storage.ScanOptions{Prefix: prefix}, func(k, _ []byte) error {
		ids = append(ids, string(k[len(prefix):]))
		return nil
	})
	if err != nil {
		return err
	}
	for _, id := range ids {
		a, err := getAccount(tx, id)
		if err != nil {
			return err
		}
		if err := fn(a); err != nil {
			return err
		}
	}
	return nil
}

// addTransaction stores a capital transaction of account a.
func (s *Service) addTransaction(tx storage.Tx, now time.Time, a *accountRecord, typ string, amount int64, accrualDate string) (*Transaction, error) {
	t := &Transaction{ID: s.o.IDs.New(now), EntityID: a.EntityID, CapitalAccountID: a.ID,
		EventType: typ, Amount: amount, Created: now.UnixMilli()}
	if accrualDate != "" {
		t.AccrualDate = &accrualDate
	}
	return t, storage.PutJSON(tx, bucket, transactionKey(a.ID, t.ID), t)
}

func ptr[T any](v T) *T { return &v }

// days is n days of 24 hours.
func days(n int) time.Duration { return time.Duration(n) * 24 * time.Hour }

// defaultLimit is the page size of capital lists (SPEC.md: 25).
const defaultLimit = 25

// maxScan caps the index entries one list page examines.
const maxScan = 2000

// list is storage.CheckList with capital's default.
func checkList(opts corebank.ListOptions) (int, error) {
	return storage.CheckList(opts, defaultLimit)
}
