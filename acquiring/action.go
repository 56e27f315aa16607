package acquiring

import (
	"context"
	"errors"
	"net/url"
	"time"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/internal/scope"
	"github.com/corebank/corebank/internal/token"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/storage"
)

// Intent action statuses (SPEC.md "Intent action"). Completed and failed
// are final.
const (
	ActionPending           = "pending"
	ActionPendingUserAction = "pending_user_action"
	ActionCompleted         = "completed"
	ActionFailed            = "failed"
)

// Payment types, auth models and the one action and category.
const (
	CardAcq          = "card-acq"
	WalletPayAcq     = "walletpay-acq"
	Auth3DSRequired  = "3ds_required"
	Auth3DSDisabled  = "3ds_disabled"
	ActionConfirm    = "confirm"
	CategoryCollects = "collections"
)

// Status reasons corebank sets itself (test cards add their own failure
// codes).
const (
	ReasonAuthenticationFailed  = "authentication_failed"
	ReasonAuthenticationTimeout = "authentication_timeout"
	ReasonAccountUnavailable    = "account_unavailable"
	ReasonCardDeclined          = "card_declined"
)

// Action is an intent action: one confirmation attempt of a payment
// intent. PaymentTypeData holds no sensitive card data: the brand and type
// appear once completed. RefundedAmount is what refunds have taken of
// ChargeAmount (0 until refunds exist).
type Action struct {
	ID              string          `json:"id"`
	Currency        string          `json:"currency"`
	Amount          int64           `json:"amount"`
	ApplicableFee   int64           `json:"applicable_fee"`
	ChargeAmount    int64           `json:"charge_amount"`
	RefundedAmount  int64           `json:"refunded_amount"`
	Reference       string          `json:"reference"`
	Action          string          `json:"action"`
	Category        string          `json:"category"`
	PaymentType     string          `json:"payment_type"`
	PaymentTypeData PaymentTypeData `json:"payment_type_data"`
	Status          string          `json:"status"`
	StatusReason    *string         `json:"status_reason"`
	EntityID        string          `json:"entity_id"`
	AccountID       string          `json:"account_id"`
	PaymentIntentID string          `json:"payment_intent_id"`
	RequiresAction  bool            `json:"requires_action"`
	NextAction      *NextAction     `json:"next_action"`
	ReturnURL       *string         `json:"return_url"`
	Created         int64           `json:"created"`
	Updated         int64           `json:"updated"`
}

// PaymentTypeData is what an action shows of the card or wallet.
type PaymentTypeData struct {
	AuthModel      string  `json:"auth_model"`
	PaymentCountry string  `json:"payment_country,omitempty"`
	LastFourDigits string  `json:"last_four_digits,omitempty"`
	CardBrand      *string `json:"card_brand,omitempty"`
	CardType       *string `json:"card_type,omitempty"`
}

// NextAction tells the client where to send the cardholder.
type NextAction struct {
	Type string `json:"type"`
	URL  string `json:"url"`
}

// ActionParams is intent_action of POST /intent-actions and POST
// /payment-intents (CONTRACT.md pins the shape).
type ActionParams struct {
	Action          string         `json:"action"`
	Category        string         `json:"category"`
	PaymentType     string         `json:"payment_type"`
	PaymentTypeData *TypeDataInput `json:"payment_type_data"`
	Customer        *Customer      `json:"customer"`
	ReturnURL       string         `json:"return_url,omitempty"`
}

// TypeDataInput is payment_type_data of a confirmation.
type TypeDataInput struct {
	// Data is Base64 RSA-OAEP ciphertext of the card (card-acq only).
	Data           string          `json:"data,omitempty"`
	BillingAddress *BillingAddress `json:"billing_address"`
	AuthModel      string          `json:"auth_model,omitempty"`
	BrowserData    *BrowserData    `json:"browser_data,omitempty"`
}

// BillingAddress is the cardholder's billing address.
type BillingAddress struct {
	Country        string `json:"country"`
	AddressLineOne string `json:"address_line_one,omitempty"`
	AddressLineTwo string `json:"address_line_two,omitempty"`
	City           string `json:"city,omitempty"`
	State          string `json:"state,omitempty"`
	Zip            string `json:"zip,omitempty"`
}

