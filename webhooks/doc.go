// Package webhooks manages webhook subscriptions and delivers outbox events
// to them: signed, at least once, with retries on the clock.
//
// # Subscriptions
//
// A Webhook belongs to one entity and receives the events of that entity and
// of every entity below it in the tree (Options.Tree, a scope.Tree such as
// *entities.Service, places entities; without one a webhook gets only its
// own entity's events). enabled_events selects event types
// by group ("outflows": {"completed": true}); "all" overrides the groups and
// also covers event types added later. preferred_events is derived from it:
// ["all"], "group.all" for a fully enabled group, else the single
// "group.event" names. A webhook is active until it is set inactive, deleted
// (soft: deleted holds the time), or created + expires_in passes on the
// clock; an inactive webhook gets no new deliveries and its pending ones
// stop. The secret ("whsec_" and 32 random bytes, base64url) is sealed at
// rest and shown only by CreateWebhook and RotateWebhookSecret.
//
// # Events
//
// Domain packages append events to the ledger's outbox in the same storage
// transaction as the change they report; event IDs increase in commit
// order. The dispatcher reads the outbox after the last event it has
// processed, a cursor read, advanced and stored in the transaction that
// creates the deliveries, so a restart resumes exactly there and nothing is
// lost. For each event and each active webhook that matches it, one
// Delivery is stored (one per webhook and event). The outbox is the only
// copy of an event: ListEvents pages through it in ID order, RedeliverEvent
// and attempts read it there, and the retention sweep deletes events, with
// finished deliveries, after EventRetention (30 days by default; an
// Option). RedeliverEvent sends a retained event again with a fresh retry
// window.
//
// # Authorization
//
// Every method a request reaches takes the corebank.Caller it acts for and,
// for webhooks, deliveries and events, an optional entity_id the object must
// lie under. Scope is decided inside the method's own transaction with
// internal/scope, before anything is revealed: an entity_id outside the
// caller's tree (or unknown) is corebank.ErrEntityNotFound whether or not
// the object exists, and an object outside the tree answers its own
// not-found error (ErrWebhookNotFound, ErrEventNotFound,
// ErrDeliveryNotFound) exactly as a missing one. Changes refuse a read-only
// caller with corebank.ErrForbidden. In-process code passes
// corebank.System().
//
// Wrap the backend the other services use with storage.WithCommitHook(db,
// svc.Wake) and call Run in a goroutine: the first attempt then goes out
// right after the commit, whatever the (possibly fake) clock says. Give the
// webhooks Service the unwrapped backend, so its own bookkeeping does not
// wake it.
//
// # Signing
//
// Each attempt is a POST of {"event": <type>, "data": <object>} with
// Content-Type application/json and the headers x-service-event-id (the
// event's ID, the same on every attempt and redelivery, for receivers to
// deduplicate), x-service-event-timestamp (Unix milliseconds of the attempt)
// and x-service-event-signature, the lowercase hex HMAC-SHA256 of
// "{timestamp}.{body}" keyed with the whole secret string. Receivers check
// it with Verify, which also refuses timestamps outside a tolerance so that
// a captured delivery cannot be replayed later.
//
// The timestamp is the real time of sending (Options.SignClock, the wall
// clock by default), whatever Options.Clock says: a receiver checks it
// against its own clock, as production code does (Verify with time.Now(),
// a Verifier with a nil Clock), and Stripe signs with real time even under
// its test clocks. Under a fake clock (examples/server -fake-clock, a
// test's clock.Mock) everything else stays on the fake time: the event's
// created, the attempts' at, and the schedule of retries.
//
// # Retries
//
// A 2xx acknowledges. Anything else fails the attempt: another status,
// a redirect (never followed), a timeout (AttemptTimeout, 10 s, per
// attempt), a TLS or connection error. After the n-th failed attempt the
// next is due RetryBase * 2^(n-1) later on the clock (10 s, 20 s, 40 s, ...)
// as long as that is within RetryWindow (15 minutes) of the event's
// creation; otherwise the delivery is failed and never sent again. With the
// defaults a receiver that never answers 2xx gets attempts at 0, 10, 30, 70,
// 150, 310 and 630 s. Retries wait on the injected clock: RunDue(asOf) sends
// those due, and Run sends them on every wake-up and every PollInterval. Each
// attempt, its outcome, the next retry and the webhook's stats are written
// in one transaction; an attempt whose outcome was not recorded (a crash) is
// made again, so delivery is at least once. Attempts run at most Concurrency
// (16) at a time.
//
// # Due work
//
// Everything that waits lives in storage's due-work queue, scheduled in the
// transaction that makes it due (DueJobs lists the kinds in the order they
// run): "webhooks.expire" marks a webhook inactive when its expires_in
// elapses; one "webhooks.sweep" item drops events and deliveries
// EventRetention after their creation, walking them oldest first by ID (a
// ULID minted at creation) and queueing itself again for the oldest left,
// so retention costs no queue item per event; "webhooks.attempt"
// holds every pending delivery, a first attempt at time 0 (due at once,
// whatever the clock says) and a retry at its time. The code follows the
// same path: ingest.go reads the outbox, fanout.go makes deliveries,
// send.go sends them, retention.go expires and purges, run.go drives it.
//
// # Several nodes
//
// Several Services over one store (server processes on one database) share
// the work. Ingestion advances the stored cursor in the transaction that
// makes the deliveries, so an event becomes deliveries once. A runner takes
// attempts under a lease in the store (Options.Node, Options.Lease; see
// storage.Due), so each (webhook, event) is attempted by one node at a
// time; an attempt is recorded, with the webhook's stats, only while its
// node still holds the lease, so the stats count each recorded attempt
// once. A node that stops mid-attempt leaves the delivery to another after
// the lease: delivery is at least once, and receivers deduplicate by
// x-service-event-id. Within one Service an in-process set keeps Run and
// Drain off each other's attempts.
//
// # SSRF policy
//
// URLs must be https. In production (Options.Env) a destination may not be
// loopback, private (RFC 1918, fc00::/7), link-local (169.254/16, fe80::/10),
// CGNAT (100.64/10), unspecified, multicast, reserved or a cloud metadata
// endpoint (169.254.169.254, fd00:ec2::254, metadata.google.internal):
// the host is resolved and every address checked at registration, and the
// dialer checks the address actually connected to on every attempt, so DNS
// rebinding cannot reach an internal address. IPv4 embedded in IPv6
// (mapped, NAT64, 6to4, Teredo) is checked as IPv4. Sandbox allows
// loopback and private addresses so a local receiver can be tested, and
// still refuses metadata, link-local, multicast and unspecified addresses.
// No proxy from the environment is used. A custom Options.HTTPClient keeps
// redirects unfollowed but dials as its own transport does.
package webhooks
