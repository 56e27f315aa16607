package sim

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	mrand "math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/corebank/corebank/acquiring"
	"github.com/corebank/corebank/corebanktest"
	"github.com/corebank/corebank/ledger"
)

// Card acquiring: payment intents confirmed by card (encrypted with the
// calling key's public key) or wallet, with and without 3-D Secure, the
// challenge answered by verification, the simulate route, the challenge
// page or nobody (it times out on the clock); refunds, partial and full,
// several per charge, some over what is left; disputes won and lost.

// acqKey is an API key the simulator made for an entity, with the public
// key its card data is encrypted under.
type acqKey struct {
	Entity string
	API    string
	Pub    *rsa.PublicKey
}

// acqIntent is an intent still requires_action, to confirm or cancel.
type acqIntent struct {
	ID, Account, Entity, Currency string
	Amount                        int64
}

// acqAction is an intent action behind a 3DS challenge.
type acqAction struct {
	ID, Intent, Entity string
	Token              string
	Last4              string // "" for a wallet
	Created            int64  // ms, bank clock
}

// acqCharge is a completed intent action: a charge to refund or dispute.
type acqCharge struct {
	ID, Intent, Entity, Account string
	Amount                      int64
	Last4                       string
	Refunded                    int64 // what our acknowledged refunds asked (a guide only)
}

// acqRefund is a refund we made, pending as far as we know.
type acqRefund struct {
	ID, Action, Entity string
	Amount             int64
}

// acqDispute is a dispute we opened.
type acqDispute struct {
	ID, Action, Entity string
	Decided            string
}

// acqCharged is what the events told of one charge.
type acqCharged struct {
	Intent     string
	Charge     int64
	Successful int64  // payment_refund.completed amounts
	Dispute    string // the charge's one dispute
	DisputeAmt int64
}

type acqState struct {
	keys       map[string]*acqKey // entity -> a key of its own we made
	refs       map[string]string  // account -> a reference an intent of it took
	intents    []*acqIntent
	challenges []*acqAction
	abandoned  []*acqAction // challenges nobody answers: they must time out
	charges    []*acqCharge
	refunds    []*acqRefund
	disputes   []*acqDispute

	// From the events (checks only).
	intentFinal map[string]string // intent -> final status
	charged     map[string]*acqCharged
	refundFinal map[string]string // refund -> final status
	disputes2   map[string]*acqDisputeSeen
}

type acqDisputeSeen struct {
	Action string
	Amount int64
	Status string
}

func acq(s *Sim) *acqState {
	return State(s, "acquiring", func() *acqState {
		return &acqState{keys: map[string]*acqKey{}, refs: map[string]string{}, intentFinal: map[string]string{},
			charged: map[string]*acqCharged{}, refundFinal: map[string]string{}, disputes2: map[string]*acqDisputeSeen{}}
	})
}

// acqCap bounds a list of our objects: the oldest go first.
func acqCap[T any](l []T, n int) []T {
	if len(l) > n {
		return append(l[:0:0], l[len(l)-n/2:]...)
	}
	return l
}

// acqTake removes and returns a random element of *l, or the zero value.
func acqTake[T any](r *mrand.Rand, l *[]T) T {
	var zero T
	if len(*l) == 0 {
		return zero
	}
	i := r.IntN(len(*l))
	v := (*l)[i]
	*l = append((*l)[:i], (*l)[i+1:]...)
	return v
}

// acqEnsureKey makes a key for entity (POST /sandbox/api-keys) unless we
// have one; nil when the bank refused.
func acqEnsureKey(s *Sim, r *mrand.Rand, entity string) *acqKey {
	st := acq(s)
	s.mu.Lock()
	k := st.keys[entity]
	s.mu.Unlock()
	if k != nil {
		return k
	}
	resp := s.Do(r, Req{Method: http.MethodPost, Path: "/sandbox/api-keys", Body: map[string]any{"entity_id": entity}})
	var v struct {
		APIKey string `json:"api_key"`
		Pub    string `json:"encryption_public_key"`
	}
	if !resp.OK() || resp.Decode(&v) != nil || v.APIKey == "" {
		return nil
	}
	blk, _ := pem.Decode([]byte(v.Pub))
	if blk == nil {
		s.Violate("POST /sandbox/api-keys: encryption_public_key is not PEM: %s", resp)
		return nil
	}
	pk, err := x509.ParsePKIXPublicKey(blk.Bytes)
	pub, ok := pk.(*rsa.PublicKey)
	if err != nil || !ok {
		s.Violate("POST /sandbox/api-keys: encryption_public_key is not an RSA key: %v", err)
		return nil
	}
	k = &acqKey{Entity: entity, API: v.APIKey, Pub: pub}
	s.mu.Lock()
	if st.keys[entity] == nil {
		st.keys[entity] = k
	}
	k = st.keys[entity]
	s.mu.Unlock()
	return k
}

// acqKeyFor is a key that reaches entity: its own (half the time, when we
// made one) or the root's.
func acqKeyFor(s *Sim, r *mrand.Rand, entity string) *acqKey {
	st := acq(s)
	s.mu.Lock()
	own := st.keys[entity]
	s.mu.Unlock()
	if own != nil && r.IntN(2) == 0 {
		return own
	}
	return acqEnsureKey(s, r, s.RootID())
}

// acqEncrypt is payment_type_data.data: the card as JSON, RSA-OAEP
// SHA-256 under pub, Base64.
func acqEncrypt(pub *rsa.PublicKey, number string, month, year int, cvv string) string {
	pt, _ := json.Marshal(map[string]any{"card_number": number, "expiration_month": month,
		"expiration_year": year, "cvv": cvv, "card_holder_name": "Ada Lovelace"})
	ct, err := rsa.EncryptOAEP(sha256.New(), rand.Reader, pub, pt, nil)
	if err != nil {
		panic(err)
	}
	return base64.StdEncoding.EncodeToString(ct)
}

// acqCards are the last four digits the simulator pays with: plain cards
// and the sandbox's test cards.
// acqPAN is what every card number the simulator sends starts with
// (corebanktest.CardNumber): no answer or event may show it.
const acqPAN = "42424242424"

var acqCards = []string{"4242", "4242", "4242", "1111", "0002", "9995", "0069", "0127", "0119",
	"3220", "1629", "3055", "5126", "5126", "0259"}

// acqPlan is one confirmation: the action's body and what it must do.
type acqPlan struct {
	Body   map[string]any
	Last4  string // "" for a wallet
	Auth   string
	Forged bool // card data under another key: must be refused
}

