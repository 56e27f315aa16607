// Package capital sells capital products (SPEC.md "Capital resources"):
// fixed-return deposits and share offerings, ordered through product
// orders that reserve for 15 minutes and are confirmed once, held in
// capital accounts that accrue, mature, are withdrawn and settled, or are
// allotted, refunded and unlocked. All money moves through the ledger,
// all time comes from the injected clock (Options.Clock), and every
// operation is one storage transaction that returns the object it
// answers, built inside it (httpapi/doc.go "Idempotency"); ConfirmOrder is
// two (see Orders).
//
// # Products
//
// CreateProduct (POST /sandbox/products) makes a FIXED_RETURN product
// (tenor 7, 30, 60, 90 or 180 days; annual_rate a decimal in (0, 1];
// min_principal and max_principal, or exact principal_bands;
// early_withdrawal_enabled, early_withdrawal_penalty_rate,
// early_withdrawal_min_days, lock_in_days; withholding_rate) or a
// SHARE_OFFERING (offer_price per share in smallest units, whole
// inventory_shares, brokerage_fee_rate, cross_deal_fee_rate, lock_days).
// Every rate is a decimal from 0 to 1. The other type's fields are
// refused, and every bad field is named at once. The caller's entity (or
// the one named) owns the product.
//
// Who sees a product: an entity in its owner's tree (the owner or any
// entity below it; System sees all), of an eligible type
// (eligible_entity_types, empty for all), while the product is active,
// its owner approved (an owner suspended or otherwise not approved is
// inactive) and, for an offering, it has inventory. Anything else is
// ErrProductNotFound, exactly as a missing product. Lists also leave out
// hidden products (visibility "hidden": reachable by ID only) and list a
// sold-out offering with orderable false. A product is orderable while
// active, inside its sale window [sale_starts_at, sale_ends_at) and, for
// an offering, not sold out. Lists never carry documents; GetProduct does.
//
// Documents are agreement documents with a positive integer version
// (default 1); each gets an ID. An order affirms each document once at
// its current version: an unknown document, a duplicate, an older version
// ("stale"), another version, or a document left out is refused, naming
// the entry (affirmations.N.document_id, affirmations.N.version) or
// affirmations.
//
// # Orders
//
// CreateOrder reserves for Options.ReservationTTL (15 minutes) and moves
// no money. A fixed-return order needs principal (an exact band when the
// product has bands, else within min and max) and waive_early_withdrawal,
// which is written once: true gives up early withdrawal for the whole
// tenor (the account is "locked"). A share order gives amount, the spend:
// it buys the most whole shares whose value plus fees (each
// floor(value × rate)) fit in it, allocated down to the inventory left;
// allocated_shares and total_debit show the quote, and the shares are
// held by the order until it is approved, rejected or expires. The
// funding account must be the ordering entity's, in the product's
// currency.
//
// ConfirmOrder runs in two steps. The debit step debits total_debit from the
// funding account into the product's pool with one journal entry keyed
// "capital.order:<id>", moves the order to CONFIRMING and schedules its
// recovery, in one transaction with the order's event. The completion
// step creates the capital account and its PURCHASE transaction and
// moves the order to APPROVED. The two are separate on purpose: SPEC.md's
// CONFIRMING and RECOVERY_REQUIRED are the persisted state between them,
// so a crash or failure after the debit never loses the money and never
// debits again. A failure there (Options.AfterDebit injects one) marks
// the order RECOVERY_REQUIRED; the recovery job (RecoveryDelay after the
// debit) completes it from the persisted order, secondary_id included.
// While an order is CONFIRMING or RECOVERY_REQUIRED a new ConfirmOrder is
// 409 ErrAlreadyProcessing; an idempotent retry of the same request replays
// the debit step and runs the completion. A ConfirmOrder of an APPROVED
// order answers it; of an EXPIRED, REJECTED or expired RESERVED one is
// ErrInvalidForState; the ledger's refusals (insufficient funds) leave it
// RESERVED.
//
// REJECTED: a confirm finds the order may no longer be filled: the
// product deactivated or misconfigured, its owner no longer approved, the
// entity no longer eligible (type or tree), or the sale window closed.
// The order is REJECTED with status_reason saying which, rejected_at set
// and its inventory released, and ConfirmOrder answers it (no error, no
// money moved). A reservation nobody confirms becomes EXPIRED at
// reservation_expires_at, releasing its inventory.
//
// # Fixed return
//
// The day-count basis comes from the currency (DayCountBasis):
//
//	360  USD, EUR
//	365  GBP, NGN, KES, ZAR, CAD, AED, stablecoins (USDC, USDT, ...) and
//	     every other currency the ledger supports
//
// The account starts when the funding account is debited (start_at). The
// tenor ends start + tenor_days (same UTC time); maturity_at is that
// instant, moved to the next Monday when it falls on a weekend (UTC), and
// the extra days earn nothing. Figures, each in smallest units:
//
//	accrued_interest  Interest(principal, rate, days elapsed, basis) at the
//	                  time of reading; days are whole 24h days bounded by
//	                  the tenor, frozen at a withdrawal
//	gross_interest    Interest over the whole tenor, fixed at confirmation
//	total_deductions  floor(gross_interest × withholding_rate)
//	due_interest      gross_interest − total_deductions
//	projected_payout  principal + due_interest
//	gross_payout      principal + gross_interest
//	early_withdrawal_at  start + max(early_withdrawal_min_days, lock_in_days),
//	                  null when early withdrawal is disabled or waived
//	payout_amount, settlement_at  null until a withdrawal sets them
//
// Interest is principal × rate × days / basis in decimal, rounded toward
// zero once. The accrual job posts a DAILY_ACCRUAL transaction per day d
// (accrual_date the UTC date the day starts) of Interest(d) −
// Interest(d−1), so the posted sum always equals accrued_interest; a late
// run catches up. The maturity job moves ACTIVE to MATURED at
// maturity_at. Accruals are records of the holding; money moves at
// settlement.
//
// # Withdrawal
//
// PreviewWithdrawal and WithdrawOrder run one computation
// (WithdrawalPreview). Before maturity: gross_interest is the interest of
// the days elapsed, penalty_amount = floor(gross_interest ×
// early_withdrawal_penalty_rate), total_deductions = floor(gross_interest ×
// withholding_rate), net_payout = principal + gross_interest −
// penalty_amount − total_deductions; the account becomes EARLY_LIQUIDATING
// with PENALTY, WITHHOLDING and PAYOUT transactions. When MATURED: the
// tenor's interest, penalty_rate 0, the account becomes CLOSING with
// WITHHOLDING and PAYOUT. Either way payout_status is pending and the
// settlement job pays net_payout to the funding account at settlement_at
// (Options.SettlementDelay after) and closes the account (CLOSED,
// payout_status completed; failed when the ledger refuses, e.g. the funding
// account was deleted). Refusals, all ErrInvalidForState (400): no
// fixed-return account (a share holding, an order not approved), early
// withdrawal disabled, waived (locked), before early_withdrawal_at (which
// covers the lock-in), ACTIVE at or after maturity_at (before the maturity
// job made it MATURED), and an account already EARLY_LIQUIDATING, CLOSING
// or CLOSED.
//
// The penalty is a share of the interest earned so far, not a rate cut:
// a rate cut would recompute the interest of the days held at a lower
// annual rate (principal × reduced rate × days / basis), a charge that
// depends on principal and days alone, while here the depositor forfeits
// early_withdrawal_penalty_rate of what accrued, so the charge is never
// more than the interest earned, the principal is never touched, and a
// penalty rate of 0.5 is the same as halving the rate only up to
// rounding (the penalty is rounded down once, on the accrued figure).
// Withholding is on gross_interest before the penalty.
//
// # Share offerings
//
// A confirmed share order makes a LOCKED holding: shares_purchased (never
// rewritten), allocated_shares, allocated_value (shares × offer_price),
// the fees, total_debit, cost_basis (allocated value plus fees),
// average_cost (cost_basis / shares, rounded down), lock_expires_at
// (start + lock_days). AllotProduct (sandbox) is the final allotment: the
// allotted shares are split over the LOCKED holdings in order of
// confirmation by Allot (pro rata rounded down, the remainder one share
// at a time by largest remainder, ties to the earlier). A holding given
// fewer shares is ALLOTMENT_ADJUSTED: its fees are recomputed on the
// allotted value and unallocated_value (total_debit − allotted value −
// fees) is refunded to the funding account by the refund job, exactly
// once (ledger key "capital.refund:<account>", refund_status pending then
// completed) with a REFUND transaction; it then becomes
// ALLOTMENT_CONFIRMED, as does a holding allotted all it bought. So
// allotted value + fees + refund = total_debit for every applicant. At
// lock_expires_at (or UnlockProduct, sandbox) a holding becomes
// TRANSFERABLE, paying a pending refund first; one never allotted keeps all
// it bought. market_price and market_value (allocated_shares × price) are
// null until SetProductPrice (sandbox).
//
// # Portfolio
//
// GetPortfolio lists an entity's holdings in ACTIVE, MATURED,
// EARLY_LIQUIDATING, CLOSING, LOCKED, ALLOTMENT_ADJUSTED,
// ALLOTMENT_CONFIRMED and TRANSFERABLE, with totals per currency at the
// time of the request: principal (deposits' principal plus share holdings'
// allocated value), accrued_interest, market_value (holdings with a
// price).
//
// # Money
//
// Every movement is a ledger journal entry against system accounts
// (ledger.SystemAccount(currency, purpose)): a deposit's principal goes
// to capital.fixed_return; its payout takes principal from there, the
// interest less the penalty from capital.interest (the penalty is simply
// never paid) and sends withholding to capital.withholding; share money
// goes to capital.share_offering and the fees to fees, and refunds come
// back from both.
//
// # Due work
//
// See DueJobs for the kinds and their order. Everything a job does is
// scheduled in the transaction of the change that makes it due, and each
// job checks the record's state first, so a second run does nothing.
//
// # Storage
//
// One bucket, "capital": products, orders, capital accounts and
// transactions as JSON records, with list indexes as keys (products in
// creation order, an entity's orders and holdings, a product's holdings
// in confirmation order, an account's transactions oldest first).
package capital
