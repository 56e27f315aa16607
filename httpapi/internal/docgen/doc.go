// Command docgen renders an OpenAPI 3.0 document as one self-contained HTML
// page: the API reference httpapi serves at GET /docs.
//
//	go run ./internal/docgen -o docs.html openapi.json
//
// httpapi's go:generate line runs it, and TestGeneratedDocsFresh fails when
// the committed docs.html is not what the committed openapi.json renders.
//
// # The page
//
// The page holds the info's title, version and description, the security
// schemes, a table of contents, one section per tag (operations without a tag
// under "Other"), and the component schemas and responses. An operation shows
// its method, path, summary and description, whether it needs a key, its
// parameters with their constraints (enum, minimum, maximum, lengths,
// pattern, default), its request body and its responses by status. A $ref to
// a component is a link inside the page. The element of an operation has its
// operationId as id; a tag's section is a <section class="tag"> headed by an
// <h2> holding the tag's name.
//
// The page loads nothing and runs no script: its style is one inline
// <style> element, so a Content-Security-Policy of default-src 'none' with
// that element's hash shows it whole. Everything from the document goes
// through html/template.
//
// # Determinism
//
// The same document renders the same bytes: tags, operations (by path, then
// method), parameters as the document orders them, properties, statuses and
// components are sorted. Only the standard library is used.
package main
