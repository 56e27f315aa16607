package sim

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/cards"
	"github.com/corebank/corebank/ledger"
)

// Card issuing: virtual and disposable cards with spending controls,
// sandbox authorizations and the network messages after them.
//
// The model keeps every card the simulator issued, with the controls it
// sent, and every card transaction as the bank last answered it. Cards live
// on accounts of the world and on accounts of the domain's own (cardsAcct:
// no other op touches them, so their pending debits and settled balance are
// known exactly). Checks after each step, for the cards and accounts the
// step touched: no control's limit is passed in any window (the domain's
// own tally from the transactions, never the bank's counters), an own
// account's pending debits are the open authorizations' amounts and its
// settled balance is what was funded less what was cleared net of refunds
// (so a decline moves no money), every transaction's events are a walk of
// the transaction machine ending in its status, and a frozen, deleted or
// expired card approves nothing. The model may lag the bank where the bank
// moves by itself (authorizations expire by themselves) or an answer was
// lost: a check that fails first reads the card's transactions again
// through the Go API, and fails only if the bank's own records break it.

// cardsMaxTx caps the transactions one card gets, so that checks stay cheap.
const cardsMaxTx = 60

type cardsState struct {
	cards    map[string]*cardsCard
	cardList []*cardsCard
	txs      map[string]*cardsTx
	live     []*cardsTx // transactions that may still move (pruned lazily)
	accts    map[string]*cardsAcct
	acctList []*cardsAcct

	dirtyCards map[string]bool
	dirtyAccts map[string]bool
}

// cardsAcct is an account of the domain's own.
type cardsAcct struct {
	ID, Entity, Currency string
	Funded               int64 // settled inflows
	Unknown              bool  // an inflow's answer was lost: settled is not known
	Cards                map[string]bool
	pending, spent       int64 // open authorizations; cleared less refunded
}

// cardsCtl is one control of a card as sent.
type cardsCtl struct {
	name   string // as decline reasons name it
	mcc    int    // individual_mcc_controls entry, or 0
	group  string // mcc_group_controls entry, or ""
	open   bool
	limits cards.Limits
}

type cardsCard struct {
	ID, Entity, Account, Currency, Type string
	ExpEnd                              time.Time // the end of the expiry month (UTC)
	Ctls                                []cardsCtl
	Weekly                              bool
	CycleDay                            string
	Loc                                 *time.Location

	Status    string // from the events
	Deleted   bool
	Unfrozen  int // cards.unfrozen events
	Txs       []*cardsTx
	eventSeen bool
}

type cardsTx struct {
	ID, Card, Account string
	MCC               int
	v                 cards.Transaction
	w                 cardsWalk
}

// cardsWalk is what a transaction's events say.
type cardsWalk struct {
	status   string
	held     int64 // while pending
	settled  int64
	refunded int64
	maxTotal int64 // the largest whole amount it reached
	approved bool
}

func cardsS(s *Sim) *cardsState {
	return State(s, "cards", func() *cardsState {
		return &cardsState{cards: map[string]*cardsCard{}, txs: map[string]*cardsTx{}, accts: map[string]*cardsAcct{},
			dirtyCards: map[string]bool{}, dirtyAccts: map[string]bool{}}
	})
}

// MCC groups as cards.MCCGroups (version 2026-11) holds them, for the
// groups the simulator sets controls on.
var cardsGroups = map[string][][2]int{
	"restaurants": {{5811, 5814}},
	"gambling":    {{7800, 7802}, {7995, 7995}},
	"airlines":    {{3000, 3350}, {4511, 4511}},
	"cash":        {{6010, 6011}},
	"travel": {{4111, 4112}, {4131, 4131}, {4411, 4411}, {4722, 4722}, {4789, 4789},
		{3000, 3350}, {4511, 4511}, {3351, 3500}, {7512, 7512}, {3501, 3999}, {7011, 7011}},
}

var cardsMCCs = []int{5812, 5813, 5411, 5999, 7995, 7801, 3005, 4511, 6011, 4111, 7011, 5732}

func cardsInGroup(g string, mcc int) bool {
	for _, r := range cardsGroups[g] {
		if mcc >= r[0] && mcc <= r[1] {
			return true
		}
	}
	return false
}

func (c *cardsCtl) applies(mcc int) bool {
	switch {
	case c.mcc != 0:
		return c.mcc == mcc
	case c.group != "":
		return cardsInGroup(c.group, mcc)
	}
	return true
}

var cardsWeekdays = map[string]time.Weekday{"sunday": time.Sunday, "monday": time.Monday, "tuesday": time.Tuesday,
	"wednesday": time.Wednesday, "thursday": time.Thursday, "friday": time.Friday, "saturday": time.Saturday}

// windows are the day and the cycle open at t, as their first dates in the
// card's zone (SPEC/cards doc: a day from midnight; a weekly cycle from
// billing_cycle_day's weekday, default Monday; a monthly one from day
// billing_cycle_day, default 1, or the month's last day when shorter).
func (c *cardsCard) windows(t time.Time) (string, string) {
	t = t.In(c.Loc)
	day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	var start time.Time
	if c.Weekly {
		wd, ok := cardsWeekdays[strings.ToLower(c.CycleDay)]
		if !ok {
			wd = time.Monday
		}
		back := (int(day.Weekday()) - int(wd) + 7) % 7
		start = day.AddDate(0, 0, -back)
	} else {
		n, err := strconv.Atoi(c.CycleDay)
		if err != nil || n < 1 || n > 31 {
			n = 1
		}
		md := func(y int, m time.Month) time.Time {
			first := time.Date(y, m, 1, 0, 0, 0, 0, time.UTC)
			last := first.AddDate(0, 1, -1).Day()
			return first.AddDate(0, 0, min(n, last)-1)
		}
		start = md(day.Year(), day.Month())
		if day.Before(start) {
			start = md(day.Year(), day.Month()-1)
		}
	}
	return day.Format(time.DateOnly), start.Format(time.DateOnly)
}

