// Package funding takes money in: inflows that arrive at an account from
// outside (a bank rail, a sandbox simulation) or from another corebank
// account (a book transfer).
//
// # Inflows
//
// An inflow credits an account from the system clearing account of the rail
// it came through, so the ledger stays balanced per currency. It arrives
// through the account's active account details when the account has any;
// details that are pending, expired or deleted refuse it, and an account
// without details takes it directly (the sandbox needs no provisioning).
//
// A settled inflow is one journal entry and the event inflows.completed, in
// one storage transaction; the entry, which takes the inflow's ID, is its
// only record (inflow_entry.go). An unsettled inflow (Settle false) is a pending
// hold: it raises the account's current balance but not its available
// balance until SettleDelay (60 s by default) has passed on the clock and
// RunDue posts it; inflows.completed fires then. The settlement waits in
// storage's due-work queue as kind "funding.inflow" (see DueJobs), written
// in the transaction that creates the hold.
//
// # Authorization
//
// CreateInflow acts for a corebank.Caller: the account must belong to the
// caller's entity or one below it in Options.Tree, checked in the
// transaction that credits it, and an account outside the tree answers
// exactly as a missing one. ReceiveTx is for trusted in-process code (a
// book transfer's receiving leg) and checks no caller.
//
// # Object
//
// The SPEC leaves the inflow object unnamed; corebank's is Inflow: id, type
// ("inflow"), account_id, entity_id, account_details_id (or null), amount,
// currency, narration, reference, source (the rail: "bank", "book-transfer",
// ...), status (pending or completed), settles_at and completed_at (ms or
// null), created, updated.//
// # Funding sessions
//
// A funding session (SessionService, session*.go) is money the owner of an
// account pays in through one rail: "open-banking" (the default), "momo",
// "crypto" or "etransfer". Each rail has one provider interface
// (OpenBankingProvider, MomoProvider, CryptoProvider, ETransferProvider);
// SessionOptions plugs real ones in, and nil means the rail's sandbox
// provider. A provider is asked to start a session outside any
// transaction, after the request is checked, and reports back through
// HandleProviderEvent, the code the sandbox simulate route, the sandbox
// payers and the sandbox checkout page also run.
//
// States, as SPEC.md: awaiting_user -> processing -> pending_settlement ->
// settled, or failed, expired or cancelled; the last four are terminal. A
// session may skip processing (a momo approval goes straight to
// pending_settlement) and may settle from any open state (through a
// pending credit at once). pending_settlement is a ledger hold from the
// rail's clearing account ("clearing.<rail>") to the account: current
// rises, available does not. settled posts the hold and records it as an
// inflow of the account (inflow_id; source = the rail), with
// inflows.completed, exactly once: a report of the status a session
// already has changes nothing, and a terminal session refuses every move
// (ErrSessionInvalidForState). failed, expired and cancelled void a held
// credit, and then, when there was one (or a crypto payment is refused),
// append inflows.failed; failure holds SPEC.md's code, the
// stage (the status the session left) and the provider's raw code.
// funding_sessions.updated is appended on creation and on every status
// change, in the transaction that makes it.
//
// Provider reports, per rail, and what they become:
//
//	rail          provider report                         status              failure.code
//	open-banking  consent given / payment initiated       processing
//	              bank accepted the payment               pending_settlement
//	              funds received                          settled
//	              consent refused, bank rejected          failed              payment_rejected (or the provider's: payment_blocked,
//	                                                                          institution_unavailable, institution_not_supported)
//	              payer abandoned                         cancelled           payment_cancelled
//	              no answer in CheckoutTTL (30 min)       expired             session_expired
//	momo          payer approved the push prompt          pending_settlement
//	              payer cancelled (M-Pesa 1032)           cancelled           payment_cancelled
//	              insufficient balance                    failed              insufficient_funds
//	              no answer in MomoPromptTTL (60 s)       expired             session_expired
//	crypto        payment seen on chain (received, late)  pending_settlement  (beyond tolerance: failed, payment_rejected)
//	              confirmed                               settled
//	              (no expiry: expires_at is null)
//	etransfer     PATCH: transfer validated               processing
//	              bank accepted the transfer              pending_settlement
//	              deposited                               settled
//	              never validated in ETransferTTL (30 d)  expired             session_expired
//
// Any rail: a provider error is failed with provider_error. Unless
// SessionOptions.SettleDelay is negative, a pending_settlement session
// settles by itself SettleDelay (60 s) later.
//
// Rail data: open-banking and crypto answer checkout_url, crypto also
// checkout_id and, once paid, amount_received (always what is credited,
// never the requested amount) and payment_outcome (exact, underpaid,
// overpaid, late; an underpayment within
// SessionOptions.UnderpaymentTolerance settles what arrived, one beyond it
// fails). momo takes meta.channel (MomoChannels: KE-SAFARICOM-C2B,
// TZ-AIRTEL-C2B, TZ-TIGO-C2B, TZ-HALOTEL-C2B, TZ-VODACOM-C2B) and
// meta.msisdn (stored in one form, "+<digits>"; a number of another
// network than the channel's is accepted with meta.msisdn_warning), and
// infers country from the channel; it takes no redirect_url. crypto needs
// a USC or UST account, etransfer a CAD one, and meta.name and meta.email.
// ValidateETransfer (PATCH) keeps the provider's security answer only as
// its SHA-256; it is never returned.
//
// unique_reference is unique per entity (the account's owner) across
// rails: a duplicate is ErrDuplicateSession with the original as Data.
// Expiry, the sandbox payers' answers and settlement are one due kind,
// "funding.session" (DueJobs), one entry per session at its next due
// time, on the injected clock.
//
// # Sandbox
//
// The sandbox providers: open-banking and crypto pay on corebank's own
// checkout page, at checkout_url = SessionOptions.CheckoutBase +
// "/sandbox/checkout/<token>", where the token is 32 random bytes stored
// with the session: the capability to act on it. The page reads the
// session with CheckoutSession(token) and applies the payer's choice with
// Checkout(token, outcome, failure_code): "settled" (approve), "failed"
// with a code (reject), "cancelled", or nothing (it expires), the same
// code as the simulate route; then it sends the payer to redirect_url.
// The momo payer answers PayerDelay (5 s) after the prompt as the MSISDN's
// suffix says (sandboxMomoResult: approve, cancelled by user, insufficient
// funds, or timeout: no answer, so the prompt expires); a crypto payer of
// a magic amount (sandboxCryptoPayment: under-, over- or late payment)
// pays by itself PayerDelay after the invoice opens; an e-Transfer
// validates with a security question and the bank accepts it PayerDelay
// later. The magic values themselves are rail_rules.go's table.
package funding
