package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/corebank/corebank/ledger"
)

// Capital products: products (deposits and share offerings) with their
// documents, orders with affirmations, confirmations (some dying between
// their two transactions), withdrawals with their previews, share
// allotments, unlocks, prices and deactivations, and reservations left
// to expire. Orders and capital accounts are followed through their
// outbox events (product_orders.updated, capital_accounts.updated); the
// money through the funding accounts' ledger history.

// capProduct is a product the simulator made.
type capProduct struct {
	ID, Type, Currency string
	Docs               []capDoc
	// Fixed return.
	Min, Max int64
	Bands    []int64
	// Share offering.
	OfferPrice, Inventory int64
	Brokerage, CrossDeal  float64
	Inactive              bool
	Allotted              bool
	Eligible              bool // no entity-type restriction
	// Held is the shares of its orders RESERVED, CONFIRMING,
	// RECOVERY_REQUIRED or APPROVED, from the events.
	Held int64
}

type capDoc struct {
	ID      string `json:"id"`
	Version int    `json:"version"`
}

// capOrder is an order as its events and the ops saw it.
type capOrder struct {
	ID, Product, Entity, Funding, Type, Reference string
	TotalDebit                                    int64
	Shares                                        int64
	Expires                                       int64 // reservation_expires_at
	Status                                        string
	SeenConfirming                                time.Time // first seen CONFIRMING or RECOVERY_REQUIRED
	Account                                       string    // capital account, once approved
	PurchaseChecked                               bool
}

// capAccount is a capital account as its events showed it.
type capAccount struct {
	capAcctView
	FirstAdjusted time.Time
}

// capFunding follows one funding account's ledger history: what each
// capital ledger key moved on it.
type capFunding struct {
	cursor *ledger.HistoryLine
	byKey  map[string]capTally
}

type capTally struct {
	n   int
	sum int64
}

type capState struct {
	products  []*capProduct
	product   map[string]*capProduct
	orders    []*capOrder
	order     map[string]*capOrder
	accounts  map[string]*capAccount
	funding   map[string]*capFunding
	lastBoots int
	// dueThrough is the latest clock time at which a step's due work
	// certainly ran to its end (no restart in that step).
	dueThrough time.Time
}

func capSt(s *Sim) *capState {
	return State(s, "capital", func() *capState {
		return &capState{product: map[string]*capProduct{}, order: map[string]*capOrder{},
			accounts: map[string]*capAccount{}, funding: map[string]*capFunding{}}
	})
}

// Views of the answers.

type capAcctView struct {
	ID        string `json:"id"`
	OrderID   string `json:"order_id"`
	ProductID string `json:"product_id"`
	Type      string `json:"type"`
	Status    struct {
		State        string  `json:"state"`
		PayoutStatus *string `json:"payout_status"`
		RefundStatus *string `json:"refund_status"`
	} `json:"status"`
	// Fixed return.
	Principal         int64  `json:"principal"`
	TenorDays         int    `json:"tenor_days"`
	StartAt           int64  `json:"start_at"`
	MaturityAt        int64  `json:"maturity_at"`
	EarlyWithdrawalAt *int64 `json:"early_withdrawal_at"`
	AccruedInterest   int64  `json:"accrued_interest"`
	GrossInterest     int64  `json:"gross_interest"`
	PayoutAmount      *int64 `json:"payout_amount"`
	SettlementAt      *int64 `json:"settlement_at"`
	// Share offering.
	SharesPurchased  int64  `json:"shares_purchased"`
	AllocatedShares  int64  `json:"allocated_shares"`
	AllocatedValue   int64  `json:"allocated_value"`
	OfferPrice       int64  `json:"offer_price"`
	BrokerageFee     int64  `json:"brokerage_fee"`
	CrossDealFee     int64  `json:"cross_deal_fee"`
	TotalDebit       int64  `json:"total_debit"`
	LockExpiresAt    int64  `json:"lock_expires_at"`
	UnallocatedValue int64  `json:"unallocated_value"`
	MarketPrice      *int64 `json:"market_price"`
	MarketValue      *int64 `json:"market_value"`
}

type capOrderView struct {
	ID                   string       `json:"id"`
	EntityID             string       `json:"entity_id"`
	Reference            string       `json:"reference"`
	ProductID            string       `json:"product_id"`
	AccountID            string       `json:"account_id"`
	Type                 string       `json:"type"`
	Status               string       `json:"status"`
	TotalDebit           int64        `json:"total_debit"`
	AllocatedShares      *int64       `json:"allocated_shares"`
	ReservationExpiresAt int64        `json:"reservation_expires_at"`
	CapitalAccount       *capAcctView `json:"capital_account"`
}

type capPreview struct {
	Principal        int64  `json:"principal"`
	GrossInterest    int64  `json:"gross_interest"`
	PenaltyRate      string `json:"penalty_rate"`
	PenaltyAmount    int64  `json:"penalty_amount"`
	TotalDeductions  int64  `json:"total_deductions"`
	NetPayout        int64  `json:"net_payout"`
	DaysElapsed      int    `json:"days_elapsed"`
	CapitalAccountID string `json:"capital_account_id"`
}

type capTx struct {
	EventType   string  `json:"event_type"`
	Amount      int64   `json:"amount"`
	AccrualDate *string `json:"accrual_date"`
}

// Order states SPEC.md draws; REJECTED is capital/doc.go's.
var capOrderMachine = Machine{
	Initial: []string{"RESERVED"},
	Edges: map[string][]string{
		"RESERVED":          {"CONFIRMING", "EXPIRED", "REJECTED"},
		"CONFIRMING":        {"APPROVED", "RECOVERY_REQUIRED"},
		"RECOVERY_REQUIRED": {"APPROVED"},
	},
}