// walkTx replays a transaction's events through SPEC's card transaction
// machine (pending -> settled | voided | expired; declined from the start;
// refunds only after a clearing) and checks the answer agrees with them.
func walkTx(t *cards.Transaction) (cardsWalk, error) {
	var w cardsWalk
	ev := t.Events
	if len(ev) == 0 || ev[0].Type != cards.EventAuthorization || ev[0].Amount != t.Amount || t.Amount < 1 {
		return w, fmt.Errorf("card transaction %s does not start with its authorization of %d: %+v", t.ID, t.Amount, ev)
	}
	if t.Status == cards.TxDeclined {
		w.status = cards.TxDeclined
		if len(ev) != 1 || t.DeclineReason == nil || *t.DeclineReason == "" || t.AmountAuthorized != 0 || t.AmountSettled != 0 {
			return w, fmt.Errorf("declined card transaction %s moved or has no reason: %+v", t.ID, *t)
		}
		return w, nil
	}
	if t.DeclineReason != nil {
		return w, fmt.Errorf("card transaction %s is %s with decline_reason %q", t.ID, t.Status, *t.DeclineReason)
	}
	w.approved, w.status, w.held, w.maxTotal = true, cards.TxPending, t.Amount, t.Amount
	for i, e := range ev[1:] {
		bad := func() (cardsWalk, error) {
			return w, fmt.Errorf("card transaction %s: event %d %s of %d not allowed while %s (held %d): %+v", t.ID, i+1, e.Type, e.Amount, w.status, w.held, ev)
		}
		switch w.status {
		case cards.TxPending:
			switch e.Type {
			case cards.EventIncrement:
				if e.Amount < 1 {
					return bad()
				}
				w.held += e.Amount
				w.maxTotal = max(w.maxTotal, w.held)
			case cards.EventIncDeclined:
				if e.DeclineReason == nil || *e.DeclineReason == "" {
					return bad()
				}
			case cards.EventReversal:
				if e.Amount < 1 || e.Amount > w.held {
					return bad()
				}
				w.held -= e.Amount
				if w.held == 0 {
					w.status = cards.TxVoided
				}
			case cards.EventExpiration:
				if e.Amount != w.held {
					return bad()
				}
				w.held, w.status = 0, cards.TxExpired
			case cards.EventClearing:
				if e.Amount < 1 {
					return bad()
				}
				w.settled, w.status = e.Amount, cards.TxSettled
				w.maxTotal = max(w.maxTotal, e.Amount)
				w.held = 0
			default:
				return bad()
			}
		case cards.TxSettled:
			if e.Type != cards.EventRefund || e.Amount < 1 || w.refunded+e.Amount > w.settled {
				return bad()
			}
			w.refunded += e.Amount
		default:
			return bad()
		}
	}
	if t.Status != w.status {
		return w, fmt.Errorf("card transaction %s is %s, its events end %s: %+v", t.ID, t.Status, w.status, ev)
	}
	switch w.status {
	case cards.TxPending:
		if t.AmountAuthorized != w.held || t.AmountSettled != 0 {
			return w, fmt.Errorf("pending card transaction %s: amount_authorized %d settled %d, events hold %d", t.ID, t.AmountAuthorized, t.AmountSettled, w.held)
		}
	case cards.TxSettled:
		if t.AmountSettled != w.settled {
			return w, fmt.Errorf("settled card transaction %s: amount_settled %d, its clearing %d", t.ID, t.AmountSettled, w.settled)
		}
	default:
		if t.AmountAuthorized != 0 || t.AmountSettled != 0 {
			return w, fmt.Errorf("%s card transaction %s still has amount_authorized %d settled %d", t.Status, t.ID, t.AmountAuthorized, t.AmountSettled)
		}
	}
	return w, nil
}

// contribution is what a transaction counts in its windows: amount and
// transactions.
func (w cardsWalk) contribution() (int64, int64) {
	switch w.status {
	case cards.TxPending:
		return w.held, 1
	case cards.TxSettled:
		return w.settled - w.refunded, 1
	}
	return 0, 0
}

// acctMoney is what the transaction does to its account: pending debits and
// money spent.
func (w cardsWalk) acctMoney() (int64, int64) {
	switch w.status {
	case cards.TxPending:
		return w.held, 0
	case cards.TxSettled:
		return 0, w.settled - w.refunded
	}
	return 0, 0
}

func eventsPrefix(a, b []cards.TxEvent) bool {
	if len(a) > len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Type != y.Type || x.Amount != y.Amount || x.Time != y.Time || (x.DeclineReason == nil) != (y.DeclineReason == nil) ||
			(x.DeclineReason != nil && *x.DeclineReason != *y.DeclineReason) {
			return false
		}
	}
	return true
}

// learnTx records an answered view of a card transaction (under s.mu). Its
// events only ever grow: an older view (a replay, a late answer) is kept
// out, and one that is not an extension of what was seen is a broken
// invariant.
func (st *cardsState) learnTx(v cards.Transaction) error {
	w, err := walkTx(&v)
	if err != nil {
		return err
	}
	c := st.cards[v.CardID]
	if c == nil {
		return nil // a card the simulator did not make
	}
	t := st.txs[v.ID]
	if t == nil {
		t = &cardsTx{ID: v.ID, Card: v.CardID, Account: v.AccountID, MCC: v.Merchant.MCC}
		st.txs[v.ID] = t
		c.Txs = append(c.Txs, t)
		st.live = append(st.live, t)
		if a := st.accts[v.AccountID]; a != nil {
			a.Cards[c.ID] = true
		}
	} else {
		if t.Account != v.AccountID || t.Card != v.CardID || t.MCC != v.Merchant.MCC || t.v.Amount != v.Amount || t.v.Created != v.Created {
			return fmt.Errorf("card transaction %s changed its card, account, merchant or amount: %+v, was %+v", v.ID, v, t.v)
		}
		switch {
		case eventsPrefix(t.v.Events, v.Events):
		case eventsPrefix(v.Events, t.v.Events):
			return nil // older
		default:
			return fmt.Errorf("card transaction %s rewrote its history: %+v, was %+v", v.ID, v.Events, t.v.Events)
		}
	}
	if a := st.accts[t.Account]; a != nil {
		p, sp := t.w.acctMoney()
		a.pending -= p
		a.spent -= sp
		p, sp = w.acctMoney()
		a.pending += p
		a.spent += sp
		st.dirtyAccts[a.ID] = true
	}
	t.v, t.w = v, w
	st.dirtyCards[c.ID] = true
	return nil
}