// BrowserData is the cardholder's browser, for 3DS (EMV 3-D Secure 2
// browser flow). Pointers tell a missing value from a zero one.
type BrowserData struct {
	IPAddress         string `json:"ip_address,omitempty"`
	UserAgent         string `json:"user_agent,omitempty"`
	AcceptHeader      string `json:"accept_header,omitempty"`
	Language          string `json:"language,omitempty"`
	ColorDepth        *int   `json:"color_depth,omitempty"`
	ScreenHeight      *int   `json:"screen_height,omitempty"`
	ScreenWidth       *int   `json:"screen_width,omitempty"`
	TimeZoneOffset    *int   `json:"time_zone_offset,omitempty"`
	JavaEnabled       *bool  `json:"java_enabled,omitempty"`
	JavascriptEnabled *bool  `json:"javascript_enabled,omitempty"`
}

// Customer is the payer.
type Customer struct {
	FirstName string `json:"first_name"`
	LastName  string `json:"last_name"`
	Email     string `json:"email"`
}

// Confirmation is the body of POST /intent-actions.
type Confirmation struct {
	PaymentIntentID string        `json:"payment_intent_id"`
	EntityID        string        `json:"entity_id,omitempty"`
	IntentAction    *ActionParams `json:"intent_action"`
}

// actionRecord is a stored action and what only the service sees.
type actionRecord struct {
	Action
	// Card is the card's kept fields (never its number or CVV).
	Card *Card `json:"card,omitempty"`
	// Token is the sandbox challenge page's capability.
	Token string `json:"token,omitempty"`
	// ExpireAt is when an unanswered challenge fails (its due entry).
	ExpireAt int64 `json:"expire_at,omitempty"`
	// EntryID is the journal entry that credited the account.
	EntryID string `json:"entry_id,omitempty"`
}

func (a *actionRecord) view() *Action {
	v := a.Action
	if v.Status != ActionCompleted {
		v.PaymentTypeData.CardBrand, v.PaymentTypeData.CardType = nil, nil
	}
	return &v
}

// Owner is the entity the action's intent belongs to (scope.Get).
func (a *actionRecord) Owner() string { return a.EntityID }

func getAction(tx storage.Tx, id string) (*actionRecord, error) {
	return storage.LoadJSON[actionRecord](tx, actionBucket, []byte(id), ErrActionNotFound)
}

func (s *Service) putAction(tx storage.Tx, a *actionRecord) error {
	return storage.PutJSON(tx, actionBucket, []byte(a.ID), a)
}

// Final reports whether an action status is final.
func Final(status string) bool { return status == ActionCompleted || status == ActionFailed }

