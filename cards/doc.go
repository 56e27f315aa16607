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
// A card is active, blocked or fraud. Freeze moves an active card to
// blocked (reversible: Unfreeze moves it back to active) or, when asked
// with status "fraud", to fraud, which is final: a fraud card is never
// unfrozen. Freezing a blocked card as fraud escalates it. A deleted card
// (soft: its record stays, Deleted is set) leaves the list, still answers
// Get, and refuses every other move.
//
// # Not yet built
//
// This first slice stores individual_controls, individual_mcc_controls and
// mcc_group_controls as SPEC.md shapes them, validated for shape only: no
// control is evaluated, no usage field is computed, group_name is not
// checked against an MCC group table. Authorizations, card transactions
// (ListTransactions answers an empty list) and the sandbox lifecycle come
// later, built on this model.
package cards