// cardsPickCard picks a card of the model that keep accepts.
func cardsPickCard(s *Sim, r *rand.Rand, keep func(*cardsCard) bool) (*cardsCard, cardsCard) {
	st := cardsS(s)
	s.mu.Lock()
	defer s.mu.Unlock()
	c := pickWhere(r, st.cardList, func(c *cardsCard) bool { return keep == nil || keep(c) })
	if c == nil {
		return nil, cardsCard{}
	}
	return c, *c
}

// cardsPickTx picks a transaction in status (any when ""), dropping those
// that can no longer move.
func cardsPickTx(s *Sim, r *rand.Rand, status string) *cardsTx {
	st := cardsS(s)
	s.mu.Lock()
	defer s.mu.Unlock()
	for range 8 {
		if len(st.live) == 0 {
			return nil
		}
		i := r.IntN(len(st.live))
		t := st.live[i]
		dead := t.w.status != cards.TxPending && (t.w.status != cards.TxSettled || t.w.refunded >= t.w.settled)
		if dead {
			st.live[i] = st.live[len(st.live)-1]
			st.live = st.live[:len(st.live)-1]
			continue
		}
		if status == "" || t.w.status == status {
			return t
		}
	}
	return nil
}

func cardsN(v int64) *int64 { return &v }

// cardsLimits draws some limits, each present or not.
func cardsLimits(r *rand.Rand, withAmount bool) cards.Limits {
	var l cards.Limits
	if withAmount && Chance(r, 0.5) {
		l.Amount = cardsN(1000 + r.Int64N(30000))
	}
	if Chance(r, 0.3) {
		l.CycleTransactionCount = cardsN(1 + r.Int64N(12))
	}
	if Chance(r, 0.4) {
		l.DailyAmountLimit = cardsN(500 + r.Int64N(20000))
	}
	if Chance(r, 0.3) {
		l.DailyTransactionCount = cardsN(1 + r.Int64N(6))
	}
	if Chance(r, 0.4) {
		l.TransactionAmountLimit = cardsN(200 + r.Int64N(10000))
	}
	return l
}

func cardsErr(s *Sim, err error) error {
	if err != nil {
		s.Violate("%v", err)
	}
	return err
}

func init() {
	registerMachine("cards", Machine{
		Initial: []string{cards.StatusActive},
		Edges: map[string][]string{
			cards.StatusActive:  {cards.StatusBlocked, cards.StatusFraud},
			cards.StatusBlocked: {cards.StatusActive, cards.StatusFraud},
			cards.StatusFraud:   {},
		},
	})
	registerEventHook(cardsOnEvent)
	registerCheck(cardsCheck)
	register(
		Op{Name: "cards.account", Weight: 2, Run: cardsAccount},
		Op{Name: "cards.fund", Weight: 3, Run: cardsFund},
		Op{Name: "cards.create", Weight: 4, Run: cardsCreate},
		Op{Name: "cards.authorize", Weight: 14, Concurrent: true, Run: cardsAuthorize},
		Op{Name: "cards.clear", Weight: 5, Concurrent: true, Run: cardsClear},
		Op{Name: "cards.reverse", Weight: 2, Concurrent: true, Run: cardsMove("reverse")},
		Op{Name: "cards.expire", Weight: 1, Concurrent: true, Run: cardsMove("expire")},
		Op{Name: "cards.increment", Weight: 3, Concurrent: true, Run: cardsMove("increment")},
		Op{Name: "cards.refund", Weight: 2, Concurrent: true, Run: cardsMove("refund")},
		// Freeze and delete only stop a card, so they may run beside
		// authorizations: a card stopped at a step's start stays stopped
		// through it. Unfreeze is never concurrent.
		Op{Name: "cards.freeze", Weight: 2, Concurrent: true, Run: cardsFreeze},
		Op{Name: "cards.unfreeze", Weight: 2, Run: cardsUnfreeze},
		Op{Name: "cards.reassign", Weight: 1, Run: cardsReassign},
		Op{Name: "cards.delete", Weight: 1, Concurrent: true, Run: cardsDelete},
		Op{Name: "cards.get", Weight: 2, Run: cardsGet},
	)
}

// cardsAccount opens an account of the domain's own for an approved entity.
func cardsAccount(s *Sim, r *rand.Rand) error {
	cur := Choose(r, "USD", "USD", "EUR", "GBP", "NGN")
	acct, err := openAccount(s, r, cur, "checking", "cards "+cur, false)
	if acct == nil {
		return err
	}
	st := cardsS(s)
	s.mu.Lock()
	a := &cardsAcct{ID: acct.ID, Entity: acct.Entity, Currency: cur, Cards: map[string]bool{}}
	st.accts[a.ID] = a
	st.acctList = append(st.acctList, a)
	s.mu.Unlock()
	return nil
}

func cardsIdem(s *Sim, r *rand.Rand) string {
	return fmt.Sprintf("simcards-%d-%d-%x", s.cfg.Seed, s.step, r.Uint64())
}

// cardsFund sends money to an own account (settled at once).
func cardsFund(s *Sim, r *rand.Rand) error {
	st := cardsS(s)
	s.mu.Lock()
	a := Pick(r, st.acctList)
	s.mu.Unlock()
	if a == nil {
		return nil
	}
	amount := 1000 + r.Int64N(100_000)
	resp := s.Do(r, Req{Method: http.MethodPost, Path: "/sandbox/inflows", Idem: cardsIdem(s, r),
		Body: map[string]any{"account_id": a.ID, "amount": amount, "narration": "card funding"}})
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case resp.OK():
		a.Funded += amount
	case resp.Status == 0 || resp.Status >= 500:
		a.Unknown = true // it may or may not have arrived
	}
	st.dirtyAccts[a.ID] = true
	return nil
}