func acqNewPlan(s *Sim, r *mrand.Rand, key *acqKey) acqPlan {
	if r.IntN(6) == 0 {
		return acqPlan{Auth: acquiring.Auth3DSDisabled, Body: map[string]any{"action": "confirm", "category": "collections",
			"payment_type":      acquiring.WalletPayAcq,
			"payment_type_data": map[string]any{"auth_model": "3ds_disabled", "billing_address": map[string]any{"country": "GB"}},
			"customer":          map[string]any{"first_name": "Ada", "last_name": "Lovelace", "email": "ada@example.com"}}}
	}
	last4 := Choose(r, acqCards...)
	auth := Choose(r, acquiring.Auth3DSDisabled, acquiring.Auth3DSRequired)
	pub, forged := key.Pub, false
	if r.IntN(25) == 0 {
		// Encrypted under a key the bank never gave this caller.
		st := acq(s)
		s.mu.Lock()
		for _, k := range st.keys {
			if !k.Pub.Equal(key.Pub) {
				pub, forged = k.Pub, true
				break
			}
		}
		s.mu.Unlock()
	}
	data := acqEncrypt(pub, corebanktest.CardNumber(last4), 1+r.IntN(12), s.Now().Year()+1+r.IntN(3), "123")
	ret := ""
	if auth == acquiring.Auth3DSRequired || r.IntN(2) == 0 {
		ret = "https://shop.sim/return?order=" + fmt.Sprint(r.IntN(1000))
	}
	return acqPlan{Body: corebanktest.CardAction(data, auth, ret), Last4: last4, Auth: auth, Forged: forged}
}

// acqExpect checks an action's status right after its confirmation
// against what its card and auth model must do.
func acqExpect(p acqPlan, a *acquiring.Action) error {
	if a == nil {
		return fmt.Errorf("no intent_action in the answer")
	}
	reason := ""
	if a.StatusReason != nil {
		reason = *a.StatusReason
	}
	tc := acquiring.TestCard{Outcome: acquiring.OutcomeSuccess}
	if p.Last4 != "" {
		tc = acquiring.TestCardOutcome(p.Last4)
	}
	want := acquiring.ActionCompleted
	switch {
	case tc.Outcome == acquiring.OutcomeDecline:
		if a.Status != acquiring.ActionFailed || reason != tc.FailureCode {
			return fmt.Errorf("card %s must fail with %s at once, got %s (%s)", p.Last4, tc.FailureCode, a.Status, reason)
		}
		return nil
	case tc.Outcome == acquiring.OutcomeChallenge, tc.Outcome == acquiring.OutcomeChallengeDecline,
		p.Last4 != "" && p.Auth == acquiring.Auth3DSRequired && tc.Outcome != acquiring.OutcomeFrictionless:
		want = acquiring.ActionPendingUserAction
	}
	if a.Status == acquiring.ActionFailed && reason == acquiring.ReasonAccountUnavailable {
		return nil // the account can no longer take the credit
	}
	if a.Status != want {
		return fmt.Errorf("card %q under %s must be %s at once, got %s (%s)", p.Last4, p.Auth, want, a.Status, reason)
	}
	if want == acquiring.ActionPendingUserAction {
		if !a.RequiresAction || a.NextAction == nil || !strings.Contains(a.NextAction.URL, "/sandbox/challenge/") {
			return fmt.Errorf("a challenged action has no next_action to the challenge page: %+v", a.NextAction)
		}
	} else if a.RequiresAction || a.NextAction != nil {
		return fmt.Errorf("a %s action still requires action", a.Status)
	}
	if a.ChargeAmount != a.Amount || a.RefundedAmount != 0 {
		return fmt.Errorf("a new action charges %d of %d with %d refunded", a.ChargeAmount, a.Amount, a.RefundedAmount)
	}
	return nil
}

// acqRecord files a confirmed action where the next ops find it.
func acqRecord(s *Sim, r *mrand.Rand, p acqPlan, in *acquiring.Intent, a *acquiring.Action) {
	st := acq(s)
	s.Acked("/intent-actions/" + a.ID)
	s.Count("acquiring.action_" + a.Status)
	s.mu.Lock()
	defer s.mu.Unlock()
	switch a.Status {
	case acquiring.ActionPendingUserAction:
		_, token, _ := strings.Cut(a.NextAction.URL, "/sandbox/challenge/")
		c := &acqAction{ID: a.ID, Intent: a.PaymentIntentID, Entity: a.EntityID, Token: token, Last4: p.Last4, Created: a.Created}
		if r.IntN(5) == 0 {
			st.abandoned = acqCap(append(st.abandoned, c), 100)
		} else {
			st.challenges = acqCap(append(st.challenges, c), 200)
		}
	case acquiring.ActionCompleted:
		st.charges = acqCap(append(st.charges, &acqCharge{ID: a.ID, Intent: a.PaymentIntentID, Entity: a.EntityID,
			Account: a.AccountID, Amount: a.ChargeAmount, Last4: p.Last4}), 300)
	}
}

// acqPickCharge returns a random charge we know, or nil.
func acqPickCharge(s *Sim, r *mrand.Rand) *acqCharge {
	st := acq(s)
	s.mu.Lock()
	defer s.mu.Unlock()
	return Pick(r, st.charges)
}

func acqIntentOp(s *Sim, r *mrand.Rand) error {
	a := s.PickAccount(r, nil)
	if a == nil {
		return nil
	}
	key := acqKeyFor(s, r, a.Entity)
	if key == nil {
		return nil
	}
	cur := a.Currency
	if r.IntN(30) == 0 {
		cur = Choose(r, fiat...)
	}
	amount := 1 + r.Int64N(200_000)
	ref, dup := fmt.Sprintf("sim-%d-%x", s.step, r.Uint32()), false
	st := acq(s)
	s.mu.Lock()
	if old, ok := st.refs[a.ID]; ok && r.IntN(10) == 0 {
		ref, dup = old, true // taken on this account: must be refused
	}
	s.mu.Unlock()
	body := map[string]any{"currency": cur, "amount": amount, "account_id": a.ID,
		"reference": ref, "description": "sim order"}
	var plan *acqPlan
	if r.IntN(2) == 0 {
		p := acqNewPlan(s, r, key)
		plan = &p
		body["intent_action"] = p.Body
	}
	resp := s.Do(r, Req{Method: http.MethodPost, Path: "/payment-intents", Body: body, Key: key.API})
	if bytes.Contains(resp.Body, []byte(acqPAN)) {
		return fmt.Errorf("POST /payment-intents answered the card number: %s", resp)
	}
	if !resp.OK() {
		return nil
	}
	if dup && !resp.Replayed {
		return fmt.Errorf("POST /payment-intents with reference %q, taken on account %s, answered %s", ref, a.ID, resp)
	}
	if plan != nil && plan.Forged {
		return fmt.Errorf("POST /payment-intents with card data under another key's public key answered %s", resp)
	}
	if cur != a.Currency {
		return fmt.Errorf("POST /payment-intents in %s on a %s account answered %s", cur, a.Currency, resp)
	}
	var in acquiring.Intent
	if err := resp.Decode(&in); err != nil || in.ID == "" {
		return fmt.Errorf("POST /payment-intents answered %s", resp)
	}
	s.Acked("/payment-intents/" + in.ID)
	s.mu.Lock()
	st.refs[a.ID] = ref
	s.mu.Unlock()
	if in.Amount != amount || in.Currency != a.Currency || in.AccountID != a.ID {
		return fmt.Errorf("POST /payment-intents of %d %s on %s answered %s", amount, a.Currency, a.ID, resp)
	}
	if plan == nil {
		if in.Status != acquiring.IntentRequiresAction || in.IntentAction != nil {
			return fmt.Errorf("an intent created without an action is %s: %s", in.Status, resp)
		}
		s.mu.Lock()
		st.intents = acqCap(append(st.intents, &acqIntent{ID: in.ID, Account: a.ID, Entity: in.EntityID, Currency: in.Currency, Amount: amount}), 200)
		s.mu.Unlock()
		return nil
	}
	if err := acqExpect(*plan, in.IntentAction); err != nil {
		return fmt.Errorf("POST /payment-intents %s: %w", in.ID, err)
	}
	if err := acqIntentMatches(&in); err != nil {
		return fmt.Errorf("POST /payment-intents %s: %w", in.ID, err)
	}
	acqRecord(s, r, *plan, &in, in.IntentAction)
	return nil
}