// check adds every problem of p's shape to ps, fields under prefix.
func (in *ActionParams) check(ps corebank.Problems, prefix string) {
	if in.Action != ActionConfirm {
		ps.Add(prefix+"action", "must be confirm")
	}
	if in.Category != CategoryCollects {
		ps.Add(prefix+"category", "must be collections")
	}
	td := in.PaymentTypeData
	auth := Auth3DSRequired
	if td != nil && td.AuthModel != "" {
		auth = td.AuthModel
	}
	if auth != Auth3DSRequired && auth != Auth3DSDisabled {
		ps.Add(prefix+"payment_type_data.auth_model", "must be 3ds_required or 3ds_disabled")
	}
	switch in.PaymentType {
	case CardAcq, WalletPayAcq:
	default:
		ps.Add(prefix+"payment_type", "must be card-acq or walletpay-acq")
	}
	tp := prefix + "payment_type_data."
	if td == nil {
		ps.Add(prefix+"payment_type_data", "is required")
	} else {
		switch {
		case in.PaymentType == CardAcq && td.Data == "":
			ps.Add(tp+"data", "is required for card-acq")
		case in.PaymentType == WalletPayAcq && td.Data != "":
			ps.Add(tp+"data", "is not used for walletpay-acq")
		case len(td.Data) > 8192:
			ps.Add(tp+"data", "is too long")
		}
		checkAddress(ps, tp+"billing_address.", td.BillingAddress, in.PaymentType == CardAcq)
		if auth == Auth3DSRequired {
			checkBrowser(ps, tp+"browser_data", td.BrowserData)
		}
	}
	if c := in.Customer; c == nil {
		ps.Add(prefix+"customer", "is required")
	} else {
		corebank.CheckText(ps, prefix+"customer.first_name", c.FirstName, corebank.Line(1, 100))
		corebank.CheckText(ps, prefix+"customer.last_name", c.LastName, corebank.Line(1, 100))
		if !corebank.PlausibleEmail(c.Email) {
			ps.Add(prefix+"customer.email", "must be an email address")
		}
	}
	switch {
	case in.ReturnURL == "" && auth == Auth3DSRequired:
		ps.Add(prefix+"return_url", "is required unless auth_model is 3ds_disabled")
	case in.ReturnURL != "":
		if u, err := url.Parse(in.ReturnURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") ||
			u.Host == "" || len(in.ReturnURL) > 2048 {
			ps.Add(prefix+"return_url", "must be an http or https URL")
		}
	}
}

func checkAddress(ps corebank.Problems, prefix string, a *BillingAddress, card bool) {
	if a == nil {
		ps.Add(prefix[:len(prefix)-1], "is required")
		return
	}
	if c := a.Country; len(c) != 2 || c[0] < 'A' || c[0] > 'Z' || c[1] < 'A' || c[1] > 'Z' {
		ps.Add(prefix+"country", "must be an ISO 3166 alpha-2 code such as GB")
	}
	min := 0
	if card {
		min = 1
	}
	corebank.CheckText(ps, prefix+"address_line_one", a.AddressLineOne, corebank.Line(min, 255))
	corebank.CheckText(ps, prefix+"city", a.City, corebank.Line(min, 100))
	corebank.CheckText(ps, prefix+"state", a.State, corebank.Line(min, 100))
	corebank.CheckText(ps, prefix+"address_line_two", a.AddressLineTwo, corebank.Line(0, 255))
	corebank.CheckText(ps, prefix+"zip", a.Zip, corebank.Line(0, 20))
}

// checkBrowser applies EMV 3DS 2's browser rules: the address, agent,
// accept header, language and whether JavaScript runs always; with
// JavaScript, the screen, colour depth, time zone and Java too.
func checkBrowser(ps corebank.Problems, prefix string, b *BrowserData) {
	if b == nil {
		ps.Add(prefix, "is required when auth_model is 3ds_required")
		return
	}
	for name, v := range map[string]string{"ip_address": b.IPAddress, "user_agent": b.UserAgent,
		"accept_header": b.AcceptHeader, "language": b.Language} {
		corebank.CheckText(ps, prefix+"."+name, v, corebank.Line(1, 2048))
	}
	if b.JavascriptEnabled == nil {
		ps.Add(prefix+".javascript_enabled", "is required")
		return
	}
	if !*b.JavascriptEnabled {
		return
	}
	for name, v := range map[string]*int{"color_depth": b.ColorDepth, "screen_height": b.ScreenHeight,
		"screen_width": b.ScreenWidth, "time_zone_offset": b.TimeZoneOffset} {
		if v == nil {
			ps.Add(prefix+"."+name, "is required when javascript_enabled is true")
		}
	}
	if b.JavaEnabled == nil {
		ps.Add(prefix+".java_enabled", "is required when javascript_enabled is true")
	}
}

// decrypt reads the card of in with the caller's key; nil for a wallet.
func (s *Service) decrypt(ctx context.Context, caller corebank.Caller, in *ActionParams, prefix string) (*Card, error) {
	if in.PaymentType != CardAcq {
		return nil, nil
	}
	field := prefix + "payment_type_data.data"
	if caller.KeyID == "" || s.o.Keys == nil {
		return nil, corebank.InvalidField(field, "cannot be decrypted: the caller has no API key")
	}
	priv, err := s.o.Keys.CardKey(ctx, caller.KeyID)
	if err != nil {
		return nil, err
	}
	c, err := DecryptCard(priv, field, in.PaymentTypeData.Data, s.o.Clock.Now())
	if err != nil {
		return nil, err
	}
	return &c, nil
}

// ConfirmIntent submits a confirmation of intent in.PaymentIntentID, which
// must be requires_action, and answers the new action. The card is
// decrypted with the calling API key's private key before the transaction;
// what happens next depends on the auth model and, in the sandbox, the card
// (TestCardOutcome; see doc.go).
//
// Errors: corebank.ErrForbidden; corebank.ErrEntityNotFound;
// ErrIntentNotFound; a validation error naming each bad field
// (payment_intent_id, intent_action.*); ErrInvalidForState for an intent
// not requires_action.
func (s *Service) ConfirmIntent(ctx context.Context, caller corebank.Caller, in Confirmation) (*Action, error) {
	if err := caller.CheckWrite(); err != nil {
		return nil, err
	}
	p := corebank.Problems{}
	if in.PaymentIntentID == "" {
		p.Add("payment_intent_id", "is required")
	}
	if in.IntentAction == nil {
		p.Add("intent_action", "is required")
	} else {
		in.IntentAction.check(p, "intent_action.")
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	// Scope and status first, so that a foreign intent answers 404 before
	// its card data is looked at. A refusal goes on to the transaction,
	// which answers it (or, on a retry of an idempotent request, replays
	// what the first run answered).
	_, refused := storage.View(ctx, s.db, func(tx storage.Tx) (*intentRecord, error) {
		return s.confirmable(tx, caller, in)
	})
	var card *Card
	if refused == nil {
		c, err := s.decrypt(ctx, caller, in.IntentAction, "intent_action.")
		if err != nil {
			return nil, err
		}
		card = c
	}
	now := s.o.Clock.Now()
	return storage.Update(ctx, s.db, func(tx storage.Tx) (*Action, error) {
		r, err := s.confirmable(tx, caller, in)
		if err != nil {
			return nil, err
		}
		if refused != nil { // confirmable now: the card was never read
			return nil, ErrInvalidForState.With("the payment intent changed while it was being confirmed; retry")
		}
		a, err := s.confirmTx(tx, now, r, in.IntentAction, card)
		if err != nil {
			return nil, err
		}
		return a.view(), nil
	})
}

func (s *Service) confirmable(tx storage.Tx, caller corebank.Caller, in Confirmation) (*intentRecord, error) {
	r, err := scope.Get(tx, s.tree, caller, in.EntityID, in.PaymentIntentID, getIntent, ErrIntentNotFound)
	if err != nil {
		return nil, err
	}
	if r.Status != IntentRequiresAction {
		return nil, ErrInvalidForState.With("a " + r.Status + " payment intent cannot be confirmed; only requires_action can")
	}
	return r, nil
}

// confirmTx records a new action of r from in and card, and moves it as
// the auth model and the card say: completed (credited), failed, or
// pending_user_action behind a challenge. It stores r and the action.
func (s *Service) confirmTx(tx storage.Tx, now time.Time, r *intentRecord, in *ActionParams, card *Card) (*actionRecord, error) {
	ms := now.UnixMilli()
	auth := in.PaymentTypeData.AuthModel
	if auth == "" {
		auth = Auth3DSRequired
	}
	fee := s.o.Fees.For(in.PaymentType).Of(r.Amount)
	if fee < 0 || fee > r.Amount {
		fee = r.Amount // a fee never takes more than the charge
	}
	a := &actionRecord{Action: Action{ID: s.ids.New(now), Currency: r.Currency, Amount: r.Amount,
		ApplicableFee: fee, ChargeAmount: r.Amount, Reference: r.Reference, Action: ActionConfirm,
		Category: CategoryCollects, PaymentType: in.PaymentType, Status: ActionPending,
		EntityID: r.EntityID, AccountID: r.AccountID, PaymentIntentID: r.ID, Created: ms, Updated: ms,
		PaymentTypeData: PaymentTypeData{AuthModel: auth, PaymentCountry: in.PaymentTypeData.BillingAddress.Country}}}
	if in.ReturnURL != "" {
		u := in.ReturnURL
		a.ReturnURL = &u
	}
	outcome := TestCard{Outcome: "success"}
	if card != nil {
		kept := *card
		a.Card = &kept
		a.PaymentTypeData.LastFourDigits = card.Last4
		if card.BINCountry != "" {
			a.PaymentTypeData.PaymentCountry = card.BINCountry
		}
		brand, typ := card.Brand, card.Type
		a.PaymentTypeData.CardBrand, a.PaymentTypeData.CardType = &brand, &typ
		outcome = TestCardOutcome(card.Last4)
	}
	r.ActionID = a.ID
	if err := tx.Put(index, actionListKey(a.EntityID, a.ID), nil); err != nil {
		return nil, err
	}
	switch {
	case outcome.Outcome == "decline":
		return a, s.finish(tx, now, r, a, ActionFailed, outcome.FailureCode)
	case outcome.Outcome == "challenge", outcome.Outcome == "challenge_decline",
		auth == Auth3DSRequired && card != nil && outcome.Outcome != "frictionless":
		return a, s.challenge(tx, now, r, a)
	}
	return a, s.finish(tx, now, r, a, ActionCompleted, "")
}

// challenge puts a behind a sandbox 3DS challenge page: the intent is
// processing, the action pending_user_action with next_action.
func (s *Service) challenge(tx storage.Tx, now time.Time, r *intentRecord, a *actionRecord) error {
	a.Token = token.New()
	a.Status, a.RequiresAction = ActionPendingUserAction, true
	a.NextAction = &NextAction{Type: "redirect_to_url", URL: s.o.ChallengeBase + "/sandbox/challenge/" + a.Token}
	a.ExpireAt = now.Add(s.o.ChallengeTTL).UnixMilli()
	if err := tx.Put(index, tokenKey(a.Token), []byte(a.ID)); err != nil {
		return err
	}
	if err := storage.Schedule(tx, dueChallenge, a.ExpireAt, a.ID); err != nil {
		return err
	}
	r.Status, r.Updated = IntentProcessing, now.UnixMilli()
	if err := s.putAction(tx, a); err != nil {
		return err
	}
	return putIntent(tx, r)
}

// finish ends a as status (completed or failed, with reason) and r with
// it, in one transaction: a completed action credits the account with
// charge_amount minus applicable_fee from the card clearing account, once;
// either appends the intent's event.
func (s *Service) finish(tx storage.Tx, now time.Time, r *intentRecord, a *actionRecord, status, reason string) error {
	if a.ExpireAt != 0 && !Final(a.Status) {
		if err := storage.Unschedule(tx, dueChallenge, a.ExpireAt, a.ID); err != nil {
			return err
		}
		a.ExpireAt = 0
	}
	if status == ActionCompleted && a.EntryID == "" {
		e, err := s.credit(tx, now, a)
		switch k := corebank.KindOf(err); {
		case err == nil:
			a.EntryID = e
			if err := s.scheduleCardDispute(tx, now, a); err != nil {
				return err
			}
		case k == corebank.KindRejected || k == corebank.KindNotFound:
			status, reason = ActionFailed, ReasonAccountUnavailable
		default:
			return err
		}
	}
	a.Status, a.RequiresAction, a.NextAction = status, false, nil
	a.Updated = now.UnixMilli()
	a.StatusReason = nil
	if reason != "" {
		a.StatusReason = &reason
	}
	r.Status = IntentCompleted
	if status == ActionFailed {
		r.Status = IntentFailed
	}
	_, err := s.final(tx, now, r, a)
	return err
}

// credit posts a's money: the clearing account pays charge_amount, the
// merchant account gets it less the fee, the fee account the fee. The
// entry's key makes a second post of the same action impossible.
func (s *Service) credit(tx storage.Tx, now time.Time, a *actionRecord) (string, error) {
	clearing := s.led.SystemAccount(a.Currency, ledger.PurposeClearingCard)
	lines := []ledger.Line{{AccountID: clearing, Side: ledger.Debit, Amount: a.ChargeAmount},
		{AccountID: a.AccountID, Side: ledger.Credit, Amount: a.ChargeAmount - a.ApplicableFee}}
	if a.ApplicableFee > 0 {
		lines = append(lines, ledger.Line{AccountID: s.led.SystemAccount(a.Currency, ledger.PurposeFees),
			Side: ledger.Credit, Amount: a.ApplicableFee})
	}
	if a.ChargeAmount == a.ApplicableFee {
		lines = append(lines[:1], lines[2:]...) // nothing left for the merchant
	}
	e, err := s.led.PostTx(tx, now, ledger.Entry{Key: "acquiring:" + a.ID, Lines: lines,
		Narration: "card payment " + a.Reference, Reference: a.PaymentIntentID,
		Meta: map[string]string{"intent_action_id": a.ID}})
	if err != nil {
		return "", err
	}
	return e.ID, nil
}

// GetAction returns intent action id for caller narrowed to entityID.
//
// Errors: corebank.ErrEntityNotFound; ErrActionNotFound.
func (s *Service) GetAction(ctx context.Context, caller corebank.Caller, entityID, id string) (*Action, error) {
	return storage.View(ctx, s.db, func(tx storage.Tx) (*Action, error) {
		a, err := scope.Get(tx, s.tree, caller, entityID, id, getAction, ErrActionNotFound)
		if err != nil {
			return nil, err
		}
		return a.view(), nil
	})
}

var actionStatuses = map[string]bool{ActionPending: true, ActionPendingUserAction: true,
	ActionCompleted: true, ActionFailed: true}

// ListActions returns one page of an entity's intent actions, oldest
// first, filtered by f (see Filter; PaymentType and PaymentIntentID too).
//
// Errors: as ListIntents, and a validation error naming payment_type.
func (s *Service) ListActions(ctx context.Context, caller corebank.Caller, f Filter, opts corebank.ListOptions) (*Page[Action], error) {
	p := f.check()
	if f.Status != "" && !actionStatuses[f.Status] {
		p.Add("status", "must be one of pending, pending_user_action, completed, failed")
	}
	if f.PaymentType != "" && f.PaymentType != CardAcq && f.PaymentType != WalletPayAcq {
		p.Add("payment_type", "must be card-acq or walletpay-acq")
	}
	return listOf(ctx, s, caller, f, opts, p, "a", func(tx storage.Tx, id string) (Action, bool, error) {
		a, err := getAction(tx, id)
		if err != nil {
			return Action{}, false, err
		}
		keep := f.keep(a.Status, a.Reference, a.Currency, a.AccountID, a.PaymentType, a.PaymentIntentID, a.Created)
		return *a.view(), keep, nil
	})
}

// VerifyAction is POST /intent-verifications/{id}: it rechecks action id
// with the issuer. A final action is returned unchanged; a pending
// challenge whose time ran out fails (authentication_timeout); one still
// open is returned as it stands (the sandbox issuer answers through the
// challenge page or the simulate route).
//
// Errors: corebank.ErrForbidden; corebank.ErrEntityNotFound;
// ErrActionNotFound.
func (s *Service) VerifyAction(ctx context.Context, caller corebank.Caller, entityID, id string) (*Action, error) {
	if err := caller.CheckWrite(); err != nil {
		return nil, err
	}
	now := s.o.Clock.Now()
	return storage.Update(ctx, s.db, func(tx storage.Tx) (*Action, error) {
		a, err := scope.Get(tx, s.tree, caller, entityID, id, getAction, ErrActionNotFound)
		if err != nil {
			return nil, err
		}
		if !Final(a.Status) && a.ExpireAt != 0 && a.ExpireAt <= now.UnixMilli() {
			if err := s.move(tx, now, a, ActionFailed, ReasonAuthenticationTimeout); err != nil {
				return nil, err
			}
		}
		return a.view(), nil
	})
}

// move ends the open action a as status with reason, with its intent.
func (s *Service) move(tx storage.Tx, now time.Time, a *actionRecord, status, reason string) error {
	r, err := getIntent(tx, a.PaymentIntentID)
	if err != nil {
		return err
	}
	return s.finish(tx, now, r, a, status, reason)
}

// SimulateAction is the sandbox's issuer answering action id: "completed"
// (credited once, payment_intent.completed) or "failed" (with
// statusReason, default card_declined; payment_intent.failed). Simulating
// the outcome a final action already has changes nothing.
//
// Errors: corebank.ErrForbidden; corebank.ErrEntityNotFound;
// ErrActionNotFound; a validation error naming outcome or status_reason;
// ErrInvalidForState for a final action asked for the other outcome.
func (s *Service) SimulateAction(ctx context.Context, caller corebank.Caller, entityID, id, outcome, statusReason string) (*Action, error) {
	if err := caller.CheckWrite(); err != nil {
		return nil, err
	}
	now := s.o.Clock.Now()
	return storage.Update(ctx, s.db, func(tx storage.Tx) (*Action, error) {
		a, err := scope.Get(tx, s.tree, caller, entityID, id, getAction, ErrActionNotFound)
		if err != nil {
			return nil, err
		}
		if err := s.answer(tx, now, a, outcome, statusReason); err != nil {
			return nil, err
		}
		return a.view(), nil
	})
}

// answer applies an issuer's outcome to a: the code the simulate route
// and the challenge page share.
func (s *Service) answer(tx storage.Tx, now time.Time, a *actionRecord, outcome, reason string) error {
	if err := checkOutcome(ActionCompleted, outcome, reason); err != nil {
		return err
	}
	if Final(a.Status) {
		if a.Status == outcome {
			return nil
		}
		return ErrInvalidForState.With("the intent action is already " + a.Status)
	}
	if outcome == ActionFailed && reason == "" {
		reason = ReasonCardDeclined
	}
	return s.move(tx, now, a, outcome, reason)
}

// checkOutcome checks a sandbox simulate route's answer: outcome is
// success or "failed", and status_reason (at most 100) only with failed.
func checkOutcome(success, outcome, reason string) error {
	p := corebank.Problems{}
	if outcome != success && outcome != ActionFailed {
		p.Add("outcome", "must be "+success+" or failed")
	}
	if reason != "" && outcome == success {
		p.Add("status_reason", "is only for failed")
	}
	corebank.CheckText(p, "status_reason", reason, corebank.Line(0, 100))
	return p.Err()
}

// ChallengeAction returns the action whose challenge token is token, for
// the sandbox 3DS page; ErrActionNotFound for any other token.
func (s *Service) ChallengeAction(ctx context.Context, token string) (*Action, error) {
	return storage.View(ctx, s.db, func(tx storage.Tx) (*Action, error) {
		a, err := actionByToken(tx, token)
		if err != nil {
			return nil, err
		}
		return a.view(), nil
	})
}

// AuthenticateAction applies the cardholder's answer on the sandbox 3DS
// challenge page of token (the token is the capability): passed true
// authenticates, and the issuer then authorises as the test card says (a
// challenge-then-decline card fails with its code); false fails with
// authentication_failed. It runs the simulate route's code (answer).
//
// Errors: ErrActionNotFound; ErrInvalidForState for an action already
// final with the other outcome.
func (s *Service) AuthenticateAction(ctx context.Context, token string, passed bool) (*Action, error) {
	now := s.o.Clock.Now()
	return storage.Update(ctx, s.db, func(tx storage.Tx) (*Action, error) {
		a, err := actionByToken(tx, token)
		if err != nil {
			return nil, err
		}
		outcome, reason := ActionCompleted, ""
		switch {
		case !passed:
			outcome, reason = ActionFailed, ReasonAuthenticationFailed
		case a.Card != nil:
			if c := TestCardOutcome(a.Card.Last4); c.Outcome == "challenge_decline" || c.Outcome == "decline" {
				outcome, reason = ActionFailed, c.FailureCode
			}
		}
		if err := s.answer(tx, now, a, outcome, reason); err != nil {
			return nil, err
		}
		return a.view(), nil
	})
}

func actionByToken(tx storage.Tx, token string) (*actionRecord, error) {
	if token == "" || len(token) > 64 {
		return nil, ErrActionNotFound
	}
	id, err := tx.Get(index, tokenKey(token))
	if errors.Is(err, storage.ErrNotFound) {
		return nil, ErrActionNotFound
	}
	if err != nil {
		return nil, err
	}
	return getAction(tx, string(id))
}

func (s *Service) expireChallenge(tx storage.Tx, now time.Time, it storage.DueItem) error {
	a, err := getAction(tx, it.ID)
	if errors.Is(err, ErrActionNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if Final(a.Status) || a.ExpireAt != it.At {
		return nil
	}
	a.ExpireAt = 0 // the queue took the entry away
	return s.move(tx, now, a, ActionFailed, ReasonAuthenticationTimeout)
}
