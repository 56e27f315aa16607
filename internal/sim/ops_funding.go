package sim

// Funding: account details (bank coordinates and wallet addresses),
// inflows through them, and funding sessions on every rail (open-banking,
// momo, crypto, etransfer) with every sandbox outcome, e-Transfer
// validation, and sessions left alone to expire on the clock.
//
// Invariants (from the outbox, checked after every step):
//   - funding_sessions follow SPEC's machine (registered below);
//   - a session settles at most once, and its settlement is exactly one
//     inflows.completed of its rail, to its account, for its amount (crypto:
//     amount_received, what arrived), appended in the settling transaction;
//     no inflow of a session rail exists without its settlement;
//   - a session that ends failed, expired or cancelled carries no inflow,
//     and money never moves for it: each exclusive rail's clearing account
//     (open-banking, crypto, etransfer) has paid out exactly the settled
//     credits and holds exactly the credits of sessions pending_settlement;
//   - account_details follow their machine (pending -> active -> inactive);
//   - an inflow settled at once through details went through active,
//     undeleted, unexpired details of its own account; one that names no
//     details went to an account without undeleted details; an account with
//     usable details never refuses a sandbox inflow for want of them;
//   - reads agree with the events: a session's status, a details' status and
//     its inflow statistics.

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/corebank/corebank/ledger"
)

// fundingSessionMachine is SPEC's funding session machine as the bank
// implements it: awaiting_user -> processing -> pending_settlement ->
// settled, processing may be skipped, and failed, expired or cancelled (or
// settled through a pending credit at once) may end any open state.
var fundingSessionMachine = Machine{
	Initial: []string{"awaiting_user"},
	Edges: map[string][]string{
		"awaiting_user":      {"processing", "pending_settlement", "settled", "failed", "expired", "cancelled"},
		"processing":         {"pending_settlement", "settled", "failed", "expired", "cancelled"},
		"pending_settlement": {"settled", "failed", "expired", "cancelled"},
		"settled":            {},
		"failed":             {},
		"expired":            {},
		"cancelled":          {},
	},
}

// fundingDetailsMachine is the account details' status machine: pending
// until provisioned, active, and inactive (expired or deleted) for good.
var fundingDetailsMachine = Machine{
	Initial: []string{"pending", "active"},
	Edges: map[string][]string{
		"pending":  {"active", "inactive"},
		"active":   {"inactive"},
		"inactive": {},
	},
}

var fundingRails = []string{"open-banking", "momo", "crypto", "etransfer"}

// fundingExclusiveRails are the rails whose clearing account no other
// domain touches (clearing.momo is shared with momo payouts).
var fundingExclusiveRails = []string{"open-banking", "crypto", "etransfer"}

func fundingTerminal(st string) bool {
	switch st {
	case "settled", "failed", "expired", "cancelled":
		return true
	}
	return false
}

// fundingSession is a session as the ops know it.
type fundingSession struct {
	ID, Rail, Account, Entity, Ref string
	Amount                         int64
	Status                         string // as last answered or seen in an event
	ExpiresAt                      int64  // 0: null
}

// fundingDetails is account details as the ops know them.
type fundingDetails struct {
	ID, Account string
}

// fundingSessEv is a session as its events tell it.
type fundingSessEv struct {
	rail, currency, account string
	amount                  int64
	status                  string
	held                    int64 // the pending credit while pending_settlement
}

// fundingDetEv is account details as their events tell them.
type fundingDetEv struct {
	account   string
	status    string
	expiresAt *int64
	deleted   bool
	count     int64 // inflows.completed through them
	amount    int64
}

type fundingInflowEv struct {
	ID               string  `json:"id"`
	AccountID        string  `json:"account_id"`
	AccountDetailsID *string `json:"account_details_id"`
	Amount           int64   `json:"amount"`
	Currency         string  `json:"currency"`
	Source           string  `json:"source"`
	Reference        string  `json:"reference"`
	SettlesAt        *int64  `json:"settles_at"`
	Created          int64   `json:"created"`
}

type fundingSessionObj struct {
	ID              string  `json:"id"`
	FundingType     string  `json:"funding_type"`
	Status          string  `json:"status"`
	Currency        string  `json:"currency"`
	Amount          int64   `json:"amount"`
	AccountID       string  `json:"account_id"`
	UniqueReference string  `json:"unique_reference"`
	AmountReceived  *int64  `json:"amount_received"`
	ExpiresAt       *int64  `json:"expires_at"`
	InflowID        *string `json:"inflow_id"`
	Failure         *struct {
		Code string `json:"code"`
	} `json:"failure"`
	RequiresAuthentication *bool   `json:"requires_authentication"`
	SecurityQuestion       *string `json:"security_question"`
}