// cardsCreate issues a virtual card with random controls, or a disposable
// one, on an own account or (sometimes) an account of the world.
func cardsCreate(s *Sim, r *rand.Rand) error {
	st := cardsS(s)
	var acct, entity, cur string
	if Chance(r, 0.3) {
		if a := s.PickAccount(r, nil); a != nil {
			acct, entity, cur = a.ID, a.Entity, a.Currency
		}
	}
	if acct == "" {
		s.mu.Lock()
		a := Pick(r, st.acctList)
		s.mu.Unlock()
		if a == nil {
			return nil
		}
		acct, entity, cur = a.ID, a.Entity, a.Currency
	}
	typ := cards.TypeVirtual
	if Chance(r, 0.25) {
		typ = cards.TypeDisposable
	}
	now := s.Now().UTC()
	exp := now.AddDate(0, r.IntN(30), 0)
	if Chance(r, 0.1) {
		exp = now
	}
	in := cards.NewCard{AccountID: acct, CardName: fmt.Sprintf("Sim card %d", s.step), Currency: cur,
		Cardholder: &cards.Cardholder{FirstName: "Ada", LastName: "Lovelace", Email: "ada@example.com", PhoneNumber: "+442071838750"}}
	if typ == cards.TypeDisposable || Chance(r, 0.6) {
		in.ExpirationMonth, in.ExpirationYear = cards.Flex(exp.Format("01")), cards.Flex(exp.Format("06"))
	}
	c := &cardsCard{Type: typ, Loc: time.UTC}
	if typ == cards.TypeVirtual {
		l := cardsLimits(r, false)
		ic := &cards.Controls{CycleTransactionCount: l.CycleTransactionCount, DailyAmountLimit: l.DailyAmountLimit,
			DailyTransactionCount: l.DailyTransactionCount, TransactionAmountLimit: l.TransactionAmountLimit}
		switch r.IntN(3) {
		case 0:
			ic.BillingCycle = "Weekly"
			c.Weekly = true
			if Chance(r, 0.7) {
				ic.BillingCycleDay = cards.Flex(Choose(r, "Monday", "Wednesday", "Sunday", "saturday"))
			}
		case 1:
			ic.BillingCycle = "Monthly"
			if Chance(r, 0.7) {
				ic.BillingCycleDay = cards.Flex(strconv.Itoa(Choose(r, 1, 15, 29, 31)))
			}
		}
		c.CycleDay = string(ic.BillingCycleDay)
		if tz := Choose(r, "", "", "America/New_York", "Asia/Kolkata", "Pacific/Auckland"); tz != "" {
			loc, err := time.LoadLocation(tz)
			if err == nil {
				ic.TimeZone, c.Loc = tz, loc
			}
		}
		in.IndividualControls = ic
		c.Ctls = append(c.Ctls, cardsCtl{name: "individual_controls", open: true, limits: l})
		for _, mcc := range cardsMCCs {
			if Chance(r, 0.15) {
				open := !Chance(r, 0.3)
				m := cards.MCCControl{MCC: mcc, Limits: cardsLimits(r, true)}
				if !open || Chance(r, 0.5) {
					m.Open = &open
				}
				in.IndividualMCCControls = append(in.IndividualMCCControls, m)
				c.Ctls = append(c.Ctls, cardsCtl{name: "individual_mcc_controls." + strconv.Itoa(mcc), mcc: mcc, open: open, limits: m.Limits})
			}
		}
		for _, g := range []string{"restaurants", "gambling", "airlines", "cash", "travel"} {
			if Chance(r, 0.15) {
				open := !Chance(r, 0.3)
				gc := cards.GroupControl{GroupName: g, Limits: cardsLimits(r, true)}
				if !open || Chance(r, 0.5) {
					gc.Open = &open
				}
				in.MCCGroupControls = append(in.MCCGroupControls, gc)
				c.Ctls = append(c.Ctls, cardsCtl{name: "mcc_group_controls." + g, group: g, open: open, limits: gc.Limits})
			}
		}
	}
	path := "/virtual-cards"
	if typ == cards.TypeDisposable {
		path = "/disposable-cards"
	}
	// A replayed creation lacks number and cvv (CONTRACT: stored replays
	// hold no secret), which the core's retry check allows (sameReplay).
	// Creations under the root's key get an Idempotency-Key from the core
	// a third of the time; those under the entity's own key (which the
	// core never retries) are retried here, and compared without the card
	// data.
	req := Req{Method: http.MethodPost, Path: path, Body: in}
	s.mu.Lock()
	for _, e := range s.world.Entities {
		if e.ID == entity && e.Key != "" && Chance(r, 0.7) {
			req.Key, req.Idem, req.NoIdem = e.Key, cardsIdem(s, r), false
		}
	}
	s.mu.Unlock()
	resp := s.Do(r, req)
	if !resp.OK() {
		return nil
	}
	var v cards.Card
	if err := resp.Decode(&v); err != nil || v.ID == "" {
		return fmt.Errorf("create %s card answered %s", typ, resp)
	}
	if !resp.Replayed && (len(v.Number) != 16 || len(v.CVV) != 3) {
		return fmt.Errorf("card creation shows no number or cvv: %s", resp)
	}
	if req.Idem != "" && Chance(r, 0.3) {
		again := s.send(r, req)
		var w cards.Card
		if again.Status != 0 {
			if err := again.Decode(&w); err != nil || again.Status != resp.Status || !again.Replayed || w.ID != v.ID {
				return fmt.Errorf("retry of card creation %s answered %s, first %s", v.ID, again, resp)
			}
			if w.CVV != "" || (w.Number != "" && w.Number != v.Number) {
				return fmt.Errorf("replayed card creation %s shows card data: %s", v.ID, again)
			}
			s.Count("cards.create_replayed")
		}
	}
	if v.Status != cards.StatusActive || v.Type != typ || v.AccountID != acct || v.Currency != cur || v.EntityID != entity {
		return fmt.Errorf("created card is not what was asked (%s on %s in %s): %s", typ, acct, cur, resp)
	}
	m, _ := strconv.Atoi(v.ExpirationMonth)
	y, _ := strconv.Atoi(v.ExpirationYear)
	if m < 1 || m > 12 || len(v.ExpirationYear) != 2 {
		return fmt.Errorf("created card's expiry %q/%q", v.ExpirationMonth, v.ExpirationYear)
	}
	c.ID, c.Entity, c.Account, c.Currency, c.Status = v.ID, v.EntityID, acct, cur, cards.StatusActive
	c.ExpEnd = time.Date(2000+y, time.Month(m)+1, 1, 0, 0, 0, 0, time.UTC)
	s.mu.Lock()
	if st.cards[c.ID] == nil {
		st.cards[c.ID] = c
		st.cardList = append(st.cardList, c)
	}
	s.mu.Unlock()
	s.Acked("/cards/" + v.ID)
	return nil
}

