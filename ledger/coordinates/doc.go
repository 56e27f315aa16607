// Package coordinates generates and validates the identifiers money is sent
// to: bank coordinates (routing numbers, IBANs, BICs, sort codes, NUBANs,
// Canadian and South African codes, CLABEs), stablecoin wallet addresses
// and E.164 phone numbers. It also defines the Provider interface through
// which the ledger issues account details, and Sandbox, a Provider that
// makes up valid coordinates locally.
//
// The package is pure Go: no storage, no network, no clock, no globals
// that change. Generators read randomness from an io.Reader so that tests
// are reproducible with a seeded source.
//
// # Validators
//
// Every ValidateXxx function returns nil for a valid value or an error that
// matches ErrInvalid through errors.Is and whose text (also returned by
// Problem) is a short phrase naming what is wrong, such as "must be 9
// digits" or "check digit does not match". Callers put that phrase under
// the field's name:
//
//	p.Add("routing_number", coordinates.Problem(coordinates.ValidateABA(v)))
//
// Validators take the canonical electronic form and do not trim or strip
// separators, except ValidateIBAN, which ignores spaces and letter case as
// the IBAN standard allows for its print form; store NormalizeIBAN's result.
//
// # Checks performed
//
//   - ABA routing numbers: 9 digits, a Federal Reserve prefix, and the
//     3-7-1 weighted checksum (ValidateABA, GenerateABA).
//   - IBAN: country from the registry length table (all SEPA countries, GB,
//     AE and other long-established ones), length, alphanumerics, the BBAN
//     structure for AE AT CH DE GB IE LT LU NL, and ISO 7064 MOD 97-10.
//     GenerateIBAN covers those nine countries, none of which embeds a
//     national check digit in its BBAN.
//   - BIC: ISO 9362, 8 or 11 characters, with an ISO 3166-1 country (or XK).
//   - UK sort code (6 digits) and account number (8 digits). The Pay.UK
//     modulus check needs per-bank weight tables and is not applied.
//   - NUBAN: 10 digits; ValidateNUBANForBank also checks the CBN check digit
//     computed with the bank's three-digit code (weights 3,7,3,3,7,3,...).
//     Six-digit codes of non-bank institutions are not supported.
//   - Canada: institution (3 digits), transit (5), account (7-12).
//     South Africa: branch code (6), account (7-11). United States: account
//     number 4-17 digits. These have no public check digit.
//   - CLABE: 18 digits with the 3-7-1 weighted mod-10 check digit.
//   - E.164: "+" then 8-15 digits, country code not starting with 0.
//   - Countries: ValidCountry knows all 249 officially assigned ISO 3166-1
//     alpha-2 codes; other packages use it for addresses and documents.
//
// # Wallets
//
// Chains are "eth", "base", "matic" and "sol". EVM chains use EIP-55
// addresses: "0x" and 40 hex digits. As EIP-55 itself allows, an address
// whose letters are all lower case or all upper case carries no checksum
// and is accepted; a mixed-case address must match its checksum exactly.
// The zero address is rejected because funds sent there are lost.
// Generated addresses are always in checksum form. Solana addresses are
// the base58 (Bitcoin alphabet) text of exactly 32 bytes; Base58Encode and
// Base58Decode are implemented here. Generated Solana addresses are real
// ed25519 public keys whose private keys are discarded.
//
// # Issuing account details
//
// Provider.Issue is external I/O, so the ledger calls it before opening a
// storage transaction and stores the result inside one. Request.Validate
// names bad fields by their API names: "currency", "chain" (required for
// stablecoin currencies USC UST RLD, forbidden for fiat) and "provider_id"
// (fiat only).
//
// Sandbox issues, per currency, the identifiers SPEC.md lists: USD account
// number and routing number; EUR IBAN (Irish, also the account number) and
// BIC; GBP account number and sort code; CAD account number, institution
// and transit numbers; AED account number and IBAN; NGN NUBAN; ZAR account
// number and branch code; and, though SPEC.md lists none for it, KES an
// account number. Issuer.Code is the routing number, BIC, sort code,
// institution number, bank code or branch code. Stablecoin details get a
// fresh wallet address for the chain, Issuer {network name, chain code},
// supported assets USDC and USDT, and status pending. Fiat details are
// active at once unless SandboxOptions.FiatStatus says pending (SPEC.md
// allows either); the account number is issued either way and the ledger
// withholds it until activation.
package coordinates
