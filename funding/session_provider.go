package funding

import (
	"context"
	"time"
)

// StartRequest is what a rail's provider is told when a session opens.
type StartRequest struct {
	// ID is the session's ID, the key a provider deduplicates on.
	ID              string
	FundingType     string
	AccountID       string
	EntityID        string
	Amount          int64
	Currency        string
	UniqueReference string
	Narration       string
	RedirectURL     string
	Country         string
	Meta            map[string]string
	// CheckoutToken is the capability of corebank's own sandbox checkout
	// page (open-banking and crypto); a real provider ignores it.
	CheckoutToken string
}

// Started is a provider's answer to a new session.
type Started struct {
	// CheckoutURL is where the payer goes (open-banking, crypto);
	// CheckoutID names a crypto invoice.
	CheckoutURL string
	CheckoutID  string
	// ProviderRef is the provider's own reference, kept with the session.
	ProviderRef string
	// ExpiresAt, when set, replaces the session's default expiry
	// (open-banking, momo).
	ExpiresAt time.Time
	// Answer, when set, is an outcome the provider reports by itself at
	// AnswerAt (a sandbox payer): the service applies it on the due queue
	// exactly as a callback (HandleProviderEvent).
	Answer   *ProviderEvent
	AnswerAt time.Time
}

// ProviderEvent is a provider's report about a session, as its callback
// would carry it: the status it moved to (processing,
// pending_settlement, settled, failed, expired or cancelled), the failure
// code (SPEC.md's list) and the provider's raw code. For crypto, Received
// and Late say what the payer sent; the service judges it (cryptoOutcome)
// and credits what arrived.
type ProviderEvent struct {
	Status       string `json:"status"`
	FailureCode  string `json:"failure_code,omitempty"`
	ProviderCode string `json:"provider_code,omitempty"`
	Received     int64  `json:"received,omitempty"`
	Late         bool   `json:"late,omitempty"`
}

// ETransferValidation is an Interac provider's answer to PATCH: the
// transfer it found, and the security answer to keep (only as a hash).
type ETransferValidation struct {
	ReferenceNumber        string
	PaymentID              string
	RequiresAuthentication bool
	SecurityQuestion       string
	// SecurityAnswer, when a provider reports it, is dropped: the provider
	// deposits the transfer with it, and corebank never keeps it in any
	// form (a hash of a guessable answer would give it away).
	SecurityAnswer string
	// Answer, when set, is the provider's own next report, due at AnswerAt.
	Answer   *ProviderEvent
	AnswerAt time.Time
}

// OpenBankingProvider starts open-banking sessions (a bank's consent
// page at CheckoutURL).
type OpenBankingProvider interface {
	StartOpenBanking(ctx context.Context, req *StartRequest) (Started, error)
}

// MomoProvider sends a mobile-money push prompt to req.Meta["msisdn"] on
// req.Meta["channel"].
type MomoProvider interface {
	StartMomo(ctx context.Context, req *StartRequest) (Started, error)
}

// CryptoProvider opens a stablecoin invoice (CheckoutURL, CheckoutID).
type CryptoProvider interface {
	StartCrypto(ctx context.Context, req *StartRequest) (Started, error)
}

// ETransferProvider waits for an Interac e-Transfer and validates it when
// the payer says it is sent (PATCH /funding-sessions/{id}).
type ETransferProvider interface {
	StartETransfer(ctx context.Context, req *StartRequest) (Started, error)
	ValidateETransfer(ctx context.Context, s *Session) (ETransferValidation, error)
}

// sandboxRails is every rail's sandbox provider. Open-banking and crypto
// pay on corebank's own checkout page (or the simulate route); the momo
// payer answers PayerDelay after the prompt as the MSISDN's suffix says
// (sandboxMomoResult), or never when the suffix is the timeout one; a
// crypto payer of a magic amount pays by itself PayerDelay after the
// invoice opens (sandboxCryptoPayment); an e-Transfer validates with a
// security question, and the bank accepts it PayerDelay later.
type sandboxRails struct {
	base       string
	payerDelay time.Duration
}

func (p sandboxRails) checkout(token string) string { return p.base + "/sandbox/checkout/" + token }

func (p sandboxRails) StartOpenBanking(_ context.Context, req *StartRequest) (Started, error) {
	return Started{CheckoutURL: p.checkout(req.CheckoutToken), ProviderRef: "sbx_ob_" + req.ID}, nil
}

func (p sandboxRails) StartMomo(_ context.Context, req *StartRequest) (Started, error) {
	st := Started{ProviderRef: "sbx_momo_" + req.ID}
	switch code := sandboxMomoResult(req.Meta["msisdn"]); code {
	case "":
		st.Answer = &ProviderEvent{Status: SessionPendingSettlement, ProviderCode: "0"}
	case FailureSessionExpired:
		return st, nil // the payer never answers; the prompt expires
	case FailurePaymentCancelled:
		st.Answer = &ProviderEvent{Status: SessionCancelled, FailureCode: code, ProviderCode: "1032"}
	default:
		st.Answer = &ProviderEvent{Status: SessionFailed, FailureCode: code, ProviderCode: "1"}
	}
	st.AnswerAt = time.Time{} // set by the service: now + PayerDelay
	return st, nil
}

func (p sandboxRails) StartCrypto(_ context.Context, req *StartRequest) (Started, error) {
	st := Started{CheckoutURL: p.checkout(req.CheckoutToken), CheckoutID: "inv_" + req.ID, ProviderRef: "sbx_inv_" + req.ID}
	if pay := sandboxCryptoPayment(req.Amount); pay.Received != req.Amount || pay.Late {
		st.Answer = &ProviderEvent{Status: SessionPendingSettlement, Received: pay.Received, Late: pay.Late}
	}
	return st, nil
}

func (p sandboxRails) StartETransfer(_ context.Context, req *StartRequest) (Started, error) {
	return Started{ProviderRef: "sbx_etr_" + req.ID}, nil
}

func (p sandboxRails) ValidateETransfer(_ context.Context, s *Session) (ETransferValidation, error) {
	return ETransferValidation{
		ReferenceNumber:        "CA" + s.ID[len(s.ID)-10:],
		PaymentID:              "etr_" + s.ID,
		RequiresAuthentication: true,
		SecurityQuestion:       "What is the session's reference?",
		SecurityAnswer:         s.UniqueReference,
		Answer:                 &ProviderEvent{Status: SessionPendingSettlement, ProviderCode: "ACCEPTED"},
	}, nil
}