// cardsAuthorize sends a purchase of a random amount and MCC.
func cardsAuthorize(s *Sim, r *rand.Rand) error {
	st := cardsS(s)
	c, snap := cardsPickCard(s, r, func(c *cardsCard) bool {
		return len(c.Txs) < cardsMaxTx && (!c.Deleted && c.Status == cards.StatusActive || Chance(r, 0.15))
	})
	if c == nil {
		return nil
	}
	amount := 1 + r.Int64N(8000)
	switch r.IntN(6) {
	case 0:
		amount = 1
	case 1:
		amount = 1 + r.Int64N(300)
	}
	body := map[string]any{"amount": amount, "mcc": Pick(r, cardsMCCs), "merchant_name": "Sim merchant"}
	if Chance(r, 0.3) {
		body["currency"] = snap.Currency
	} else if Chance(r, 0.03) {
		body["currency"] = "KES" // mostly not the card's: 422
	}
	resp := s.Do(r, Req{Method: http.MethodPost, Path: "/sandbox/cards/" + c.ID + "/authorizations", Body: body})
	if resp.Status == 0 {
		return nil // lost: a later resync finds it
	}
	if !resp.OK() {
		if resp.Status != http.StatusCreated && resp.Status >= 200 && resp.Status < 300 {
			return fmt.Errorf("authorization answered %s", resp)
		}
		return nil
	}
	var v cards.Transaction
	if err := resp.Decode(&v); err != nil || v.ID == "" {
		return fmt.Errorf("authorization answered %s", resp)
	}
	if v.CardID != c.ID || v.Amount != amount || v.Currency != snap.Currency {
		return fmt.Errorf("authorization on card %s of %d answered %s", c.ID, amount, resp)
	}
	if v.DeclineReason != nil {
		reason := *v.DeclineReason
		if i := strings.LastIndexByte(reason, '.'); i >= 0 {
			reason = "limit_" + reason[i+1:]
		}
		s.Count("cards.declined_" + reason)
	} else {
		s.Count("cards.approved")
	}
	if v.Status == cards.TxPending && !resp.Replayed {
		// The card's state at the step's start holds through the step: no
		// move that unfreezes runs beside an authorization.
		switch {
		case snap.Deleted:
			return fmt.Errorf("deleted card %s approved authorization %s", c.ID, v.ID)
		case snap.Status != cards.StatusActive:
			return fmt.Errorf("%s card %s approved authorization %s", snap.Status, c.ID, v.ID)
		}
	}
	s.mu.Lock()
	err := st.learnTx(v)
	s.mu.Unlock()
	return cardsErr(s, err)
}

func cardsClear(s *Sim, r *rand.Rand) error {
	t := cardsPickTx(s, r, cards.TxPending)
	if t == nil {
		return nil
	}
	s.mu.Lock()
	held := t.w.held
	s.mu.Unlock()
	var amount int64
	switch r.IntN(4) {
	case 0:
	case 1:
		amount = 1 + r.Int64N(max(held, 1))
	case 2:
		amount = held + 1 + r.Int64N(1000)
	default:
		amount = held
	}
	return cardsSendMove(s, r, t, "clear", amount)
}

func cardsMove(kind string) func(s *Sim, r *rand.Rand) error {
	return func(s *Sim, r *rand.Rand) error {
		need := cards.TxPending
		if kind == "refund" {
			need = cards.TxSettled
		}
		t := cardsPickTx(s, r, need)
		if t == nil {
			return nil
		}
		st := cardsS(s)
		s.mu.Lock()
		held, left := t.w.held, t.w.settled-t.w.refunded
		c := *st.cards[t.Card]
		s.mu.Unlock()
		var amount int64
		switch kind {
		case "reverse":
			if Chance(r, 0.5) {
				amount = 1 + r.Int64N(max(held, 1)+50)
			}
		case "increment":
			amount = 1 + r.Int64N(3000)
			if Chance(r, 0.05) {
				amount = Choose[int64](r, -5, ledger.MaxAmount) // 422, or declined
			}
		case "refund":
			if Chance(r, 0.6) {
				amount = 1 + r.Int64N(max(left, 1))
			}
		}
		v, resp := cardsSend(s, r, t, kind, amount)
		if kind == "increment" && resp.OK() && v != nil && !resp.Replayed {
			switch {
			case c.Deleted:
				return fmt.Errorf("deleted card %s approved an increment of %s", c.ID, t.ID)
			case c.Status != cards.StatusActive:
				return fmt.Errorf("%s card %s approved an increment of %s", c.Status, c.ID, t.ID)
			}
		}
		if v == nil {
			return nil
		}
		s.mu.Lock()
		err := st.learnTx(*v)
		s.mu.Unlock()
		return cardsErr(s, err)
	}
}