// Capital account states (status.state): SPEC.md's fixed-return moves,
// the automatic ones and the share offering's of capital/doc.go.
var capAccountMachine = Machine{
	Initial: []string{"ACTIVE", "LOCKED"},
	Edges: map[string][]string{
		"ACTIVE":              {"MATURED", "EARLY_LIQUIDATING"},
		"MATURED":             {"CLOSING"},
		"EARLY_LIQUIDATING":   {"CLOSED"},
		"CLOSING":             {"CLOSED"},
		"LOCKED":              {"ALLOTMENT_ADJUSTED", "ALLOTMENT_CONFIRMED", "TRANSFERABLE"},
		"ALLOTMENT_ADJUSTED":  {"ALLOTMENT_CONFIRMED", "TRANSFERABLE"},
		"ALLOTMENT_CONFIRMED": {"TRANSFERABLE"},
	},
}

// holdsShares reports an order status that holds its offering's shares.
func holdsShares(status string) bool {
	switch status {
	case "RESERVED", "CONFIRMING", "RECOVERY_REQUIRED", "APPROVED":
		return true
	}
	return false
}

func init() {
	registerMachine("product_orders", capOrderMachine)
	registerEventHook(capitalEvent)
	registerCheck(func(s *Sim) error {
		st := capSt(s)
		s.mu.Lock()
		if s.boots == st.lastBoots {
			st.dueThrough = s.Now()
		}
		st.lastBoots = s.boots
		s.mu.Unlock()
		return nil
	})
	register(
		Op{Name: "capital.product", Weight: 2, Run: capitalProduct},
		Op{Name: "capital.order", Weight: 6, Concurrent: true, Run: capitalOrder},
		Op{Name: "capital.confirm", Weight: 5, Run: capitalConfirm},
		Op{Name: "capital.confirm_race", Weight: 2, Concurrent: true, Run: capitalConfirmRace},
		Op{Name: "capital.withdraw", Weight: 3, Run: capitalWithdraw},
		Op{Name: "capital.preview", Weight: 2, Concurrent: true, Run: capitalPreviewOnly},
		Op{Name: "capital.allot", Weight: 1, Run: capitalAllot},
		Op{Name: "capital.offering", Weight: 1, Run: capitalOfferingMove},
		Op{Name: "capital.deactivate", Weight: 1, Run: capitalDeactivate},
		Op{Name: "capital.audit", Weight: 4, Run: capitalAudit},
	)
}

// capitalEvent follows orders and capital accounts through the outbox.
func capitalEvent(s *Sim, ev ledger.Event) error {
	switch ev.Type {
	case "product_orders.updated":
		var v capOrderView
		if err := json.Unmarshal(ev.Object, &v); err != nil || v.ID == "" {
			return fmt.Errorf("order event object: %v", err)
		}
		return capitalOrderEvent(s, v)
	case "capital_accounts.updated":
		var v capAcctView
		if err := json.Unmarshal(ev.Object, &v); err != nil || v.ID == "" {
			return fmt.Errorf("capital account event object: %v", err)
		}
		return capitalAccountEvent(s, v)
	}
	return nil
}

func capitalOrderEvent(s *Sim, v capOrderView) error {
	st := capSt(s)
	s.mu.Lock()
	defer s.mu.Unlock()
	o := st.order[v.ID]
	if o == nil {
		o = &capOrder{ID: v.ID}
		st.order[v.ID] = o
		st.orders = append(st.orders, o)
	}
	o.Product, o.Entity, o.Funding, o.Type, o.Reference = v.ProductID, v.EntityID, v.AccountID, v.Type, v.Reference
	o.TotalDebit, o.Expires = v.TotalDebit, v.ReservationExpiresAt
	if v.AllocatedShares != nil {
		o.Shares = *v.AllocatedShares
	}
	prev, seen := o.Status, o.Status != ""
	o.Status = v.Status
	if prev != v.Status {
		s.counts["capital.order_"+strings.ToLower(v.Status)]++
	}
	if (v.Status == "CONFIRMING" || v.Status == "RECOVERY_REQUIRED") && o.SeenConfirming.IsZero() {
		o.SeenConfirming = s.Now()
	}
	if v.Status == "APPROVED" {
		if v.CapitalAccount == nil || v.CapitalAccount.ID == "" {
			return fmt.Errorf("order %s APPROVED without its capital account", v.ID)
		}
		o.Account = v.CapitalAccount.ID
	} else if v.CapitalAccount != nil {
		return fmt.Errorf("order %s is %s with a capital account", v.ID, v.Status)
	}
	p := st.product[v.ProductID]
	if p == nil || p.Type != "SHARE_OFFERING" {
		return nil
	}
	was := seen && holdsShares(prev)
	if holdsShares(v.Status) != was {
		if was {
			p.Held -= o.Shares
		} else {
			p.Held += o.Shares
		}
	}
	if p.Held > p.Inventory {
		return fmt.Errorf("offering %s: orders hold %d shares of an inventory of %d", p.ID, p.Held, p.Inventory)
	}
	return nil
}

func capitalAccountEvent(s *Sim, v capAcctView) error {
	st := capSt(s)
	s.mu.Lock()
	defer s.mu.Unlock()
	a := st.accounts[v.ID]
	m := capAccountMachine
	state := v.Status.State
	switch {
	case a == nil && !slices.Contains(m.Initial, state):
		return fmt.Errorf("capital account %s first seen %q, not one of %v", v.ID, state, m.Initial)
	case a != nil && a.Status.State != state && !slices.Contains(m.Edges[a.Status.State], state):
		return fmt.Errorf("capital account %s moved %q -> %q, not an edge of the machine", v.ID, a.Status.State, state)
	}
	if a == nil {
		a = &capAccount{}
		st.accounts[v.ID] = a
	}
	if a.Status.State != state {
		s.counts["capital.account_"+strings.ToLower(state)]++
	}
	first := a.FirstAdjusted
	a.capAcctView = v
	a.FirstAdjusted = first
	if state == "ALLOTMENT_ADJUSTED" && first.IsZero() {
		a.FirstAdjusted = s.Now()
	}
	switch v.Type {
	case "FIXED_RETURN":
		if v.AccruedInterest > v.GrossInterest || v.AccruedInterest < 0 {
			return fmt.Errorf("capital account %s accrued %d of a tenor's interest of %d", v.ID, v.AccruedInterest, v.GrossInterest)
		}
		if ps := v.Status.PayoutStatus; ps != nil && *ps == "completed" && state != "CLOSED" {
			return fmt.Errorf("capital account %s paid out but %s", v.ID, state)
		}
		if state == "CLOSED" && (v.Status.PayoutStatus == nil || *v.Status.PayoutStatus != "completed") {
			return fmt.Errorf("capital account %s CLOSED with payout status %v", v.ID, v.Status.PayoutStatus)
		}
	case "SHARE_OFFERING":
		if err := capShareIdentity(v); err != nil {
			return err
		}
	}
	return nil
}