type fundingDetailsObj struct {
	ID        string `json:"id"`
	AccountID string `json:"account_id"`
	Status    string `json:"status"`
	ExpiresAt *int64 `json:"expires_at"`
	Deleted   int64  `json:"deleted"`
}

type fundingRC struct{ rail, currency string }

// fundingState is the domain's state. The op side (sessions, open, byID,
// refs, details) is guarded by s.mu; the event side (the rest) is touched
// only by the event hooks, the check and non-concurrent ops, which never
// run beside each other.
type fundingState struct {
	sessions []*fundingSession
	open     []*fundingSession
	byID     map[string]*fundingSession
	refs     map[string]string // entity/ref -> session ID
	details  []*fundingDetails

	sess      map[string]*fundingSessEv
	unclaimed map[string]fundingInflowEv // session-rail inflows not yet matched to a settlement
	settled   map[fundingRC]int64
	pending   map[fundingRC]int64
	touched   []fundingRC // rails and currencies whose clearing account moved
	det       map[string]*fundingDetEv
	acctDet   map[string]int // account -> undeleted details
}

func fundingOf(s *Sim) *fundingState {
	return State(s, "funding", func() *fundingState {
		return &fundingState{
			byID: map[string]*fundingSession{}, refs: map[string]string{},
			sess: map[string]*fundingSessEv{}, unclaimed: map[string]fundingInflowEv{},
			settled: map[fundingRC]int64{}, pending: map[fundingRC]int64{},
			det: map[string]*fundingDetEv{}, acctDet: map[string]int{},
		}
	})
}

// fundingKey is the key a request about entity goes out with: its own
// when it has one (half the time), else the root's.
func fundingKey(s *Sim, r *rand.Rand, entity string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.IntN(2) == 0 {
		for _, e := range s.world.Entities {
			if e.ID == entity && e.Key != "" {
				return e.Key
			}
		}
	}
	return s.world.Root.Key
}

func fundingStablecoin(cur string) bool { return cur == "USC" || cur == "UST" }

// fundingAccountFor picks an account a session of rail can fund, or nil.
func fundingAccountFor(s *Sim, r *rand.Rand, rail string) *Account {
	return s.PickAccount(r, func(a Account) bool {
		switch rail {
		case "crypto":
			return fundingStablecoin(a.Currency)
		case "etransfer":
			return a.Currency == "CAD"
		}
		return !fundingStablecoin(a.Currency)
	})
}

// fundingMomoNumber is a payer's number: mostly one that approves,
// sometimes one of the sandbox's magic suffixes (cancel, insufficient
// funds, timeout).
func fundingMomoNumber(r *rand.Rand, channel string) string {
	suffix := fmt.Sprintf("%04d", 2000+r.IntN(7000))
	if r.IntN(3) == 0 {
		suffix = Choose(r, "1032", "0001", "1037")
	}
	if strings.HasPrefix(channel, "KE") {
		return "+25471234" + suffix
	}
	return Choose(r, "+", "") + "25575412" + suffix // NSN 75412 + 4 digits
}

func fundingSessionBody(r *rand.Rand, rail string, a *Account, ref string) map[string]any {
	amount := 1 + r.Int64N(500_000)
	if rail == "crypto" && r.IntN(2) == 0 {
		amount = (amount/100)*100 + int64(Choose(r, 91, 92, 93, 94))
	}
	body := map[string]any{"amount": amount, "currency": a.Currency, "account_id": a.ID, "unique_reference": ref}
	if rail != "open-banking" || r.IntN(2) == 0 {
		body["funding_type"] = rail
	}
	if r.IntN(3) == 0 {
		body["narration"] = "sim funding " + rail
	}
	switch rail {
	case "momo":
		ch := Choose(r, "KE-SAFARICOM-C2B", "TZ-AIRTEL-C2B", "TZ-TIGO-C2B", "TZ-HALOTEL-C2B", "TZ-VODACOM-C2B")
		body["meta"] = map[string]any{"channel": ch, "msisdn": fundingMomoNumber(r, ch)}
	case "etransfer":
		body["redirect_url"] = "https://example.com/back"
		body["meta"] = map[string]any{"name": "Ada Obi", "email": "ada@example.com"}
		body["country"] = "CA"
	default:
		body["redirect_url"] = "https://example.com/return"
		if r.IntN(2) == 0 {
			body["country"] = Choose(r, "GB", "NG", "US")
		}
	}
	return body
}

