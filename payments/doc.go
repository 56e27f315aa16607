// Package payments is corebank's money-out side: counterparties (payout
// recipients), their payment details (where they receive money), FX quotes
// (locked conversion rates) and transfers (outbound payments on four
// payment types), moving money through the ledger.
//
// # Service
//
// NewService(db, led, opt) builds a Service over a storage backend and the
// ledger that shares it. Every exported method runs in one storage
// transaction; state changes, ledger holds and entries and the outbox
// events that report them commit together or not at all.
//
// Every method that acts for someone takes the corebank.Caller (an API
// key's entity, or corebank.System() for trusted in-process code) and
// decides scope inside its own transaction with internal/scope, the one
// rule: a caller may act on its entity and every entity below it in
// Options.Tree. A requested entity_id ("" is the caller's own) is resolved
// first, before any object is read, so a foreign one answers
// corebank.ErrEntityNotFound whether the named object exists or not; an
// object is then loaded and its owner must lie in that entity's tree, a
// foreign object answering its resource's own not-found error
// (ErrTransferNotFound, ...) exactly as a missing one. A request naming an
// account or counterparty acts for its owner, and what it uses with it
// (payment detail, counterparty, quote) must be that owner's. Changes ask
// caller.CheckWrite() first (corebank.ErrForbidden for read-only keys).
//
// Time comes from Options.Clock, read once per transaction; nothing runs
// in the background: RunDue(ctx, asOf) expires quotes and advances
// transfers on the payout rail, and a server calls it on a ticker (or
// after POST /sandbox/clock/advance). The work lives in storage's due
// queue (DueJobs: kinds "payments.quote", then "payments.transfer").
//
// # Counterparties
//
// A counterparty is an individual (first_name, last_name, address) or a
// business (legal_name, optional trading_name, registered_address); both
// need relationship (vendor, supplier, customer, employee) and an email,
// and may carry identification documents (P, D, N for individuals; L for
// businesses; each with number and issuing_country) and one phone object
// {number (E.164), type (mobile, work, home, other), country}. Addresses
// need line1, city and country (ISO 3166-1 alpha-2, upper case). nickname
// defaults to the full name (individual) or legal name (business), and
// follows that name on later updates until it is set explicitly.
// UpdateCounterparty changes only the fields sent (field by field inside
// profile, addresses and phone; identification and meta are replaced
// whole), then validates the result as a whole. DeactivateCounterparty
// makes it inactive (deleted is set to that time): it can no longer
// receive transfers or new payment details.
//
// # Duplicates
//
// Two active counterparties of one entity are duplicates, and the second
// is refused with a validation error (422) naming the clashing field, when
// either
//   - they have the same type, the same name (full name for individuals,
//     legal name for businesses; compared case-insensitively with runs of
//     space collapsed) and the same email (case-insensitive), reported on
//     profile.email; or
//   - they hold an identification document with the same type, issuing
//     country and number (compared upper-case without spaces, dashes, dots
//     or slashes), reported on profile.identification.N.number.
//
// Inactive counterparties do not count, and an update that would make a
// duplicate is refused the same way.
//
// # Payment details
//
// A payment detail belongs to one counterparty and names a payment_method
// (bank-transfer, momo-transfer, stablecoin-transfer, book-transfer), a
// currency, account_holder_name and the rail fields below. scheme is
// required where a currency has several domestic bank rails (USD: ach,
// wire, rtp; GBP: fps, chaps); elsewhere it defaults to the only domestic
// rail (or swift where there is none, or stablecoin, book). swift is
// accepted for every fiat currency. country is required for bank and
// mobile-money details; domestic rails fix it. Fields another rail uses
// are refused ("is not used by ..."). Every failure names its field.
//
//	method / scheme        currencies  country   required fields (optional)
//	bank / ach, wire, rtp  USD         US        routing_number (ABA check digit), account_number (4-17 digits),
//	                                             account_type (checking|savings) (bank_name, bank_address, swift_code)
//	bank / fps, chaps      GBP         GB        sort_code (6 digits), account_number (8 digits)
//	bank / sepa            EUR         SEPA      iban, or the IBAN in account_number (mod-97 check digits, the
//	                                             country's length; its country must equal country) (swift_code)
//	bank / eft             CAD         CA        institution_number (3 digits), transit_number (5 digits),
//	                                             account_number (7-12 digits)
//	bank / uaefts          AED         AE        iban, or the IBAN in account_number (an AE IBAN)
//	bank / mx_spei         MXN         MX        account_number: an 18-digit CLABE with a valid check digit
//	bank / nip             NGN         NG        account_number (10-digit NUBAN), bank_name
//	bank / pesalink        KES         KE        account_number (6-20 digits), bank_name
//	bank / swift           any fiat    any       swift_code (BIC, 8 or 11, its country = country), and iban
//	                                             where country uses IBANs, else account_number (1-34 letters/digits)
//	momo / <network>       see below   see below phone_number (E.164, the country's calling code)
//	stablecoin             USC UST RLD -         wallet_address, blockchain_network: ETH_MAINNET, BASE_MAINNET,
//	                                             POLYGON_MAINNET (EIP-55 address) or SOLANA_MAINNET (base58, 32 bytes)
//	book                   held ones   -         account_number: the service_ban of the receiving corebank account
//	                                             (must exist, not deleted, in the detail's currency)
//
// Mobile-money schemes are network codes: mpesa (KE, TZ), mtn (GH, UG, NG,
// ZA), airtel (KE, UG, TZ, NG), vodacom (TZ, ZA), tigo (TZ, GH); the
// currency must be the country's (KES, TZS, UGX, GHS, NGN, ZAR). MXN, GHS,
// TZS and UGX are payout-only currencies: corebank holds no accounts in
// them, so transfers in them are paid from another currency through an FX
// quote. UpdatePaymentDetail changes only the fields sent and re-validates
// the whole detail; changing payment_method, currency or scheme first
// clears the rail fields the patch does not carry.
//
// # FX quotes
//
// CreateQuote locks a rate from from_currency to to_currency for
// Options.QuoteValidity (180 s by default). Exactly one of amount_from (at
// least 100 smallest units) and amount_to is given; the other is computed
// with decimal arithmetic at the quoted rate, shifted by the two
// currencies' exponents (USD 2, USC 6, UGX 0, ...) and rounded toward
// zero. The rate is the provider's mid less its spread (and, for a quote
// naming account_id, Options.CorridorMarginBps), truncated to 10
// significant digits; the amounts are computed from the rate shown. The
// sandbox provider quotes every pair of supported currencies by crossing
// a table of units per USD (stablecoins 1:1 with USD, no spread); its
// SetOutage(true) makes CreateQuote fail with fx_provider_unavailable
// (503). An unsupported currency or from == to is a validation error.
// Status and valid_for are computed on every read: a quote past
// expires_at reads expired with valid_for 0 (RunDue also stores that); a
// quote used by a transfer is used, with used_at and used_in_payment_id.
// A quote with account_id can only be used by a transfer from that
// account.
//
// # Fees
//
// Options.Fees is a FeeSchedule: per payment type a fixed amount plus basis
// points of the debited amount, in the debited account's currency, the
// percentage rounded toward zero. ParseFeeSchedule reads the flag form
//
//	bank-transfer=100+25bps,momo-transfer=50,stablecoin-transfer=10bps,*=0
//
// entries separated by commas (or newlines), each <payment-type>=<fee>
// with <fee> one of N (smallest units), Mbps, or N+Mbps; "*" is the fee of
// types not listed; lines starting with # are ignored.
//
// # Transfers
//
// CreateTransfer checks, in one transaction: the account lies in the tree
// of entity_id and is not deleted (the transfer is its owner's);
// unique_reference (required, at most 64 characters) is new for the
// account, else duplicate_reference (409) with the original transfer in
// the error's Data, so of concurrent duplicates exactly one is created;
// the payment detail is the owner's and its payment_method equals
// payment_type; counterparty_id, when given, owns the detail, and the
// counterparty is active; currency (default the detail's) equals the
// detail's; narration is 1-100 characters; a stablecoin-transfer debits a
// stablecoin account. When the account's currency differs from the
// transfer's, fx_quote_id must name an active quote of the owner with
// from = the account's currency, to = the transfer's currency and
// amount_to = amount; the quote becomes used. The fee comes from the fee
// schedule.
//
// The money is then reserved with ledger holds (TigerBeetle two-phase
// transfers), each within one currency so every currency balances:
//
//	same currency:   account -> clearing.<rail>           amount
//	cross-currency:  account -> fx (source currency)      amount_from
//	                 fx (target currency) -> clearing.<rail>  amount_to
//	                 (payout-only target: account -> clearing.<rail> in the
//	                 source currency, amount_from; the rail converts)
//	fee:             account -> fees (source currency)    applicable_fee
//
// An available balance below amount (or amount_from) plus fee is
// insufficient_funds (422) and writes nothing. Every transfer, a book
// transfer too, starts pending (status_reason awaiting_processing) with
// outflows.created, and its first check in the due queue is due at once.
//
// CreateTransfer is the hot path, so its transaction avoids decoding large
// records (transfer_payee_records.go and transfer_account_refs.go, each
// with the benchmark figures that keep it): payment details and
// counterparties are stored with a small binary record of the fields it
// checks (written with them; older stores fall back to the JSON), and the
// Service remembers the owner and currency of accounts it has debited,
// which never change, so that the transaction reads only the account's
// balance record: a non-zero balance proves the account exists and is not
// deleted (the ledger deletes only empty accounts and moves no money on
// deleted ones); a zero balance reads the account record as before.
//
// # Lifecycle
//
//	pending -> processing -> successful -> reversed
//	pending|processing -> failed
//
// Successful posts the holds (outflows.completed); failed voids them, the
// funds coming back to available (outflows.failed, status_reason from the
// rail or payout_failed); reversed posts a new journal entry returning
// every leg, fee included, since the payment never reached the
// beneficiary (outflows.refunded). The payout provider drives these moves
// through RunDue; the sandbox provider moves a transfer to processing 1 s
// and to successful 5 s after creation on the clock in use.
// SimulateTransfer(ctx, caller, entityID, id, outcome, reason) applies an
// outcome directly (POST /sandbox/transfers/{id}/simulate); a move the
// status does not allow is error_operation_invalid_for_state (409).
//
// A book transfer moves money between two corebank accounts, so corebank
// is its rail and no provider is asked. POST /transfers checks the
// receiving account (the detail's service_ban: it exists, is not deleted,
// holds the transfer's currency, accepts inflows, is not the debited
// account), records it in the transfer, and answers pending with the funds
// held like any other transfer. The first RunDue at or after creation
// settles it in one transaction: Options.Receiver credits the receiving
// account from clearing.book (funding's ReceiveTx, which emits
// inflows.completed for the receiver), the holds are posted to
// clearing.book, and the transfer becomes successful (outflows.completed).
// When the receiving side refuses by then (the account deleted meanwhile,
// not accepting inflows, its owner not approved: a corebank error of kind
// Invalid, NotFound or Rejected), that transaction is rolled back and
// another fails the transfer as a rail's failure does: holds voided,
// outflows.failed, status_reason invalid_account_details for a deleted
// account, else the refusal's code (inflows_not_allowed, ...).
// SimulateTransfer's successful outcome settles a book transfer the same
// way and answers a refusal as an error, changing nothing. Book transfers cannot be
// reversed. Without a Receiver the service posts clearing.book ->
// receiver itself and no inflow event is emitted, so embedders pass their
// *funding.Service, which is a Receiver as it is.
//
// # Sandbox
//
// The sandbox routes map onto the service: POST /sandbox/fx/outage calls
// SetFXOutage(enabled) (false when the rate provider is not the sandbox);
// POST /sandbox/transfers/{id}/simulate calls SimulateTransfer; and after POST
// /sandbox/clock/advance the server calls RunDue(ctx, now), which expires
// quotes and lets the sandbox rail move transfers (pending -> processing
// at 1 s -> successful at 5 s after creation; the delays are
// SandboxPayoutsOptions). A book transfer settles on the first RunDue
// after its creation, whatever the clock: within the bundled server's 1 s
// ticker on the real clock, or at the next clock advance on the fake one.
package payments
