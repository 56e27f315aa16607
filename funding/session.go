package funding

import (
	"context"
	"encoding/hex"
	"errors"
	"maps"
	"net/url"
	"time"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/internal/scope"
	"github.com/corebank/corebank/internal/token"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/storage"
)

// Funding types (rails) of a session.
const (
	OpenBanking = "open-banking"
	Momo        = "momo"
	Crypto      = "crypto"
	ETransfer   = "etransfer"
)

// Session statuses (SPEC.md "Funding session"). Settled, failed, expired
// and cancelled are terminal.
const (
	SessionAwaitingUser      = "awaiting_user"
	SessionProcessing        = "processing"
	SessionPendingSettlement = "pending_settlement"
	SessionSettled           = "settled"
	SessionFailed            = "failed"
	SessionExpired           = "expired"
	SessionCancelled         = "cancelled"
)

// Failure codes of a session (SPEC.md's list).
const (
	FailurePaymentBlocked          = "payment_blocked"
	FailurePaymentRejected         = "payment_rejected"
	FailurePaymentCancelled        = "payment_cancelled"
	FailureInsufficientFunds       = "insufficient_funds"
	FailureInstitutionUnavailable  = "institution_unavailable"
	FailureInstitutionNotSupported = "institution_not_supported"
	FailureProviderError           = "provider_error"
	FailureSessionExpired          = "session_expired"
)

var failureCodes = map[string]bool{FailurePaymentBlocked: true, FailurePaymentRejected: true,
	FailurePaymentCancelled: true, FailureInsufficientFunds: true, FailureInstitutionUnavailable: true,
	FailureInstitutionNotSupported: true, FailureProviderError: true, FailureSessionExpired: true}

// ValidFailureCode reports whether code is one of SPEC.md's failure codes.
func ValidFailureCode(code string) bool { return failureCodes[code] }

// EventSessionUpdated is appended on every status change of a session.
const EventSessionUpdated = "funding_sessions.updated"

// EventInflowFailed is appended when money a session was bringing in is
// refused: a session that failed, expired or was cancelled after its
// credit was pending, or a crypto payment under tolerance.
const EventInflowFailed = "inflows.failed"

// Session limits (SPEC.md "Limits").
const (
	MaxSessionReference = 255
	MaxSessionNarration = 255
)

// Failure says why a session failed, expired or was cancelled: Code is one
// of SPEC.md's failure codes, Stage the status it left ("awaiting_user",
// "processing", "pending_settlement"), ProviderCode the provider's own
// code when it gave one.
type Failure struct {
	Code         string `json:"code"`
	Stage        string `json:"stage"`
	ProviderCode string `json:"provider_code,omitempty"`
}

// Session is a funding session: money the account's owner pays in through
// one rail. Rail data sits under Meta (momo: msisdn, channel, country and
// msisdn_warning; etransfer: name, email); crypto adds AmountReceived and
// PaymentOutcome once the payer has paid.
type Session struct {
	ID                     string            `json:"id"`
	FundingType            string            `json:"funding_type"`
	Status                 string            `json:"status"`
	UniqueReference        string            `json:"unique_reference"`
	Currency               string            `json:"currency"`
	Amount                 int64             `json:"amount"`
	AccountID              string            `json:"account_id"`
	EntityID               string            `json:"entity_id"`
	Narration              string            `json:"narration"`
	Country                string            `json:"country,omitempty"`
	RedirectURL            *string           `json:"redirect_url,omitempty"`
	Meta                   map[string]string `json:"meta"`
	CheckoutURL            *string           `json:"checkout_url"`
	CheckoutID             *string           `json:"checkout_id"`
	ReferenceNumber        *string           `json:"reference_number,omitempty"`
	PaymentID              *string           `json:"payment_id,omitempty"`
	RequiresAuthentication *bool             `json:"requires_authentication,omitempty"`
	SecurityQuestion       *string           `json:"security_question,omitempty"`
	AmountReceived         *int64            `json:"amount_received,omitempty"`
	PaymentOutcome         *string           `json:"payment_outcome,omitempty"`
	InflowID               *string           `json:"inflow_id,omitempty"`
	ExpiresAt              *int64            `json:"expires_at"`
	Failure                *Failure          `json:"failure,omitempty"`
	Created                int64             `json:"created"`
	Updated                int64             `json:"updated"`
}

// Terminal reports whether status is a terminal session status.
func Terminal(status string) bool {
	switch status {
	case SessionSettled, SessionFailed, SessionExpired, SessionCancelled:
		return true
	}
	return false
}

