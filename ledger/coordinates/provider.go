package coordinates

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"sync"

	"github.com/corebank/corebank"
)

// Kind says whether account details are bank coordinates or a wallet.
type Kind string

// Kinds of account details.
const (
	KindFiat       Kind = "fiat"
	KindStablecoin Kind = "stablecoin"
)

// Status is the provisioning state of issued account details.
type Status string

// Statuses of issued account details (SPEC "Account details").
const (
	StatusPending Status = "pending"
	StatusActive  Status = "active"
)

var currencyKinds = map[string]Kind{
	"USD": KindFiat, "EUR": KindFiat, "GBP": KindFiat, "CAD": KindFiat,
	"AED": KindFiat, "NGN": KindFiat, "ZAR": KindFiat, "KES": KindFiat,
	"USC": KindStablecoin, "UST": KindStablecoin, "RLD": KindStablecoin,
}

// KindOf returns the kind of account details an account in currency gets:
// fiat for USD, EUR, GBP, CAD, AED, NGN, ZAR and KES, stablecoin for USC,
// UST and RLD. ok is false for any other currency.
func KindOf(currency string) (kind Kind, ok bool) {
	kind, ok = currencyKinds[currency]
	return kind, ok
}

// Request asks a Provider for the coordinates of one account.
type Request struct {
	// AccountID is the corebank account the details will belong to.
	AccountID string
	// Currency is the account's currency code ("USD", "USC").
	Currency string
	// Kind is KindFiat or KindStablecoin (see KindOf).
	Kind Kind
	// Chain is the chain code for stablecoin details ("eth", "base",
	// "matic", "sol"); it must be empty for fiat.
	Chain string
	// HolderName is the name the details are issued to.
	HolderName string
	// ProviderID, for fiat only, selects a provider other than the
	// default; "" means the default.
	ProviderID string
}

// Validate checks the fields every provider relies on, returning a
// corebank validation error that names each bad field by its API name
// (currency, chain, provider_id), or nil.
func (r Request) Validate() error {
	p := corebank.Problems{}
	kind, ok := KindOf(r.Currency)
	switch {
	case !ok:
		p.Add("currency", fmt.Sprintf("account details are not available for currency %q", r.Currency))
	case r.Kind != "" && r.Kind != kind:
		p.Add("currency", fmt.Sprintf("%s is a %s currency, not %s", r.Currency, kind, r.Kind))
	}
	switch kind {
	case KindStablecoin:
		if r.Chain == "" {
			p.Add("chain", "is required for stablecoin accounts; use one of eth, base, matic, sol")
		} else if !ValidChain(r.Chain) {
			p.Add("chain", fmt.Sprintf("unknown chain %q; use one of eth, base, matic, sol", r.Chain))
		}
		if r.ProviderID != "" {
			p.Add("provider_id", "is only allowed for fiat accounts")
		}
	case KindFiat:
		if r.Chain != "" {
			p.Add("chain", "is only allowed for stablecoin accounts")
		}
	}
	return p.Err()
}

// Issuer names the institution or network behind account details. Code is
// the routing number, BIC, sort code, bank code or chain code.
type Issuer struct {
	Name string `json:"name"`
	Code string `json:"code"`
}

// Issued is what a Provider returns: the coordinates of one account. Fields
// a currency does not use are empty.
type Issued struct {
	// AccountNumber is the bank account number, the IBAN where the account
	// number is an IBAN (EUR), or the wallet address (stablecoin). It is
	// always set, even while Status is pending: the ledger withholds it from
	// callers until fiat details are active.
	AccountNumber string
	IBAN          string
	RoutingNumber string
	Issuer        Issuer
	Chain         string
	// SupportedAssets is set for stablecoin details: USDC and USDT.
	SupportedAssets   []string
	SortCode          string
	InstitutionNumber string
	TransitNumber     string
	BranchCode        string
	Status            Status
}

// Provider issues account details. Issue is external I/O: the ledger calls
// it outside any storage transaction. It returns a *corebank.Error of kind
// KindInvalid naming the field for a request it cannot serve, and an error
// of kind KindUnavailable when the provider is down.
type Provider interface {
	Issue(ctx context.Context, req Request) (*Issued, error)
}

// SandboxProviderID is the provider_id the Sandbox answers to besides "".
const SandboxProviderID = "sandbox"

// SandboxBankName is the issuer name of every fiat detail the Sandbox issues.
const SandboxBankName = "Corebank Sandbox Bank"

