// Package client is a typed Go client of corebank's REST API, for any
// module that talks to a corebank server (the bundled examples/server, a
// corebanktest bank, or a deployment).
//
//	c, err := client.New("http://localhost:8080", apiKey, nil)
//	t, err := c.PostTransfers(ctx, client.PostTransfersJSONRequestBody{
//		AccountId: acct, PaymentDetailId: vendor, PaymentType: "ach",
//		Amount: 12_500, Narration: "invoice 42", UniqueReference: "inv-42",
//	}, nil)
//	for tr, err := range c.GetTransfers(ctx, &client.GetTransfersParams{AccountId: &acct}) {
//		...
//	}
//
// # Operations
//
// There is one method per operation of the OpenAPI document
// (httpapi/openapi.json), named for its operationId: GetTransfers is GET
// /transfers, PostCardsFreeze is POST /cards/{id}/freeze. A method takes
// the context, the path parameters in path order, the request body when
// the operation has one, and the operation's Params (query parameters
// and headers; nil for none). The request and answer types are generated
// from the document's schemas by oapi-codegen (types.gen.go); the methods
// by internal/gen (operations.gen.go). A test checks that every
// operation of the document has its method.
//
// Answers are decoded alike whatever their form: a method returns the
// data of an enveloped answer ({"status": "success", "message", "data"})
// or the whole of a bare one. Pages meant for a browser and files are
// returned as a RawResponse.
//
// # Lists
//
// A list operation is an iterator: GetTransfers(ctx, params) yields every
// transfer and its error (at most one, last), fetching the next page when
// the one in hand runs out, whichever of the API's list shapes the
// operation answers (data as the array, data.items, data.cards or
// data.transactions). Breaking out of the loop stops the fetching. Its
// Page twin (GetTransfersPage) fetches one page, with its cursors, for a
// caller that pages by hand.
//
// # Errors
//
// A refusal is an *APIError carrying the status, the code, the message, the
// problems by field (Details) and the request ID; match it with
// errors.As. Anything else (a connection refused, a context cancelled,
// an answer that does not decode) is returned wrapped.
//
// # Retries and idempotency
//
// Every POST carries an Idempotency-Key: Params.IdempotencyKey when set,
// otherwise a random one made for the call, so that a retry of the call
// is applied at most once. A request that may be repeated safely (GET,
// HEAD, DELETE, and POST with its key) is retried, with exponential
// backoff and jitter, after a connection error, a 429, a 500, 502, 503 or
// 504, or a 409 that says the same key is still in flight, up to
// Options.MaxRetries times; a PATCH only after a 429, which the server
// answers before doing anything. A 429's retry_after is waited out when
// it is within Options.MaxBackoff, and returned as the error otherwise.
package client

//go:generate go run github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2 -generate types -package client -o types.gen.go ../httpapi/openapi.json
//go:generate go run ./internal/gen -o operations.gen.go ../httpapi/openapi.json