// NewSession is the body of POST /funding-sessions.
type NewSession struct {
	Amount          int64             `json:"amount"`
	Currency        string            `json:"currency"`
	AccountID       string            `json:"account_id"`
	EntityID        string            `json:"entity_id,omitempty"`
	UniqueReference string            `json:"unique_reference"`
	FundingType     string            `json:"funding_type,omitempty"`
	RedirectURL     string            `json:"redirect_url,omitempty"`
	Country         string            `json:"country,omitempty"`
	Narration       string            `json:"narration,omitempty"`
	Meta            map[string]string `json:"meta,omitempty"`
}

// SessionFilter selects sessions in ListSessions; "" or 0 is no filter.
// CreatedAfter and CreatedBefore are exclusive bounds in Unix ms.
type SessionFilter struct {
	EntityID      string
	AccountID     string
	Status        string
	Currency      string
	CreatedAfter  int64
	CreatedBefore int64
}

// SessionPage is one page of sessions and the entity listed.
type SessionPage struct {
	*corebank.Page[Session]
	EntityID string
}

const (
	sessionBucket storage.Bucket = "funding.sessions"
	// sessionIndex holds e/<entity>/<id> (the list), r/<entity>/<hex
	// reference> -> id (unique_reference) and t/<token> -> id (checkout).
	sessionIndex storage.Bucket = "funding.sessions.index"
)

// dueSession is the due-queue kind of a session's next automatic move.
const dueSession = "funding.session"

// sessionRecord is what is stored: the session and what only the service
// sees.
type sessionRecord struct {
	Session
	HoldID string `json:"hold_id,omitempty"`
	// Token is the checkout page's capability (sandbox open-banking and
	// crypto).
	Token       string `json:"token,omitempty"`
	ProviderRef string `json:"provider_ref,omitempty"`
	// Answer is a provider outcome due at AnswerAt (the sandbox payer).
	Answer   *ProviderEvent `json:"answer,omitempty"`
	AnswerAt int64          `json:"answer_at,omitempty"`
	// ExpireAt is when an unanswered session expires (0: never);
	// SettleAt when a pending credit settles by itself.
	ExpireAt int64 `json:"expire_at,omitempty"`
	SettleAt int64 `json:"settle_at,omitempty"`
	// DueAt is the session's one entry on the due queue (0: none).
	DueAt int64 `json:"due_at,omitempty"`
}

func (r *sessionRecord) view() *Session {
	s := r.Session
	s.Meta = maps.Clone(r.Meta)
	if s.Meta == nil {
		s.Meta = map[string]string{}
	}
	return &s
}

func listKey(entity, id string) []byte { return storage.Key("e", entity, id) }
func refKey(entity, ref string) []byte {
	return storage.Key("r", entity, hex.EncodeToString([]byte(ref)))
}
func tokenKey(token string) []byte { return storage.Key("t", token) }

// Owner returns the entity whose account the session funds (scope.Owned).
func (s *Session) Owner() string { return s.EntityID }

func getSession(tx storage.Tx, id string) (*sessionRecord, error) {
	return storage.LoadJSON[sessionRecord](tx, sessionBucket, []byte(id), ErrSessionNotFound)
}

func putSession(tx storage.Tx, r *sessionRecord) error {
	return storage.PutJSON(tx, sessionBucket, []byte(r.ID), r)
}

// momoPayer is a momo session's payer as checkMomo read it.
type momoPayer struct{ country, msisdn, warning string }

// validate checks in, the momo payer too (returned when in is momo).
func (in *NewSession) validate() (momoPayer, error) {
	var payer momoPayer
	p := corebank.Problems{}
	checkMoneyIn(p, in.AccountID, in.Amount)
	switch c, ok := ledger.CurrencyInfo(in.Currency); {
	case in.Currency == "":
		p.Add("currency", "is required")
	case !ok:
		p.Add("currency", "is not a supported currency")
	case in.FundingType == Crypto && c.Kind != ledger.KindStablecoin:
		p.Add("currency", "must be USC or UST for crypto")
	case in.FundingType == ETransfer && in.Currency != "CAD":
		p.Add("currency", "must be CAD for etransfer")
	}
	corebank.CheckText(p, "unique_reference", in.UniqueReference, corebank.Line(1, MaxSessionReference))
	corebank.CheckText(p, "narration", in.Narration, corebank.FreeText(0, MaxSessionNarration))
	corebank.CheckMeta(p, "meta", in.Meta, corebank.MetaLimits{Keys: 10, KeyLen: 40, ValueLen: 255})
	if in.Country != "" && !alpha2(in.Country) {
		p.Add("country", "must be an ISO 3166 alpha-2 code such as GB")
	}
	switch in.FundingType {
	case OpenBanking, Crypto, ETransfer:
		checkRedirect(p, in.RedirectURL)
	case Momo:
		if in.RedirectURL != "" {
			p.Add("redirect_url", "is not used for momo")
		}
		if in.Country != "" {
			p.Add("country", "is inferred from meta.channel for momo")
		}
	default:
		p.Add("funding_type", "must be one of open-banking, momo, crypto, etransfer")
	}
	switch in.FundingType {
	case Momo:
		for k := range in.Meta {
			if k != "channel" && k != "msisdn" {
				p.Add("meta."+k, "is not a momo field (channel, msisdn)")
			}
		}
		payer.country, payer.msisdn, payer.warning = checkMomo(p, in.Meta)
	case ETransfer:
		if in.Meta["name"] == "" {
			p.Add("meta.name", "is required for etransfer")
		}
		if e := in.Meta["email"]; e == "" {
			p.Add("meta.email", "is required for etransfer")
		} else if !corebank.PlausibleEmail(e) {
			p.Add("meta.email", "must be an email address")
		}
		for k := range in.Meta {
			if k != "name" && k != "email" {
				p.Add("meta."+k, "is not an etransfer field (name, email)")
			}
		}
	}
	return payer, p.Err()
}