func (st *fundingState) addSession(v *fundingSession) {
	st.sessions = append(st.sessions, v)
	st.open = append(st.open, v)
	st.byID[v.ID] = v
	st.refs[v.Entity+"/"+v.Ref] = v.ID
}

// pickSession returns an open session (pruning closed ones it meets), or
// sometimes any session; nil when none.
func (st *fundingState) pickSession(s *Sim, r *rand.Rand, keep func(*fundingSession) bool) *fundingSession {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.IntN(8) == 0 && len(st.sessions) > 0 {
		v := Pick(r, st.sessions)
		if keep == nil || keep(v) {
			return v
		}
	}
	for tries := 0; tries < 8 && len(st.open) > 0; tries++ {
		i := r.IntN(len(st.open))
		v := st.open[i]
		if fundingTerminal(v.Status) {
			st.open[i] = st.open[len(st.open)-1]
			st.open = st.open[:len(st.open)-1]
			continue
		}
		if keep == nil || keep(v) {
			return v
		}
	}
	return nil
}

func (st *fundingState) setStatus(s *Sim, v *fundingSession, status string) {
	if status == "" {
		return
	}
	s.mu.Lock()
	if !fundingTerminal(v.Status) {
		v.Status = status
	}
	s.mu.Unlock()
}

func init() {
	registerMachine("funding_sessions", fundingSessionMachine)
	registerMachine("account_details", fundingDetailsMachine)
	registerEventHook(fundingOnEvent)
	registerCheck(fundingCheck)
	register(
		Op{Name: "funding.account", Weight: 1, Concurrent: true, Run: func(s *Sim, r *rand.Rand) error {
			// Accounts the rails need beside the core's: CAD (etransfer),
			// USC and UST (crypto, wallet addresses).
			cur := Choose(r, "CAD", "USC", "UST")
			_, err := openAccount(s, r, cur, "checking", cur+" funding", true)
			return err
		}},
		Op{Name: "funding.details.create", Weight: 3, Concurrent: true, Run: func(s *Sim, r *rand.Rand) error {
			st := fundingOf(s)
			a := s.PickAccount(r, nil)
			if a == nil {
				return nil
			}
			body := map[string]any{"account_id": a.ID}
			if fundingStablecoin(a.Currency) {
				body["chain"] = Choose(r, "eth", "base", "matic", "sol")
			}
			if r.IntN(3) == 0 {
				body["terminate_after"] = Choose(r, 1, 2, 30)
			}
			if r.IntN(4) == 0 {
				body["meta"] = map[string]any{"purpose": "sim"}
			}
			resp := s.Do(r, Req{Method: http.MethodPost, Path: "/account-details", Key: fundingKey(s, r, a.Entity), Body: body})
			if !resp.OK() {
				return nil
			}
			var d fundingDetailsObj
			if err := resp.Decode(&d); err != nil || d.ID == "" {
				return fmt.Errorf("create account details answered %s", resp)
			}
			if d.AccountID != a.ID || (d.Status != "pending" && d.Status != "active") {
				return fmt.Errorf("new account details %s: account %s status %q, asked for account %s", d.ID, d.AccountID, d.Status, a.ID)
			}
			if fundingStablecoin(a.Currency) && d.Status != "pending" {
				return fmt.Errorf("new stablecoin details %s are %q; SPEC: stablecoin returns pending", d.ID, d.Status)
			}
			s.mu.Lock()
			st.details = append(st.details, &fundingDetails{ID: d.ID, Account: a.ID})
			s.mu.Unlock()
			s.Acked("/account-details/" + d.ID)
			return nil
		}},
		Op{Name: "funding.details.activate", Weight: 2, Concurrent: true, Run: func(s *Sim, r *rand.Rand) error {
			st := fundingOf(s)
			s.mu.Lock()
			d := Pick(r, st.details)
			s.mu.Unlock()
			if d == nil {
				return nil
			}
			resp := s.Do(r, Req{Method: http.MethodPost, Path: "/sandbox/account-details/" + d.ID + "/activate", Body: map[string]any{}})
			if !resp.OK() {
				return nil
			}
			var v fundingDetailsObj
			if err := resp.Decode(&v); err != nil || v.ID != d.ID || v.Status != "active" {
				return fmt.Errorf("activate account details %s answered %s", d.ID, resp)
			}
			return nil
		}},
		Op{Name: "funding.details.inflow", Weight: 4, Run: func(s *Sim, r *rand.Rand) error {
			// Money arrives at an account with details: through active ones,
			// or refused when none accepts it. Not concurrent: it compares
			// the answer with the details' state from the events.
			st := fundingOf(s)
			s.mu.Lock()
			d := Pick(r, st.details)
			s.mu.Unlock()
			if d == nil {
				return nil
			}
			now := s.Now().UnixMilli()
			usable := false
			for _, dv := range st.det {
				if dv.account == d.Account && dv.status == "active" && !dv.deleted && (dv.expiresAt == nil || *dv.expiresAt > now) {
					usable = true
					break
				}
			}
			resp := s.Do(r, Req{Method: http.MethodPost, Path: "/sandbox/inflows", Body: inflowBody(r, d.Account, "sim inflow via details")})
			if resp.Status == 0 {
				return nil
			}
			if usable && !resp.OK() && (resp.Code() == "account_details_inactive" || resp.Code() == "account_details_pending") {
				return fmt.Errorf("account %s has active, unexpired details, yet an inflow was refused: %s", d.Account, resp)
			}
			return nil
		}},
		Op{Name: "funding.details.get", Weight: 1, Run: func(s *Sim, r *rand.Rand) error {
			// A read agrees with the events: status and inflow statistics.
			st := fundingOf(s)
			s.mu.Lock()
			d := Pick(r, st.details)
			s.mu.Unlock()
			if d == nil {
				return nil
			}
			ev := st.det[d.ID]
			resp := s.Do(r, Req{Method: http.MethodGet, Path: "/account-details/" + d.ID})
			if !resp.OK() || ev == nil {
				return nil
			}
			var v struct {
				AccountDetail fundingDetailsObj `json:"account_detail"`
				Statistics    struct {
					Count  int64 `json:"total_inflows_count"`
					Amount int64 `json:"total_inflows_amount"`
				} `json:"statistics"`
			}
			if err := resp.Decode(&v); err != nil {
				return fmt.Errorf("get account details %s answered %s", d.ID, resp)
			}
			if v.AccountDetail.Status != ev.status {
				return fmt.Errorf("account details %s read %q, their events say %q", d.ID, v.AccountDetail.Status, ev.status)
			}
			if v.Statistics.Count != ev.count || v.Statistics.Amount != ev.amount {
				return fmt.Errorf("account details %s: statistics %d inflows of %d in all, the events show %d of %d",
					d.ID, v.Statistics.Count, v.Statistics.Amount, ev.count, ev.amount)
			}
			return nil
		}},
		Op{Name: "funding.session.create", Weight: 6, Concurrent: true, Run: func(s *Sim, r *rand.Rand) error {
			st := fundingOf(s)
			rail := Choose(r, fundingRails...)
			a := fundingAccountFor(s, r, rail)
			if a == nil {
				return nil
			}
			ref := fmt.Sprintf("sim-fs-%d-%x", s.step, r.Uint32())
			var dupOf string
			if r.IntN(10) == 0 {
				// A unique_reference the entity already used: 409 with the
				// original.
				s.mu.Lock()
				if o := Pick(r, st.sessions); o != nil && o.Entity == a.Entity {
					ref, dupOf = o.Ref, o.ID
				}
				s.mu.Unlock()
			}
			body := fundingSessionBody(r, rail, a, ref)
			resp := s.Do(r, Req{Method: http.MethodPost, Path: "/funding-sessions", Key: fundingKey(s, r, a.Entity), Body: body})
			if resp.Status == http.StatusConflict && dupOf != "" && resp.Code() == "duplicate_reference" {
				var env struct {
					Data fundingSessionObj `json:"data"`
				}
				if err := json.Unmarshal(resp.Body, &env); err != nil || env.Data.ID != dupOf {
					return fmt.Errorf("duplicate unique_reference %q answered %s, the original is %s", ref, resp, dupOf)
				}
				return nil
			}
			if !resp.OK() {
				return nil
			}
			var v fundingSessionObj
			if err := resp.Decode(&v); err != nil || v.ID == "" {
				return fmt.Errorf("create %s session answered %s", rail, resp)
			}
			if dupOf != "" && !resp.Replayed {
				return fmt.Errorf("a second session %s was opened with unique_reference %q of session %s", v.ID, ref, dupOf)
			}
			if v.Status != "awaiting_user" || v.FundingType != rail || v.Amount != body["amount"].(int64) || v.AccountID != a.ID {
				return fmt.Errorf("create %s session for %d on %s answered %s", rail, body["amount"], a.ID, resp)
			}
			s.mu.Lock()
			if st.byID[v.ID] == nil {
				fs := &fundingSession{ID: v.ID, Rail: rail, Account: a.ID, Entity: a.Entity, Ref: ref, Amount: v.Amount, Status: v.Status}
				if v.ExpiresAt != nil {
					fs.ExpiresAt = *v.ExpiresAt
				}
				st.addSession(fs)
			}
			s.mu.Unlock()
			s.Acked("/funding-sessions/" + v.ID)
			return nil
		}},
		Op{Name: "funding.session.simulate", Weight: 8, Concurrent: true, Run: func(s *Sim, r *rand.Rand) error {
			st := fundingOf(s)
			v := st.pickSession(s, r, nil)
			if v == nil {
				return nil
			}
			outcome := Choose(r, "processing", "pending_settlement", "pending_settlement", "settled", "settled", "settled",
				"failed", "failed", "expired", "cancelled")
			body := map[string]any{"outcome": outcome}
			switch {
			case r.IntN(20) == 0:
				body["outcome"] = Choose(r, "awaiting_user", "bogus", "")
			case outcome == "failed" && r.IntN(2) == 0:
				body["failure_code"] = Choose(r, "payment_blocked", "payment_rejected", "insufficient_funds",
					"institution_unavailable", "institution_not_supported", "provider_error")
			case (outcome == "expired" || outcome == "cancelled") && r.IntN(3) == 0:
				body["failure_code"] = Choose(r, "session_expired", "payment_cancelled")
			case r.IntN(30) == 0:
				body["failure_code"] = "bogus"
			}
			resp := s.Do(r, Req{Method: http.MethodPost, Path: "/sandbox/funding-sessions/" + v.ID + "/simulate", Body: body})
			if !resp.OK() {
				return nil
			}
			var got fundingSessionObj
			if err := resp.Decode(&got); err != nil || got.ID != v.ID {
				return fmt.Errorf("simulate %s on session %s answered %s", outcome, v.ID, resp)
			}
			if _, hasCode := body["failure_code"]; hasCode && body["failure_code"] == "bogus" {
				return fmt.Errorf("simulate with failure_code bogus on session %s answered %s", v.ID, resp)
			}
			if o := body["outcome"]; o != outcome {
				return fmt.Errorf("simulate with outcome %q on session %s answered %s", o, v.ID, resp)
			}
			// A move the machine refuses is 409; an accepted one lands where
			// asked, or failed (a crypto payment beyond tolerance, an account
			// that can no longer take the credit).
			if got.Status != outcome && got.Status != "failed" {
				return fmt.Errorf("simulate %s on session %s answered status %q", outcome, v.ID, got.Status)
			}
			st.setStatus(s, v, got.Status)
			return nil
		}},
		Op{Name: "funding.session.patch", Weight: 3, Concurrent: true, Run: func(s *Sim, r *rand.Rand) error {
			// The payer says the e-Transfer is sent; other rails refuse.
			st := fundingOf(s)
			v := st.pickSession(s, r, func(v *fundingSession) bool { return v.Rail == "etransfer" || r.IntN(6) == 0 })
			if v == nil {
				return nil
			}
			req := Req{Method: http.MethodPatch, Path: "/funding-sessions/" + v.ID, Key: fundingKey(s, r, v.Entity)}
			if r.IntN(4) == 0 {
				req.Body = map[string]any{"entity_id": v.Entity}
			}
			resp := s.Do(r, req)
			if !resp.OK() {
				return nil
			}
			var got fundingSessionObj
			if err := resp.Decode(&got); err != nil || got.ID != v.ID {
				return fmt.Errorf("PATCH session %s answered %s", v.ID, resp)
			}
			if v.Rail != "etransfer" {
				return fmt.Errorf("PATCH validated a %s session %s: %s", v.Rail, v.ID, resp)
			}
			if got.Status != "processing" || got.RequiresAuthentication == nil || (*got.RequiresAuthentication && got.SecurityQuestion == nil) {
				return fmt.Errorf("PATCH session %s answered %s", v.ID, resp)
			}
			if strings.Contains(string(resp.Body), "security_answer") {
				return fmt.Errorf("PATCH session %s returned a security answer: %s", v.ID, resp)
			}
			st.setStatus(s, v, got.Status)
			return nil
		}},
		Op{Name: "funding.session.get", Weight: 2, Run: func(s *Sim, r *rand.Rand) error {
			// A read agrees with the session's last event.
			st := fundingOf(s)
			v := st.pickSession(s, r, nil)
			if v == nil {
				return nil
			}
			ev := st.sess[v.ID]
			resp := s.Do(r, Req{Method: http.MethodGet, Path: "/funding-sessions/" + v.ID, Key: fundingKey(s, r, v.Entity)})
			if !resp.OK() || ev == nil {
				return nil
			}
			var got fundingSessionObj
			if err := resp.Decode(&got); err != nil {
				return fmt.Errorf("get session %s answered %s", v.ID, resp)
			}
			if got.Status != ev.status {
				return fmt.Errorf("session %s reads %q, its events say %q", v.ID, got.Status, ev.status)
			}
			if (got.Status == "failed" || got.Status == "expired") && got.Failure == nil {
				return fmt.Errorf("session %s is %s without failure: %s", v.ID, got.Status, resp)
			}
			st.setStatus(s, v, got.Status)
			return nil
		}},
		Op{Name: "funding.session.list", Weight: 1, Concurrent: true, Run: func(s *Sim, r *rand.Rand) error {
			st := fundingOf(s)
			v := st.pickSession(s, r, nil)
			if v == nil {
				return nil
			}
			path := "/funding-sessions?account_id=" + v.Account + "&limit=" + fmt.Sprint(1+r.IntN(20))
			if r.IntN(2) == 0 {
				path += "&status=" + Choose(r, "awaiting_user", "settled", "failed", "expired")
			}
			resp := s.Do(r, Req{Method: http.MethodGet, Path: path, Key: fundingKey(s, r, v.Entity)})
			if !resp.OK() {
				return nil
			}
			var l struct {
				Data []fundingSessionObj `json:"data"`
			}
			if err := json.Unmarshal(resp.Body, &l); err != nil {
				return fmt.Errorf("list sessions answered %s", resp)
			}
			for _, x := range l.Data {
				if x.AccountID != v.Account {
					return fmt.Errorf("list of account %s's sessions holds %s of %s", v.Account, x.ID, x.AccountID)
				}
			}
			return nil
		}},
		Op{Name: "funding.session.late", Weight: 1, Run: func(s *Sim, r *rand.Rand) error {
			// The payer answers just after the session's deadline, before
			// the expiry job has run: the session is expired all the same.
			st := fundingOf(s)
			v := st.pickSession(s, r, func(v *fundingSession) bool { return v.ExpiresAt != 0 && v.Status == "awaiting_user" })
			if v == nil {
				return nil
			}
			if d := v.ExpiresAt - s.Now().UnixMilli(); d >= 0 {
				s.Clock.Add(time.Duration(d+int64(r.IntN(2000))) * time.Millisecond)
			}
			s.Do(r, Req{Method: http.MethodPost, Path: "/sandbox/funding-sessions/" + v.ID + "/simulate",
				Body: map[string]any{"outcome": Choose(r, "processing", "pending_settlement", "settled", "failed", "cancelled")}})
			return nil
		}},
		Op{Name: "funding.session.race", Weight: 2, Run: func(s *Sim, r *rand.Rand) error {
			// Several reports about one session at once, beside the due
			// runner: it still settles at most once (the event checks).
			st := fundingOf(s)
			v := st.pickSession(s, r, nil)
			if v == nil {
				return nil
			}
			n := 2 + r.IntN(3)
			var calls []func()
			for i := range n {
				rr := rand.New(rand.NewPCG(r.Uint64(), uint64(i)))
				outcome := Choose(r, "settled", "settled", "pending_settlement", "failed", "cancelled", "expired")
				calls = append(calls, func() {
					s.Do(rr, Req{Method: http.MethodPost, Path: "/sandbox/funding-sessions/" + v.ID + "/simulate", Body: map[string]any{"outcome": outcome}})
				})
			}
			if r.IntN(2) == 0 {
				calls = append(calls, func() { _, _ = s.banks[0].RunDue(s.ctx, s.Clock.Now()) })
			}
			s.concurrent = true
			s.Parallel(calls...)
			s.concurrent = false
			if s.anyCrashed() {
				return s.reboot(r)
			}
			return nil
		}},
		Op{Name: "funding.clock", Weight: 1, Run: func(s *Sim, r *rand.Rand) error {
			// Past a rail's deadline, so that sessions left alone expire: a
			// momo prompt (60 s), an open-banking checkout (30 min), an
			// e-Transfer never validated (30 days); or past a pending
			// credit's settlement (60 s).
			d := Choose(r, 61, 61, 31*60, 30*24*3600+3600)
			s.Count("funding.clock_past_deadline")
			s.Clock.Add(time.Duration(d) * time.Second)
			return nil
		}},
	)
}