// acqIntentMatches checks an intent's status against its nested action's.
func acqIntentMatches(in *acquiring.Intent) error {
	a := in.IntentAction
	want := map[string]string{"": acquiring.IntentRequiresAction, acquiring.ActionPendingUserAction: acquiring.IntentProcessing,
		acquiring.ActionCompleted: acquiring.IntentCompleted, acquiring.ActionFailed: acquiring.IntentFailed}
	st := ""
	if a != nil {
		st = a.Status
		if a.Amount != in.Amount || a.PaymentIntentID != in.ID {
			return fmt.Errorf("intent %s of %d nests action %s of %d for intent %s", in.ID, in.Amount, a.ID, a.Amount, a.PaymentIntentID)
		}
	}
	if in.Status == acquiring.IntentCancelled && a == nil {
		return nil
	}
	if want[st] != in.Status {
		return fmt.Errorf("intent %s is %s with its action %q", in.ID, in.Status, st)
	}
	return nil
}

func acqConfirmOp(s *Sim, r *mrand.Rand) error {
	st := acq(s)
	s.mu.Lock()
	in := acqTake(r, &st.intents)
	s.mu.Unlock()
	if in == nil {
		return nil
	}
	key := acqKeyFor(s, r, in.Entity)
	if key == nil {
		return nil
	}
	p := acqNewPlan(s, r, key)
	body := map[string]any{"payment_intent_id": in.ID, "intent_action": p.Body}
	if r.IntN(3) == 0 {
		body["entity_id"] = in.Entity
	}
	resp := s.Do(r, Req{Method: http.MethodPost, Path: "/intent-actions", Body: body, Key: key.API})
	if bytes.Contains(resp.Body, []byte(acqPAN)) {
		return fmt.Errorf("POST /intent-actions answered the card number: %s", resp)
	}
	if !resp.OK() {
		if resp.Status == 0 || resp.Status == http.StatusTooManyRequests {
			s.mu.Lock()
			st.intents = append(st.intents, in) // may still be requires_action
			s.mu.Unlock()
		}
		return nil
	}
	if p.Forged {
		return fmt.Errorf("POST /intent-actions with card data under another key's public key answered %s", resp)
	}
	var a acquiring.Action
	if err := resp.Decode(&a); err != nil || a.ID == "" {
		return fmt.Errorf("POST /intent-actions answered %s", resp)
	}
	if a.PaymentIntentID != in.ID || a.Amount != in.Amount {
		return fmt.Errorf("POST /intent-actions for intent %s of %d answered %s", in.ID, in.Amount, resp)
	}
	if err := acqExpect(p, &a); err != nil {
		return fmt.Errorf("POST /intent-actions %s: %w", a.ID, err)
	}
	acqRecord(s, r, p, nil, &a)
	return nil
}

func acqCancelOp(s *Sim, r *mrand.Rand) error {
	st := acq(s)
	id, final := "", false
	s.mu.Lock()
	if r.IntN(4) == 0 && len(st.charges) > 0 {
		// A completed intent: it may never be cancelled.
		id, final = Pick(r, st.charges).Intent, true
	} else if in := acqTake(r, &st.intents); in != nil {
		id = in.ID
	}
	s.mu.Unlock()
	if id == "" {
		return nil
	}
	body := map[string]any{"action": "cancel"}
	if r.IntN(2) == 0 {
		body["reason"] = "customer left"
	}
	resp := s.Do(r, Req{Method: http.MethodPatch, Path: "/payment-intents/" + id, Body: body})
	if !resp.OK() {
		return nil
	}
	var in acquiring.Intent
	if err := resp.Decode(&in); err != nil {
		return fmt.Errorf("PATCH /payment-intents/%s answered %s", id, resp)
	}
	if final || in.Status != acquiring.IntentCancelled || in.IntentAction != nil {
		return fmt.Errorf("cancel of intent %s (completed before: %v) answered %s", id, final, resp)
	}
	if r.IntN(3) == 0 {
		// A cancelled intent is never confirmed.
		c := s.Do(r, Req{Method: http.MethodPost, Path: "/intent-actions", Body: map[string]any{"payment_intent_id": id,
			"intent_action": map[string]any{"action": "confirm", "category": "collections", "payment_type": acquiring.WalletPayAcq,
				"payment_type_data": map[string]any{"auth_model": "3ds_disabled", "billing_address": map[string]any{"country": "GB"}},
				"customer":          map[string]any{"first_name": "Ada", "last_name": "Lovelace", "email": "ada@example.com"}}}})
		if c.OK() {
			return fmt.Errorf("confirming the cancelled intent %s answered %s", id, c)
		}
	}
	return nil
}

// acqChallengeDone files what became of a challenged action.
func acqChallengeDone(s *Sim, c *acqAction, a *acquiring.Action) {
	st := acq(s)
	s.mu.Lock()
	defer s.mu.Unlock()
	switch a.Status {
	case acquiring.ActionPendingUserAction:
		st.challenges = append(st.challenges, c)
	case acquiring.ActionCompleted:
		st.charges = acqCap(append(st.charges, &acqCharge{ID: a.ID, Intent: a.PaymentIntentID, Entity: a.EntityID,
			Account: a.AccountID, Amount: a.ChargeAmount, Last4: c.Last4}), 300)
	}
}

