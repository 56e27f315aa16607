// Package corebanktest gives another service's test suite a whole corebank
// in one call, the way net/http/httptest gives it a server: non-test code,
// imported only from _test.go files.
//
//	func TestPayout(t *testing.T) {
//		b := corebanktest.New(t)
//		hooks := b.CaptureWebhooks()
//		acct := b.FundedAccount("USD", 50_000)
//		tr, err := b.API().PostTransfers(ctx, client.PostTransfersJSONRequestBody{...}, nil)
//		b.Advance(5 * time.Second)
//		d := hooks.Wait("outflows.completed")
//	}
//
// # The bank
//
// New builds the bank exactly as the bundled server does (bank.New, the
// store's migrations, Entities.Bootstrap, Run in the background) over the
// in-memory backend, in the sandbox, on a *clock.Mock of its own that
// starts at Start (WithClockStart changes it). The root entity and its
// full-access and read-only keys are in Bank.Root; Bank.Server serves the
// REST API (over TLS with WithTLS); the services are the embedded
// *bank.Bank's fields. Anything else bank.New takes is set with
// WithOptions. Every bank is independent: its own store, clock, server and
// dispatcher, so parallel tests each make their own.
//
// A suite in another language (or a Go suite that talks to a running
// server rather than embedding one) gets the same isolation over HTTP from
// sandbox workspaces: one server started with -workspaces, and a POST
// /sandbox/workspaces per test for a bank of its own with its own keys and
// clock (bank/workspace; the README's "Using corebank from a test suite in
// any language", and the Node suite in examples/node).
//
// API returns the typed client (package client) of the bank, with the
// root's full-access key: one method per operation, lists as iterators,
// refusals as *client.APIError. Helpers cover what tests do most. Call
// sends an authenticated JSON
// request with the root's full-access key and decodes the answer (the data
// of an envelope, or a bare object); Client does the same with another
// key, and Do returns the raw status and body. FundedAccount opens a root
// account credited by a sandbox inflow, through the same services the API
// uses, so its balance and events are real. SettledSession opens a funding
// session on an account and settles it as the sandbox simulate route does.
// LastEvent finds the newest
// event of a type, as GET /events lists them. FixedReturnProduct and
// ShareOffering create capital products of the root as POST
// /sandbox/products does, and ApprovedOrder orders one on a root account
// and confirms it, affirming its documents, in one call.
//
// Cleanup is registered with t.Cleanup: the background work stops (the
// webhook dispatcher finishes the attempts in flight), the servers close,
// and the store is closed. Helpers report failures to the t given to New
// with t.Fatalf, so call them from that test's goroutine (a subtest makes
// its own bank).
//
// # Time
//
// Time moves only when the test moves it. Advance adds to the clock and
// runs every job due at the new time, in the bank's fixed order, before it
// returns, as POST /sandbox/clock/advance does: payouts progress, inflows
// settle, quotes expire, and the webhooks those changes cause are sent.
// The webhook dispatcher also runs in the background, as in the server: it
// sends each first attempt right after the commit that caused it, so after
// an API call a test waits for the webhook with Receiver.Wait. Advance
// returns only once every attempt due to the bank's Receivers is recorded,
// including those the dispatcher took first, so after Advance
// Receiver.Deliveries is complete. One Advance is one jump: a webhook
// retry that a failed attempt schedules for later waits for a later
// Advance, so step through a retry schedule with several calls.
//
// # Webhooks
//
// CaptureWebhooks starts an HTTPS receiver (httptest.NewTLSServer) and
// registers it as a webhook of the root entity for every event type, so it
// gets the events of the root and of every entity below it. Each delivery's
// signature is checked with webhooks.Verify against the webhook's secret,
// at the real time with a tolerance of WebhookTolerance (the bank signs
// with the time of sending, whatever its clock, as a production receiver
// expects); a delivery
// that fails the check is answered 401 and fails the test. Wait blocks
// (in real time, up to WaitTimeout) until a delivery of an event type
// arrives; Deliveries lists those received so far.
//
// Every bank trusts the certificate of httptest's TLS servers (one
// certificate, built into net/http/httptest, serves them all), so a test's
// own httptest.NewTLSServer can be registered as a webhook too.
//
// # Keys, and why this package is for tests only
//
// Each API key carries an RSA-2048 key pair for card data, and generating
// one costs 50 to 100 ms: two of them made the bootstrap of every bank
// slow. Here API keys take their pair from a fixed pool of four key pairs
// embedded in corebank (internal/keypool), parsed once per process, handed
// out in turn by each bank (so the root's two keys still differ, and a
// bank's fifth key repeats its first pair). New then costs about 2 ms
// (BenchmarkNew; the first New of a process adds about 1.5 ms to parse the
// pool and read httptest's certificate) where it cost over 100 ms.
//
// That is safe only for tests: the private keys are public, in corebank's
// source, so anything encrypted to them, card data included, is readable
// by anyone, and every test bank in every process shares them. The pool
// only ever reaches the banks New builds and the sandbox workspaces of
// bank/workspace, all over memory; a bank that holds real data must keep
// the default generator. A test that needs fresh pairs sets
// Entities.GenerateKey through WithOptions.
package corebanktest