// fundingOnEvent follows sessions, details and inflows through the outbox.
func fundingOnEvent(s *Sim, ev ledger.Event) error {
	st := fundingOf(s)
	switch {
	case ev.Type == "funding_sessions.updated":
		var o fundingSessionObj
		if err := json.Unmarshal(ev.Object, &o); err != nil || o.ID == "" {
			return fmt.Errorf("session event object %s", ev.Object)
		}
		return st.onSession(s, &o, ev.Created)
	case ev.Type == "inflows.completed":
		var in fundingInflowEv
		if err := json.Unmarshal(ev.Object, &in); err != nil || in.ID == "" {
			return fmt.Errorf("inflow event object %s", ev.Object)
		}
		if in.AccountDetailsID != nil {
			s.Count("funding.inflow_via_details")
		}
		return st.onInflow(&in)
	case ev.Type == "inflows.failed":
		var in fundingInflowEv
		if err := json.Unmarshal(ev.Object, &in); err != nil {
			return fmt.Errorf("inflow event object %s", ev.Object)
		}
		if x := st.sess[in.ID]; x != nil && x.status == "settled" {
			return fmt.Errorf("inflows.failed for session %s, which settled", in.ID)
		}
	case strings.HasPrefix(ev.Type, "account_details."):
		var o fundingDetailsObj
		if err := json.Unmarshal(ev.Object, &o); err != nil || o.ID == "" {
			return fmt.Errorf("account details event object %s", ev.Object)
		}
		d := st.det[o.ID]
		if d == nil {
			d = &fundingDetEv{account: o.AccountID}
			st.det[o.ID] = d
			if o.Deleted == 0 {
				st.acctDet[o.AccountID]++
			}
		}
		if d.account != o.AccountID {
			return fmt.Errorf("account details %s moved from account %s to %s", o.ID, d.account, o.AccountID)
		}
		if d.deleted && o.Deleted == 0 {
			return fmt.Errorf("account details %s were deleted, and are back", o.ID)
		}
		if o.Deleted != 0 && !d.deleted {
			d.deleted = true
			st.acctDet[o.AccountID]--
		}
		if ev.Type == "account_details.deleted" && o.Deleted == 0 {
			return fmt.Errorf("account_details.deleted for %s with deleted 0", o.ID)
		}
		d.status, d.expiresAt = o.Status, o.ExpiresAt
	}
	return nil
}

