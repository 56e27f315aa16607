// Package httpapi serves corebank's REST API (SPEC.md, CONTRACT.md) as an
// http.Handler. bank.New builds it over every service, wired the way the
// bundled server runs (see bank's Example); by hand it is
//
//	h := httpapi.New(httpapi.Services{
//		DB: db, Ledger: led, Entities: ents, Funding: fund, Payments: pay, Webhooks: wh,
//	}, &httpapi.Options{
//		Env: httpapi.EnvSandbox, Clock: mock, FakeClock: mock, Sealer: sealer,
//		RunJobs: func(ctx context.Context, now time.Time) error { _, err := due.RunDue(ctx, now); return err },
//	})
//	http.ListenAndServe(addr, h)
//
// where due is one storage.Due over every service's DueJobs and
// httpapi.DueJobs (bank.New registers them in their order).
//
// The handler answers paths from the root and can be mounted on any mux
// (use http.StripPrefix under a prefix). routes.go holds the whole route
// table; errors.go is the only place that maps a corebank.Kind to a status;
// helpers.go holds the adapters every resource handler is built from and
// the one reader of entity_id.
//
// # Authentication and scope
//
// Every route but the probes (below) needs "Authorization: Bearer <key>".
// A missing or unknown key is 401 and a read-only key on anything but
// GET/HEAD is 403, both in the form
// {"error": {"code": "unauthorized"|"forbidden", "message": "...", "request_id": "..."}}.
// A key acts on its entity and that entity's descendants. An entity_id (path,
// query or body) outside that tree, and any object owned outside it, answers
// 404 not_found exactly as a missing one does. Where a route takes entity_id
// it defaults to the key's entity; given on a route about one object, the
// object must lie in that entity's tree. httpapi only authenticates: it
// passes the key's corebank.Caller and the requested ids to the services,
// which decide scope inside their own transactions (internal/scope), so no
// handler loads an object to check its owner.
//
// # Response forms
//
// Success envelope, {"status": "success", "message": "...", "data": ...}:
//
//	POST   /accounts                 201  data: account + entity_effect
//	GET    /accounts/{id}            200  data: account
//	PATCH  /accounts/{id}            200  data: account + changes
//	DELETE /accounts/{id}            200  data: account + entity_effect + reversibility
//	GET    /accounts/{id}/statements 200  data: statement
//	POST   /account-details          201  data: account details
//	GET    /account-details/{id}     200  data: {account_detail, entity, account, statistics}
//	POST   /individual-entities      201  data: entity composite
//	PATCH  /individual-entities/{id} 200  data: composite + changes_applied
//	POST   /business-entities        201  data: entity composite
//	PATCH  /business-entities/{id}   200  data: composite + changes_applied
//	GET    /entities/{id}            200  data: entity composite, as create returns it
//	POST   /documents                201  data: {document, entity_verification_impact}
//	GET    /documents/{id}           200  data: document
//	POST   /onboarding-submissions   201  data: submission (status pending)
//	GET    /onboarding-submissions/{id} 200 data: submission
//	POST   /counterparties           201  data: counterparty
//	GET|PATCH /counterparties/{id}   200  data: counterparty
//	POST   /counterparties/{id}/deactivate 200 data: counterparty (inactive)
//	GET|PATCH /payment-details/{id}  200  data: payment detail
//	POST   /fx-quotes                201  data: quote; GET /fx-quotes/{id} 200
//	POST   /transfers                201  data: transfer; GET /transfers/{id} 200
//	POST   /funding-sessions         201  data: session; GET /funding-sessions/{id} 200
//	PATCH  /funding-sessions/{id}    200  data: session (etransfer validated: processing)
//	POST   /payment-intents          201  data: intent (with intent_action when confirmed inline)
//	GET    /payment-intents/{id}     200  data: intent with its latest intent_action
//	PATCH  /payment-intents/{id}     200  data: intent (cancelled; {action: cancel, reason?})
//	POST   /intent-actions           201  data: intent action
//	GET    /intent-actions/{id}      200  data: intent action
//	POST   /intent-verifications/{id} 200 data: intent action {id} (a final one unchanged)
//	GET    /disputes/{id}            200  data: dispute
//	POST   /refunds                  200  data: refund (pending; SPEC.md answers 200); an invalid
//	                                      refund is 400 {status: error, code, message, details}
//	GET    /refunds/{id}             200  data: refund
//	POST   /disposable-cards, /virtual-cards 201 data: card with number and cvv (this answer
//	                                      only; a replay lacks them); invalid fields 400 with
//	                                      details; over -card-create-limit per hour 429
//	GET    /cards/{id}               200  data: card, number masked (************1234)
//	POST   /cards/{id}/freeze        200  data: card ({status?: blocked (default) | fraud})
//	POST   /cards/{id}/unfreeze      200  data: card (blocked -> active; fraud is final: 409)
//	POST   /cards/{id}/reassign      200  data: card ({account_id}: same entity and currency)
//	DELETE /cards/{id}               200  data: card (deleted: true; soft, leaves GET /cards)
//	GET    /cards/{id}/transactions  200  data: {transactions: []} (empty until authorizations)
//	GET    /products/{id}            200  data: product with its documents (404 when
//	                                      inactive, hidden from or ineligible for the entity)
//	POST   /product-orders           201  data: order, RESERVED for 15 minutes; no money moves
//	GET    /product-orders/{id}      200  data: order with agreements and capital_account
//	POST   /product-orders/{id}/confirm 200 data: order, APPROVED with capital_account ({entity_id?,
//	                                      secondary_id?}; an approved one as it is); 400
//	                                      error_operation_invalid_for_state when EXPIRED or
//	                                      REJECTED, 409 error_transfer_already_processing while
//	                                      CONFIRMING or RECOVERY_REQUIRED
//	GET    /product-orders/{id}/withdrawal/preview 200 data: {principal, gross_interest,
//	                                      penalty_rate, penalty_amount, total_deductions,
//	                                      net_payout, days_elapsed, capital_account_id, entity_id}
//	POST   /product-orders/{id}/withdrawal 200 data: order with capital_account
//	                                      (EARLY_LIQUIDATING or CLOSING); each refusal SPEC.md
//	                                      lists is 400 error_operation_invalid_for_state
//	GET    /capital-portfolio        200  data: {totals: [{currency, principal, accrued_interest,
//	                                      market_value}], holdings: [capital account]}
//	                                      (filters entity_id, currency)
//	POST   /entity-webhooks          201  data: webhook with its secret (shown once)
//	GET|PATCH|DELETE /entity-webhooks/{id} 200 data: webhook (never the secret)
//	POST   /entity-webhooks/{id}/test 200 data: the test delivery and its outcome
//	POST   /entity-webhooks/{id}/rotate_secret 200 data: webhook with its new secret
//	POST   /events/{id}/redeliver    200  data: {event_id, deliveries}
//
// POST /payment-details alone answers the bare object, the one form SPEC.md
// names for that create. GET /documents/{id}/file and /file_back answer
// the stored bytes with their content type, Content-Disposition: attachment
// and X-Content-Type-Options: nosniff. More detail on each group sits at the
// top of its file (entities.go, counterparties.go, webhooks.go, events.go).
//
// The summaries: entity_effect is {entity_id, accounts_count (active
// accounts after the change), default_account_id (null when the default
// is gone), is_default_account}; changes is [{field, from, to}], empty
// when nothing changed; reversibility is {reversible: false, reason,
// service_ban_reusable: false}. A statement is CONTRACT.md's statement
// body; its holder_address is the owner's address (a person's, else a
// business's operating address) or null, and its pagination carries this
// API's cursors.
//
// Lists, the envelope plus meta:
//
//	GET /accounts         filters entity_id, currency, type
//	GET /account-details  filters account_id, entity_id
//	GET /entities         filters type, status, parent_entity
//	GET /counterparties   filters type, status (pagination adds has_more)
//	GET /counterparties/{id}/payment-details
//	GET /transfers        filters account_id, status
//	GET /entity-webhooks, GET /entity-webhooks/{id}/deliveries
//	GET /events           filters type, created_after, created_before (ms)
//	GET /funding-sessions filters account_id, status, currency, created_after,
//	                      created_before (ms); pagination adds order ("asc"),
//	                      filters_applied adds sort {field: created, order: asc}
//	GET /cards            the page at data.cards, its meta at data.meta; filters
//	                      account_id (omitted: every account of the entity)
//	GET /payment-intents, GET /intent-actions, GET /refunds: the page sits at data.items
//	                      and its meta at data.meta (SPEC.md "Page at
//	                      data.items"); filters status, reference, currency,
//	                      account_id, date_from and date_to (ISO 8601 or
//	                      Unix ms, inclusive); actions add payment_type and
//	                      payment_intent_id; next_cursor is cursor's alias
//	GET /disputes:        the same form and filters (reference: the disputed
//	                      payment's), and payment_intent_action_id
//	GET /products         filters type, currency, entity_id (the entity
//	                      whose eligibility decides); limit defaults to 25
//	GET /product-orders   filters status, type; limit defaults to 25
//	GET /product-orders/{id}/transactions the capital transactions of the
//	                      order's capital account, oldest first; limit
//	                      defaults to 25
//
//	{"status": "success", "message": "...", "data": [...],
//	 "meta": {"pagination": {"limit", "total_count", "has_next", "has_previous",
//	          "next_cursor", "previous_cursor"}, "filters_applied": {...}}}
//
// total_count is present where the service keeps a count (accounts and
// account details);
// cursors are null when there is no such page; filters_applied names every
// filter in force, entity_id included when it defaulted to the caller.
//
// Sandbox routes return the affected object bare (CONTRACT.md: "All return
// the affected object"), and exist only when Options.Env is sandbox:
//
//	GET    /sandbox/clock                          200 {now (RFC 3339), now_ms}
//	POST   /sandbox/clock/advance {seconds}        200 {now, now_ms}
//	POST   /sandbox/api-keys {entity_id?, read_only?}
//	                                               201 {id, api_key, read_only, entity_id, encryption_public_key, prefix, created}
//	DELETE /sandbox/api-keys/{id}                  200 {id, entity_id, deleted: true}
//	POST   /sandbox/entities/{id}/review {decision} 200 the entity
//	POST   /sandbox/account-details/{id}/activate  200 the account details
//	POST   /sandbox/inflows {account_id, amount, currency?, narration?, settle?}
//	                                               201 the inflow
//	POST   /sandbox/funding-sessions/{id}/simulate {outcome, failure_code?, entity_id?}
//	                                               200 the session
//	POST   /sandbox/intent-actions/{id}/simulate {outcome: completed|failed, status_reason?, entity_id?}
//	                                               200 the intent action
//	POST   /sandbox/intent-actions/{id}/dispute {amount?, reason?, entity_id?}
//	                                               201 the dispute (409 charge_already_disputed)
//	POST   /sandbox/disputes/{id}/simulate {outcome: won|lost, entity_id?}
//	                                               200 the dispute
//	POST   /sandbox/refunds/{id}/simulate {outcome: successful|failed, status_reason?, entity_id?}
//	                                               200 the refund
//	POST   /sandbox/products {CONTRACT.md's product fields, entity_id?}
//	                                               201 the product with its documents
//	POST   /sandbox/products/{id}/allotment {allotted_shares, entity_id?}
//	                                               200 the product (share offerings: final
//	                                               allotment over its LOCKED holdings)
//	POST   /sandbox/products/{id}/unlock {entity_id?}  200 the product (its lock ends now)
//	POST   /sandbox/products/{id}/price {price, entity_id?} 200 the product (market price
//	                                               per share, smallest units)
//	POST   /sandbox/products/{id}/deactivate {entity_id?} 200 the product (inactive)
//	POST   /sandbox/workspaces                     404: bank/workspace serves it, in front, with -workspaces
//	DELETE /sandbox/workspaces/{id}                404: bank/workspace serves it, in front, with -workspaces
//
// The two workspace routes are open (no key is read, so they are 404
// whatever the key): with -workspaces, bank/workspace answers them before
// this handler sees them (CONTRACT.md, "Sandbox workspaces").
//
// A funding-session duplicate unique_reference (per entity) is 409
// duplicate_reference with the original session under data. PATCH
// /funding-sessions/{id} on a session of another rail than etransfer, or
// one not awaiting_user, is 400 error_operation_invalid_for_state; a
// simulated move the session's status does not allow is 409 with the same
// code, and simulating the status it already has changes nothing (200).
//
// # The sandbox checkout page
//
// An open-banking or crypto session's checkout_url is
// <CheckoutBase>/sandbox/checkout/<token> (funding.SessionOptions; the
// bundled server sets CheckoutBase to the URL it listens on). The page is
// for the payer's browser: it needs no key (the token is the capability)
// and answers HTML, its errors included, not the JSON forms above:
//
//	GET  /sandbox/checkout/{token}  200 a mock bank consent (open-banking) or
//	                                invoice (crypto: checkout_id): amount,
//	                                currency, reference, and while the session
//	                                awaits the payer a form: Approve, Reject
//	                                (with a failure code), Cancel; else its
//	                                status and a link back to redirect_url
//	POST /sandbox/checkout/{token}  the form (choice=approve|reject|cancel,
//	                                failure_code, nonce): 303 to redirect_url
//	                                with funding_session_id, status and
//	                                (failed, cancelled) failure_code added to
//	                                its query
//
// The POST runs what the simulate route runs (funding.SessionService.
// Checkout): approve is settled, reject failed with the code (default
// payment_rejected), cancel cancelled with payment_cancelled; a second
// click of the same choice changes nothing and redirects again. An
// unknown token is 404; a body that is not a form, or a choice or code
// outside the lists, 422; a status that does not allow the move 409 (the
// page shows the status); a form not from this server's page 403: a
// browser's cross-site post (Sec-Fetch-Site or Origin), or no nonce the
// page rendered for this token within a day (an HMAC under
// Options.CursorKey). The page loads nothing and runs no script: its
// Content-Security-Policy is default-src 'none' with its one stylesheet
// by hash, form-action this server and redirect_url's origin,
// frame-ancestors 'none'; Referrer-Policy no-referrer keeps the token out
// of the merchant's logs. The open routes skip the idempotency layer.
//
// # The sandbox 3DS challenge page
//
// A 3ds_required card confirmation's next_action.url is
// <ChallengeBase>/sandbox/challenge/<token> (acquiring.Options; the
// bundled server sets it to the URL it listens on), built like the
// checkout page (same headers, nonce and cross-site refusal; HTML
// answers):
//
//	GET  /sandbox/challenge/{token}  200 amount, reference, card's last four
//	                                 and, while pending_user_action, a form:
//	                                 password (the sandbox's is "password"),
//	                                 Complete, Fail
//	POST /sandbox/challenge/{token}  the form (choice=complete|fail,
//	                                 password, nonce): 303 to return_url with
//	                                 payment_intent_id and status added to its
//	                                 query (200 with the outcome when the
//	                                 action has no return_url)
//
// Complete with the password authenticates, and the sandbox issuer then
// answers as the test card says (acquiring.TestCardOutcome: a
// challenge-then-decline card fails with its code); anything else fails
// with authentication_failed. It runs the simulate route's code.
//
// Clock advance needs Options.FakeClock (else 409 clock_not_adjustable);
// seconds is an integer 1-315360000. It moves the clock, runs
// Options.RunJobs at the new time, and answers only after the jobs ran.
//
// Under a fake clock every time the API shows or stamps is the fake one,
// with one exception: a webhook delivery's x-service-event-timestamp (and
// so the signed "{timestamp}.{body}") is the real Unix milliseconds of
// sending, as CONTRACT's webhook headers are checked by a receiver against
// its own clock with a tolerance. The event's created and the
// delivery's attempts keep the fake time.
//
// # Probes and the OpenAPI document
//
// Four routes need no key (the open set in routes.go, which also holds
// the sandbox checkout and challenge pages' and the workspace routes), and
// an Authorization header on them is ignored:
//
//	GET /openapi.json 200 the OpenAPI 3 document of every route (openapi.go)
//	GET /docs     200 the document rendered as one HTML page (docs.go): the
//	              operations by tag, their parameters, bodies and answers,
//	              and the schemas. docs.html is generated in the tree by
//	              internal/docgen (go generate ./httpapi/); the page loads
//	              nothing and runs no script (Content-Security-Policy
//	              default-src 'none', its one stylesheet by hash)
//	GET /healthz  200 {"status": "ok"} while the process serves requests
//	GET /readyz   200 {"status": "ready"} when a read transaction on the
//	              store completes within Options.ReadyTimeout (default 2 s),
//	              else 503 {"status": "error", "code": "unavailable", ...}
//
// # Request IDs
//
// Every response carries X-Request-Id: the request's own when it is 1-128
// bytes of printable ASCII without spaces, else a new one (32 lowercase hex
// digits). Every error body names it as "request_id", next to "code": at
// the top level of the form below, and inside "error" in the 401/403 form.
// Both are fields added to the forms SPEC.md shows, so a client that reads
// only those keeps working. A replayed Idempotency-Key response is the
// stored one byte for byte, so its body names the request that did the
// work while its header names the replay. The server's error lines and,
// with Options.LogRequests, its one line per request (method, route,
// status, duration, entity, request_id, client) name it too.
//
// # Errors
//
// Every error except 401/403 is
//
//	{"status": "error", "code": "...", "message": "...", "details": {"<field>": "<problem>"}, "request_id": "..."}
//
// plus "data" when the error carries an object (duplicate_reference returns
// the original). Status by Kind: Invalid 422 (code validation_error unless
// the error names another), BadRequest 400, NotFound 404, Conflict 409,
// Rejected 422 (insufficient_funds, account_not_empty, entity_not_approved,
// ...), Unavailable 503, Forbidden 403, Unauthorized 401, RateLimited 429
// (retry_after, limit_type, current_count and limit under details, as
// CONTRACT.md has them, and also at the top level,
// and a Retry-After header), TooLarge 413 (request_too_large). An unknown
// path is 404 not_found; a known path with another method is 405
// method_not_allowed with an Allow header. Anything that is not a
// *corebank.Error, and any panic, is logged with its cause and answered as
// a 500 internal_error that reveals nothing.
//
// details keys are JSON paths, dotted for nesting ("meta.region",
// "items.1.name"); query parameters and headers are named as sent ("limit",
// "Idempotency-Key"); problems with the body as a whole use "body".
//
// # Request bodies
//
// Bodies over 10 MiB are 413, except POST /documents, which carries up to
// two files of 10 MiB each in base64 and takes 30 MiB (a decoded file over
// 10 MiB is 413 file_too_large). Decoding is strict: an unknown field is 422
// naming it (a typo in entity_id never acts on the caller's own entity); a
// wrong JSON type is 422 naming the field; malformed JSON is 422 naming the
// member being read where it breaks ("amount" for {"amount": }), or "body"
// when none is (after a comma, before the first key); trailing data after
// the object and nesting deeper than 64 levels are 422 on "body". An
// empty body reads as {}. Integers are validated: limit is 1-100 (default
// 20) and anything else, or a non-integer, is 422 on "limit"; booleans are
// true/false (or 1/0).
//
// Every string in a body, member names included, must be clean text (see
// corebank.TextRule): invalid UTF-8 (a raw byte, or a lone surrogate escape
// such as \ud800), a control character other than a newline ("\n" or
// "\r\n") or a tab, and a bidirectional control (U+202A-U+202E,
// U+2066-U+2069) are 422 naming the member that holds them, before any
// field is read. Each domain then applies its field's own rule: a name,
// an identifier or a reference is a single line; a narration or a
// description may hold newlines. meta values are strings: an array or a
// number under a meta key is 422 naming meta.<key>.
//
// # Cursors
//
// next_cursor and previous_cursor are opaque: base64url of {position,
// direction, filter hash} followed by a truncated HMAC-SHA256 under
// Options.CursorKey. Pass next_cursor as cursor and previous_cursor as
// prev_cursor (pre_cursor is accepted too), with the same filters. A cursor
// that was altered, was signed under another key, or comes from another
// list or other filters is 422 validation_error on "cursor"; so is giving
// both cursor and prev_cursor. The page size may change between pages. The
// default CursorKey is random per process, so set it for cursors to survive
// a restart.
//
// # Idempotency
//
// Every POST accepts an Idempotency-Key header (printable ASCII, at most 255
// characters), with Stripe's semantics, scoped to the calling key's entity:
//
//   - The outcome is written in the same storage transaction as the
//     effect, so after any crash a retry either replays or runs for the
//     first time, never both. The handler runs under a storage.Journal:
//     each write it makes (each storage.Update) is a step whose result is
//     recorded in the idempotency record in the transaction that commits
//     the write. When the response is complete it replaces the steps in
//     the record.
//   - A retry finds the stored response and replays it, with the header
//     Idempotent-Replayed: true. If the process died after a write
//     committed but before the response was stored, the retry runs the
//     handler again: its committed writes return their recorded results
//     without running, any later ones run for the first time, and the
//     response is rendered from those results (also marked replayed). A
//     retry that takes another path than the first run (a write in another
//     place of the code) is 409 conflict rather than handed another
//     write's result.
//   - A key is claimed in memory while its request runs: a second request
//     with the key meanwhile is 409 conflict and never runs. Once the
//     request has completed, every retry is replayed, even one that meets
//     another retry of it in flight. Nothing in the
//     store marks a key in flight, so a key whose request died with the
//     process is free at once after a restart; requests on two nodes meet
//     at the record, and the later one's write replays the earlier's.
//   - The same key with a different request (SHA-256 over method, path and
//     body) is 422 idempotency_key_mismatch.
//   - Responses that a retry should be able to change are not stored: 422
//     (validation), 401, 403, 413, 429 and 5xx. A key whose request wrote
//     nothing is then free; one whose writes committed keeps their steps,
//     so a retry replays them and goes on from there.
//   - Records are kept for Options.IdempotencyTTL (24 h) on Options.Clock
//     from the first write, then replaced on reuse; the due job in DueJobs
//     deletes expired ones.
//   - Work a request sets off that is the bank's own rather than the
//     request's effect runs outside the journal (storage.WithoutJournal):
//     the due work of POST /sandbox/clock/advance and the attempt of POST
//     /entity-webhooks/{id}/test. A fake clock kept in the store
//     (Options.AdvanceClock, as bank.New wires it) advances as a step, so
//     a retry replays the advance; one that is not stored loses an advance
//     in a crash, and its retry advances again.
//   - With Options.DeferCompletion (the server sets it on PostgreSQL) the
//     response of a request whose writes are journaled is stored after it
//     is answered, batched with others' in one transaction (a completion
//     waits up to 50 ms for them), instead of in a transaction of its own
//     first. A retry that arrives before it is
//     stored takes the crash path above and answers the same bytes, but a
//     provider call made outside the store (an FX rate, a webhook test
//     attempt) may run again for it, as after a crash.
//
// Every route's POST is tested this way (TestIdempotentRetryAfterCrash):
// the response is withheld from the store as a crash would, and the retry
// must answer the same bytes and write nothing but the record. A new
// route's service returns, from its transaction, the object it answers,
// built inside it and reading back from JSON as itself.
//
// # Secrets at rest
//
// A record never rests readable. Under Options.Sealer (the bundled server
// gives it a key derived from its secret key for this purpose alone) the
// request hash and the response body are sealed together with AES-256-GCM,
// bound to the record's key as associated data, so that a record copied to
// another entity or key does not open; status, creation and expiry stay in
// clear. A replay is then the original bytes, an API key from POST
// /sandbox/api-keys and a webhook secret from create and rotate_secret
// included: they rest only under the server's key, for the record's TTL. A
// sealed record that does not open (sealer removed or changed) answers 500
// and is logged. The steps of a request not yet complete are sealed the same
// way, each bound to its record and its number; records written in clear by an earlier release still
// replay until they expire.
//
// Without a Sealer (an embedder that gives none) nothing secret is stored:
// before the record or a step is written, any object loses its api_key and
// a webhook (an object with enabled_events) its secret, so the replay is the
// original object without them, re-encoded, and the key is still never
// run twice. Give a Sealer for exact replays.
//
// Card numbers and CVVs are never stored, sealed or not (a CVV may not be
// kept after authorisation): in any object that looks like a card (it has
// cvv, cvc, expiry or last4 fields) number and cvv are removed first, and
// such a replay lacks them.
//
// Nothing else at rest or in the log holds a secret either: API keys are
// stored as SHA-256 hashes, webhook secrets and identity and document
// numbers sealed by their services (masked in responses and events), and
// the log carries IDs only. examples/server's TestNoSecretAtRest checks the
// bolt file, its write-ahead logs and the server log for every secret in
// clear, Base64 and hex.
package httpapi