// capShareIdentity: what a share holding was allotted, its fees and its
// refund add up to what its applicant paid.
func capShareIdentity(v capAcctView) error {
	switch {
	case v.AllocatedShares > v.SharesPurchased || v.AllocatedShares < 0:
		return fmt.Errorf("holding %s allocated %d of %d shares bought", v.ID, v.AllocatedShares, v.SharesPurchased)
	case v.AllocatedValue != v.AllocatedShares*v.OfferPrice:
		return fmt.Errorf("holding %s: allocated value %d is not %d shares at %d", v.ID, v.AllocatedValue, v.AllocatedShares, v.OfferPrice)
	case v.UnallocatedValue < 0 || v.AllocatedValue+v.BrokerageFee+v.CrossDealFee+v.UnallocatedValue != v.TotalDebit:
		return fmt.Errorf("holding %s: value %d + fees %d + %d + refund %d != total debit %d", v.ID,
			v.AllocatedValue, v.BrokerageFee, v.CrossDealFee, v.UnallocatedValue, v.TotalDebit)
	case v.MarketPrice != nil && (v.MarketValue == nil || *v.MarketValue != *v.MarketPrice*v.AllocatedShares):
		return fmt.Errorf("holding %s: market value %v is not %d shares at %d", v.ID, v.MarketValue, v.AllocatedShares, *v.MarketPrice)
	}
	return nil
}

// capPickProduct returns a product the simulator made satisfying keep.
func capPickProduct(s *Sim, r *rand.Rand, keep func(*capProduct) bool) *capProduct {
	st := capSt(s)
	s.mu.Lock()
	defer s.mu.Unlock()
	p := pickWhere(r, st.products, keep)
	if p == nil {
		return nil
	}
	c := *p
	c.Docs = slices.Clone(p.Docs)
	return &c
}

// capPickOrder returns a copy of an order satisfying keep.
func capPickOrder(s *Sim, r *rand.Rand, keep func(*capOrder) bool) *capOrder {
	st := capSt(s)
	s.mu.Lock()
	defer s.mu.Unlock()
	o := pickWhere(r, st.orders, keep)
	if o == nil {
		return nil
	}
	c := *o
	return &c
}

func capRate(r *rand.Rand, max int) string {
	n := r.IntN(max + 1)
	return fmt.Sprintf("0.%03d", n)
}

func capitalProduct(s *Sim, r *rand.Rand) error {
	cur := Choose(r, fiat...)
	p := &capProduct{Currency: cur, Eligible: true}
	var docs []any
	for i := range r.IntN(3) {
		docs = append(docs, map[string]any{"title": fmt.Sprintf("Doc %d", i), "url": "https://example.com/doc.pdf", "version": 1 + r.IntN(3)})
	}
	body := map[string]any{"display_name": fmt.Sprintf("Sim product %d", s.step), "description": "<p>sim</p>",
		"currency": cur}
	if docs != nil {
		body["documents"] = docs
	}
	if r.IntN(8) == 0 {
		body["visibility"] = "hidden"
	}
	if r.IntN(8) == 0 {
		body["eligible_entity_types"] = []string{Choose(r, "individual", "business")}
		p.Eligible = false
	}
	if r.IntN(6) == 0 {
		// A sale window that closes soon: later orders and confirms are
		// refused or REJECTED.
		body["sale_ends_at"] = s.Now().Add(time.Duration(1+r.IntN(20)) * time.Minute).UnixMilli()
	}
	if r.IntN(2) == 0 {
		p.Type = "FIXED_RETURN"
		body["type"] = p.Type
		body["tenor_days"] = Choose(r, 7, 30, 60, 90, 180)
		body["annual_rate"] = Choose(r, "0.10", "0.05", "0.1875", "1", "0.0001")
		if r.IntN(4) == 0 {
			p.Bands = []int64{10_000, 250_000, 1_000_000 + r.Int64N(1000)}
			body["principal_bands"] = p.Bands
		} else {
			p.Min, p.Max = 100+r.Int64N(10_000), 1_000_000+r.Int64N(5_000_000)
			body["min_principal"], body["max_principal"] = p.Min, p.Max
		}
		body["early_withdrawal_enabled"] = r.IntN(4) != 0
		body["early_withdrawal_penalty_rate"] = capRate(r, 1000)
		body["early_withdrawal_min_days"] = r.IntN(10)
		body["lock_in_days"] = Choose(r, 0, 0, 3, 20)
		body["withholding_rate"] = capRate(r, 300)
	} else {
		p.Type = "SHARE_OFFERING"
		body["type"] = p.Type
		p.OfferPrice, p.Inventory = 1+r.Int64N(5000), 1+r.Int64N(2000)
		body["offer_price"], body["inventory_shares"] = p.OfferPrice, p.Inventory
		b, c := capRate(r, 50), capRate(r, 20)
		body["brokerage_fee_rate"], body["cross_deal_fee_rate"] = b, c
		fmt.Sscan(b, &p.Brokerage)
		fmt.Sscan(c, &p.CrossDeal)
		body["lock_days"] = Choose(r, 0, 7, 30, 90, 365)
	}
	resp := s.Do(r, Req{Method: http.MethodPost, Path: "/sandbox/products", Body: body})
	if !resp.OK() {
		if resp.Status == 422 {
			return fmt.Errorf("create %s product refused: %s", p.Type, resp)
		}
		return nil
	}
	var v struct {
		ID        string   `json:"id"`
		Type      string   `json:"type"`
		Documents []capDoc `json:"documents"`
	}
	if err := resp.Decode(&v); err != nil || v.ID == "" || v.Type != p.Type || len(v.Documents) != len(docs) {
		return fmt.Errorf("create product answered %s", resp)
	}
	p.ID, p.Docs = v.ID, v.Documents
	st := capSt(s)
	s.mu.Lock()
	st.products = append(st.products, p)
	st.product[p.ID] = p
	s.mu.Unlock()
	if p.Eligible {
		s.Acked("/products/" + p.ID)
	}
	return nil
}

