package capital

import (
	"github.com/shopspring/decimal"

	"github.com/corebank/corebank"
)

// Product types.
const (
	TypeFixedReturn   = "FIXED_RETURN"
	TypeShareOffering = "SHARE_OFFERING"
)

// Product visibility and status.
const (
	VisibilityPublic = "public"
	VisibilityHidden = "hidden"
	StatusActive     = "active"
	StatusInactive   = "inactive"
)

// Entity types a product may be limited to (eligible_entity_types).
const (
	EntityIndividual = "individual"
	EntityBusiness   = "business"
)

// Inventory statuses.
const (
	InventoryAvailable = "available"
	InventorySoldOut   = "sold_out"
)

// Order statuses (SPEC.md "Capital order").
const (
	OrderReserved         = "RESERVED"
	OrderConfirming       = "CONFIRMING"
	OrderApproved         = "APPROVED"
	OrderExpired          = "EXPIRED"
	OrderRejected         = "REJECTED"
	OrderRecoveryRequired = "RECOVERY_REQUIRED"
)

// Capital account states (SPEC.md "Capital account").
const (
	StateActive             = "ACTIVE"
	StateMatured            = "MATURED"
	StateEarlyLiquidating   = "EARLY_LIQUIDATING"
	StateClosing            = "CLOSING"
	StateClosed             = "CLOSED"
	StateLocked             = "LOCKED"
	StateAllotmentAdjusted  = "ALLOTMENT_ADJUSTED"
	StateAllotmentConfirmed = "ALLOTMENT_CONFIRMED"
	StateTransferable       = "TRANSFERABLE"
)

// Payout and refund statuses.
const (
	PayPending   = "pending"
	PayCompleted = "completed"
	PayFailed    = "failed"
)

// Capital transaction event types.
const (
	EventPurchase     = "PURCHASE"
	EventDailyAccrual = "DAILY_ACCRUAL"
	EventPenalty      = "PENALTY"
	EventWithholding  = "WITHHOLDING"
	EventPayout       = "PAYOUT"
	EventRefund       = "REFUND"
)

// Outbox event types capital appends (outside the webhook catalog, so they
// reach webhooks subscribed to all events).
const (
	EventOrderUpdated   = "product_orders.updated"
	EventAccountUpdated = "capital_accounts.updated"
)

// Document is one agreement document of a product. Version is a positive
// integer; a new version of a document makes affirmations of older ones
// stale.
type Document struct {
	ID      string `json:"id"`
	Title   string `json:"title"`
	URL     string `json:"url"`
	Version int    `json:"version"`
}

// NewDocument is a document in NewProduct (version default 1).
type NewDocument struct {
	Title   string `json:"title"`
	URL     string `json:"url"`
	Version int    `json:"version"`
}

// FixedTerms are a FIXED_RETURN product's terms, flat in the product's
// JSON. MaxPrincipal 0 means no maximum; with PrincipalBands set the
// principal must equal one band exactly and min/max are not used.
// EarlyWithdrawalMinDays is the earliest day (counted from the start) an
// early withdrawal may be asked for; LockInDays forbids it before then too.
// WithholdingRate is the tax withheld from gross interest at payout.
type FixedTerms struct {
	TenorDays                  int             `json:"tenor_days"`
	AnnualRate                 decimal.Decimal `json:"annual_rate"`
	DayCountBasis              int             `json:"day_count_basis"`
	MinPrincipal               int64           `json:"min_principal"`
	MaxPrincipal               int64           `json:"max_principal"`
	PrincipalBands             []int64         `json:"principal_bands"`
	EarlyWithdrawalEnabled     bool            `json:"early_withdrawal_enabled"`
	EarlyWithdrawalPenaltyRate decimal.Decimal `json:"early_withdrawal_penalty_rate"`
	EarlyWithdrawalMinDays     int             `json:"early_withdrawal_min_days"`
	LockInDays                 int             `json:"lock_in_days"`
	WithholdingRate            decimal.Decimal `json:"withholding_rate"`
}

// ShareTerms are a SHARE_OFFERING product's terms, flat in the product's
// JSON. OfferPrice is smallest units per share; fees are rates of the
// shares' value, each rounded down.
type ShareTerms struct {
	OfferPrice       int64           `json:"offer_price"`
	InventoryShares  int64           `json:"inventory_shares"`
	BrokerageFeeRate decimal.Decimal `json:"brokerage_fee_rate"`
	CrossDealFeeRate decimal.Decimal `json:"cross_deal_fee_rate"`
	LockDays         int             `json:"lock_days"`
}