// acqExpired reports whether c's challenge ran out by now.
func acqExpired(s *Sim, c *acqAction) bool {
	return s.Now().UnixMilli() >= c.Created+(30*time.Minute).Milliseconds()
}

func acqVerifyOp(s *Sim, r *mrand.Rand) error {
	st := acq(s)
	s.mu.Lock()
	c := acqTake(r, &st.challenges)
	s.mu.Unlock()
	if c == nil {
		return nil
	}
	resp := s.Do(r, Req{Method: http.MethodPost, Path: "/intent-verifications/" + c.ID})
	if !resp.OK() {
		s.mu.Lock()
		st.challenges = append(st.challenges, c)
		s.mu.Unlock()
		return nil
	}
	var a acquiring.Action
	if err := resp.Decode(&a); err != nil || a.ID != c.ID {
		return fmt.Errorf("POST /intent-verifications/%s answered %s", c.ID, resp)
	}
	if a.Status == acquiring.ActionPendingUserAction && acqExpired(s, c) {
		return fmt.Errorf("verification of %s after its challenge ran out answered it still pending_user_action", c.ID)
	}
	acqChallengeDone(s, c, &a)
	return nil
}

func acqSimulateOp(s *Sim, r *mrand.Rand) error {
	st := acq(s)
	var c *acqAction
	var ch *acqCharge
	s.mu.Lock()
	if r.IntN(5) == 0 && len(st.charges) > 0 {
		ch = Pick(r, st.charges)
	} else {
		c = acqTake(r, &st.challenges)
	}
	s.mu.Unlock()
	outcome := Choose(r, acquiring.ActionCompleted, acquiring.ActionFailed)
	body := map[string]any{"outcome": outcome}
	if outcome == acquiring.ActionFailed && r.IntN(2) == 0 {
		body["status_reason"] = "authentication_failed"
	}
	switch {
	case ch != nil:
		// A completed charge: the same answer changes nothing, the other is refused.
		resp := s.Do(r, Req{Method: http.MethodPost, Path: "/sandbox/intent-actions/" + ch.ID + "/simulate", Body: body})
		if !resp.OK() {
			if outcome == acquiring.ActionCompleted && resp.Status != 0 && resp.Status != http.StatusTooManyRequests {
				return fmt.Errorf("simulate completed of the completed action %s answered %s", ch.ID, resp)
			}
			return nil
		}
		var a acquiring.Action
		if err := resp.Decode(&a); err != nil || a.Status != acquiring.ActionCompleted {
			return fmt.Errorf("simulate %s of the completed action %s answered %s", outcome, ch.ID, resp)
		}
		return nil
	case c == nil:
		return nil
	}
	resp := s.Do(r, Req{Method: http.MethodPost, Path: "/sandbox/intent-actions/" + c.ID + "/simulate", Body: body})
	if !resp.OK() {
		if resp.Status == 0 || resp.Status == http.StatusTooManyRequests {
			s.mu.Lock()
			st.challenges = append(st.challenges, c)
			s.mu.Unlock()
		}
		return nil
	}
	var a acquiring.Action
	if err := resp.Decode(&a); err != nil || a.ID != c.ID {
		return fmt.Errorf("simulate of %s answered %s", c.ID, resp)
	}
	reason := ""
	if a.StatusReason != nil {
		reason = *a.StatusReason
	}
	if a.Status != outcome && !(a.Status == acquiring.ActionFailed && reason == acquiring.ReasonAccountUnavailable) {
		return fmt.Errorf("simulate %s of %s answered %s (%s)", outcome, c.ID, a.Status, reason)
	}
	acqChallengeDone(s, c, &a)
	return nil
}

var acqNonce = regexp.MustCompile(`name="nonce" value="([^"]*)"`)
var acqPageStatus = regexp.MustCompile(`id="status">([a-z_]+)<`)

// acqPostForm posts a form to the bank as a browser does: no key, no
// Idempotency-Key. Status 0 when the process died meanwhile (restarted
// here unless other requests are in flight).
func acqPostForm(s *Sim, r *mrand.Rand, path string, form url.Values) Resp {
	hr := httptest.NewRequestWithContext(s.ctx, http.MethodPost, path, strings.NewReader(form.Encode()))
	hr.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	w := httptest.NewRecorder()
	b := s.banks[r.IntN(len(s.banks))]
	func() {
		defer func() {
			if p := recover(); p != nil {
				s.Violate("POST %s panicked: %v", path, p)
			}
		}()
		b.Handler.ServeHTTP(w, hr)
	}()
	if s.anyCrashed() {
		if !s.concurrent {
			if err := s.reboot(r); err != nil {
				s.Violate("%v", err)
			}
		}
		return Resp{}
	}
	resp := Resp{Status: w.Code, Body: w.Body.Bytes()}
	if resp.Status >= 500 {
		s.Violate("POST %s answered %s", path, resp)
	}
	if loc := w.Header().Get("Location"); loc != "" {
		resp.Body = []byte(loc)
	}
	return resp
}

func acqChallengeOp(s *Sim, r *mrand.Rand) error {
	st := acq(s)
	s.mu.Lock()
	c := acqTake(r, &st.challenges)
	s.mu.Unlock()
	if c == nil {
		return nil
	}
	back := func() {
		s.mu.Lock()
		st.challenges = append(st.challenges, c)
		s.mu.Unlock()
	}
	page := s.Do(r, Req{Method: http.MethodGet, Path: "/sandbox/challenge/" + c.Token, Key: "-"})
	if page.Status != http.StatusOK {
		if page.Status != 0 {
			return fmt.Errorf("the challenge page of %s answered %d", c.ID, page.Status)
		}
		back()
		return nil
	}
	m := acqNonce.FindSubmatch(page.Body)
	if m == nil {
		// No form: the action is final already (it timed out).
		if !acqExpired(s, c) {
			return fmt.Errorf("the challenge page of %s, open and unanswered, has no form", c.ID)
		}
		return nil
	}
	choice, password := "complete", "password"
	switch r.IntN(6) {
	case 0:
		choice = "fail"
	case 1:
		password = "wrong"
	}
	resp := acqPostForm(s, r, "/sandbox/challenge/"+c.Token, url.Values{"nonce": {string(m[1])}, "choice": {choice}, "password": {password}})
	var status string
	switch resp.Status {
	case 0:
		back()
		return nil
	case http.StatusSeeOther:
		u, err := url.Parse(string(resp.Body))
		if err != nil {
			return fmt.Errorf("the challenge page of %s redirected to %q", c.ID, resp.Body)
		}
		status = u.Query().Get("status")
	case http.StatusOK:
		sm := acqPageStatus.FindSubmatch(resp.Body)
		if sm == nil {
			return fmt.Errorf("the challenge page of %s answered 200 without a status", c.ID)
		}
		status = string(sm[1])
	default:
		return nil // 409 when it timed out meanwhile, 429
	}
	passed := choice == "complete" && password == "password"
	want := acquiring.ActionFailed
	if passed && acquiring.TestCardOutcome(c.Last4).Outcome != acquiring.OutcomeChallengeDecline {
		want = acquiring.ActionCompleted
	}
	ar := s.Do(r, Req{Method: http.MethodGet, Path: "/intent-actions/" + c.ID})
	var a acquiring.Action
	if ar.Status != http.StatusOK || ar.Decode(&a) != nil {
		return nil
	}
	if a.Status != status {
		return fmt.Errorf("the challenge page of %s answered %s, the action is %s", c.ID, status, a.Status)
	}
	reason := ""
	if a.StatusReason != nil {
		reason = *a.StatusReason
	}
	if a.Status != want && !(a.Status == acquiring.ActionFailed && reason == acquiring.ReasonAccountUnavailable) {
		return fmt.Errorf("challenge of %s (card %s) answered %s/%q: action %s (%s), want %s", c.ID, c.Last4, choice, password, a.Status, reason, want)
	}
	s.Count("acquiring.page_" + a.Status)
	acqChallengeDone(s, c, &a)
	return nil
}