func cardsSendMove(s *Sim, r *rand.Rand, t *cardsTx, kind string, amount int64) error {
	v, _ := cardsSend(s, r, t, kind, amount)
	if v == nil {
		return nil
	}
	st := cardsS(s)
	s.mu.Lock()
	err := st.learnTx(*v)
	s.mu.Unlock()
	return cardsErr(s, err)
}

// cardsSend sends a sandbox network message for t.
func cardsSend(s *Sim, r *rand.Rand, t *cardsTx, kind string, amount int64) (*cards.Transaction, Resp) {
	var body any = map[string]any{}
	if amount != 0 {
		body = map[string]any{"amount": amount}
	} else if Chance(r, 0.3) {
		body = nil
	}
	resp := s.Do(r, Req{Method: http.MethodPost, Path: "/sandbox/card-transactions/" + t.ID + "/" + kind, Body: body})
	st := cardsS(s)
	if resp.Status == 0 {
		s.mu.Lock()
		st.dirtyCards[t.Card] = true
		s.mu.Unlock()
		return nil, resp
	}
	if !resp.OK() {
		s.Count("cards." + kind + "_" + strconv.Itoa(resp.Status))
		return nil, resp
	}
	var v cards.Transaction
	if err := resp.Decode(&v); err != nil || v.ID != t.ID {
		s.Violate("%s of card transaction %s answered %s", kind, t.ID, resp)
		return nil, resp
	}
	return &v, resp
}

func cardsFreeze(s *Sim, r *rand.Rand) error {
	c, _ := cardsPickCard(s, r, func(c *cardsCard) bool { return !c.Deleted })
	if c == nil {
		return nil
	}
	var body any
	if Chance(r, 0.1) {
		body = map[string]string{"status": "fraud"}
	} else if Chance(r, 0.3) {
		body = map[string]string{"status": "blocked"}
	}
	s.Do(r, Req{Method: http.MethodPost, Path: "/cards/" + c.ID + "/freeze", Body: body, Idem: cardsIdem(s, r)})
	return nil
}

func cardsUnfreeze(s *Sim, r *rand.Rand) error {
	c, _ := cardsPickCard(s, r, func(c *cardsCard) bool { return !c.Deleted && c.Status != cards.StatusActive })
	if c == nil {
		return nil
	}
	s.Do(r, Req{Method: http.MethodPost, Path: "/cards/" + c.ID + "/unfreeze", Idem: cardsIdem(s, r)})
	return nil
}

func cardsReassign(s *Sim, r *rand.Rand) error {
	c, snap := cardsPickCard(s, r, func(c *cardsCard) bool { return !c.Deleted })
	if c == nil {
		return nil
	}
	st := cardsS(s)
	s.mu.Lock()
	to := pickWhere(r, st.acctList, func(a *cardsAcct) bool { return a.Entity == snap.Entity && a.Currency == snap.Currency })
	s.mu.Unlock()
	target := ""
	if to != nil {
		target = to.ID
	}
	if to == nil || Chance(r, 0.2) {
		if a := s.PickAccount(r, func(a Account) bool { return a.Entity == snap.Entity }); a != nil {
			target = a.ID // maybe in another currency: a refusal
		}
	}
	if target == "" {
		return nil
	}
	resp := s.Do(r, Req{Method: http.MethodPost, Path: "/cards/" + c.ID + "/reassign", Body: map[string]string{"account_id": target}, Idem: cardsIdem(s, r)})
	if resp.OK() {
		var v cards.Card
		if err := resp.Decode(&v); err != nil || v.AccountID != target {
			return fmt.Errorf("reassign of card %s to %s answered %s", c.ID, target, resp)
		}
		s.mu.Lock()
		c.Account = target
		s.mu.Unlock()
	}
	return nil
}

func cardsDelete(s *Sim, r *rand.Rand) error {
	c, _ := cardsPickCard(s, r, func(c *cardsCard) bool { return !c.Deleted })
	if c == nil {
		return nil
	}
	resp := s.Do(r, Req{Method: http.MethodDelete, Path: "/cards/" + c.ID})
	if resp.OK() {
		var v cards.Card
		if err := resp.Decode(&v); err != nil || !v.Deleted {
			return fmt.Errorf("delete of card %s answered %s", c.ID, resp)
		}
	}
	return nil
}

