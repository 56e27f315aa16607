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
package funding
