// Package cards issues virtual and disposable cards on ledger accounts
// (SPEC.md "Card"): creation with a card number and CVV, a per-entity
// creation limit, retrieval, freeze and unfreeze, reassignment to another
// account, soft deletion and the entity's card list.
//
// # Card data
//
// A card number is 16 digits: Options.BIN, random digits from crypto/rand
// and a Luhn check digit. It is unique: an index key holds an HMAC of the
// number under Options.NumberKey (never the number), and a clash draws
// again. The CVV is three random digits. Number and CVV are sealed together
// under the Sealer given to NewService (bank.New derives its key from the
// server's secret key for this purpose alone), bound to the card's ID, and
// answered in clear only by the creation call (Card.Number and Card.CVV);
// every other answer and every event shows the number masked to its last
// four digits and no CVV. httpapi's idempotency records drop number and
// cvv from any object that carries a cvv, so a replayed creation lacks them.
//
// # States
//
// A card is active, blocked or fraud. FreezeCard moves an active card to
// blocked (reversible: UnfreezeCard moves it back to active) or, when
// asked with status "fraud", to fraud, which is final: a fraud card is
// never unfrozen. Freezing a blocked card as fraud escalates it. A deleted
// card (soft: its record stays, Deleted is set) leaves the list, still
// answers GetCard, and refuses every other move.
//
// # Authorizations and controls
//
// AuthorizeCard decides a purchase and records a card transaction either
// way. In order: the card's state (deleted, frozen, expired after its
// expiry month), then every control that applies to the MCC
// (individual_controls, the individual_mcc_controls entry of that MCC,
// each mcc_group_controls entry whose group holds it), then the account's
// available balance (the ledger hold). The first that fires is the decline reason, named
// "<control>.<limit>" for controls (individual_mcc_controls.5812.open,
// mcc_group_controls.airlines.amount). An approval places a ledger hold
// from the card's account to the card clearing account.
//
// Limits: transaction_amount_limit per authorization; daily_amount_limit
// and daily_transaction_count per day; cycle_transaction_count and (on
// MCC and group entries) amount per billing cycle. Windows are counted in
// the card's individual_controls.time_zone (IANA; UTC by default): a day
// runs from midnight; a Weekly cycle starts on the weekday
// billing_cycle_day names (default Monday); a Monthly cycle (the default)
// starts on day billing_cycle_day (default 1), moved to the month's last
// day in shorter months. Each approval adds its amount and one to the
// held counters of each applicable control in the day and cycle open at
// its time, and remembers those counter keys (txRecord.Counted), so what
// later releases or clears it moves those windows and never today's.
// Declines count nowhere. The usage fields (amount_*, daily_amount_limit_*,
// daily_transaction_count_*, cycle_transaction_count_*; _hold authorized,
// _used cleared, _balance left under the limit or null) are read from the
// windows open when the card is read; amount_* are the cycle's amounts.
//
// MCCGroups is the group table (version MCCGroupsVersion) group_name is
// checked against.
//
// # Lifecycle
//
// After an approval, the sandbox plays the network's messages (each
// moving the ledger holds and counters a real one would):
// ClearTransaction settles a pending transaction (less than authorized
// releases the rest; more takes the excess from the account at once) and
// moves its counters from held to used; ReverseTransaction releases part
// or all of it (all: voided, no longer counted); ExpireTransaction
// releases all (expired), as the due job does by itself
// Options.AuthExpiry after the authorization; IncrementTransaction raises
// it when the card's state, the controls of the windows it was counted in
// and the available balance allow; RefundTransaction returns part or all
// of a settled amount from card clearing and takes it off the used
// amounts.
//
// An increment belongs to the transaction it raises: it adds to the
// amounts counted, never to the transaction counts. A declined increment
// is answered 409 card_increment_declined and recorded on the
// transaction as an increment_declined event with its decline_reason. The
// part of a clearing above the authorization is an increment the network
// did not ask for: it must pass the same controls and the available
// balance, or the clearing is refused (409 card_clearing_declined) and
// nothing changes. A real issuer must accept a forced clearing and then
// dispute it; the sandbox refuses it instead, so that used plus held never
// passes a control's limit, which is what a card program's controls
// promise its cardholders. Refunds are events of the transaction they
// return, not card transactions of their own.
// A ledger hold has a fixed amount, so lowering or raising one voids it
// and places another. ClearTransaction and ReverseTransaction work
// whatever the card's state: they finish what was approved.
package cards
