// Package ledger is corebank's double-entry core: accounts, balances,
// journal entries, two-phase holds, statements, point-in-time balances and
// the event outbox. Every other domain package moves money only through it.
//
// # Accounts
//
// An Account belongs to one entity and holds one currency (Currencies lists
// them: fiat with exponent 2, stablecoins with exponent 6; CAD, AED and ZAR
// are accepted beside SPEC.md's five fiat codes because CONTRACT.md and the
// account details define them). Its JSON form is the API form. The fields
// SPEC.md leaves unnamed are balance_id, configuration {allow_inflows,
// allow_outflows, overdraft}, stablecoin_balance ({} for fiat),
// maintenance_fee_exempt and internal_metadata (set only from Go). Each
// account gets a service_ban: ten digits, the last a Luhn check digit,
// unique and never reused, resolvable with AccountByServiceBAN. An entity's
// first account is its default (is_default).
//
// Lists are prefix scans over index keys, one key per account and subset of
// the filters {entity, currency, type} ("ec/<entity>/<currency>/<id>"),
// read with storage.ReadPage, so a page costs one seek plus the page at any
// depth, and total counts are counters kept beside the index (O(1)). Deleting requires a zero settled
// balance and no pending holds (ErrAccountNotEmpty); a deleted account keeps
// its record with deleted = the deletion time in ms, is still returned by
// GetAccount and AccountByServiceBAN, leaves every list, and refuses new
// movements (ErrAccountDeleted). Account changes append accounts.created,
// accounts.updated and accounts.deleted events in the same transaction.
//
// # Double entry
//
// Balances are signed credit-minus-debit. Every movement is a set of lines
// whose debits equal their credits in each currency, so per currency the
// sum of every account's settled balance, system accounts included, is
// always zero. Money entering or leaving corebank passes through system
// accounts (SystemAccount(currency, purpose): clearing.bank, clearing.momo,
// clearing.stablecoin, clearing.book, clearing.card, fees, fx, suspense),
// which are created lazily, may go negative and have no Account record.
//
// A Balance has three parts: Settled, PendingDebits and PendingCredits.
// Available = Settled - PendingDebits; Current = Settled + PendingCredits -
// PendingDebits. A customer account's available balance never goes below
// zero because of a debit: such a movement fails with ErrInsufficientFunds
// and writes nothing.
//
// Every change to a customer account writes one history line recording the
// change, the balance triple after it and the cumulative settled credits and
// debits. BalanceAt finds the last line at or before an instant with one
// seek per stream; History replays them. System accounts keep their balance
// but no history: every movement crosses one, so their lines would be a
// third of the store, and no statement reads them; the zero-sum rule and
// the journal account for them. History yields nothing for one and
// BalanceAt answers ErrAccountNotFound.
//
// # Holds
//
// Holds follow TigerBeetle's two-phase transfers: Hold reserves an amount
// (pending debit on one account, pending credit on another, same currency);
// PostHold settles it in full or in part, releasing the rest; VoidHold
// releases it. A hold with a Timeout resolves itself when RunDue runs at or
// after its expiry: voided (status expired) by default, or posted in full
// with OnTimeout = TimeoutPost (inflows that settle by themselves).
//
// Post and Hold take an optional idempotency Key: a retry with the same key
// and content returns the original result without writing; the same key
// with different content fails with ErrIdempotencyKeyReused naming the
// differing fields. Every exported operation is one storage transaction;
// the ...Tx variants (PostTx, HoldTx, PostHoldTx, VoidHoldTx,
// CreateAccountTx, DeleteAccountTx, AppendEventTx) let other packages
// compose several operations atomically, and write nothing when they fail.
// The EntityGate lets the entities package veto account opening and new
// movements inside the same transaction; completing a hold is never vetoed.
//
// # Due work
//
// Hold timeouts and account details' terminate_after are scheduled on
// storage's due queue (storage.Schedule) in the transaction that makes them
// due. DueJobs registers them in this order: "ledger.hold" (resolve the
// hold) then "ledger.details" (deactivate the details, reason expired), and
// RunDue runs both. The ledger starts no goroutines; a runner calls RunDue
// on a ticker, or a test after advancing a mock clock.
//
// # Authorization
//
// Methods about accounts, account details and statements (CreateAccount,
// GetAccount, ListAccounts, CountAccounts, UpdateAccount, DeleteAccount,
// AccountByServiceBAN, Statement, CreateAccountDetails, GetAccountDetails,
// ListAccountDetails, ActivateAccountDetails, DeleteAccountDetails,
// GetAccountDetailsStats, AccountDetailsByNumber) take a corebank.Caller
// and apply internal/scope's rule inside their own transaction, over
// Options.Tree: a requested entity_id outside the caller's tree (or
// unknown) is corebank.ErrEntityNotFound whatever the object; an object
// outside it answers its own not-found error (ErrAccountNotFound,
// ErrAccountDetailsNotFound) exactly as a missing one; changes by a
// read-only caller are corebank.ErrForbidden. The bookkeeping operations
// (Post, Hold, PostHold, VoidHold, balances, history, events) and every
// ...Tx form are trusted, caller-free composition: the domain that
// composes them checks its own caller's scope first.
//
// # Storage and encoding
//
// Hot records (balances, holds, history lines, journal entries, pending
// statement rows) use storage's binary record codec (storage.Encoder and
// storage.Decoder): a version byte, then varints and length-prefixed
// strings. Accounts and events are JSON; an account change encodes the
// account once, for its record and its event's object. A two-phase transfer
// between two customer accounts writes the hold twice, each balance twice,
// four history lines and adds and removes two pending-index keys. Reads on
// the hot path decode straight from the stored value when the backend offers
// storage.Peeker (storage/memory) and copy only the strings they keep.
//
// # Statements
//
// Statement returns a month (UTC) of an account: opening and closing
// settled balances and total credits and debits come from two seeks
// (the last settled history lines before the month and before its end), and
// a page of transactions, oldest first, each with the settled running
// balance, is one seek plus the page, wherever it lies in a million-line
// history. Pending holds count in neither; with IncludePending the holds
// still pending that were placed in the month are merged in by time, status
// pending, running_balance null. Cursors are opaque positions.
//
// # Integrity
//
// Check audits balances, pending holds and the new journal entries
// incrementally, for a simulation that asserts it after every step.
// VerifyStore is the offline check of a whole store (bank/verify, `server
// verify`): it also proves each balance equal to the sum of the account's
// journal lines and holds, replays every history line, and checks the
// accounts' and account details' indexes, counters and due work. The
// domains that place holds claim theirs (VerifyHold), so a pending hold no
// object owns is reported.
//
// # Outbox
//
// AppendEventTx writes an Event {id, type, entity_id, object, created} in
// the caller's transaction, keyed by its ID. The ID is minted at the
// transaction's time, or just after the newest event's ID when that sorts
// later, so ID order is commit order and Events(after, limit) lets a reader
// resume exactly where it stopped; created is the ID's time, so it is not
// stored again. The record is compact: the type, the entity and the
// object's JSON, compressed (S2) with a dictionary of the objects' field
// names (a transfer event of 500 bytes keeps about 200); readers get the
// object back byte for byte. Delivery, and deleting events once they are no longer
// kept (DeleteEventTx), are the webhooks package's job.
package ledger