// capEntity returns the world's entity id (a copy) or nil.
func capEntity(s *Sim, id string) *Entity {
	s.mu.Lock()
	defer s.mu.Unlock()
	if id == s.world.Root.ID {
		return &s.world.Root
	}
	for _, e := range s.world.Entities {
		if e.ID == id {
			return e
		}
	}
	return nil
}

func capitalOrder(s *Sim, r *rand.Rand) error {
	p := capPickProduct(s, r, func(p *capProduct) bool { return !p.Inactive || r.IntN(10) == 0 })
	if p == nil {
		return nil
	}
	a := s.PickAccount(r, func(a Account) bool { return a.Currency == p.Currency })
	if a == nil {
		return nil
	}
	key := s.world.Root.Key
	if e := capEntity(s, a.Entity); e != nil {
		key = keyOf(s, r, e)
	}
	var affirm []any
	for _, d := range p.Docs {
		affirm = append(affirm, map[string]any{"document_id": d.ID, "version": d.Version})
	}
	bad := ""
	switch {
	case len(p.Docs) > 0 && r.IntN(12) == 0:
		bad = "missing"
		affirm = affirm[1:]
	case len(p.Docs) > 0 && r.IntN(12) == 0:
		bad = "version"
		affirm[0] = map[string]any{"document_id": p.Docs[0].ID, "version": p.Docs[0].Version + Choose(r, -1, 1)}
	case len(p.Docs) > 0 && r.IntN(12) == 0:
		bad = "duplicate"
		affirm = append(affirm, affirm[0])
	}
	if affirm == nil {
		affirm = []any{}
	}
	body := map[string]any{"product_id": p.ID, "account_id": a.ID, "entity_id": a.Entity, "affirmations": affirm}
	var spend int64
	if p.Type == "FIXED_RETURN" {
		var principal int64
		if len(p.Bands) > 0 {
			principal = Pick(r, p.Bands)
		} else {
			principal = p.Min + r.Int64N(min(p.Max-p.Min+1, 2_000_000))
		}
		if r.IntN(15) == 0 && bad == "" {
			bad = "principal"
			principal = p.Min - 1
			if len(p.Bands) > 0 {
				principal = p.Bands[0] + 1
			}
		}
		body["principal"], body["waive_early_withdrawal"] = principal, r.IntN(4) == 0
		spend = principal
	} else {
		shares := 1 + r.Int64N(max(1, p.Inventory/3))
		spend = int64(float64(shares*p.OfferPrice)*(1+p.Brokerage+p.CrossDeal)) + r.Int64N(p.OfferPrice)
		body["amount"] = spend
	}
	if r.IntN(5) != 0 && spend > 0 {
		// Fund it, mostly enough.
		fr := s.Do(r, Req{Method: http.MethodPost, Path: "/sandbox/inflows", Body: map[string]any{"account_id": a.ID,
			"amount": spend + r.Int64N(spend/4+1) - Choose(r, 0, 0, 0, spend/8), "narration": "sim capital funding"}})
		if !fr.OK() {
			s.Count("capital.funding_refused")
		}
	}
	resp := s.Do(r, Req{Method: http.MethodPost, Path: "/product-orders", Key: key, Body: body})
	if bad != "" {
		if resp.OK() {
			return fmt.Errorf("order with a bad %s answered %s", bad, resp)
		}
		return nil
	}
	if !resp.OK() {
		return nil
	}
	var v capOrderView
	if err := resp.Decode(&v); err != nil || v.ID == "" || v.Status != "RESERVED" || v.CapitalAccount != nil {
		return fmt.Errorf("order answered %s", resp)
	}
	if v.AccountID != a.ID || v.ProductID != p.ID || v.EntityID != a.Entity {
		return fmt.Errorf("order of %s on %s for %s answered %s", p.ID, a.ID, a.Entity, resp)
	}
	if p.Type == "FIXED_RETURN" && v.TotalDebit != body["principal"].(int64) {
		return fmt.Errorf("order of principal %v debits %d", body["principal"], v.TotalDebit)
	}
	if p.Type == "SHARE_OFFERING" {
		if v.AllocatedShares == nil || *v.AllocatedShares <= 0 || *v.AllocatedShares > p.Inventory || v.TotalDebit > spend {
			return fmt.Errorf("share order of %d answered %s", spend, resp)
		}
	}
	s.Acked("/product-orders/" + v.ID)
	return nil
}

// capBalance is an account's settled balance, or false.
func capBalance(s *Sim, id string) (int64, bool) {
	b, err := s.Bank().Ledger.GetBalance(s.ctx, id)
	return b.Settled, err == nil
}

func capGetOrder(s *Sim, r *rand.Rand, id string) (*capOrderView, Resp) {
	resp := s.Do(r, Req{Method: http.MethodGet, Path: "/product-orders/" + id})
	if !resp.OK() {
		return nil, resp
	}
	var v capOrderView
	if resp.Decode(&v) != nil || v.ID != id {
		return nil, resp
	}
	return &v, resp
}