func (st *fundingState) onSession(s *Sim, o *fundingSessionObj, at int64) error {
	x := st.sess[o.ID]
	if x == nil {
		x = &fundingSessEv{rail: o.FundingType, currency: o.Currency, account: o.AccountID, amount: o.Amount}
		st.sess[o.ID] = x
	}
	if o.FundingType != x.rail || o.Currency != x.currency || o.AccountID != x.account || o.Amount != x.amount {
		return fmt.Errorf("session %s changed its rail, currency, account or amount: %+v, was %+v", o.ID, *o, *x)
	}
	prev := x.status
	if o.FundingType == "open-banking" && prev == "awaiting_user" && o.Status != prev && o.Status != "expired" && o.ExpiresAt != nil && *o.ExpiresAt <= at {
		// Past expires_at the payer's time is up, whether or not the
		// expiry job has run yet. (Open-banking only: a momo payer's
		// answer due before the expiry stands even when the due work
		// applies it late.)
		return fmt.Errorf("session %s (%s) moved awaiting_user -> %s at %d, after it expired at %d", o.ID, o.FundingType, o.Status, at, *o.ExpiresAt)
	}
	if prev == "settled" && o.Status == "settled" {
		return fmt.Errorf("session %s settled twice", o.ID)
	}
	rc := fundingRC{x.rail, x.currency}
	credit := o.Amount
	if o.FundingType == "crypto" {
		if o.AmountReceived == nil {
			if o.Status == "pending_settlement" || o.Status == "settled" {
				return fmt.Errorf("crypto session %s is %s without amount_received", o.ID, o.Status)
			}
		} else {
			credit = *o.AmountReceived
		}
	}
	if prev == "pending_settlement" && o.Status != prev {
		st.pending[rc] -= x.held
		x.held = 0
	}
	switch o.Status {
	case "pending_settlement":
		if prev != "pending_settlement" {
			x.held = credit
			st.pending[rc] += credit
			st.touch(rc)
		}
	case "settled":
		if o.InflowID == nil {
			return fmt.Errorf("session %s settled without an inflow", o.ID)
		}
		in, ok := st.unclaimed[*o.InflowID]
		if !ok {
			return fmt.Errorf("session %s settled with inflow %s, which is no unclaimed inflows.completed of its settlement", o.ID, *o.InflowID)
		}
		delete(st.unclaimed, *o.InflowID)
		if in.Amount != credit || in.AccountID != o.AccountID || in.Currency != o.Currency || in.Source != o.FundingType {
			return fmt.Errorf("session %s (%s, %d %s to %s, credit %d) settled with inflow %+v", o.ID, o.FundingType, o.Amount, o.Currency, o.AccountID, credit, in)
		}
		st.settled[rc] += credit
		st.touch(rc)
	case "failed", "expired", "cancelled":
		if o.InflowID != nil {
			return fmt.Errorf("session %s is %s with inflow %s", o.ID, o.Status, *o.InflowID)
		}
		if o.Failure == nil || o.Failure.Code == "" {
			return fmt.Errorf("session %s is %s without a failure code", o.ID, o.Status)
		}
	}
	if o.Status != prev {
		s.Count("funding.session_" + o.FundingType + "_" + o.Status)
	}
	x.status = o.Status
	s.mu.Lock()
	if v := st.byID[o.ID]; v != nil && !fundingTerminal(v.Status) {
		v.Status = o.Status
	}
	s.mu.Unlock()
	return nil
}

