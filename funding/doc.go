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
// null), created, updated.
//
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
// ValidateETransfer (PATCH) drops a security answer the provider reports:
// it is never stored, in clear or hashed (a hash of a guessable answer
// gives it away), and never returned.
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
//
// # Mobile money channels
//
// A momo funding session names its channel in meta.channel; the session's
// country comes from it. The channels are (MomoChannels):
//
//	channel            country  network
//	KE-SAFARICOM-C2B   KE       SAFARICOM (M-Pesa)
//	TZ-AIRTEL-C2B      TZ       AIRTEL (Airtel Money)
//	TZ-TIGO-C2B        TZ       TIGO (Tigo Pesa, now Mixx by Yas)
//	TZ-HALOTEL-C2B     TZ       HALOTEL (HaloPesa)
//	TZ-VODACOM-C2B     TZ       VODACOM (M-Pesa)
//
// Anything else (a lower-case name too) is refused under meta.channel.
//
// meta.msisdn is the payer's number in international form. It is accepted
// with or without its leading '+', and spaces between digits are dropped
// (people paste "+254 712 345 678"); any other character (dashes,
// brackets, tabs) is refused. It is stored in one form, "+" then the
// country code then the national significant number (NSN), for example
// "+254712345678". Refused under meta.msisdn: a local form ("0712345678",
// "712345678", "+0712..."), the 00 international prefix ("00254..."), a
// country code other than the channel's (Kenya 254, Tanzania 255), a 0
// after the country code, an NSN that is not 9 digits (both national
// plans), and an NSN that is not mobile (Kenya: starting 1 or 7; Tanzania:
// 6 or 7).
//
// A number whose prefix the regulator allocated to another network than
// the channel's is accepted with a warning, because both countries have
// mobile number portability; so is a prefix allocated to no network known
// here. The prefixes (NSN digits; sources in rail_rules.go):
//
//	Kenya      Safaricom  110-115, 700-729, 740-743, 745-746, 748,
//	                      757-759, 768-769, 790-799
//	           Airtel     100-102, 730-739, 750-756, 762, 780-789
//	           Telkom     770-779
//	           others     747 JTL (Faiba), 763-766 Finserve (Equitel)
//	Tanzania   Vodacom    72, 74-76, 79
//	           Airtel     66, 68-69, 78
//	           Tigo       65, 67, 70-71, and Zantel's 77 (merged into Tigo)
//	           Halotel    61-63
//	           TTCL       73
//
// # Crypto payments
//
// A crypto payer may send less, more, or late. The session records what
// arrived and an outcome (exact, underpaid, overpaid or late), and always
// credits what arrived, never the requested amount. An exact payment or
// an overpayment settles. An underpayment settles when the shortfall is at
// most the tolerance (a fraction of the requested amount, such as 0.01;
// the comparison is inclusive and exact) and otherwise fails with
// payment_rejected: the rail delivered a payment that does not meet the
// invoice. A payment of nothing fails the same way. A late payment has the
// outcome late and follows the same amount rules: the money has arrived
// and is held, so lateness alone never refuses it.
//
// # Sandbox magic values
//
// The sandbox providers pick an outcome from the request itself, so a
// test needs no simulate call. Every other value approves or pays exactly
// and on time.
//
//	rail    value                       outcome                           failure code
//	momo    msisdn ending 1032          cancelled by the user             payment_cancelled
//	                                    (M-Pesa ResultCode 1032)
//	momo    msisdn ending 0001          insufficient balance              insufficient_funds
//	                                    (M-Pesa ResultCode 1)
//	momo    msisdn ending 1037          timeout, payer not reached        session_expired
//	                                    (M-Pesa ResultCode 1037)
//	crypto  amount ending 91            one unit short: within a 1%       (settles)
//	                                    tolerance from 100 units up
//	crypto  amount ending 92            half the amount (rounded down)    payment_rejected
//	crypto  amount ending 93            a tenth more (rounded down, at    (settles)
//	                                    least 1 unit)
//	crypto  amount ending 94            the exact amount, late            (settles, outcome late)
//
// The momo suffixes spell M-Pesa's own result codes; the provider's raw
// code is kept beside the failure code. A timeout maps to session_expired:
// the push prompt lapsed unanswered. Amounts are in smallest units, so
// "ending 91" means 100.91 USC is sent as 10091 and 100.90 arrives.
package funding