func capitalConfirm(s *Sim, r *rand.Rand) error {
	now := s.Now().UnixMilli()
	fresh := r.IntN(5) != 0 // mostly an order still reserved; else any, expired ones too
	o := capPickOrder(s, r, func(o *capOrder) bool {
		return !fresh || o.Status == "RESERVED" && o.Expires > now
	})
	if o == nil || o.Funding == "" {
		return nil
	}
	before, ok := capBalance(s, o.Funding)
	if !ok {
		return nil
	}
	req := Req{Method: http.MethodPost, Path: "/product-orders/" + o.ID + "/confirm"}
	if r.IntN(3) == 0 {
		req.Body = map[string]any{"secondary_id": fmt.Sprintf("ext-%d", r.IntN(1000))}
	}
	crash := !s.cfg.NoFaults && r.IntN(4) == 0
	if crash {
		s.ArmConfirmCrash()
		if r.IntN(5) != 0 {
			req.Idem = fmt.Sprintf("sim-confirm-%d-%d-%x", s.cfg.Seed, s.step, r.Uint32())
		} else {
			req.NoIdem = true // left to the recovery job
		}
	}
	resp := s.Do(r, req)
	if crash {
		// Disarm a crash the confirm never reached (refused before its debit).
		s.mu.Lock()
		s.confirmCrash = false
		s.mu.Unlock()
	}
	after, ok := capBalance(s, o.Funding)
	if !ok {
		return nil
	}
	g, gr := capGetOrder(s, r, o.ID)
	if g == nil {
		return fmt.Errorf("order %s unreadable after a confirm: %s", o.ID, gr)
	}
	want := int64(0)
	if o.Status == "RESERVED" && (g.Status == "CONFIRMING" || g.Status == "RECOVERY_REQUIRED" || g.Status == "APPROVED") {
		want = -g.TotalDebit
	}
	if after-before != want {
		return fmt.Errorf("confirm of order %s (%s, now %s) moved its funding account by %d, want %d (answer %s)",
			o.ID, o.Status, g.Status, after-before, want, resp)
	}
	s.Count("capital.confirm_" + strings.ToLower(g.Status))
	if !resp.OK() {
		s.Count(fmt.Sprintf("capital.confirm_refused_%d_%s", resp.Status, resp.Code()))
	}
	if resp.OK() {
		var v capOrderView
		if err := resp.Decode(&v); err != nil || v.Status != g.Status && !(resp.Replayed && g.Status == "APPROVED") {
			return fmt.Errorf("confirm of order %s answered %s, it reads %s", o.ID, resp, g.Status)
		}
		if v.Status != "APPROVED" && v.Status != "REJECTED" {
			return fmt.Errorf("confirm of order %s answered status %s", o.ID, v.Status)
		}
		if v.Status == "APPROVED" && (v.CapitalAccount == nil || v.CapitalAccount.ID == "") {
			return fmt.Errorf("confirm of order %s answered APPROVED without an account: %s", o.ID, resp)
		}
	}
	return nil
}

func capPreview1(s *Sim, r *rand.Rand, id string) (*capPreview, Resp) {
	resp := s.Do(r, Req{Method: http.MethodGet, Path: "/product-orders/" + id + "/withdrawal/preview"})
	if !resp.OK() {
		return nil, resp
	}
	var p capPreview
	if resp.Decode(&p) != nil {
		return nil, resp
	}
	return &p, resp
}

func capCheckPreview(id string, p *capPreview) error {
	if p.NetPayout != p.Principal+p.GrossInterest-p.PenaltyAmount-p.TotalDeductions || p.PenaltyAmount < 0 ||
		p.PenaltyAmount > p.GrossInterest || p.TotalDeductions > p.GrossInterest || p.TotalDeductions < 0 {
		return fmt.Errorf("preview of order %s does not add up: %+v", id, *p)
	}
	return nil
}

func capitalPreviewOnly(s *Sim, r *rand.Rand) error {
	o := capPickOrder(s, r, func(o *capOrder) bool { return o.Status == "APPROVED" })
	if o == nil {
		return nil
	}
	p, resp := capPreview1(s, r, o.ID)
	if p == nil {
		if resp.Status == 400 && o.Type == "SHARE_OFFERING" || resp.Status == 0 {
			return nil
		}
		return fmt.Errorf("preview of %s order %s answered %s", o.Type, o.ID, resp)
	}
	if o.Type != "FIXED_RETURN" {
		return fmt.Errorf("preview of a share order %s answered %s", o.ID, resp)
	}
	return capCheckPreview(o.ID, p)
}

func capitalWithdraw(s *Sim, r *rand.Rand) error {
	o := capPickOrder(s, r, func(o *capOrder) bool { return o.Status == "APPROVED" && o.Type == "FIXED_RETURN" })
	if o == nil {
		return nil
	}
	g, gr := capGetOrder(s, r, o.ID)
	if g == nil || g.CapitalAccount == nil {
		return fmt.Errorf("approved order %s reads %s", o.ID, gr)
	}
	a := g.CapitalAccount
	boots := s.boots
	now := s.Now().UnixMilli()
	p1, presp := capPreview1(s, r, o.ID)
	if p1 == nil {
		return fmt.Errorf("preview of order %s answered %s", o.ID, presp)
	}
	if err := capCheckPreview(o.ID, p1); err != nil {
		return err
	}
	allowed := a.Status.State == "MATURED" || a.Status.State == "ACTIVE" && now < a.MaturityAt &&
		a.EarlyWithdrawalAt != nil && now >= *a.EarlyWithdrawalAt
	resp := s.Do(r, Req{Method: http.MethodPost, Path: "/product-orders/" + o.ID + "/withdrawal"})
	if s.boots != boots || resp.Status == 0 {
		return nil // restarted meanwhile: the clock moved
	}
	if !resp.OK() {
		if allowed {
			return fmt.Errorf("withdrawal of order %s (%s, maturity %d, early from %v, now %d) refused: %s",
				o.ID, a.Status.State, a.MaturityAt, a.EarlyWithdrawalAt, now, resp)
		}
		if resp.Status != 400 || resp.Code() != "error_operation_invalid_for_state" {
			return fmt.Errorf("withdrawal of order %s refused with %s", o.ID, resp)
		}
		return nil
	}
	if !allowed && !resp.Replayed {
		return fmt.Errorf("withdrawal of order %s (%s, maturity %d, early from %v, now %d) was allowed: %s",
			o.ID, a.Status.State, a.MaturityAt, a.EarlyWithdrawalAt, now, resp)
	}
	var v capOrderView
	if err := resp.Decode(&v); err != nil || v.CapitalAccount == nil || v.CapitalAccount.PayoutAmount == nil {
		return fmt.Errorf("withdrawal of order %s answered %s", o.ID, resp)
	}
	paid := *v.CapitalAccount.PayoutAmount
	if paid != p1.NetPayout {
		return fmt.Errorf("order %s: the preview said %d, the withdrawal pays %d (%+v)", o.ID, p1.NetPayout, paid, *p1)
	}
	wantState := "EARLY_LIQUIDATING"
	if a.Status.State == "MATURED" {
		wantState = "CLOSING"
	}
	s.Count("capital.withdrawn_" + strings.ToLower(wantState))
	if st := v.CapitalAccount.Status.State; st != wantState {
		return fmt.Errorf("withdrawal of a %s account of order %s left it %s", a.Status.State, o.ID, st)
	}
	if p2, resp := capPreview1(s, r, o.ID); p2 == nil || p2.NetPayout != paid || p2.GrossInterest != p1.GrossInterest {
		return fmt.Errorf("order %s: preview after its withdrawal of %d answered %s", o.ID, paid, resp)
	}
	return nil
}