// acqExpiryOp runs the due work and reads the challenges nobody answers:
// before their time they are still open, after it failed with
// authentication_timeout.
func acqExpiryOp(s *Sim, r *mrand.Rand) error {
	st := acq(s)
	s.mu.Lock()
	c := Pick(r, st.abandoned)
	s.mu.Unlock()
	if c == nil {
		return nil
	}
	if _, err := s.banks[r.IntN(len(s.banks))].RunDue(s.ctx, s.Now()); err != nil || s.anyCrashed() {
		if s.anyCrashed() {
			return s.reboot(r)
		}
		return nil // an outage elsewhere: look another time
	}
	expired := acqExpired(s, c)
	resp := s.Do(r, Req{Method: http.MethodGet, Path: "/intent-actions/" + c.ID})
	var a acquiring.Action
	if resp.Status != http.StatusOK || resp.Decode(&a) != nil {
		return nil
	}
	reason := ""
	if a.StatusReason != nil {
		reason = *a.StatusReason
	}
	switch {
	case !expired && a.Status != acquiring.ActionPendingUserAction:
		return fmt.Errorf("unanswered challenge %s is %s (%s) before its time ran out", c.ID, a.Status, reason)
	case expired && (a.Status != acquiring.ActionFailed || reason != acquiring.ReasonAuthenticationTimeout):
		return fmt.Errorf("unanswered challenge %s is %s (%s) after its time ran out and the due work ran", c.ID, a.Status, reason)
	case expired:
		s.mu.Lock()
		st.abandoned = Remove(st.abandoned, func(x *acqAction) bool { return x == c })
		s.mu.Unlock()
		s.Count("acquiring.challenge_timed_out")
	}
	return nil
}

func acqRefundOp(s *Sim, r *mrand.Rand) error {
	ch := acqPickCharge(s, r)
	if ch == nil {
		return nil
	}
	s.mu.Lock()
	left := ch.Amount - ch.Refunded
	s.mu.Unlock()
	var amount int64
	switch r.IntN(6) {
	case 0, 1:
		amount = 1 + r.Int64N(max(1, ch.Amount/3))
	case 2:
		amount = max(1, left) // the rest
	case 3:
		amount = max(1, left) + 1 + r.Int64N(1000) // over what is left
	case 4:
		amount = ch.Amount + 1 + r.Int64N(1000) // over the charge
	default:
		amount = 1 + r.Int64N(ch.Amount)
	}
	body := map[string]any{"payment_intent_action_id": ch.ID, "reference": fmt.Sprintf("rf-%d-%x", s.step, r.Uint32()), "amount": amount}
	if r.IntN(2) == 0 {
		body["reason"] = "customer request"
	}
	resp := s.Do(r, Req{Method: http.MethodPost, Path: "/refunds", Body: body})
	if !resp.OK() {
		return nil
	}
	var rf acquiring.Refund
	if err := resp.Decode(&rf); err != nil || rf.ID == "" {
		return fmt.Errorf("POST /refunds answered %s", resp)
	}
	s.Acked("/refunds/" + rf.ID)
	if amount > ch.Amount {
		return fmt.Errorf("refund of %d on a charge of %d answered %s", amount, ch.Amount, resp)
	}
	if rf.Status != acquiring.RefundPending || rf.Amount != amount || rf.PaymentIntentActionID != ch.ID {
		return fmt.Errorf("POST /refunds of %d on %s answered %s", amount, ch.ID, resp)
	}
	st := acq(s)
	s.mu.Lock()
	ch.Refunded += amount
	s.mu.Unlock()
	s.Count("acquiring.refund_created")
	// What the charge shows now: refunded_amount (pending and successful
	// refunds) within the charge.
	if ar := s.Do(r, Req{Method: http.MethodGet, Path: "/intent-actions/" + ch.ID}); ar.Status == http.StatusOK {
		var a acquiring.Action
		if err := ar.Decode(&a); err == nil && (a.RefundedAmount > a.ChargeAmount || a.RefundedAmount < amount) {
			return fmt.Errorf("after refund %s of %d, action %s has refunded_amount %d of charge %d", rf.ID, amount, ch.ID, a.RefundedAmount, a.ChargeAmount)
		}
	}
	ref := &acqRefund{ID: rf.ID, Action: ch.ID, Entity: rf.EntityID, Amount: amount}
	if r.IntN(3) == 0 {
		return acqSimulateRefund(s, r, ref)
	}
	s.mu.Lock()
	st.refunds = acqCap(append(st.refunds, ref), 200)
	s.mu.Unlock()
	return nil
}

func acqRefundSimulateOp(s *Sim, r *mrand.Rand) error {
	st := acq(s)
	s.mu.Lock()
	ref := acqTake(r, &st.refunds)
	s.mu.Unlock()
	if ref == nil {
		return nil
	}
	return acqSimulateRefund(s, r, ref)
}

