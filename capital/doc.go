// Package capital sells capital products (SPEC.md "Capital resources"):
// fixed-return deposits and share offerings, ordered through product
// orders that reserve for 15 minutes and are confirmed once, held in
// capital accounts that accrue, mature, are withdrawn and settled, or are
// allotted, refunded and unlocked. All money moves through the ledger,
// all time comes from the injected clock, and every operation is one
// storage transaction.
package capital
