// Package acquiring collects card and wallet payments for an account's
// owner: payment intents and their intent actions (SPEC.md "Payment
// intent", "Intent action"), and the disputes of their charges.
//
// # Intents and actions
//
// An intent is created requires_action on one account, in the account's
// currency, with a reference unique per account (1-100 characters; a
// duplicate is ErrDuplicateReference, the original under Data) and an
// optional description (at most 250). It is confirmed by an intent action,
// inline on creation or by ConfirmIntent (POST /intent-actions), only while
// requires_action. The action records amount, applicable_fee
// (Options.Fees for its payment_type, as transfers' fees), charge_amount
// (what the card is charged: the amount) and refunded_amount (0). An
// intent nests its latest action.
//
// Statuses: an intent moves requires_action -> processing (a 3DS challenge
// is open) -> completed or failed, or requires_action -> completed or
// failed at once, or requires_action -> cancelled (CancelIntent, the
// reason becoming status_reason). An action moves pending ->
// pending_user_action -> completed or failed. SPEC.md does not say what
// makes an intent failed; here a failed action fails its intent (the
// intent's events fire on final states only, and a failed attempt is
// final: the merchant creates a new intent to retry, so each reference
// names one outcome).
//
// # Confirmation
//
// card-acq carries payment_type_data.data: Base64 of RSA-OAEP ciphertext
// made with the calling API key's encryption_public_key. It is decrypted
// with that key's private key (Options.Keys, the entities service)
// outside any transaction, after the request's shape and the intent's
// scope and status were checked; DecryptCard validates it and keeps only
// brand, type, BIN country, last four digits and expiry (Card): the
// number and CVV never reach the store, a log, a response or an
// idempotent replay. walletpay-acq carries no data. billing_address needs
// country always, and address_line_one, city and state for card-acq.
// customer (first_name, last_name, email) is required; return_url is
// required unless auth_model is 3ds_disabled (the default is
// 3ds_required); browser_data is required with 3ds_required (EMV 3DS 2:
// ip_address, user_agent, accept_header, language, javascript_enabled,
// and with JavaScript color_depth, screen_height, screen_width,
// time_zone_offset and java_enabled).
//
// # Outcomes
//
// 3ds_disabled completes at once; 3ds_required puts the action
// pending_user_action with next_action {type: redirect_to_url, url} and
// the intent processing. url is the sandbox challenge page
// (Options.ChallengeBase + "/sandbox/challenge/<token>", the token 32
// random bytes: the capability), where the cardholder completes or fails
// the challenge (AuthenticateAction) and is sent back to return_url; the
// sandbox simulate route (SimulateAction) and the page run the same code
// (answer). A challenge nobody answers fails after ChallengeTTL (30
// minutes) with authentication_timeout, as due work (kind
// "acquiring.challenge"). VerifyAction (POST /intent-verifications/{id})
// rechecks a non-final action and returns a final one unchanged.
// walletpay-acq completes at once: the wallet authenticated the payer.
//
// In the sandbox the card's last four digits pick the issuer's answer
// (TestCardOutcome, the table in card.go): "decline" fails at once with
// the card's failure code (0002: card_declined; insufficient funds,
// expired card, incorrect CVC and processing error have their own cards),
// "challenge" is challenged even with 3ds_disabled, "challenge_decline"
// is challenged and then declined once authenticated, "frictionless"
// completes under 3ds_required without a challenge, and "refund_fails"
// and "dispute" complete (refunds and disputes act on them later).
//
// # Money and events
//
// A completed action posts one journal entry, in the transaction that
// completes it and appends payment_intent.completed: the card clearing
// system account ("clearing.card") is debited charge_amount, the intent's
// account credited charge_amount minus applicable_fee and the fee account
// the fee. The entry's key ("acquiring:<action id>") and the action's
// final status make it happen once. An account that can no longer take
// the credit fails the action with account_unavailable. failed and
// cancelled append payment_intent.failed and payment_intent.cancelled.
// Every event carries the intent with its nested intent_action.
//
// # Refunds
//
// A refund (CreateRefund, POST /refunds) gives back part or all of a
// completed action's charge: payment_intent_action_id, reference (1-100),
// reason (at most 100, answered as refund_reason) and amount (> 0). An
// invalid request is a corebank.KindBadRequest error (SPEC.md answers
// refunds 400) naming each field; so are an action that is not completed
// and an amount over what is refundable. In one storage transaction the
// refund loads the action, checks amount <= charge_amount -
// refunded_amount (refunded_amount counts pending and successful
// refunds), adds amount to refunded_amount and stores the action, and
// places a ledger hold of amount on the merchant account toward the card
// clearing account (which fails with insufficient funds rather than
// overdraw it). Because the check and the reservation share the
// transaction, concurrent refunds serialize on the action's key and can
// never exceed the charge.
//
// A refund is pending until the acquirer answers: in the sandbox after
// Options.RefundDelay (default 5 s, due work of kind "acquiring.refund"),
// failing the refunds of the refund_fails test card with refund_declined
// and succeeding the others, or at once through SimulateRefund (POST
// /sandbox/refunds/{id}/simulate). A successful refund posts its hold
// (the money leaves the merchant account for the card) and appends
// payment_refund.completed; a failed one voids it, subtracts its amount
// from refunded_amount again and appends payment_refund.failed, in the
// transaction that fails it. The refund's final status makes either
// happen once: a later answer with the same outcome changes nothing, the
// other is ErrInvalidForState. The events carry SPEC.md's payload: id,
// reference, payment_intent_action_id, amount, currency, refund_reason,
// status, account_id, entity_id, created, and status_reason on the
// failed one.
//
// A refund is a ledger hold, posted at settlement, and never a journal
// entry. Its hold (key "acquiring.refund:<refund id>", the refund's
// HoldID) reserves the amount when the refund is created; a successful
// refund posts it, a failed one voids it. The posted hold is the record
// of the money leaving (its post line on the merchant's statement, the
// hold's ID as the line's transaction), so a refund is found through its
// hold, not among journal entries, unlike the charge it refunds, which
// completion credited as an entry (the action keeps its ID). The reason is
// the acquirer's answer: it comes after the request and may be a decline.
// A hold takes the amount out of the merchant's available balance at
// once, so the merchant cannot spend it while the answer is awaited and
// an account without it is refused with insufficient funds rather than
// overdrawn, yet nothing settles: a declined refund only voids its hold,
// where an entry booked at creation would need a second, reversing entry
// for money that never left.
//
// # Disputes
//
// A dispute is a cardholder contesting a completed action through the card
// network: id, payment_intent_action_id, payment_intent_id and reference
// (the disputed payment), amount, currency, reason, status, evidence_due_by,
// entity_id and account_id (the merchant's, for scope and filters),
// created and updated. A charge has at most one dispute
// (ErrAlreadyDisputed). It opens needs_response, by the sandbox route
// (OpenDispute: amount defaults to charge_amount - refunded_amount and may
// not exceed it, refunded_amount counting pending and completed refunds;
// reason defaults to general) or by the "dispute" test card: when its
// charge completes, "acquiring.dispute" due work is scheduled
// Options.DisputeDelay later (default a minute) and disputes the charge
// in full (less refunds) as fraudulent.
//
// Money, like Stripe: opening debits the disputed amount from the
// merchant whatever its balance, toward the disputes clearing system
// account ("clearing.disputes"), in the transaction that records the
// dispute and appends payment_dispute.created. The ledger never takes a
// customer account below zero, so the merchant pays what its available
// balance covers and system account "disputes.receivable" the rest (what
// the merchant owes the platform; collecting it is the embedder's
// business); an account that can no longer be debited pays nothing.
// Winning (SimulateDispute "won") posts the reverse entry, each part back
// where it came from (the merchant's part to suspense if the account can
// no longer take it); losing keeps the debit; either appends
// payment_dispute.completed in the same transaction. Each entry's key
// ("dispute:<id>:open", "dispute:<id>:won") and the dispute's status make
// each move happen once; deciding a dispute again with its outcome
// changes nothing, with the other is ErrInvalidForState. Events carry the
// dispute.
//
// There is no evidence API: a dispute still needs_response at
// evidence_due_by (created + Options.DisputeEvidenceWindow, default 7
// days) goes under_review by itself ("acquiring.evidence" due work, no
// event, as SPEC.md names only created and completed), where it waits for
// the sandbox's decision; the sandbox can decide it in either status.
//
// # Authorization
//
// Every method takes a corebank.Caller and checks scope inside its own
// transaction: an intent or action of an entity outside the caller's tree
// answers as a missing one. The challenge page acts by its token alone.
package acquiring