func acqSimulateRefund(s *Sim, r *mrand.Rand, ref *acqRefund) error {
	outcome := Choose(r, acquiring.RefundSuccessful, acquiring.RefundSuccessful, acquiring.RefundFailed)
	resp := s.Do(r, Req{Method: http.MethodPost, Path: "/sandbox/refunds/" + ref.ID + "/simulate", Body: map[string]any{"outcome": outcome}})
	if !resp.OK() {
		return nil // 409: the acquirer answered the other way first
	}
	var rf acquiring.Refund
	if err := resp.Decode(&rf); err != nil || rf.ID != ref.ID || rf.Status != outcome {
		return fmt.Errorf("simulate %s of refund %s answered %s", outcome, ref.ID, resp)
	}
	s.Count("acquiring.refund_simulated_" + outcome)
	if outcome == acquiring.RefundFailed {
		st := acq(s)
		s.mu.Lock()
		for _, ch := range st.charges {
			if ch.ID == ref.Action {
				ch.Refunded -= ref.Amount
			}
		}
		s.mu.Unlock()
	}
	return nil
}

func acqDisputeOp(s *Sim, r *mrand.Rand) error {
	ch := acqPickCharge(s, r)
	if ch == nil {
		return nil
	}
	body := map[string]any{}
	var amount int64
	switch r.IntN(4) {
	case 0:
		amount = 1 + r.Int64N(ch.Amount)
	case 1:
		amount = ch.Amount + 1 + r.Int64N(100)
	}
	if amount > 0 {
		body["amount"] = amount
	}
	if r.IntN(2) == 0 {
		body["reason"] = Choose(r, "fraudulent", "duplicate", "product_not_received")
	}
	resp := s.Do(r, Req{Method: http.MethodPost, Path: "/sandbox/intent-actions/" + ch.ID + "/dispute", Body: body})
	if !resp.OK() {
		return nil
	}
	var d acquiring.Dispute
	if err := resp.Decode(&d); err != nil || d.ID == "" {
		return fmt.Errorf("dispute of %s answered %s", ch.ID, resp)
	}
	s.Acked("/disputes/" + d.ID)
	if d.Amount > ch.Amount || (amount > 0 && d.Amount != amount) || d.Status != acquiring.DisputeNeedsResponse {
		return fmt.Errorf("dispute of %d on a charge of %d answered %s", amount, ch.Amount, resp)
	}
	s.Count("acquiring.dispute_opened")
	dp := &acqDispute{ID: d.ID, Action: ch.ID, Entity: d.EntityID}
	if r.IntN(3) == 0 {
		return acqDecide(s, r, dp)
	}
	st := acq(s)
	s.mu.Lock()
	st.disputes = acqCap(append(st.disputes, dp), 100)
	s.mu.Unlock()
	return nil
}

func acqDisputeSimulateOp(s *Sim, r *mrand.Rand) error {
	st := acq(s)
	s.mu.Lock()
	dp := acqTake(r, &st.disputes)
	s.mu.Unlock()
	if dp == nil {
		return nil
	}
	return acqDecide(s, r, dp)
}

// acqDecide decides dp won or lost; a decided dispute asked again
// answers the same outcome unchanged and refuses the other.
func acqDecide(s *Sim, r *mrand.Rand, dp *acqDispute) error {
	outcome := Choose(r, acquiring.DisputeWon, acquiring.DisputeLost)
	resp := s.Do(r, Req{Method: http.MethodPost, Path: "/sandbox/disputes/" + dp.ID + "/simulate", Body: map[string]any{"outcome": outcome}})
	st := acq(s)
	if resp.Status == 0 || resp.Status == http.StatusTooManyRequests {
		s.mu.Lock()
		if resp.Status == 0 && dp.Decided == "" {
			dp.Decided = "?" // lost with the process: decided or not
		}
		st.disputes = append(st.disputes, dp)
		s.mu.Unlock()
		return nil
	}
	s.mu.Lock()
	decided := dp.Decided
	s.mu.Unlock()
	if decided == "?" {
		if resp.OK() {
			var d acquiring.Dispute
			if resp.Decode(&d) == nil && d.Status == outcome {
				s.mu.Lock()
				dp.Decided = outcome
				s.mu.Unlock()
			}
		}
		return nil
	}
	if !resp.OK() {
		if decided == "" || decided == outcome {
			return fmt.Errorf("decide %s of dispute %s (decided %q) answered %s", outcome, dp.ID, decided, resp)
		}
		return nil
	}
	var d acquiring.Dispute
	if err := resp.Decode(&d); err != nil || d.Status != outcome || (decided != "" && decided != outcome) {
		return fmt.Errorf("decide %s of dispute %s (decided %q) answered %s", outcome, dp.ID, decided, resp)
	}
	s.Count("acquiring.dispute_" + outcome)
	s.mu.Lock()
	dp.Decided = outcome
	if r.IntN(3) == 0 {
		st.disputes = append(st.disputes, dp) // ask again later
	}
	s.mu.Unlock()
	return nil
}

// acqRace sends fns at once, as clients on several connections do, and
// restarts the process afterwards when it died meanwhile. It reports
// whether every request was answered.
func acqRace(s *Sim, r *mrand.Rand, fns []func(r *mrand.Rand) Resp) ([]Resp, bool) {
	out := make([]Resp, len(fns))
	calls := make([]func(), len(fns))
	for i, fn := range fns {
		rr := mrand.New(mrand.NewPCG(r.Uint64(), uint64(i)))
		calls[i] = func() { out[i] = fn(rr) }
	}
	s.concurrent = true
	s.Parallel(calls...)
	s.concurrent = false
	all := true
	for _, o := range out {
		if o.Status == 0 {
			all = false
		}
	}
	if s.anyCrashed() {
		if err := s.reboot(r); err != nil {
			s.Violate("%v", err)
		}
		all = false
	}
	return out, all
}