// capHoldings are the capital accounts of product id's approved orders,
// as their events last showed them.
func capHoldings(s *Sim, id string) []capAcctView {
	st := capSt(s)
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []capAcctView
	for _, o := range st.orders {
		if o.Product == id && o.Account != "" {
			if a := st.accounts[o.Account]; a != nil {
				out = append(out, a.capAcctView)
			}
		}
	}
	return out
}

func capitalAllot(s *Sim, r *rand.Rand) error {
	p := capPickProduct(s, r, func(p *capProduct) bool { return p.Type == "SHARE_OFFERING" && !p.Allotted })
	if p == nil {
		return nil
	}
	var asked int64
	locked := map[string]bool{}
	for _, h := range capHoldings(s, p.ID) {
		if h.Status.State == "LOCKED" {
			asked += h.SharesPurchased
			locked[h.ID] = true
		}
	}
	n := r.Int64N(p.Inventory + 1)
	if r.IntN(4) != 0 {
		n = asked - r.Int64N(asked/2+1) // fewer than asked: a pro-rata split
	}
	over := r.IntN(15) == 0
	if over {
		n = p.Inventory + 1 + r.Int64N(10)
	}
	resp := s.Do(r, Req{Method: http.MethodPost, Path: "/sandbox/products/" + p.ID + "/allotment", Body: map[string]any{"allotted_shares": n}})
	if over {
		if resp.OK() {
			return fmt.Errorf("allotment of %d shares of an inventory of %d answered %s", n, p.Inventory, resp)
		}
		return nil
	}
	if !resp.OK() {
		return nil
	}
	st := capSt(s)
	s.mu.Lock()
	if q := st.product[p.ID]; q != nil {
		q.Allotted = true
	}
	s.mu.Unlock()
	// The allotment is read back from the holdings' orders.
	var got int64
	for _, h := range capHoldings(s, p.ID) {
		if !locked[h.ID] {
			continue
		}
		g, gr := capGetOrder(s, r, h.OrderID)
		if g == nil || g.CapitalAccount == nil {
			return fmt.Errorf("holding %s's order %s reads %s", h.ID, h.OrderID, gr)
		}
		a := *g.CapitalAccount
		if err := capShareIdentity(a); err != nil {
			return err
		}
		if a.Status.State != "ALLOTMENT_ADJUSTED" && a.Status.State != "ALLOTMENT_CONFIRMED" {
			return fmt.Errorf("holding %s is %s after the allotment", a.ID, a.Status.State)
		}
		got += a.AllocatedShares
	}
	s.Count("capital.allotted")
	if want := min(n, asked); got != want {
		return fmt.Errorf("allotment of %d shares of offering %s to %d asked gave %d", n, p.ID, asked, got)
	}
	return nil
}

func capitalOfferingMove(s *Sim, r *rand.Rand) error {
	p := capPickProduct(s, r, func(p *capProduct) bool { return p.Type == "SHARE_OFFERING" || r.IntN(10) == 0 })
	if p == nil {
		return nil
	}
	if r.IntN(2) == 0 {
		price := 1 + r.Int64N(10_000)
		resp := s.Do(r, Req{Method: http.MethodPost, Path: "/sandbox/products/" + p.ID + "/price", Body: map[string]any{"price": price}})
		if p.Type == "FIXED_RETURN" && resp.OK() {
			return fmt.Errorf("a price of deposit %s answered %s", p.ID, resp)
		}
		if !resp.OK() || p.Type == "FIXED_RETURN" {
			return nil
		}
		// One holding, sampled: its market value is shares x price.
		if hs := capHoldings(s, p.ID); len(hs) > 0 {
			h := hs[0]
			g, gr := capGetOrder(s, r, h.OrderID)
			if g == nil || g.CapitalAccount == nil {
				return fmt.Errorf("holding %s's order reads %s", h.ID, gr)
			}
			mv := g.CapitalAccount.MarketValue
			if mv == nil || *mv != price*g.CapitalAccount.AllocatedShares {
				return fmt.Errorf("holding %s: market value %v after a price of %d for %d shares", h.ID, mv, price, g.CapitalAccount.AllocatedShares)
			}
		}
		return nil
	}
	resp := s.Do(r, Req{Method: http.MethodPost, Path: "/sandbox/products/" + p.ID + "/unlock", Body: map[string]any{}})
	if p.Type == "FIXED_RETURN" && resp.OK() {
		return fmt.Errorf("unlock of deposit %s answered %s", p.ID, resp)
	}
	if !resp.OK() || p.Type == "FIXED_RETURN" {
		return nil
	}
	for _, h := range capHoldings(s, p.ID) {
		g, gr := capGetOrder(s, r, h.OrderID)
		if g == nil || g.CapitalAccount == nil {
			return fmt.Errorf("holding %s's order reads %s", h.ID, gr)
		}
		if st := g.CapitalAccount.Status; st.State != "TRANSFERABLE" || st.RefundStatus != nil && *st.RefundStatus == "pending" {
			return fmt.Errorf("holding %s is %s (refund %v) after the unlock", h.ID, st.State, st.RefundStatus)
		}
	}
	return nil
}

