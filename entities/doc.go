// Package entities onboards the parties corebank holds money for
// (individuals and businesses), keeps their documents, decides who may
// open accounts and move money, and issues the API keys they authenticate
// with.
//
// # Entities and scope
//
// Entities form trees. Bootstrap makes the one root (an approved business,
// is_root true); every other entity is created by a caller and becomes the
// child of the caller's entity, or of a parent_entity the body names inside
// the caller's tree. A caller may act on its own entity and its
// descendants, never on others. Every method that acts for a caller takes a
// corebank.Caller and applies internal/scope inside its own transaction
// (the Service, like Gate, is the scope.Tree): an entity_id the request
// names is resolved first, so a foreign one answers ErrEntityNotFound
// whatever object is asked for; then the object's owner is checked, and an
// object outside the tree answers its own not-found error
// (ErrEntityNotFound, ErrDocumentNotFound, ErrSubmissionNotFound,
// ErrAPIKeyNotFound) exactly as a missing one does, so existence never
// leaks. Read-only callers get corebank.ErrForbidden from every method
// that changes something; in-process code trusted with every entity passes
// corebank.System(). Each entity stores its ancestry, so a scope check is
// one read whatever the depth.
//
// # Statuses and review
//
// A new entity is incomplete. Submit moves an incomplete (or rejected)
// entity to pending once it meets its requirements: an individual needs an
// identity and a proof_of_address document; a business needs its details
// (legal name, type, email, registration number, country of
// incorporation, registered address), a control person and a
// certificate_of_incorporation document. Review decides:
//
//	incomplete, pending -> approved | rejected | suspended
//	approved            -> suspended
//	suspended           -> approved | rejected
//	rejected            -> (none; Submit again)
//
// Review of an entity that was never submitted is allowed so the sandbox
// can stand in for a back-office decision. Deciding the current status
// again changes nothing. The person, identification, documents and latest
// submission take the decision's status. A Reviewer (SandboxReviewer by
// default) is told of each submission and may decide at once.
//
// Risk levels are low, medium and high; every entity starts at medium.
//
// # The ledger gate
//
// Service (and the stateless Gate, for building the ledger first)
// implements ledger.EntityGate: opening an account and moving money need
// an approved entity. A suspended entity gets ErrEntitySuspended (it can
// still read), any other status ErrEntityNotApproved, both KindRejected.
//
// # Updates
//
// UpdateIndividual and UpdateBusiness patch each part (person, address,
// sole trader, business) the same way: the stored part in its input form,
// the fields the patch gives copied on, the result validated as a create
// would be, and changes_applied naming the fields that differ.
//
// # Validation
//
// Every failure is a validation error naming the field by its dotted JSON
// path (person.first_name, business_officers.0.person.email), all fields
// at once. Dates are real calendar dates YYYY-MM-DD (birth dates in the
// past); countries are upper-case ISO 3166-1 alpha-2; gender is accepted as
// m, f or other in any case and stored lower case; phone numbers are 10-14
// characters, an optional "+" then the country code and digits, and are
// stored in E.164 form with the "+"; emails are bare addresses; bvn and nin
// (11 digits) are accepted only for nationality NG and ssn (9 digits) only
// for US, as are the matching document id_subtype values. Officers own
// 0-100 percent each and at most 100 together. Text fields are checked by
// corebank.CheckText: names, address lines and identifiers are single
// lines, descriptions may hold newlines.
//
// Entity meta (Meta) maps strings to strings; business meta
// (BusinessMetaValues) does too, except sales_channels, an array of
// strings, as SPEC lists them. At most 50 keys of 1-64 characters and
// values (and channels) of at most 500 (corebank.CheckMeta); a value of the
// wrong kind is refused naming meta.<key>. Records stored before values
// were checked may hold arrays under other keys: they read as their items
// joined by ", ".
//
// # Secrets
//
// Identity numbers and document numbers are sealed with corebank.Sealer
// and only ever shown masked to their last four characters, in
// composites, events and logs alike. API key secrets are "sk_sandbox_" or
// "sk_live_" and 43 base62 characters (32 random bytes); only their
// SHA-256 is stored, so a secret is shown once. Each key has its own RSA
// 2048 key pair, the private half sealed, for card data (RSA-OAEP with
// SHA-256). Rotating replaces both; deleting or rotating takes effect on
// the next Authenticate.
//
// # Hot paths
//
// AuthenticatePrincipal is Authenticate for the request path: it returns
// the key's ID, entity and read_only flag from an index record of a few
// dozen bytes kept under the secret's hash (auth_record.go), instead of
// decoding the whole key (sealed RSA key included). The gate and scope
// checks read a small record of the entity's status and ancestry
// (gate_record.go) instead of the entity. Both stay because httpapi's
// benchmarks show them paying (the figures are in those files). Both are
// written in the transaction that writes what they summarise, so nothing
// is cached in a Service and a rotated or deleted key fails on the next
// request through any Service over the store; stores written before they
// existed are read through the full records.
//
// # Documents
//
// Files arrive base64 encoded, at most 10 MiB each once decoded; their
// first bytes must match meta.file_type (PDF, PNG or JPEG). Bytes are
// stored in values of at most 1 MiB and served by OpenDocument at the
// authenticated path in urls.main.
//
// # Events
//
// entities.created and entities.updated go to the ledger's outbox in the
// same transaction as the change; their object is the Composite, as
// GET /entities/{id} returns it.
package entities