// Inventory is a share offering's remaining whole shares (offered less
// reserved and sold).
type Inventory struct {
	Status   string `json:"status"`
	Quantity int64  `json:"quantity"`
}

// Product is a capital product as GET /products answers it. Exactly one
// of FixedTerms and ShareTerms is set, by Type. Documents is set on
// detail answers only (nil in lists, so omitted). Orderable says whether
// an order may be placed now: active, within the sale window, and for a
// share offering not sold out. Documents is omitted when there are none.
type Product struct {
	ID                  string   `json:"id"`
	Type                string   `json:"type"`
	ExternallyManaged   bool     `json:"externally_managed"`
	DisplayName         string   `json:"display_name"`
	Description         string   `json:"description"`
	Currency            string   `json:"currency"`
	SaleStartsAt        *int64   `json:"sale_starts_at"`
	SaleEndsAt          *int64   `json:"sale_ends_at"`
	Visibility          string   `json:"visibility"`
	EligibleEntityTypes []string `json:"eligible_entity_types"`
	Status              string   `json:"status"`
	Orderable           bool     `json:"orderable"`
	OwnerEntityID       string   `json:"owner_entity_id"`
	*FixedTerms
	*ShareTerms
	// MarketPrice is the last price SetProductPrice gave a share offering
	// (null before one).
	MarketPrice *int64     `json:"market_price,omitempty"`
	Inventory   *Inventory `json:"inventory"`
	Documents   []Document `json:"documents,omitempty"`
	Created     int64      `json:"created"`
}

// NewProduct is the body of POST /sandbox/products (CONTRACT.md's names,
// plus externally_managed, visibility (default public),
// eligible_entity_types (default all), principal_bands and
// withholding_rate). The fields of the other type must be absent.
// EntityID owns the product (the caller's entity when "").
type NewProduct struct {
	EntityID            string        `json:"entity_id,omitempty"`
	Type                string        `json:"type"`
	ExternallyManaged   bool          `json:"externally_managed,omitempty"`
	DisplayName         string        `json:"display_name"`
	Description         string        `json:"description"`
	Currency            string        `json:"currency"`
	SaleStartsAt        *int64        `json:"sale_starts_at,omitempty"`
	SaleEndsAt          *int64        `json:"sale_ends_at,omitempty"`
	Visibility          string        `json:"visibility,omitempty"`
	EligibleEntityTypes []string      `json:"eligible_entity_types,omitempty"`
	Documents           []NewDocument `json:"documents,omitempty"`

	TenorDays                  *int             `json:"tenor_days,omitempty"`
	AnnualRate                 *decimal.Decimal `json:"annual_rate,omitempty"`
	MinPrincipal               *int64           `json:"min_principal,omitempty"`
	MaxPrincipal               *int64           `json:"max_principal,omitempty"`
	PrincipalBands             []int64          `json:"principal_bands,omitempty"`
	EarlyWithdrawalEnabled     *bool            `json:"early_withdrawal_enabled,omitempty"`
	EarlyWithdrawalPenaltyRate *decimal.Decimal `json:"early_withdrawal_penalty_rate,omitempty"`
	EarlyWithdrawalMinDays     *int             `json:"early_withdrawal_min_days,omitempty"`
	LockInDays                 *int             `json:"lock_in_days,omitempty"`
	WithholdingRate            *decimal.Decimal `json:"withholding_rate,omitempty"`

	OfferPrice       *int64           `json:"offer_price,omitempty"`
	InventoryShares  *int64           `json:"inventory_shares,omitempty"`
	BrokerageFeeRate *decimal.Decimal `json:"brokerage_fee_rate,omitempty"`
	CrossDealFeeRate *decimal.Decimal `json:"cross_deal_fee_rate,omitempty"`
	LockDays         *int             `json:"lock_days,omitempty"`
}

// ProductFilter narrows ListProducts ("" matches all): EntityID is the
// entity whose view is listed (the caller's when ""; System may name
// none and sees every product).
type ProductFilter struct {
	EntityID string
	Type     string
	Currency string
}

// ProductPage is one page of products, for entity EntityID.
type ProductPage struct {
	*corebank.Page[Product]
	EntityID string
}

// Affirmation is one entry of NewOrder.Affirmations: the requesting entity
// affirms version Version of document DocumentID.
type Affirmation struct {
	DocumentID string `json:"document_id"`
	Version    int    `json:"version"`
}