// cardsGet reads a card and compares the usage the bank counted with the
// domain's own tally for the windows open now.
func cardsGet(s *Sim, r *rand.Rand) error {
	c, _ := cardsPickCard(s, r, func(c *cardsCard) bool { return c.Type == cards.TypeVirtual })
	if c == nil {
		return nil
	}
	if err := cardsResync(s, c); err != nil {
		return err
	}
	resp := s.Do(r, Req{Method: http.MethodGet, Path: "/cards/" + c.ID})
	if !resp.OK() {
		if resp.Status != 0 {
			return fmt.Errorf("GET card %s answered %s", c.ID, resp)
		}
		return nil
	}
	var v cards.Card
	if err := resp.Decode(&v); err != nil {
		return fmt.Errorf("GET card %s answered %s", c.ID, resp)
	}
	if v.Number == "" || v.CVV != "" || !strings.HasPrefix(v.Number, "************") {
		return fmt.Errorf("GET card %s shows card data: number %q cvv %q", c.ID, v.Number, v.CVV)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	day, cyc := c.windows(s.Now())
	got := map[string]*cards.Usage{"individual_controls": v.IndividualControls.Usage}
	for _, m := range v.IndividualMCCControls {
		got["individual_mcc_controls."+strconv.Itoa(m.MCC)] = m.Usage
	}
	for _, g := range v.MCCGroupControls {
		got["mcc_group_controls."+g.GroupName] = g.Usage
	}
	for _, ctl := range c.Ctls {
		u := got[ctl.name]
		if u == nil {
			return fmt.Errorf("GET card %s: no usage for %s", c.ID, ctl.name)
		}
		var want cards.Usage
		for _, t := range c.Txs {
			if !t.w.approved || !ctl.applies(t.MCC) {
				continue
			}
			d, cy := c.windows(time.UnixMilli(t.v.Created))
			var ah, au, n, nu int64
			switch t.w.status {
			case cards.TxPending:
				ah, n = t.w.held, 1
			case cards.TxSettled:
				au, nu = t.w.settled-t.w.refunded, 1
			}
			if d == day {
				want.DailyAmountLimitHold += ah
				want.DailyAmountLimitUsed += au
				want.DailyTransactionCountHold += n
				want.DailyTransactionCountUsed += nu
			}
			if cy == cyc {
				want.AmountHold += ah
				want.AmountUsed += au
				want.CycleTransactionCountHold += n
				want.CycleTransactionCountUsed += nu
			}
		}
		if u.AmountHold != want.AmountHold || u.AmountUsed != want.AmountUsed ||
			u.DailyAmountLimitHold != want.DailyAmountLimitHold || u.DailyAmountLimitUsed != want.DailyAmountLimitUsed ||
			u.DailyTransactionCountHold != want.DailyTransactionCountHold || u.DailyTransactionCountUsed != want.DailyTransactionCountUsed ||
			u.CycleTransactionCountHold != want.CycleTransactionCountHold || u.CycleTransactionCountUsed != want.CycleTransactionCountUsed {
			return fmt.Errorf("card %s %s usage (day %s, cycle %s): bank %+v, its transactions make %+v", c.ID, ctl.name, day, cyc, *u, want)
		}
		bal := func(limit *int64, used int64, got *int64) error {
			if (limit == nil) != (got == nil) || (limit != nil && *got != max(*limit-used, 0)) {
				return fmt.Errorf("card %s %s: balance %v under limit %v with %d counted", c.ID, ctl.name, got, limit, used)
			}
			return nil
		}
		l := ctl.limits
		for _, e := range []error{
			bal(l.Amount, want.AmountHold+want.AmountUsed, u.AmountBalance),
			bal(l.DailyAmountLimit, want.DailyAmountLimitHold+want.DailyAmountLimitUsed, u.DailyAmountLimitBalance),
			bal(l.DailyTransactionCount, want.DailyTransactionCountHold+want.DailyTransactionCountUsed, u.DailyTransactionCountBalance),
			bal(l.CycleTransactionCount, want.CycleTransactionCountHold+want.CycleTransactionCountUsed, u.CycleTransactionCountBalance),
		} {
			if e != nil {
				return e
			}
		}
	}
	s.counts["cards.usage_checked"]++
	return nil
}

// cardsOnEvent follows the cards.* events: the card's status and deletion,
// and no move of a deleted card.
func cardsOnEvent(s *Sim, ev ledger.Event) error {
	if !strings.HasPrefix(ev.Type, "cards.") {
		return nil
	}
	var v struct {
		ID      string `json:"id"`
		Status  string `json:"status"`
		Deleted bool   `json:"deleted"`
		Number  string `json:"number"`
		CVV     string `json:"cvv"`
	}
	if err := json.Unmarshal(ev.Object, &v); err != nil {
		return fmt.Errorf("card event object: %v", err)
	}
	if v.CVV != "" || (v.Number != "" && !strings.HasPrefix(v.Number, "************")) {
		return fmt.Errorf("card event shows card data: number %q cvv %q", v.Number, v.CVV)
	}
	st := cardsS(s)
	s.mu.Lock()
	defer s.mu.Unlock()
	c := st.cards[v.ID]
	if c == nil {
		return nil
	}
	if c.Deleted {
		return fmt.Errorf("card %s moved after its deletion", v.ID)
	}
	switch ev.Type {
	case cards.EventDeleted:
		if !v.Deleted {
			return fmt.Errorf("cards.deleted of card %s is not deleted", v.ID)
		}
	case cards.EventUnfrozen:
		c.Unfrozen++
	}
	c.Status, c.Deleted, c.eventSeen = v.Status, v.Deleted, true
	st.dirtyCards[c.ID] = true
	return nil
}

// cardsResync reads card c's transactions through the Go API into the
// model: every acknowledged one must be there, and none may have rewritten
// its history.
func cardsResync(s *Sim, c *cardsCard) error {
	list, err := s.Bank().Cards.ListTransactions(s.ctx, root, cards.TransactionFilter{CardID: c.ID})
	if err != nil {
		if s.anyCrashed() {
			return nil
		}
		return fmt.Errorf("list card %s's transactions: %w", c.ID, err)
	}
	s.Count("cards.resync")
	st := cardsS(s)
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := make(map[string]bool, len(list))
	for _, v := range list {
		seen[v.ID] = true
		if err := st.learnTx(v); err != nil {
			return err
		}
	}
	for _, t := range c.Txs {
		if !seen[t.ID] {
			return fmt.Errorf("acknowledged card transaction %s of card %s is gone", t.ID, c.ID)
		}
	}
	return nil
}

// cardLimitsErr checks that no control of c is passed in any window by its
// transactions as the model has them (under s.mu).
func (c *cardsCard) limitsErr(s *Sim) error {
	type key struct {
		ctl int
		win string
	}
	amt, cnt := map[key]int64{}, map[key]int64{}
	big := 0
	for _, t := range c.Txs {
		if !t.w.approved {
			continue
		}
		created := time.UnixMilli(t.v.Created)
		if !created.Before(c.ExpEnd) {
			return fmt.Errorf("card %s expired %s approved %s at %s", c.ID, c.ExpEnd.Format(time.DateOnly), t.ID, created.UTC().Format(time.RFC3339))
		}
		if t.v.Amount > 1 {
			big++
		}
		a, n := t.w.contribution()
		d, cy := c.windows(created)
		for i, ctl := range c.Ctls {
			if !ctl.applies(t.MCC) {
				continue
			}
			if !ctl.open {
				return fmt.Errorf("card %s approved %s at MCC %d, closed by %s", c.ID, t.ID, t.MCC, ctl.name)
			}
			if l := ctl.limits.TransactionAmountLimit; l != nil && t.w.maxTotal > *l {
				return fmt.Errorf("card %s transaction %s reached %d, over %s.transaction_amount_limit %d", c.ID, t.ID, t.w.maxTotal, ctl.name, *l)
			}
			amt[key{i, "d" + d}] += a
			amt[key{i, "c" + cy}] += a
			cnt[key{i, "d" + d}] += n
			cnt[key{i, "c" + cy}] += n
		}
	}
	if c.Type == cards.TypeDisposable && big > 1 {
		// Single use: a used disposable card cannot be unfrozen.
		return fmt.Errorf("disposable card %s approved %d purchases over 1 (unfrozen %d times)", c.ID, big, c.Unfrozen)
	}
	for k := range amt {
		l := c.Ctls[k.ctl].limits
		var limA, limN *int64
		what := "daily_amount_limit"
		if k.win[0] == 'd' {
			limA, limN = l.DailyAmountLimit, l.DailyTransactionCount
		} else {
			limA, limN, what = l.Amount, l.CycleTransactionCount, "amount"
		}
		if limA != nil && amt[k] > *limA {
			return fmt.Errorf("card %s %s.%s %d passed in window %s: %d counted", c.ID, c.Ctls[k.ctl].name, what, *limA, k.win, amt[k])
		}
		if limN != nil && cnt[k] > *limN {
			return fmt.Errorf("card %s %s transaction count %d passed in window %s: %d counted", c.ID, c.Ctls[k.ctl].name, *limN, k.win, cnt[k])
		}
	}
	return nil
}

// cardsCheck checks the cards and own accounts the step touched.
func cardsCheck(s *Sim) error {
	st := cardsS(s)
	s.mu.Lock()
	var dirty []*cardsCard
	for id := range st.dirtyCards {
		dirty = append(dirty, st.cards[id])
	}
	var accts []*cardsAcct
	for id := range st.dirtyAccts {
		accts = append(accts, st.accts[id])
	}
	clear(st.dirtyCards)
	clear(st.dirtyAccts)
	s.mu.Unlock()
	slices.SortFunc(dirty, func(a, b *cardsCard) int { return strings.Compare(a.ID, b.ID) })
	slices.SortFunc(accts, func(a, b *cardsAcct) int { return strings.Compare(a.ID, b.ID) })
	for _, c := range dirty {
		if c == nil {
			continue
		}
		s.mu.Lock()
		err := c.limitsErr(s)
		s.mu.Unlock()
		if err == nil {
			continue
		}
		// The model may hold transactions that expired by themselves:
		// read the bank's records and judge by them.
		if rerr := cardsResync(s, c); rerr != nil {
			return rerr
		}
		s.mu.Lock()
		err = c.limitsErr(s)
		s.mu.Unlock()
		if err != nil {
			return err
		}
	}
	for _, a := range accts {
		if a == nil {
			continue
		}
		if err := cardsAcctErr(s, a); err == nil {
			continue
		}
		s.mu.Lock()
		var cs []*cardsCard
		for id := range a.Cards {
			cs = append(cs, st.cards[id])
		}
		s.mu.Unlock()
		slices.SortFunc(cs, func(a, b *cardsCard) int { return strings.Compare(a.ID, b.ID) })
		for _, c := range cs {
			if err := cardsResync(s, c); err != nil {
				return err
			}
		}
		if err := cardsAcctErr(s, a); err != nil {
			// The model may not know every card on the account (one moved
			// here, or one whose answer was lost): judge by the bank's own
			// records, every card of the entity, which must agree with the
			// ledger whatever the model knows.
			if berr := cardsBankPending(s, a); berr != nil {
				return fmt.Errorf("%w; %v", err, berr)
			}
			s.Count("cards.model_behind")
		}
	}
	return nil
}

// cardsBankPending compares an account's pending debits with the open
// authorizations the bank records on it, over every card of its entity.
func cardsBankPending(s *Sim, a *cardsAcct) error {
	ctx, caller := s.ctx, corebank.System()
	b := s.Bank()
	bal, err := b.Ledger.GetBalance(ctx, a.ID)
	if err != nil {
		return err
	}
	var open int64
	opts := corebank.ListOptions{Limit: corebank.MaxLimit}
	for {
		page, err := b.Cards.ListCards(ctx, caller, cards.CardFilter{EntityID: a.Entity}, opts)
		if err != nil {
			return err
		}
		for _, c := range page.Items {
			txs, err := b.Cards.ListTransactions(ctx, caller, cards.TransactionFilter{CardID: c.ID})
			if err != nil {
				return err
			}
			for _, t := range txs {
				if t.AccountID == a.ID && t.Status == cards.TxPending {
					open += t.AmountAuthorized
				}
			}
		}
		if !page.HasNext {
			break
		}
		opts.After = page.Next
	}
	if bal.PendingDebits != open {
		return fmt.Errorf("the bank's own records: account %s has pending debits %d, its open card authorizations hold %d", a.ID, bal.PendingDebits, open)
	}
	return nil
}

// cardsAcctErr compares an own account's balance with its card
// transactions: pending debits are the open authorizations, and the settled
// balance is what was funded less what was spent.
func cardsAcctErr(s *Sim, a *cardsAcct) error {
	b, err := s.Bank().Ledger.GetBalance(s.ctx, a.ID)
	if err != nil {
		if s.anyCrashed() {
			return nil
		}
		return fmt.Errorf("balance of %s: %w", a.ID, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if b.PendingDebits != a.pending {
		return fmt.Errorf("account %s: pending debits %d, its open card authorizations hold %d", a.ID, b.PendingDebits, a.pending)
	}
	if !a.Unknown && b.Settled != a.Funded-a.spent {
		return fmt.Errorf("account %s: settled %d, funded %d less %d spent on cards makes %d", a.ID, b.Settled, a.Funded, a.spent, a.Funded-a.spent)
	}
	return nil
}