func (st *fundingState) touch(rc fundingRC) {
	if !slices.Contains(st.touched, rc) {
		st.touched = append(st.touched, rc)
	}
}

func (st *fundingState) onInflow(in *fundingInflowEv) error {
	if slices.Contains(fundingRails, in.Source) {
		// A session's settlement: its funding_sessions.updated follows in
		// the same transaction and claims it.
		if _, dup := st.unclaimed[in.ID]; dup {
			return fmt.Errorf("inflow %s completed twice", in.ID)
		}
		st.unclaimed[in.ID] = *in
		return nil
	}
	if in.AccountDetailsID == nil {
		if in.SettlesAt == nil && st.acctDet[in.AccountID] > 0 {
			return fmt.Errorf("inflow %s reached account %s directly, though it has %d account details", in.ID, in.AccountID, st.acctDet[in.AccountID])
		}
		return nil
	}
	d := st.det[*in.AccountDetailsID]
	if d == nil {
		return fmt.Errorf("inflow %s came through unknown account details %s", in.ID, *in.AccountDetailsID)
	}
	if d.account != in.AccountID {
		return fmt.Errorf("inflow %s to account %s came through details %s of account %s", in.ID, in.AccountID, *in.AccountDetailsID, d.account)
	}
	if in.SettlesAt == nil {
		// Settled at once: the details accepted it at its creation.
		if d.status != "active" || d.deleted || (d.expiresAt != nil && *d.expiresAt <= in.Created) {
			return fmt.Errorf("inflow %s came through account details %s that are %s (deleted %v, expires %v, inflow at %d)",
				in.ID, *in.AccountDetailsID, d.status, d.deleted, fmtPtr(d.expiresAt), in.Created)
		}
	}
	d.count++
	d.amount += in.Amount

	return nil
}