// NewOrder is the body of POST /product-orders. Principal and
// WaiveEarlyWithdrawal are for FIXED_RETURN (both required), Amount (the
// desired spend) for SHARE_OFFERING; the other type's fields must be nil.
type NewOrder struct {
	ProductID            string        `json:"product_id"`
	AccountID            string        `json:"account_id"`
	EntityID             string        `json:"entity_id,omitempty"`
	Principal            *int64        `json:"principal,omitempty"`
	WaiveEarlyWithdrawal *bool         `json:"waive_early_withdrawal,omitempty"`
	Amount               *int64        `json:"amount,omitempty"`
	Affirmations         []Affirmation `json:"affirmations"`
}

// Agreement is one document of an order's agreement snapshot with the
// requesting entity's affirmation.
type Agreement struct {
	DocumentID string `json:"document_id"`
	Title      string `json:"title"`
	URL        string `json:"url"`
	Version    int    `json:"version"`
	ActionType string `json:"action_type"`
	ActionedAt int64  `json:"actioned_at"`
}

// Order is a product order. Amount is the reserved debit (principal, or
// total_debit of a share offering). Fields of the other product type are
// null. CapitalAccount is null until the order is APPROVED, then the
// capital account as of the answer (it has id and status). Agreements is
// set on detail answers only, and omitted when the product has no
// documents.
type Order struct {
	ID                   string      `json:"id"`
	EntityID             string      `json:"entity_id"`
	Reference            string      `json:"reference"`
	ProductID            string      `json:"product_id"`
	AccountID            string      `json:"account_id"`
	Type                 string      `json:"type"`
	Currency             string      `json:"currency"`
	Amount               int64       `json:"amount"`
	Principal            *int64      `json:"principal"`
	WaiveEarlyWithdrawal *bool       `json:"waive_early_withdrawal"`
	RequestedAmount      *int64      `json:"requested_amount"`
	AllocatedShares      *int64      `json:"allocated_shares"`
	OfferPrice           *int64      `json:"offer_price"`
	BrokerageFee         *int64      `json:"brokerage_fee"`
	CrossDealFee         *int64      `json:"cross_deal_fee"`
	TotalDebit           int64       `json:"total_debit"`
	Status               string      `json:"status"`
	StatusReason         *string     `json:"status_reason"`
	ReservationExpiresAt int64       `json:"reservation_expires_at"`
	ConfirmedAt          *int64      `json:"confirmed_at"`
	RejectedAt           *int64      `json:"rejected_at"`
	ExpiredAt            *int64      `json:"expired_at"`
	CapitalAccount       *Account    `json:"capital_account"`
	Agreements           []Agreement `json:"agreements,omitempty"`
	Created              int64       `json:"created"`
}

// OrderFilter narrows ListOrders ("" matches all): EntityID is the
// entity whose orders are listed (the caller's when "").
type OrderFilter struct {
	EntityID string
	Status   string
	Type     string
}

// OrderPage is one page of an entity's orders.
type OrderPage struct {
	*corebank.Page[Order]
	EntityID string
}

// Confirmation is the optional body of POST /product-orders/{id}/confirm.
// EntityID is the body's entity_id, used when ConfirmOrder's entityID is "".
// SecondaryID is kept on the capital account as secondary_id.
type Confirmation struct {
	EntityID    string `json:"entity_id,omitempty"`
	SecondaryID string `json:"secondary_id,omitempty"`
}

// PayoutStatus carries a fixed-return account's payout_status (null while
// no payout has begun).
type PayoutStatus struct {
	PayoutStatus *string `json:"payout_status"`
}

// RefundStatus carries a share-offering account's refund_status (null
// while no refund is owed).
type RefundStatus struct {
	RefundStatus *string `json:"refund_status"`
}

// AccountStatus is a capital account's status object: its state and,
// by type, payout_status or refund_status.
type AccountStatus struct {
	State string `json:"state"`
	*PayoutStatus
	*RefundStatus
}

// FixedAccount are a fixed-return capital account's fields, flat in its
// JSON (see capital/doc.go "Fixed return" for each figure).
type FixedAccount struct {
	Principal         int64           `json:"principal"`
	AnnualRate        decimal.Decimal `json:"annual_rate"`
	DayCountBasis     int             `json:"day_count_basis"`
	TenorDays         int             `json:"tenor_days"`
	StartAt           int64           `json:"start_at"`
	MaturityAt        int64           `json:"maturity_at"`
	EarlyWithdrawalAt *int64          `json:"early_withdrawal_at"`
	AccruedInterest   int64           `json:"accrued_interest"`
	GrossInterest     int64           `json:"gross_interest"`
	TotalDeductions   int64           `json:"total_deductions"`
	DueInterest       int64           `json:"due_interest"`
	ProjectedPayout   int64           `json:"projected_payout"`
	GrossPayout       int64           `json:"gross_payout"`
	PayoutAmount      *int64          `json:"payout_amount"`
	SettlementAt      *int64          `json:"settlement_at"`
}