func checkRedirect(p corebank.Problems, s string) {
	if s == "" {
		p.Add("redirect_url", "is required")
		return
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "https" || u.Host == "" || len(s) > 2048 {
		p.Add("redirect_url", "must be an https URL")
	}
}

func alpha2(s string) bool {
	return len(s) == 2 && s[0] >= 'A' && s[0] <= 'Z' && s[1] >= 'A' && s[1] <= 'Z'
}

// CreateSession opens a funding session on account in.AccountID for its
// owner, which must be in.EntityID (the caller's entity when "") or lie
// below it, and returns it awaiting_user. The rail's provider is asked to
// start it outside any transaction; the session is written, with
// funding_sessions.updated, only if no other session of the entity took
// unique_reference meanwhile.
//
// Errors: corebank.ErrForbidden for a read-only caller;
// corebank.ErrEntityNotFound for an entity_id outside the caller's tree;
// a validation error naming each bad field (amount, currency,
// unique_reference, funding_type, redirect_url, country, narration,
// meta.*); ledger.ErrAccountNotFound for an account missing or outside
// the tree alike; ledger.ErrAccountDeleted; ErrDuplicateSession, with the
// original session as Data; a provider's error.
func (s *SessionService) CreateSession(ctx context.Context, caller corebank.Caller, in NewSession) (*Session, error) {
	if err := caller.CheckWrite(); err != nil {
		return nil, err
	}
	if in.FundingType == "" {
		in.FundingType = OpenBanking
	}
	// Check first, so that a bad request never reaches the provider. A
	// duplicate does not either: it goes straight to the transaction, which
	// answers it (or, on a retry of an idempotent request, replays what the
	// first run answered).
	start, err := storage.View(ctx, s.in.db, func(tx storage.Tx) (*StartRequest, error) {
		return s.checkCreate(tx, caller, &in)
	})
	dup := errors.Is(err, ErrDuplicateSession)
	if err != nil && !dup {
		return nil, err
	}
	now := s.in.clock.Now()
	var started Started
	if !dup {
		start.ID = s.in.ids.New(now)
		if in.FundingType == OpenBanking || in.FundingType == Crypto {
			start.CheckoutToken = token.New()
		}
		if started, err = s.startProvider(ctx, start); err != nil {
			return nil, err
		}
	}
	return storage.Update(ctx, s.in.db, func(tx storage.Tx) (*Session, error) {
		if _, err := s.checkCreate(tx, caller, &in); err != nil {
			return nil, err
		}
		if dup { // no longer a duplicate: the first session's writes were undone
			return nil, ErrDuplicateSession.With("a funding session with this unique_reference was being created; retry")
		}
		return s.recordSession(tx, now, start, started)
	})
}

// checkCreate validates in within caller's scope and checks its account
// and reference; it returns what the provider is told.
func (s *SessionService) checkCreate(tx storage.Tx, caller corebank.Caller, in *NewSession) (*StartRequest, error) {
	var payer momoPayer
	acct, err := scope.Get(tx, s.in.tree, caller, in.EntityID, in.AccountID, func(tx storage.Tx, id string) (*ledger.Account, error) {
		// The body is checked once entity_id is known to be the caller's
		// to name, as a request checks its body after its scope.
		var err error
		if payer, err = in.validate(); err != nil {
			return nil, err
		}
		return s.in.led.GetAccountTx(tx, id)
	}, ledger.ErrAccountNotFound)
	if errors.Is(err, ledger.ErrAccountNotFound) {
		return nil, ledger.ErrAccountNotFound.With("account " + in.AccountID + " not found")
	}
	if err != nil {
		return nil, err
	}
	if err := duplicateSession(tx, acct.EntityID, in.UniqueReference); err != nil {
		return nil, err
	}
	if acct.Deleted != 0 {
		return nil, ledger.ErrAccountDeleted
	}
	if in.Currency != acct.Currency {
		return nil, corebank.InvalidField("currency", "must match the account's currency "+acct.Currency)
	}
	req := &StartRequest{FundingType: in.FundingType, AccountID: acct.ID, EntityID: acct.EntityID,
		Amount: in.Amount, Currency: acct.Currency, UniqueReference: in.UniqueReference,
		Narration: in.Narration, RedirectURL: in.RedirectURL, Country: in.Country, Meta: maps.Clone(in.Meta)}
	if in.FundingType == Momo {
		req.Country = payer.country
		req.Meta = map[string]string{"channel": in.Meta["channel"], "msisdn": payer.msisdn}
		if payer.warning != "" {
			req.Meta["msisdn_warning"] = payer.warning
		}
	}
	return req, nil
}

// duplicateSession returns ErrDuplicateSession, with the original as Data,
// when entity already has a session with ref.
func duplicateSession(tx storage.Tx, entity, ref string) error {
	id, err := tx.Get(sessionIndex, refKey(entity, ref))
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	r, err := getSession(tx, string(id))
	if err != nil {
		return err
	}
	return ErrDuplicateSession.WithData(r.view())
}

func (s *SessionService) startProvider(ctx context.Context, req *StartRequest) (Started, error) {
	switch req.FundingType {
	case Momo:
		return s.o.Momo.StartMomo(ctx, req)
	case Crypto:
		return s.o.Crypto.StartCrypto(ctx, req)
	case ETransfer:
		return s.o.ETransfer.StartETransfer(ctx, req)
	}
	return s.o.OpenBanking.StartOpenBanking(ctx, req)
}

// recordSession writes a new session awaiting its payer, with its indexes,
// its due work and funding_sessions.updated.
func (s *SessionService) recordSession(tx storage.Tx, now time.Time, in *StartRequest, st Started) (*Session, error) {
	ms := now.UnixMilli()
	r := &sessionRecord{Session: Session{
		ID: in.ID, FundingType: in.FundingType, Status: SessionAwaitingUser, UniqueReference: in.UniqueReference,
		Currency: in.Currency, Amount: in.Amount, AccountID: in.AccountID, EntityID: in.EntityID,
		Narration: in.Narration, Country: in.Country, Meta: in.Meta, Created: ms, Updated: ms,
	}, Token: in.CheckoutToken, ProviderRef: st.ProviderRef}
	if r.Meta == nil {
		r.Meta = map[string]string{}
	}
	if in.FundingType != Momo {
		u := in.RedirectURL
		r.RedirectURL = &u
	}
	if st.CheckoutURL != "" {
		u := st.CheckoutURL
		r.CheckoutURL = &u
	}
	if st.CheckoutID != "" && in.FundingType == Crypto {
		c := st.CheckoutID
		r.CheckoutID = &c
	}
	switch in.FundingType {
	case OpenBanking:
		r.ExpireAt = now.Add(s.o.CheckoutTTL).UnixMilli()
	case Momo:
		r.ExpireAt = now.Add(s.o.MomoPromptTTL).UnixMilli()
	case ETransfer:
		r.ExpireAt = now.Add(s.o.ETransferTTL).UnixMilli() // expires_at stays null, as SPEC.md says
	}
	if !st.ExpiresAt.IsZero() && in.FundingType != ETransfer && in.FundingType != Crypto {
		r.ExpireAt = st.ExpiresAt.UnixMilli()
	}
	if r.ExpireAt != 0 && in.FundingType != ETransfer {
		e := r.ExpireAt
		r.ExpiresAt = &e
	}
	if st.Answer != nil {
		a := *st.Answer
		r.Answer, r.AnswerAt = &a, s.answerAt(now, st.AnswerAt)
	}
	if err := tx.Put(sessionIndex, refKey(r.EntityID, r.UniqueReference), []byte(r.ID)); err != nil {
		return nil, err
	}
	if err := tx.Put(sessionIndex, listKey(r.EntityID, r.ID), nil); err != nil {
		return nil, err
	}
	if r.Token != "" {
		if err := tx.Put(sessionIndex, tokenKey(r.Token), []byte(r.ID)); err != nil {
			return nil, err
		}
	}
	if err := s.reschedule(tx, r); err != nil {
		return nil, err
	}
	if err := putSession(tx, r); err != nil {
		return nil, err
	}
	v := r.view()
	if _, err := s.in.led.AppendEventTx(tx, now, EventSessionUpdated, r.EntityID, v); err != nil {
		return nil, err
	}
	return v, nil
}

// GetSession returns session id for caller, narrowed to entityID when set.
//
// Errors: corebank.ErrEntityNotFound for an entity_id outside the caller's
// tree; ErrSessionNotFound for a session missing or outside the tree.
func (s *SessionService) GetSession(ctx context.Context, caller corebank.Caller, entityID, id string) (*Session, error) {
	return storage.View(ctx, s.in.db, func(tx storage.Tx) (*Session, error) {
		r, err := scope.Get(tx, s.in.tree, caller, entityID, id, getSession, ErrSessionNotFound)
		if err != nil {
			return nil, err
		}
		return r.view(), nil
	})
}

// maxSessionScan caps the index entries one page of ListSessions examines
// (see storage.PageQuery.MaxScan).
const maxSessionScan = 2000

// ListSessions returns one page of an entity's sessions of every rail,
// oldest first, filtered by f: the entity is f.EntityID (the caller's own
// when ""), and f.AccountID, when set, must be one of its accounts.
// created_after and created_before seek in the index (IDs are ULIDs, in
// time order); status, currency and account are checked session by
// session, at most maxSessionScan a page (a page cut short says HasNext).
//
// Errors: corebank.ErrEntityNotFound for an entity outside the caller's
// tree; a validation error naming status, currency, created_after,
// created_before, limit or cursor.
func (s *SessionService) ListSessions(ctx context.Context, caller corebank.Caller, f SessionFilter, opts corebank.ListOptions) (*SessionPage, error) {
	p := corebank.Problems{}
	if f.Status != "" && !validStatus(f.Status) {
		p.Add("status", "must be one of awaiting_user, processing, pending_settlement, settled, failed, expired, cancelled")
	}
	for name, ms := range map[string]int64{"created_after": f.CreatedAfter, "created_before": f.CreatedBefore} {
		if ms < 0 {
			p.Add(name, "must not be negative")
		}
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	limit, err := storage.CheckList(opts, corebank.DefaultLimit)
	if err != nil {
		return nil, err
	}
	return storage.View(ctx, s.in.db, func(tx storage.Tx) (*SessionPage, error) {
		entity, err := scope.Entity(tx, s.in.tree, caller, f.EntityID)
		if err != nil {
			return nil, err
		}
		if f.AccountID != "" {
			// The account's owner is listed; it must lie in entity's tree.
			notFound := ledger.ErrAccountNotFound.With("account " + f.AccountID + " not found")
			acct, err := s.in.led.GetAccountTx(tx, f.AccountID)
			if errors.Is(err, ledger.ErrAccountNotFound) {
				return nil, notFound
			}
			if err != nil {
				return nil, err
			}
			if err := scope.Check(tx, s.in.tree, corebank.As(entity), acct.EntityID, notFound); err != nil {
				return nil, err
			}
			entity = acct.EntityID
		}
		prefix := storage.Key("e", entity, "")
		q := storage.PageQuery{Bucket: sessionIndex, Prefix: prefix, Opts: opts, Limit: limit, MaxScan: maxSessionScan}
		if f.CreatedAfter > 0 {
			q.Lower = corebank.IDTimePrefix(f.CreatedAfter + 1)
		}
		if f.CreatedBefore > 0 {
			q.Upper = corebank.IDTimePrefix(f.CreatedBefore)
		}
		page, err := storage.ReadPage(tx, q, func(id string, _ []byte) (Session, bool, error) {
			r, err := getSession(tx, id)
			if err != nil {
				return Session{}, false, err
			}
			keep := (f.Status == "" || r.Status == f.Status) && (f.Currency == "" || r.Currency == f.Currency) &&
				(f.AccountID == "" || r.AccountID == f.AccountID) &&
				(f.CreatedAfter <= 0 || r.Created > f.CreatedAfter) && (f.CreatedBefore <= 0 || r.Created < f.CreatedBefore)
			return *r.view(), keep, nil
		})
		if err != nil {
			return nil, err
		}
		return &SessionPage{Page: page, EntityID: entity}, nil
	})
}

func validStatus(st string) bool {
	switch st {
	case SessionAwaitingUser, SessionProcessing, SessionPendingSettlement:
		return true
	}
	return Terminal(st)
}

// Inflows returns the inflow service the sessions credit through.
func (s *SessionService) Inflows() *Service { return s.in }