// acqRaceOp races refunds and disputes of one charge, or answers of one
// challenge: the refunds and the dispute accepted never exceed what was
// left of the charge, the charge's refunded_amount grows by exactly what
// was accepted, at most one dispute opens, and a challenge ends one way.
func acqRaceOp(s *Sim, r *mrand.Rand) error {
	st := acq(s)
	if r.IntN(3) == 0 {
		s.mu.Lock()
		c := acqTake(r, &st.challenges)
		s.mu.Unlock()
		if c == nil {
			return nil
		}
		var fns []func(*mrand.Rand) Resp
		for range 2 + r.IntN(3) {
			if r.IntN(3) == 0 {
				fns = append(fns, func(rr *mrand.Rand) Resp {
					return s.Do(rr, Req{Method: http.MethodPost, Path: "/intent-verifications/" + c.ID})
				})
				continue
			}
			outcome := Choose(r, acquiring.ActionCompleted, acquiring.ActionFailed)
			fns = append(fns, func(rr *mrand.Rand) Resp {
				return s.Do(rr, Req{Method: http.MethodPost, Path: "/sandbox/intent-actions/" + c.ID + "/simulate", Body: map[string]any{"outcome": outcome}})
			})
		}
		out, _ := acqRace(s, r, fns)
		final := ""
		for _, o := range out {
			var a acquiring.Action
			if !o.OK() || o.Decode(&a) != nil || !acquiring.Final(a.Status) {
				continue
			}
			if final != "" && a.Status != final {
				return fmt.Errorf("racing answers of challenge %s answered both %s and %s", c.ID, final, a.Status)
			}
			final = a.Status
		}
		resp := s.Do(r, Req{Method: http.MethodGet, Path: "/intent-actions/" + c.ID})
		var a acquiring.Action
		if resp.Status != http.StatusOK || resp.Decode(&a) != nil {
			return nil
		}
		if final != "" && a.Status != final {
			return fmt.Errorf("challenge %s answered %s, now %s", c.ID, final, a.Status)
		}
		acqChallengeDone(s, c, &a)
		return nil
	}
	ch := acqPickCharge(s, r)
	if ch == nil {
		return nil
	}
	read := func() *acquiring.Action {
		resp := s.Do(r, Req{Method: http.MethodGet, Path: "/intent-actions/" + ch.ID})
		var a acquiring.Action
		if resp.Status != http.StatusOK || resp.Decode(&a) != nil {
			return nil
		}
		return &a
	}
	before := read()
	if before == nil {
		return nil
	}
	left := before.ChargeAmount - before.RefundedAmount
	n := 2 + r.IntN(4)
	amounts := make([]int64, n)
	var fns []func(*mrand.Rand) Resp
	for i := range n {
		if r.IntN(6) == 0 {
			amounts[i] = -1 // a dispute of what is left
			fns = append(fns, func(rr *mrand.Rand) Resp {
				return s.Do(rr, Req{Method: http.MethodPost, Path: "/sandbox/intent-actions/" + ch.ID + "/dispute", Body: map[string]any{}})
			})
			continue
		}
		amounts[i] = max(1, left/2+r.Int64N(max(1, left/2)))
		body := map[string]any{"payment_intent_action_id": ch.ID, "reference": fmt.Sprintf("race-%d-%d", s.step, i), "amount": amounts[i]}
		fns = append(fns, func(rr *mrand.Rand) Resp {
			return s.Do(rr, Req{Method: http.MethodPost, Path: "/refunds", Body: body})
		})
	}
	out, all := acqRace(s, r, fns)
	var refunded, disputed int64
	opened := 0
	for i, o := range out {
		if !o.OK() {
			continue
		}
		if amounts[i] < 0 {
			var d acquiring.Dispute
			if err := o.Decode(&d); err != nil {
				return fmt.Errorf("dispute of %s answered %s", ch.ID, o)
			}
			s.Acked("/disputes/" + d.ID)
			opened++
			disputed += d.Amount
			s.mu.Lock()
			st.disputes = acqCap(append(st.disputes, &acqDispute{ID: d.ID, Action: ch.ID, Entity: d.EntityID}), 100)
			s.mu.Unlock()
			continue
		}
		var rf acquiring.Refund
		if err := o.Decode(&rf); err != nil {
			return fmt.Errorf("refund of %s answered %s", ch.ID, o)
		}
		s.Acked("/refunds/" + rf.ID)
		refunded += amounts[i]
		s.mu.Lock()
		ch.Refunded += amounts[i]
		st.refunds = acqCap(append(st.refunds, &acqRefund{ID: rf.ID, Action: ch.ID, Entity: rf.EntityID, Amount: amounts[i]}), 200)
		s.mu.Unlock()
	}
	if opened+int(min(refunded, 1)) > 0 {
		s.Count("acquiring.race_accepted")
	}
	if opened > 1 {
		return fmt.Errorf("%d racing disputes of charge %s opened", opened, ch.ID)
	}
	if refunded+disputed > left {
		return fmt.Errorf("racing refunds took %d and a dispute %d of charge %s with %d left", refunded, disputed, ch.ID, left)
	}
	if after := read(); all && after != nil && after.RefundedAmount != before.RefundedAmount+refunded {
		return fmt.Errorf("charge %s: refunded_amount %d, then %d after %d more was refunded", ch.ID, before.RefundedAmount, after.RefundedAmount, refunded)
	}
	return nil
}

// acqListOp reads a page of an account's intents, actions or refunds
// under a status filter: every item matches it.
func acqListOp(s *Sim, r *mrand.Rand) error {
	a := s.PickAccount(r, nil)
	if a == nil {
		return nil
	}
	var path, status string
	switch r.IntN(3) {
	case 0:
		path, status = "/payment-intents", Choose(r, "", "requires_action", "processing", "completed", "cancelled", "failed")
	case 1:
		path, status = "/intent-actions", Choose(r, "", "pending_user_action", "completed", "failed")
	default:
		path, status = "/refunds", Choose(r, "", "pending", "successful", "failed")
	}
	q := url.Values{"account_id": {a.ID}, "limit": {"20"}}
	if status != "" {
		q.Set("status", status)
	}
	resp := s.Do(r, Req{Method: http.MethodGet, Path: path + "?" + q.Encode()})
	if !resp.OK() {
		return nil
	}
	var page struct {
		Items []struct {
			ID        string `json:"id"`
			Status    string `json:"status"`
			AccountID string `json:"account_id"`
		} `json:"items"`
	}
	if err := resp.Decode(&page); err != nil {
		return fmt.Errorf("GET %s answered %s", path, resp)
	}
	for _, it := range page.Items {
		if it.AccountID != a.ID || (status != "" && it.Status != status) {
			return fmt.Errorf("GET %s?%s lists %s (%s, account %s)", path, q.Encode(), it.ID, it.Status, it.AccountID)
		}
	}
	if bytes.Contains(resp.Body, []byte(acqPAN)) {
		return fmt.Errorf("GET %s answered a card number", path)
	}
	return nil
}

// Checks from the outbox.

// acqEvent is the part of an event object the checks read.
type acqEventObj struct {
	ID                    string            `json:"id"`
	Status                string            `json:"status"`
	Amount                int64             `json:"amount"`
	PaymentIntentActionID string            `json:"payment_intent_action_id"`
	IntentAction          *acquiring.Action `json:"intent_action"`
}