func capitalDeactivate(s *Sim, r *rand.Rand) error {
	if r.IntN(3) != 0 {
		return nil // rare: it ends a product's sales
	}
	p := capPickProduct(s, r, func(p *capProduct) bool { return !p.Inactive })
	if p == nil {
		return nil
	}
	resp := s.Do(r, Req{Method: http.MethodPost, Path: "/sandbox/products/" + p.ID + "/deactivate", Body: map[string]any{}})
	if resp.OK() {
		st := capSt(s)
		s.mu.Lock()
		st.product[p.ID].Inactive = true
		s.mu.Unlock()
		s.Gone("/products/" + p.ID)
	}
	return nil
}

// capTransactions reads every capital transaction of order id.
func capTransactions(s *Sim, r *rand.Rand, id string) ([]capTx, error) {
	var out []capTx
	path := "/product-orders/" + id + "/transactions?limit=100"
	for range 20 {
		resp := s.Do(r, Req{Method: http.MethodGet, Path: path})
		if !resp.OK() {
			return nil, fmt.Errorf("transactions of order %s answered %s", id, resp)
		}
		var page struct {
			Data []capTx `json:"data"`
			Meta struct {
				Pagination struct {
					NextCursor string `json:"next_cursor"`
				} `json:"pagination"`
			} `json:"meta"`
		}
		if err := json.Unmarshal(resp.Body, &page); err != nil {
			return nil, fmt.Errorf("transactions of order %s: %v", id, err)
		}
		out = append(out, page.Data...)
		if page.Meta.Pagination.NextCursor == "" {
			return out, nil
		}
		path = "/product-orders/" + id + "/transactions?limit=100&cursor=" + page.Meta.Pagination.NextCursor
	}
	return nil, fmt.Errorf("transactions of order %s: too many pages", id)
}