// Fixed sandbox bank codes. The routing number carries a valid ABA check
// digit; the EUR IBANs are Irish with bank code CORE and sort code 990001,
// the AED IBANs Emirati with bank code 099.
const (
	SandboxRoutingNumber     = "091000019"
	SandboxEURBIC            = "COREIE2D"
	SandboxEURBankCode       = "CORE990001"
	SandboxAEDBIC            = "COREAEAA"
	SandboxAEDBankCode       = "099"
	SandboxSortCode          = "040099"
	SandboxInstitutionNumber = "999"
	SandboxTransitNumber     = "00011"
	SandboxNGNBankCode       = "999"
	SandboxBranchCode        = "990000"
	SandboxKESBankCode       = "99"
)

var chainNames = map[string]string{
	ChainETH: "Ethereum", ChainBase: "Base", ChainMatic: "Polygon", ChainSOL: "Solana",
}

// SandboxOptions configures a Sandbox; the zero value is ready to use.
type SandboxOptions struct {
	// Random is the source of account numbers and wallet keys; nil means
	// crypto/rand. Tests pass a seeded math/rand source.
	Random io.Reader
	// FiatStatus is the status of new fiat details; "" means active.
	// Stablecoin details are always pending (SPEC "Account details").
	FiatStatus Status
}

// Sandbox is a Provider that makes up valid coordinates locally: for each
// currency the identifiers SPEC.md lists, with check digits that pass this
// package's validators. It is safe for concurrent use.
type Sandbox struct {
	mu         sync.Mutex
	random     io.Reader
	fiatStatus Status
}

var _ Provider = (*Sandbox)(nil)

// NewSandbox returns a Sandbox; opt may be nil.
func NewSandbox(opt *SandboxOptions) *Sandbox {
	s := &Sandbox{random: rand.Reader, fiatStatus: StatusActive}
	if opt != nil {
		if opt.Random != nil {
			s.random = opt.Random
		}
		if opt.FiatStatus != "" {
			s.fiatStatus = opt.FiatStatus
		}
	}
	return s
}

// Issue returns fresh coordinates for req. It returns a validation error
// (see Request.Validate) for an unsupported currency, a missing, unknown or
// misplaced chain, or a provider_id other than "" and "sandbox".
func (s *Sandbox) Issue(ctx context.Context, req Request) (*Issued, error) {
	if req.Kind == "" {
		req.Kind, _ = KindOf(req.Currency)
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if req.ProviderID != "" && req.ProviderID != SandboxProviderID {
		return nil, corebank.InvalidField("provider_id", fmt.Sprintf("unknown provider %q", req.ProviderID))
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.random
	out := &Issued{Status: s.fiatStatus, Issuer: Issuer{Name: SandboxBankName}}
	var err error
	switch req.Currency {
	case "USD":
		out.RoutingNumber = SandboxRoutingNumber
		out.Issuer.Code = SandboxRoutingNumber
		out.AccountNumber, err = GenerateUSAccountNumber(r)
	case "EUR":
		out.IBAN, err = GenerateIBAN(r, "IE", SandboxEURBankCode)
		out.AccountNumber = out.IBAN
		out.Issuer.Code = SandboxEURBIC
	case "GBP":
		out.SortCode = SandboxSortCode
		out.Issuer.Code = SandboxSortCode
		out.AccountNumber, err = GenerateUKAccountNumber(r)
	case "CAD":
		out.InstitutionNumber = SandboxInstitutionNumber
		out.TransitNumber = SandboxTransitNumber
		out.Issuer.Code = SandboxInstitutionNumber
		out.AccountNumber, err = GenerateCAAccountNumber(r)
	case "AED":
		out.IBAN, err = GenerateIBAN(r, "AE", SandboxAEDBankCode)
		if err == nil {
			out.AccountNumber = out.IBAN[7:] // the 16-digit account number inside the IBAN
		}
		out.Issuer.Code = SandboxAEDBIC
	case "NGN":
		out.Issuer.Code = SandboxNGNBankCode
		out.AccountNumber, err = GenerateNUBAN(r, SandboxNGNBankCode)
	case "ZAR":
		out.BranchCode = SandboxBranchCode
		out.Issuer.Code = SandboxBranchCode
		out.AccountNumber, err = GenerateZAAccountNumber(r)
	case "KES":
		out.Issuer.Code = SandboxKESBankCode
		out.AccountNumber, err = nonZeroLeading(r, 12)
	default: // stablecoin; Validate admitted nothing else
		out.Status = StatusPending
		out.Chain = req.Chain
		out.Issuer = Issuer{Name: chainNames[req.Chain], Code: req.Chain}
		out.SupportedAssets = SupportedAssets()
		out.AccountNumber, err = GenerateWalletAddress(r, req.Chain)
	}
	if err != nil {
		return nil, fmt.Errorf("coordinates: sandbox issue %s: %w", req.Currency, err)
	}
	return out, nil
}