func acqOnEvent(s *Sim, ev ledger.Event) error {
	kind, _, _ := strings.Cut(ev.Type, ".")
	switch kind {
	case "payment_intent", "payment_refund", "payment_dispute":
	default:
		return nil
	}
	if bytes.Contains(ev.Object, []byte(acqPAN)) {
		return fmt.Errorf("the event shows a card number: %s", ev.Object)
	}
	var o acqEventObj
	if err := json.Unmarshal(ev.Object, &o); err != nil || o.ID == "" {
		return fmt.Errorf("object is not an acquiring object: %s", ev.Object)
	}
	st := acq(s)
	s.mu.Lock()
	defer s.mu.Unlock()
	switch kind {
	case "payment_intent":
		if prev, ok := st.intentFinal[o.ID]; ok {
			return fmt.Errorf("intent %s reached a final state twice: %s, then %s", o.ID, prev, o.Status)
		}
		st.intentFinal[o.ID] = o.Status
		var in acquiring.Intent
		if err := json.Unmarshal(ev.Object, &in); err != nil {
			return err
		}
		if ev.Type != "payment_intent."+in.Status {
			return fmt.Errorf("a %s event carries an intent %s", ev.Type, in.Status)
		}
		if err := acqIntentMatches(&in); err != nil {
			return err
		}
		if in.Status != acquiring.IntentCompleted {
			return nil
		}
		a := in.IntentAction
		if _, ok := st.charged[a.ID]; ok {
			return fmt.Errorf("charge %s settled twice", a.ID)
		}
		if a.ChargeAmount != in.Amount || a.ApplicableFee < 0 || a.ApplicableFee > a.ChargeAmount {
			return fmt.Errorf("charge %s of intent %d charges %d with fee %d", a.ID, in.Amount, a.ChargeAmount, a.ApplicableFee)
		}
		st.charged[a.ID] = &acqCharged{Intent: in.ID, Charge: a.ChargeAmount}
	case "payment_refund":
		if prev, ok := st.refundFinal[o.ID]; ok {
			return fmt.Errorf("refund %s answered twice: %s, then %s", o.ID, prev, o.Status)
		}
		st.refundFinal[o.ID] = o.Status
		c := st.charged[o.PaymentIntentActionID]
		if c == nil {
			return fmt.Errorf("refund %s of action %s, which never completed", o.ID, o.PaymentIntentActionID)
		}
		if o.Status == acquiring.RefundSuccessful {
			c.Successful += o.Amount
		}
		if c.Successful+c.DisputeAmt > c.Charge {
			return fmt.Errorf("charge %s of %d: refunds took %d and dispute %s %d", o.PaymentIntentActionID, c.Charge, c.Successful, c.Dispute, c.DisputeAmt)
		}
		// refunded_amount counts pending and successful refunds: at least
		// what succeeded, at most the charge.
		a, err := s.Bank().Acquiring.GetAction(s.ctx, root, "", o.PaymentIntentActionID)
		if err == nil && (a.RefundedAmount > a.ChargeAmount || a.RefundedAmount < c.Successful) {
			return fmt.Errorf("charge %s of %d shows refunded_amount %d with %d refunded successfully", a.ID, a.ChargeAmount, a.RefundedAmount, c.Successful)
		}
	case "payment_dispute":
		c := st.charged[o.PaymentIntentActionID]
		if c == nil {
			return fmt.Errorf("dispute %s of action %s, which never completed", o.ID, o.PaymentIntentActionID)
		}
		seen := st.disputes2[o.ID]
		switch ev.Type {
		case acquiring.EventDisputeCreated:
			if seen != nil {
				return fmt.Errorf("dispute %s created twice", o.ID)
			}
			if c.Dispute != "" {
				return fmt.Errorf("charge %s disputed twice: %s and %s", o.PaymentIntentActionID, c.Dispute, o.ID)
			}
			c.Dispute, c.DisputeAmt = o.ID, o.Amount
			st.disputes2[o.ID] = &acqDisputeSeen{Action: o.PaymentIntentActionID, Amount: o.Amount, Status: o.Status}
			if o.Amount < 1 || c.Successful+o.Amount > c.Charge {
				return fmt.Errorf("dispute %s takes %d of charge %s of %d, %d refunded", o.ID, o.Amount, o.PaymentIntentActionID, c.Charge, c.Successful)
			}
		case acquiring.EventDisputeCompleted:
			if seen == nil {
				return fmt.Errorf("dispute %s completed, never created", o.ID)
			}
			if seen.Status == acquiring.DisputeWon || seen.Status == acquiring.DisputeLost {
				return fmt.Errorf("dispute %s decided twice: %s, then %s", o.ID, seen.Status, o.Status)
			}
			if o.Amount != seen.Amount {
				return fmt.Errorf("dispute %s of %d completed for %d", o.ID, seen.Amount, o.Amount)
			}
			seen.Status = o.Status
		}
	}
	return nil
}

func init() {
	registerMachine("payment_intent", Machine{
		Initial: []string{acquiring.IntentCompleted, acquiring.IntentFailed, acquiring.IntentCancelled},
		Edges:   map[string][]string{},
	})
	registerMachine("payment_refund", Machine{
		Initial: []string{acquiring.RefundSuccessful, acquiring.RefundFailed},
		Edges:   map[string][]string{},
	})
	registerMachine("payment_dispute", Machine{
		Initial: []string{acquiring.DisputeNeedsResponse},
		Edges: map[string][]string{
			acquiring.DisputeNeedsResponse: {acquiring.DisputeUnderReview, acquiring.DisputeWon, acquiring.DisputeLost},
			acquiring.DisputeUnderReview:   {acquiring.DisputeWon, acquiring.DisputeLost},
		},
	})
	registerEventHook(acqOnEvent)
	register(
		Op{Name: "acquiring.key", Weight: 1, Concurrent: true, Run: func(s *Sim, r *mrand.Rand) error {
			e := s.PickEntity(r, func(e Entity) bool { return e.Status == "approved" })
			if e != nil {
				acqEnsureKey(s, r, e.ID)
			}
			return nil
		}},
		Op{Name: "acquiring.intent", Weight: 6, Concurrent: true, Run: acqIntentOp},
		Op{Name: "acquiring.confirm", Weight: 5, Concurrent: true, Run: acqConfirmOp},
		Op{Name: "acquiring.cancel", Weight: 2, Concurrent: true, Run: acqCancelOp},
		Op{Name: "acquiring.verify", Weight: 2, Concurrent: true, Run: acqVerifyOp},
		Op{Name: "acquiring.simulate", Weight: 3, Concurrent: true, Run: acqSimulateOp},
		Op{Name: "acquiring.challenge", Weight: 3, Run: acqChallengeOp},
		Op{Name: "acquiring.expiry", Weight: 2, Run: acqExpiryOp},
		Op{Name: "acquiring.race", Weight: 2, Run: acqRaceOp},
		Op{Name: "acquiring.list", Weight: 1, Concurrent: true, Run: acqListOp},
		Op{Name: "acquiring.refund", Weight: 6, Concurrent: true, Run: acqRefundOp},
		Op{Name: "acquiring.refund_simulate", Weight: 2, Concurrent: true, Run: acqRefundSimulateOp},
		Op{Name: "acquiring.dispute", Weight: 1, Concurrent: true, Run: acqDisputeOp},
		Op{Name: "acquiring.dispute_simulate", Weight: 2, Concurrent: true, Run: acqDisputeSimulateOp},
	)
}