// ShareAccount are a share-offering capital account's fields, flat in its
// JSON. SharesPurchased is never rewritten; AllocatedShares and the
// figures after it follow the allotment. MarketPrice and MarketValue are
// null before SetProductPrice.
type ShareAccount struct {
	SharesPurchased  int64  `json:"shares_purchased"`
	AllocatedShares  int64  `json:"allocated_shares"`
	AllocatedValue   int64  `json:"allocated_value"`
	OfferPrice       int64  `json:"offer_price"`
	BrokerageFee     int64  `json:"brokerage_fee"`
	CrossDealFee     int64  `json:"cross_deal_fee"`
	TotalDebit       int64  `json:"total_debit"`
	LockExpiresAt    int64  `json:"lock_expires_at"`
	CostBasis        int64  `json:"cost_basis"`
	AverageCost      int64  `json:"average_cost"`
	MarketPrice      *int64 `json:"market_price"`
	MarketValue      *int64 `json:"market_value"`
	UnallocatedValue int64  `json:"unallocated_value"`
}

// Account is a capital account (a holding), created when its order is
// approved. Exactly one of FixedAccount and ShareAccount is set, by Type.
type Account struct {
	ID          string        `json:"id"`
	EntityID    string        `json:"entity_id"`
	OrderID     string        `json:"order_id"`
	ProductID   string        `json:"product_id"`
	Type        string        `json:"type"`
	Currency    string        `json:"currency"`
	Status      AccountStatus `json:"status"`
	SecondaryID *string       `json:"secondary_id"`
	*FixedAccount
	*ShareAccount
	Created int64 `json:"created"`
	Updated int64 `json:"updated"`
}

// Transaction is a capital transaction of one capital account.
// AccrualDate (YYYY-MM-DD, UTC) is set on DAILY_ACCRUAL only; the vehicle
// fields are null unless known.
type Transaction struct {
	ID                  string  `json:"id"`
	EntityID            string  `json:"entity_id"`
	CapitalAccountID    string  `json:"capital_account_id"`
	EventType           string  `json:"event_type"`
	Amount              int64   `json:"amount"`
	AccrualDate         *string `json:"accrual_date"`
	VehicleFundedAmount *int64  `json:"vehicle_funded_amount"`
	PlacementFee        *int64  `json:"placement_fee"`
	VehicleExpenses     *int64  `json:"vehicle_expenses"`
	Created             int64   `json:"created"`
}

// TransactionFilter names the order whose capital account's transactions
// ListTransactions lists (OrderID, required), within entity EntityID (the
// caller's when "").
type TransactionFilter struct {
	EntityID string
	OrderID  string
}

// TransactionPage is one page of a capital account's transactions.
type TransactionPage struct {
	*corebank.Page[Transaction]
	EntityID string
}

// WithdrawalPreview is what a withdrawal would pay now (CONTRACT.md's
// names): NetPayout = Principal + GrossInterest - PenaltyAmount -
// TotalDeductions; PenaltyRate is 0 at or after maturity, DaysElapsed the
// tenor then.
type WithdrawalPreview struct {
	Principal        int64           `json:"principal"`
	GrossInterest    int64           `json:"gross_interest"`
	PenaltyRate      decimal.Decimal `json:"penalty_rate"`
	PenaltyAmount    int64           `json:"penalty_amount"`
	TotalDeductions  int64           `json:"total_deductions"`
	NetPayout        int64           `json:"net_payout"`
	DaysElapsed      int             `json:"days_elapsed"`
	CapitalAccountID string          `json:"capital_account_id"`
	EntityID         string          `json:"entity_id"`
}

// PortfolioFilter narrows GetPortfolio ("" matches all): EntityID is the
// entity whose holdings are shown (the caller's when "").
type PortfolioFilter struct {
	EntityID string
	Currency string
}

// PortfolioTotal sums one currency's holdings: principal of fixed-return
// holdings plus cost basis of share holdings, interest accrued at request
// time, and market value of the share holdings that have a price.
type PortfolioTotal struct {
	Currency        string `json:"currency"`
	Principal       int64  `json:"principal"`
	AccruedInterest int64  `json:"accrued_interest"`
	MarketValue     int64  `json:"market_value"`
}

// Portfolio is GET /capital-portfolio: totals per currency (sorted by
// currency) and the holdings in the states SPEC.md lists, oldest first.
type Portfolio struct {
	Totals   []PortfolioTotal `json:"totals"`
	Holdings []Account        `json:"holdings"`
}