func fmtPtr(p *int64) string {
	if p == nil {
		return "never"
	}
	return fmt.Sprint(*p)
}

// fundingCheck runs after the events were read: every session inflow was
// claimed by its settlement, and the exclusive rails' clearing accounts
// moved exactly the settled and pending credits.
func fundingCheck(s *Sim) error {
	st := fundingOf(s)
	for id, in := range st.unclaimed {
		return fmt.Errorf("inflow %s (%s, %d %s to %s) credited with no session settling through it", id, in.Source, in.Amount, in.Currency, in.AccountID)
	}
	for _, rc := range st.touched {
		if !slices.Contains(fundingExclusiveRails, rc.rail) {
			continue
		}
		b, err := s.banks[0].Ledger.GetBalance(s.ctx, s.banks[0].Ledger.SystemAccount(rc.currency, "clearing."+rc.rail))
		if err != nil {
			if s.anyCrashed() {
				return nil
			}
			return fmt.Errorf("balance of clearing.%s %s: %w", rc.rail, rc.currency, err)
		}
		if -b.Settled != st.settled[rc] || b.PendingDebits != st.pending[rc] {
			return fmt.Errorf("clearing.%s %s: settled %d, pending debits %d; the sessions' events show %d settled and %d pending",
				rc.rail, rc.currency, b.Settled, b.PendingDebits, st.settled[rc], st.pending[rc])
		}
	}
	return nil
}