// capFundingTally brings funding account id's tally up to date and
// returns what key moved on it.
func capFundingTally(s *Sim, id string) (map[string]capTally, error) {
	st := capSt(s)
	s.mu.Lock()
	f := st.funding[id]
	if f == nil {
		f = &capFunding{byKey: map[string]capTally{}}
		st.funding[id] = f
	}
	cursor := f.cursor
	s.mu.Unlock()
	led := s.Bank().Ledger
	var last *ledger.HistoryLine
	add := map[string]capTally{}
	err := led.History(s.ctx, id, cursor, func(l ledger.HistoryLine) error {
		last = &l
		if l.Kind != ledger.LineEntry || !strings.HasPrefix(l.Narration, "capital") {
			return nil
		}
		e, err := led.GetEntry(s.ctx, l.TxID)
		if err != nil {
			return err
		}
		t := add[e.Key]
		t.n++
		t.sum += l.SettledDelta
		add[e.Key] = t
		return nil
	})
	if err != nil {
		if errors.Is(err, ledger.ErrAccountNotFound) || s.anyCrashed() {
			return nil, nil
		}
		return nil, fmt.Errorf("history of %s: %w", id, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if f.cursor != cursor {
		return nil, nil // another reader moved it
	}
	if last != nil {
		f.cursor = last
	}
	for k, t := range add {
		c := f.byKey[k]
		c.n += t.n
		c.sum += t.sum
		f.byKey[k] = c
	}
	return capCopy(f.byKey), nil
}

func capCopy(m map[string]capTally) map[string]capTally {
	out := make(map[string]capTally, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// capitalAudit checks a few orders in depth: their capital transactions,
// what their funding account was debited and paid, and that the due work
// moved them on time.
func capitalAudit(s *Sim, r *rand.Rand) error {
	st := capSt(s)
	for range 3 {
		o := capPickOrder(s, r, func(o *capOrder) bool { return o.Status != "" })
		if o == nil {
			return nil
		}
		if err := capAuditOrder(s, r, st, o); err != nil {
			return err
		}
	}
	return nil
}

func capAuditOrder(s *Sim, r *rand.Rand, st *capState, o *capOrder) error {
	s.mu.Lock()
	due := st.dueThrough.UnixMilli()
	var acct capAccount
	if a := st.accounts[o.Account]; a != nil {
		acct = *a
	}
	s.mu.Unlock()
	// The due work moved what fell due.
	switch {
	case o.Status == "RESERVED" && o.Expires < due:
		return fmt.Errorf("order %s still RESERVED after its expiry %d (due work ran through %d)", o.ID, o.Expires, due)
	case (o.Status == "CONFIRMING" || o.Status == "RECOVERY_REQUIRED") && o.SeenConfirming.Add(70*time.Second).UnixMilli() < due:
		return fmt.Errorf("order %s still %s since %s (due work ran through %d): recovery never completed it", o.ID, o.Status, o.SeenConfirming, due)
	}
	if acct.ID != "" {
		switch s := acct.Status; {
		case s.State == "ACTIVE" && acct.MaturityAt < due:
			return fmt.Errorf("deposit %s still ACTIVE after its maturity %d", acct.ID, acct.MaturityAt)
		case s.PayoutStatus != nil && *s.PayoutStatus == "pending" && acct.SettlementAt != nil && *acct.SettlementAt < due:
			return fmt.Errorf("deposit %s payout still pending after %d", acct.ID, *acct.SettlementAt)
		case s.State == "LOCKED" && acct.LockExpiresAt < due:
			return fmt.Errorf("holding %s still LOCKED after its lock %d", acct.ID, acct.LockExpiresAt)
		case s.State == "ALLOTMENT_ADJUSTED" && s.RefundStatus != nil && *s.RefundStatus == "pending" && acct.FirstAdjusted.UnixMilli() < due:
			return fmt.Errorf("holding %s refund still pending", acct.ID)
		}
	}
	if o.Funding == "" {
		return nil
	}
	tally, err := capFundingTally(s, o.Funding)
	if err != nil || tally == nil {
		return err
	}
	debit := tally["capital.order:"+o.ID]
	switch o.Status {
	case "APPROVED", "CONFIRMING", "RECOVERY_REQUIRED":
		if debit.n != 1 || debit.sum != -o.TotalDebit {
			return fmt.Errorf("%s order %s: funding account %s debited %d times for %d, want once for %d", o.Status, o.ID, o.Funding, debit.n, -debit.sum, o.TotalDebit)
		}
	default:
		if debit.n != 0 {
			return fmt.Errorf("%s order %s: funding account %s debited %d times for %d", o.Status, o.ID, o.Funding, debit.n, -debit.sum)
		}
	}
	if o.Status != "APPROVED" {
		return nil
	}
	// Its capital transactions, from the API.
	txs, err := capTransactions(s, r, o.ID)
	if err != nil {
		return err
	}
	g, gr := capGetOrder(s, r, o.ID)
	if g == nil || g.CapitalAccount == nil {
		return fmt.Errorf("approved order %s reads %s", o.ID, gr)
	}
	a := g.CapitalAccount
	var purchases, accrued, payout, accruals int64
	dates := map[string]bool{}
	counts := map[string]int{}
	for _, t := range txs {
		counts[t.EventType]++
		switch t.EventType {
		case "PURCHASE":
			purchases++
			if t.Amount != o.TotalDebit {
				return fmt.Errorf("order %s: PURCHASE of %d, the order debits %d", o.ID, t.Amount, o.TotalDebit)
			}
		case "DAILY_ACCRUAL":
			accruals++
			accrued += t.Amount
			if t.AccrualDate == nil || dates[*t.AccrualDate] {
				return fmt.Errorf("order %s: accrual date %v missing or posted twice", o.ID, t.AccrualDate)
			}
			dates[*t.AccrualDate] = true
		case "PAYOUT":
			payout += t.Amount
		}
	}
	s.Count("capital.audited_" + strings.ToLower(a.Status.State))
	if purchases != 1 {
		return fmt.Errorf("order %s has %d PURCHASE transactions", o.ID, purchases)
	}
	if a.Type == "FIXED_RETURN" {
		if accrued > a.GrossInterest || accruals > int64(a.TenorDays) {
			return fmt.Errorf("order %s: %d accruals posted %d, the tenor's interest is %d over %d days", o.ID, accruals, accrued, a.GrossInterest, a.TenorDays)
		}
		if a.Status.State == "MATURED" && accrued != a.GrossInterest {
			return fmt.Errorf("order %s MATURED with %d of %d interest posted", o.ID, accrued, a.GrossInterest)
		}
		if a.PayoutAmount != nil {
			p, resp := capPreview1(s, r, o.ID)
			if p == nil {
				return fmt.Errorf("preview of withdrawn order %s answered %s", o.ID, resp)
			}
			if p.NetPayout != *a.PayoutAmount || counts["PAYOUT"] != 1 || payout != p.NetPayout || accrued != p.GrossInterest {
				return fmt.Errorf("withdrawn order %s: preview %+v, payout_amount %d, %d PAYOUT of %d, accruals %d", o.ID, *p, *a.PayoutAmount, counts["PAYOUT"], payout, accrued)
			}
		}
		pay := tally["capital.payout:"+a.ID]
		if a.Status.State == "CLOSED" {
			if pay.n != 1 || a.PayoutAmount == nil || pay.sum != *a.PayoutAmount {
				return fmt.Errorf("closed deposit %s: funding account paid %d times for %d, payout_amount %v", a.ID, pay.n, pay.sum, a.PayoutAmount)
			}
		} else if pay.n != 0 {
			return fmt.Errorf("%s deposit %s: funding account already paid %d", a.Status.State, a.ID, pay.sum)
		}
		return nil
	}
	if err := capShareIdentity(*a); err != nil {
		return err
	}
	if a.TotalDebit != o.TotalDebit {
		return fmt.Errorf("holding %s: total debit %d, its order debited %d", a.ID, a.TotalDebit, o.TotalDebit)
	}
	ref := tally["capital.refund:"+a.ID]
	if rs := a.Status.RefundStatus; rs != nil && *rs == "completed" {
		if ref.n != 1 || ref.sum != a.UnallocatedValue || counts["REFUND"] != 1 {
			return fmt.Errorf("holding %s: refund of %d paid %d times for %d (%d REFUND)", a.ID, a.UnallocatedValue, ref.n, ref.sum, counts["REFUND"])
		}
	} else if ref.n != 0 || counts["REFUND"] != 0 {
		return fmt.Errorf("holding %s refund %v but paid %d times", a.ID, rs, ref.n)
	}
	return nil
}

// capitalConfirmRace confirms the newest reserved order, so that two of
// them in one concurrent step race for it; the audit checks it was debited
// once.
func capitalConfirmRace(s *Sim, r *rand.Rand) error {
	st := capSt(s)
	now := s.Now().UnixMilli()
	s.mu.Lock()
	var o *capOrder
	for i := len(st.orders) - 1; i >= 0 && i >= len(st.orders)-8; i-- {
		if c := st.orders[i]; c.Status == "RESERVED" && c.Expires > now {
			o = c
			break
		}
	}
	var id string
	if o != nil {
		id = o.ID
	}
	s.mu.Unlock()
	if id == "" {
		return nil
	}
	resp := s.Do(r, Req{Method: http.MethodPost, Path: "/product-orders/" + id + "/confirm"})
	if !resp.OK() {
		if resp.Status == http.StatusConflict && resp.Code() == "error_transfer_already_processing" {
			s.Count("capital.confirm_race_409")
		}
		return nil
	}
	var v capOrderView
	if err := resp.Decode(&v); err != nil || v.ID != id || v.Status != "APPROVED" && v.Status != "REJECTED" ||
		v.Status == "APPROVED" && v.CapitalAccount == nil {
		return fmt.Errorf("confirm of order %s answered %s", id, resp)
	}
	return nil
}
