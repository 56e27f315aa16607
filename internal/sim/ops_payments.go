package sim

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"

	"github.com/corebank/corebank/ledger"
)

// The payments domain: counterparties, payment details on the four rails,
// FX quotes, transfers and their simulated outcomes.

// payCP is a counterparty the simulator made.
type payCP struct {
	ID       string
	Entity   string
	Inactive bool // a deactivation was acknowledged: it can never receive again
	// Deactivating: a deactivation was sent, and may have committed before
	// its answer (or without one): a refusal for inactivity is no bug.
	Deactivating bool
}

// payDetail is a payment detail the simulator made.
type payDetail struct {
	ID       string
	Entity   string
	CP       *payCP
	Method   string
	Currency string
	Receiver string // book-transfer: the account its service_ban names
}

// payQuote is an FX quote the simulator was answered.
type payQuote struct {
	ID         string
	Entity     string
	From, To   string
	AmountFrom int64
	AmountTo   int64
	ExpiresAt  int64 // ms
}

// payTransfer is a transfer the simulator was answered (201), as it was
// created.
type payTransfer struct {
	ID       string
	Account  string
	Entity   string
	Ref      string
	Type     string
	Amount   int64
	Fee      int64
	Currency string
	Status   string // the latest status seen (answers or events)
}

// payEvTransfer is a transfer's story as the outbox tells it.
type payEvTransfer struct {
	Amount, Fee      int64
	Currency         string
	Account, Ref     string
	Type, Detail     string
	Quote            string
	Created          int64
	Completed        int // outflows.completed events
	Failed           int // outflows.failed events
	Refunded         int // outflows.refunded events
	BookInflows      int // inflows.completed events of a book transfer's credit
	BookInflowAmount int64
}

type payState struct {
	cps       []*payCP
	details   []*payDetail
	detailsBy map[string]*payDetail
	quotes    []*payQuote
	quoteBy   map[string]*payQuote
	transfers []*payTransfer
	open      []*payTransfer // not known to be final, for simulate
	byID      map[string]*payTransfer
	// From events.
	ev        map[string]*payEvTransfer
	quoteUsed map[string]string // quote -> the transfer that used it
	// early holds book inflows read before their transfer's creation: two
	// banks' events of one millisecond sort either way (ledger.Event), so
	// a settlement on one bank may sort before the creation on the other.
	// The creation must come in the same read (paymentsEarly).
	early map[string][]bookInflow
}

// bookInflow is what a book transfer's credit to its receiver says.
type bookInflow struct {
	AccountID string `json:"account_id"`
	Amount    int64  `json:"amount"`
	Currency  string `json:"currency"`
	Reference string `json:"reference"`
	Source    string `json:"source"`
}

func paymentsState(s *Sim) *payState {
	return State(s, "payments", func() *payState {
		return &payState{detailsBy: map[string]*payDetail{}, quoteBy: map[string]*payQuote{},
			byID: map[string]*payTransfer{}, ev: map[string]*payEvTransfer{}, quoteUsed: map[string]string{},
			early: map[string][]bookInflow{}}
	})
}

// paymentsLock runs fn on the domain state under the world's lock.
func paymentsLock(s *Sim, fn func(st *payState)) {
	st := paymentsState(s)
	s.mu.Lock()
	defer s.mu.Unlock()
	fn(st)
}

// paymentsTransferMachine is SPEC's transfer status machine (SPEC
// "Transfer", with the lifecycle payments/doc.go draws): processing is
// optional and emits no event; successful may later be reversed.
var paymentsTransferMachine = Machine{
	Initial: []string{"pending"},
	Edges: map[string][]string{
		"pending":    {"processing", "successful", "failed"},
		"processing": {"successful", "failed"},
		"successful": {"reversed"},
	},
}

// paymentsTerminal reports a status from which no simulated outcome may
// succeed.
func paymentsFinal(status, typ string) bool {
	return status == "failed" || status == "reversed" || status == "successful" && typ == "book-transfer"
}

var paymentsRank = map[string]int{"pending": 0, "processing": 1, "successful": 2, "failed": 2, "reversed": 3}

// paymentsSeen records a status answered for t by a request sent when t
// was known to be known: the answer must not go back from that. In a
// concurrent step another request's answer may have moved t on since
// this one was sent, and this one's read may come before that change: so
// only an answer older than what was known when it was sent is an error,
// and t only moves forward.
func paymentsSeen(s *Sim, t *payTransfer, known, status string) error {
	var err error
	paymentsLock(s, func(*payState) {
		switch {
		case paymentsBack(known, status):
			err = fmt.Errorf("transfer %s was %s and is now answered %s", t.ID, known, status)
		case !paymentsBack(t.Status, status):
			t.Status = status
		}
	})
	return err
}

// paymentsBack reports whether status goes back from prev.
func paymentsBack(prev, status string) bool {
	switch {
	case prev == status:
		return false
	case paymentsRank[status] < paymentsRank[prev],
		prev == "failed" || prev == "reversed",
		prev == "successful" && status != "reversed":
		return true
	}
	return false
}

// paymentsKnown is t's status as the simulator knows it now.
func paymentsKnown(s *Sim, t *payTransfer) (known string) {
	paymentsLock(s, func(*payState) { known = t.Status })
	return known
}

// transferView is the part of a transfer the checks read.
type transferView struct {
	ID              string `json:"id"`
	AccountID       string `json:"account_id"`
	EntityID        string `json:"entity_id"`
	PaymentDetailID string `json:"payment_detail_id"`
	Currency        string `json:"currency"`
	Amount          int64  `json:"amount"`
	ApplicableFee   int64  `json:"applicable_fee"`
	Status          string `json:"status"`
	StatusReason    string `json:"status_reason"`
	PaymentType     string `json:"payment_type"`
	UniqueReference string `json:"unique_reference"`
	FXQuoteID       string `json:"fx_quote_id"`
	SourceCurrency  string `json:"source_currency"`
	SourceAmount    int64  `json:"source_amount"`
	Created         int64  `json:"created"`
}

// sameMoney reports how v differs from the transfer as created, "" when
// it does not.
func (t *payTransfer) differs(v transferView) string {
	if v.Amount != t.Amount || v.ApplicableFee != t.Fee || v.Currency != t.Currency || v.AccountID != t.Account ||
		v.UniqueReference != t.Ref || v.PaymentType != t.Type {
		return fmt.Sprintf("amount %d fee %d %s account %s ref %q %s, created as amount %d fee %d %s account %s ref %q %s",
			v.Amount, v.ApplicableFee, v.Currency, v.AccountID, v.UniqueReference, v.PaymentType,
			t.Amount, t.Fee, t.Currency, t.Account, t.Ref, t.Type)
	}
	return ""
}

// Rail fixtures that validate.
const (
	payIBANDE = "DE36379068449631930531"
	payEVM    = "0x82602E46E21b946EC7de2E9021B25BF0AFD7eCc1"
	paySolana = "HyqRNhr8fNDxaUR3oou8E43E8zXCWggnABii3ihYUFFe"
)

// paymentsDetailBody makes a payment detail of cp for method, or nil when
// it has nothing to aim at (a book transfer without a receiving account).
func paymentsDetailBody(s *Sim, r *rand.Rand, cp *payCP, method string) (body map[string]any, currency, receiver string) {
	body = map[string]any{"counterparty_id": cp.ID, "payment_method": method, "account_holder_name": "Ada Lovelace"}
	switch method {
	case "bank-transfer":
		switch Choose(r, "USD", "GBP", "EUR", "NGN", "KES", "swift") {
		case "USD":
			currency = "USD"
			body["country"], body["scheme"], body["routing_number"], body["account_number"], body["account_type"] =
				"US", Choose(r, "ach", "wire", "rtp"), "091000019", "123456789", Choose(r, "checking", "savings")
		case "GBP":
			currency = "GBP"
			body["country"], body["scheme"], body["sort_code"], body["account_number"] = "GB", Choose(r, "fps", "chaps"), "040099", "12345678"
		case "EUR":
			currency = "EUR"
			body["country"], body["iban"] = "DE", payIBANDE
		case "NGN":
			currency = "NGN"
			body["country"], body["account_number"], body["bank_name"] = "NG", "0123456789", "GTBank"
		case "KES":
			currency = "KES"
			body["country"], body["account_number"], body["bank_name"] = "KE", "1234567890", "Equity"
		default:
			currency = Choose(r, "USD", "ZAR")
			body["country"], body["scheme"], body["swift_code"], body["account_number"] = "NG", "swift", "GTBINGLAXXX", "0123456789"
		}
	case "momo-transfer":
		switch r.IntN(3) {
		case 0:
			currency = "KES"
			body["country"], body["scheme"], body["phone_number"] = "KE", Choose(r, "mpesa", "airtel"), "+254712345678"
		case 1:
			currency = "NGN"
			body["country"], body["scheme"], body["phone_number"] = "NG", Choose(r, "mtn", "airtel"), "+2348012345678"
		default: // a payout-only currency: only through a quote
			currency = "UGX"
			body["country"], body["scheme"], body["phone_number"] = "UG", "mtn", "+256712345678"
		}
	case "stablecoin-transfer":
		currency = Choose(r, "USC", "UST")
		if r.IntN(2) == 0 {
			body["blockchain_network"], body["wallet_address"] = Choose(r, "ETH_MAINNET", "BASE_MAINNET", "POLYGON_MAINNET"), payEVM
		} else {
			body["blockchain_network"], body["wallet_address"] = "SOLANA_MAINNET", paySolana
		}
	case "book-transfer":
		a := s.PickAccount(r, nil)
		if a == nil {
			return nil, "", ""
		}
		resp := s.Do(r, Req{Method: http.MethodGet, Path: "/accounts/" + a.ID})
		var v struct {
			ServiceBAN string `json:"service_ban"`
			Currency   string `json:"currency"`
		}
		if !resp.OK() || resp.Decode(&v) != nil || v.ServiceBAN == "" {
			return nil, "", ""
		}
		currency, receiver = v.Currency, a.ID
		body["account_number"] = v.ServiceBAN
	}
	body["currency"] = currency
	return body, currency, receiver
}

func init() {
	registerMachine("outflows", paymentsTransferMachine)
	registerEventHook(paymentsOnEvent)
	registerCheck(paymentsEarly)
	register(
		Op{Name: "payments.counterparty.create", Weight: 3, Concurrent: true, Run: func(s *Sim, r *rand.Rand) error {
			e := s.PickEntity(r, nil)
			if e == nil {
				return nil
			}
			n := fmt.Sprintf("%d%x", s.step, r.Uint32())
			body := map[string]any{"type": "individual", "profile": map[string]any{
				"first_name": "Grace", "last_name": "Hopper" + n, "relationship": Choose(r, "vendor", "supplier", "customer", "employee"),
				"email":   "grace." + n + "@example.com",
				"address": map[string]any{"line1": "1 Main St", "city": "London", "country": "GB"}}}
			if r.IntN(3) == 0 {
				body = map[string]any{"type": "business", "nickname": "Acme " + n, "meta": map[string]any{"k": "v"},
					"profile": map[string]any{"legal_name": "Acme " + n + " Inc", "relationship": "supplier", "email": "ap." + n + "@acme.example",
						"registered_address": map[string]any{"line1": "1 Market St", "city": "SF", "country": "US"},
						"identification":     []any{map[string]any{"type": "L", "number": "C123", "issuing_country": "US"}},
						"phone":              map[string]any{"number": "+14155550100", "type": "work", "country": "US"}}}
			}
			if e.ID != s.RootID() || r.IntN(2) == 0 {
				body["entity_id"] = e.ID
			}
			resp := s.Do(r, Req{Method: http.MethodPost, Path: "/counterparties", Body: body, Key: keyOf(s, r, e)})
			if !resp.OK() {
				return nil
			}
			var v struct {
				ID       string `json:"id"`
				EntityID string `json:"entity_id"`
				Status   string `json:"status"`
			}
			if err := resp.Decode(&v); err != nil || v.ID == "" {
				return fmt.Errorf("create counterparty answered %s", resp)
			}
			if v.EntityID != e.ID || v.Status != "active" {
				return fmt.Errorf("counterparty created for %s answered entity %s status %q", e.ID, v.EntityID, v.Status)
			}
			paymentsLock(s, func(st *payState) { st.cps = append(st.cps, &payCP{ID: v.ID, Entity: e.ID}) })
			s.Acked("/counterparties/" + v.ID)
			return nil
		}},
		Op{Name: "payments.counterparty.patch", Weight: 1, Concurrent: true, Run: func(s *Sim, r *rand.Rand) error {
			var cp *payCP
			paymentsLock(s, func(st *payState) { cp = Pick(r, st.cps) })
			if cp == nil {
				return nil
			}
			body := map[string]any{"nickname": fmt.Sprintf("nick %d", r.IntN(1000))}
			if r.IntN(2) == 0 {
				body["meta"] = map[string]any{"n": fmt.Sprint(r.IntN(10))}
			}
			resp := s.Do(r, Req{Method: http.MethodPatch, Path: "/counterparties/" + cp.ID, Body: body})
			var v struct {
				Status string `json:"status"`
			}
			if resp.OK() && resp.Decode(&v) == nil {
				inactive := false
				paymentsLock(s, func(*payState) { inactive = cp.Inactive })
				if inactive && v.Status != "inactive" {
					return fmt.Errorf("counterparty %s was deactivated, a patch answered status %q", cp.ID, v.Status)
				}
			}
			return nil
		}},
		Op{Name: "payments.counterparty.deactivate", Weight: 1, Concurrent: true, Run: func(s *Sim, r *rand.Rand) error {
			var cp *payCP
			paymentsLock(s, func(st *payState) { cp = Pick(r, st.cps) })
			if cp == nil {
				return nil
			}
			paymentsLock(s, func(*payState) { cp.Deactivating = true })
			resp := s.Do(r, Req{Method: http.MethodPost, Path: "/counterparties/" + cp.ID + "/deactivate"})
			if !resp.OK() {
				return nil
			}
			var v struct {
				Status string `json:"status"`
			}
			if err := resp.Decode(&v); err != nil || v.Status != "inactive" {
				return fmt.Errorf("deactivate counterparty %s answered %s", cp.ID, resp)
			}
			paymentsLock(s, func(*payState) { cp.Inactive = true })
			return nil
		}},
		Op{Name: "payments.detail.create", Weight: 4, Concurrent: true, Run: func(s *Sim, r *rand.Rand) error {
			var cp *payCP
			paymentsLock(s, func(st *payState) {
				cp = pickWhere(r, st.cps, func(c *payCP) bool { return !c.Inactive || r.IntN(8) == 0 })
			})
			if cp == nil {
				return nil
			}
			method := Choose(r, "bank-transfer", "bank-transfer", "momo-transfer", "stablecoin-transfer", "book-transfer", "book-transfer")
			body, currency, receiver := paymentsDetailBody(s, r, cp, method)
			if body == nil {
				return nil
			}
			var inactive bool
			paymentsLock(s, func(*payState) { inactive = cp.Inactive })
			resp := s.Do(r, Req{Method: http.MethodPost, Path: "/payment-details", Body: body})
			if !resp.OK() {
				// A deactivation in the same concurrent step may come first.
				paymentsLock(s, func(*payState) { inactive = inactive || cp.Inactive || cp.Deactivating })
				if resp.Status == http.StatusUnprocessableEntity && method != "book-transfer" && !inactive {
					// Every other body is valid by SPEC's rules.
					return fmt.Errorf("a valid %s payment detail was refused: %s (body %v)", method, resp, body)
				}
				return nil
			}
			var v struct {
				ID            string `json:"id"`
				PaymentMethod string `json:"payment_method"`
				Currency      string `json:"currency"`
				EntityID      string `json:"entity_id"`
			}
			if err := resp.Decode(&v); err != nil || v.ID == "" {
				return fmt.Errorf("create payment detail answered %s", resp)
			}
			if v.PaymentMethod != method || v.Currency != currency || v.EntityID != cp.Entity {
				return fmt.Errorf("payment detail created as %s %s of %s answered %s", method, currency, cp.Entity, resp)
			}
			d := &payDetail{ID: v.ID, Entity: cp.Entity, CP: cp, Method: method, Currency: currency, Receiver: receiver}
			paymentsLock(s, func(st *payState) {
				st.details = append(st.details, d)
				st.detailsBy[d.ID] = d
			})
			s.Acked("/payment-details/" + v.ID)
			return nil
		}},
		Op{Name: "payments.detail.patch", Weight: 1, Concurrent: true, Run: func(s *Sim, r *rand.Rand) error {
			var d *payDetail
			paymentsLock(s, func(st *payState) { d = Pick(r, st.details) })
			if d == nil {
				return nil
			}
			resp := s.Do(r, Req{Method: http.MethodPatch, Path: "/payment-details/" + d.ID,
				Body: map[string]any{"account_holder_name": fmt.Sprintf("Holder %d", r.IntN(100))}})
			var v struct {
				PaymentMethod string `json:"payment_method"`
				Currency      string `json:"currency"`
			}
			if resp.OK() && (resp.Decode(&v) != nil || v.PaymentMethod != d.Method || v.Currency != d.Currency) {
				return fmt.Errorf("patch of payment detail %s (%s %s) answered %s", d.ID, d.Method, d.Currency, resp)
			}
			return nil
		}},
		Op{Name: "payments.stablecoin_account", Weight: 1, Concurrent: true, Run: func(s *Sim, r *rand.Rand) error {
			// Stablecoin transfers debit stablecoin accounts, which the core
			// does not open.
			cur := Choose(r, "USC", "UST")
			_, err := openAccount(s, r, cur, "checking", cur+" wallet", true)
			return err
		}},
		Op{Name: "payments.quote", Weight: 3, Concurrent: true, Run: func(s *Sim, r *rand.Rand) error {
			a := s.PickAccount(r, nil)
			if a == nil {
				return nil
			}
			to := Choose(r, "USD", "EUR", "GBP", "NGN", "KES", "USC", "UGX", "GHS")
			if to == a.Currency {
				return nil
			}
			_, err := paymentsQuote(s, r, a, to, 1_000+r.Int64N(500_000), r.IntN(2) == 0)
			return err
		}},
		Op{Name: "payments.transfer", Weight: 10, Concurrent: true, Run: paymentsTransfer},
		Op{Name: "payments.transfer.duplicate", Weight: 2, Concurrent: true, Run: paymentsDuplicate},
		Op{Name: "payments.simulate", Weight: 6, Concurrent: true, Run: paymentsSimulate},
		Op{Name: "payments.transfer.get", Weight: 2, Concurrent: true, Run: func(s *Sim, r *rand.Rand) error {
			var t *payTransfer
			paymentsLock(s, func(st *payState) { t = Pick(r, st.transfers) })
			if t == nil {
				return nil
			}
			known := paymentsKnown(s, t)
			resp := s.Do(r, Req{Method: http.MethodGet, Path: "/transfers/" + t.ID})
			if resp.Status == http.StatusNotFound {
				return fmt.Errorf("acknowledged transfer %s is not found: %s", t.ID, resp)
			}
			var v transferView
			if !resp.OK() {
				return nil
			}
			if err := resp.Decode(&v); err != nil {
				return fmt.Errorf("get transfer %s answered %s", t.ID, resp)
			}
			if d := t.differs(v); d != "" {
				return fmt.Errorf("transfer %s changed: %s", t.ID, d)
			}
			return paymentsSeen(s, t, known, v.Status)
		}},
	)
}

// paymentsQuote asks for a quote from a's currency to to, of amountTo (or
// of amount_from when byFrom), for the account (corridor) or indicative.
// It returns nil when refused.
func paymentsQuote(s *Sim, r *rand.Rand, a *Account, to string, amount int64, byFrom bool) (*payQuote, error) {
	body := map[string]any{"from_currency": a.Currency, "to_currency": to}
	if byFrom {
		body["amount_from"] = amount
	} else {
		body["amount_to"] = amount
	}
	if r.IntN(3) > 0 {
		body["account_id"] = a.ID
	} else if a.Entity != s.RootID() {
		body["entity_id"] = a.Entity
	}
	resp := s.Do(r, Req{Method: http.MethodPost, Path: "/fx-quotes", Body: body})
	if resp.Status == http.StatusServiceUnavailable {
		s.Count("payments.quote_fx_down")
		return nil, nil
	}
	if !resp.OK() {
		return nil, nil
	}
	var v struct {
		ID         string `json:"id"`
		EntityID   string `json:"entity_id"`
		From       string `json:"from"`
		To         string `json:"to"`
		AmountFrom int64  `json:"amount_from"`
		AmountTo   int64  `json:"amount_to"`
		Quote      struct {
			Status    string `json:"status"`
			ExpiresAt int64  `json:"expires_at"`
			ValidFor  int64  `json:"valid_for"`
		} `json:"quote"`
	}
	if err := resp.Decode(&v); err != nil || v.ID == "" {
		return nil, fmt.Errorf("create quote answered %s", resp)
	}
	now := s.Now().UnixMilli()
	switch {
	case v.From != a.Currency || v.To != to || v.EntityID != a.Entity:
		return nil, fmt.Errorf("quote %s->%s for %s answered %s", a.Currency, to, a.Entity, resp)
	case v.Quote.Status != "active" || v.Quote.ExpiresAt <= now || v.Quote.ValidFor < 0:
		return nil, fmt.Errorf("new quote is not active: %s", resp)
	case v.AmountFrom < 100 || v.AmountTo <= 0:
		return nil, fmt.Errorf("quote amounts out of bounds: %s", resp)
	case byFrom && v.AmountFrom != amount, !byFrom && v.AmountTo != amount:
		return nil, fmt.Errorf("quote for %d (by amount_from %v) answered %s", amount, byFrom, resp)
	}
	q := &payQuote{ID: v.ID, Entity: v.EntityID, From: v.From, To: v.To, AmountFrom: v.AmountFrom, AmountTo: v.AmountTo, ExpiresAt: v.Quote.ExpiresAt}
	paymentsLock(s, func(st *payState) {
		st.quotes = append(st.quotes, q)
		st.quoteBy[q.ID] = q
	})
	s.Acked("/fx-quotes/" + q.ID)
	return q, nil
}

// paymentsTransfer sends a transfer from a (sometimes freshly funded)
// account of a payment detail's owner: in the detail's currency, or
// through a quote (a fresh one, or one seen before, maybe used or
// expired), sometimes far beyond the balance.
func paymentsTransfer(s *Sim, r *rand.Rand) error {
	var d *payDetail
	paymentsLock(s, func(st *payState) {
		// Mostly active counterparties; sometimes one deactivated, which
		// must be refused.
		d = pickWhere(r, st.details, func(d *payDetail) bool { return !d.CP.Inactive || r.IntN(10) == 0 })
	})
	if d == nil {
		return nil
	}
	wantStable := d.Method == "stablecoin-transfer"
	a := s.PickAccount(r, func(a Account) bool {
		if a.Entity != d.Entity {
			return false
		}
		c, _ := ledger.CurrencyInfo(a.Currency)
		return (c.Kind == ledger.KindStablecoin) == wantStable && (a.Currency == d.Currency || r.IntN(3) == 0)
	})
	if a == nil {
		return nil
	}
	amount := 100 + r.Int64N(200_000)
	if wantStable {
		amount *= 100
	}
	body := map[string]any{"account_id": a.ID, "payment_detail_id": d.ID, "amount": amount,
		"payment_type": d.Method, "narration": fmt.Sprintf("sim %d", s.step),
		"unique_reference": fmt.Sprintf("ref-%d-%x", s.step, r.Uint32())}
	if r.IntN(2) == 0 {
		body["counterparty_id"] = d.CP.ID
	}
	if r.IntN(3) == 0 {
		body["currency"] = d.Currency
	}
	if a.Entity != s.RootID() || r.IntN(2) == 0 {
		body["entity_id"] = a.Entity
	}
	var quote *payQuote
	if a.Currency != d.Currency {
		if r.IntN(4) == 0 {
			// One seen before: used or expired ones must be refused.
			paymentsLock(s, func(st *payState) {
				quote = pickWhere(r, st.quotes, func(q *payQuote) bool {
					return q.Entity == a.Entity && q.From == a.Currency && q.To == d.Currency
				})
			})
		}
		if quote == nil {
			q, err := paymentsQuote(s, r, a, d.Currency, amount, false)
			if err != nil || q == nil {
				return err
			}
			quote = q
		}
		body["fx_quote_id"] = quote.ID
		body["amount"] = quote.AmountTo
	}
	debit := amount
	if quote != nil {
		debit = quote.AmountFrom
	}
	short := r.IntN(8) == 0
	if short {
		// Insufficient funds: far beyond anything the inflows brought.
		body["amount"] = int64(900_000_000_000) + r.Int64N(1_000)
		delete(body, "fx_quote_id")
		if quote != nil {
			body["fx_quote_id"] = quote.ID // refused either way
		}
	} else if r.IntN(2) == 0 {
		s.Do(r, Req{Method: http.MethodPost, Path: "/sandbox/inflows", Body: map[string]any{"account_id": a.ID, "amount": debit + r.Int64N(debit+1)}})
	}
	var inactive bool
	paymentsLock(s, func(*payState) { inactive = d.CP.Inactive })
	resp := s.Do(r, Req{Method: http.MethodPost, Path: "/transfers", Body: body})
	if !resp.OK() {
		switch {
		case resp.Code() == "insufficient_funds":
			s.Count("payments.insufficient_funds")
		case resp.Status >= 400 && resp.Status < 500:
			s.Count("payments.transfer_refused_" + resp.Code())
		}
		return nil
	}
	var v transferView
	if err := resp.Decode(&v); err != nil || v.ID == "" {
		return fmt.Errorf("create transfer answered %s", resp)
	}
	if short {
		return fmt.Errorf("a transfer of %v from %s was accepted: %s", body["amount"], a.ID, resp)
	}
	if inactive {
		return fmt.Errorf("transfer %s to counterparty %s, deactivated before, was accepted", v.ID, d.CP.ID)
	}
	if v.Status != "pending" || v.StatusReason != "awaiting_processing" || v.Amount != body["amount"].(int64) ||
		v.Currency != d.Currency || v.PaymentType != d.Method || v.AccountID != a.ID || v.UniqueReference != body["unique_reference"] ||
		v.ApplicableFee < 0 || v.PaymentDetailID != d.ID {
		return fmt.Errorf("transfer created from %v answered %s", body, resp)
	}
	if quote != nil && (v.FXQuoteID != quote.ID || v.SourceAmount != quote.AmountFrom || v.SourceCurrency != a.Currency) {
		return fmt.Errorf("transfer through quote %s (%d %s -> %d %s) answered %s", quote.ID, quote.AmountFrom, quote.From, quote.AmountTo, quote.To, resp)
	}
	t := &payTransfer{ID: v.ID, Account: a.ID, Entity: v.EntityID, Ref: v.UniqueReference, Type: v.PaymentType,
		Amount: v.Amount, Fee: v.ApplicableFee, Currency: v.Currency, Status: "pending"}
	paymentsLock(s, func(st *payState) {
		if st.byID[t.ID] != nil {
			return // an idempotent replay
		}
		st.byID[t.ID] = t
		st.transfers = append(st.transfers, t)
		st.open = append(st.open, t)
	})
	s.Acked("/transfers/" + t.ID)
	s.Count("payments.created_" + t.Type)
	if quote != nil {
		s.Count("payments.created_fx")
	}
	return nil
}

// paymentsDuplicate sends a transfer again with an answered transfer's
// unique_reference on the same account: 409 with the original.
func paymentsDuplicate(s *Sim, r *rand.Rand) error {
	var t *payTransfer
	var d *payDetail
	paymentsLock(s, func(st *payState) {
		t = Pick(r, st.transfers)
		d = Pick(r, st.details)
	})
	if t == nil || d == nil {
		return nil
	}
	// Whatever else the body says, the reference decides.
	body := map[string]any{"account_id": t.Account, "payment_detail_id": d.ID, "amount": 1 + r.Int64N(1000),
		"payment_type": d.Method, "narration": "duplicate", "unique_reference": t.Ref}
	if r.IntN(2) == 0 {
		body["payment_detail_id"], body["payment_type"], body["amount"] = "nope", t.Type, t.Amount
	}
	known := paymentsKnown(s, t)
	resp := s.Do(r, Req{Method: http.MethodPost, Path: "/transfers", Body: body, NoIdem: true})
	if resp.OK() {
		return fmt.Errorf("transfer with the used unique_reference %q of account %s (transfer %s) was accepted: %s", t.Ref, t.Account, t.ID, resp)
	}
	if resp.Status != http.StatusConflict {
		return nil // the account is gone, the entity suspended...
	}
	var env struct {
		Code string       `json:"code"`
		Data transferView `json:"data"`
	}
	if err := json.Unmarshal(resp.Body, &env); err != nil || env.Code != "duplicate_reference" || env.Data.ID != t.ID {
		return fmt.Errorf("duplicate reference %q of transfer %s answered %s", t.Ref, t.ID, resp)
	}
	if diff := t.differs(env.Data); diff != "" {
		return fmt.Errorf("duplicate of transfer %s returned it changed: %s", t.ID, diff)
	}
	s.Count("payments.duplicate_refused")
	return paymentsSeen(s, t, known, env.Data.Status)
}

// paymentsSimulate applies an outcome to a transfer not known final. A
// final transfer must refuse every outcome.
func paymentsSimulate(s *Sim, r *rand.Rand) error {
	var t *payTransfer
	var status string
	paymentsLock(s, func(st *payState) {
		for range 4 {
			if len(st.open) == 0 {
				return
			}
			i := r.IntN(len(st.open))
			if r.IntN(2) == 0 {
				// The newest: the sandbox rail settles a transfer 5 s
				// after creation, so outcomes other than reversed need
				// young ones.
				i = len(st.open) - 1 - r.IntN(min(3, len(st.open)))
			}
			c := st.open[i]
			if paymentsFinal(c.Status, c.Type) && r.IntN(4) > 0 {
				st.open[i] = st.open[len(st.open)-1]
				st.open = st.open[:len(st.open)-1]
				continue
			}
			t, status = c, c.Status
			return
		}
	})
	if t == nil {
		return nil
	}
	outcome := Choose(r, "processing", "successful", "successful", "failed", "reversed")
	if status == "successful" && r.IntN(2) == 0 {
		outcome = "reversed"
	}
	body := map[string]any{"outcome": outcome}
	if outcome == "failed" && r.IntN(2) == 0 {
		body["status_reason"] = Choose(r, "compliance_hold", "invalid_account_details", "insufficient_funds")
	}
	resp := s.Do(r, Req{Method: http.MethodPost, Path: "/sandbox/transfers/" + t.ID + "/simulate", Body: body})
	if !resp.OK() {
		return nil
	}
	var v transferView
	if err := resp.Decode(&v); err != nil || v.ID != t.ID {
		return fmt.Errorf("simulate %s of %s answered %s", outcome, t.ID, resp)
	}
	s.Count("payments.simulated_" + outcome)
	if paymentsFinal(status, t.Type) || status == "successful" && outcome != "reversed" {
		return fmt.Errorf("transfer %s was %s, and simulating %s answered %s", t.ID, status, outcome, resp)
	}
	if v.Status != outcome {
		return fmt.Errorf("simulate %s of %s answered status %q", outcome, t.ID, v.Status)
	}
	if diff := t.differs(v); diff != "" {
		return fmt.Errorf("transfer %s changed when simulated %s: %s", t.ID, outcome, diff)
	}
	return paymentsSeen(s, t, status, v.Status)
}

// paymentsOnEvent follows transfers through the outbox: amount and fee
// never change; each ends at most once (completed or failed, then at most
// one refund); a quote serves one transfer, before it expires; a
// successful book transfer credits its receiving account exactly once, a
// failed one never.
func paymentsOnEvent(s *Sim, ev ledger.Event) error {
	switch ev.Type {
	case "outflows.created", "outflows.completed", "outflows.failed", "outflows.refunded":
	case "inflows.completed":
		return paymentsBookInflow(s, ev)
	default:
		return nil
	}
	var v transferView
	if err := json.Unmarshal(ev.Object, &v); err != nil || v.ID == "" {
		return fmt.Errorf("transfer event object %s", ev.Object)
	}
	var err error
	paymentsLock(s, func(st *payState) {
		e := st.ev[v.ID]
		if ev.Type == "outflows.created" {
			if e != nil {
				err = fmt.Errorf("transfer %s created twice", v.ID)
				return
			}
			e = &payEvTransfer{Amount: v.Amount, Fee: v.ApplicableFee, Currency: v.Currency, Account: v.AccountID,
				Ref: v.UniqueReference, Type: v.PaymentType, Detail: v.PaymentDetailID, Quote: v.FXQuoteID, Created: v.Created}
			st.ev[v.ID] = e
			for _, in := range st.early[v.ID] {
				if err = applyBookInflow(st, in); err != nil {
					return
				}
			}
			delete(st.early, v.ID)
			if v.Status != "pending" {
				err = fmt.Errorf("transfer %s created %s", v.ID, v.Status)
				return
			}
			if v.FXQuoteID != "" {
				if prev, ok := st.quoteUsed[v.FXQuoteID]; ok {
					err = fmt.Errorf("quote %s used by transfer %s and again by %s", v.FXQuoteID, prev, v.ID)
					return
				}
				st.quoteUsed[v.FXQuoteID] = v.ID
				if q := st.quoteBy[v.FXQuoteID]; q != nil {
					switch {
					case v.Created >= q.ExpiresAt:
						err = fmt.Errorf("quote %s expired at %d, used by transfer %s created at %d", q.ID, q.ExpiresAt, v.ID, v.Created)
					case v.Amount != q.AmountTo || v.Currency != q.To || v.SourceAmount != q.AmountFrom || v.SourceCurrency != q.From:
						err = fmt.Errorf("transfer %s (%d %s from %d %s) does not match its quote %s (%d %s -> %d %s)",
							v.ID, v.Amount, v.Currency, v.SourceAmount, v.SourceCurrency, q.ID, q.AmountFrom, q.From, q.AmountTo, q.To)
					}
				}
			}
			return
		}
		if e == nil {
			err = fmt.Errorf("%s for transfer %s, never created", ev.Type, v.ID)
			return
		}
		if v.Amount != e.Amount || v.ApplicableFee != e.Fee || v.Currency != e.Currency || v.AccountID != e.Account ||
			v.UniqueReference != e.Ref || v.PaymentType != e.Type || v.FXQuoteID != e.Quote || v.Created != e.Created {
			err = fmt.Errorf("transfer %s changed: %s says amount %d fee %d %s, created amount %d fee %d %s",
				v.ID, ev.Type, v.Amount, v.ApplicableFee, v.Currency, e.Amount, e.Fee, e.Currency)
			return
		}
		switch ev.Type {
		case "outflows.completed":
			e.Completed++
			if e.Type == "book-transfer" {
				d := st.detailsBy[e.Detail]
				if e.BookInflows != 1 || e.BookInflowAmount != e.Amount {
					err = fmt.Errorf("book transfer %s of %d succeeded with %d credits (%d) to its receiver", v.ID, e.Amount, e.BookInflows, e.BookInflowAmount)
				} else if d != nil && d.Receiver == "" {
					err = fmt.Errorf("book transfer %s through a detail with no receiver", v.ID)
				}
			}
		case "outflows.failed":
			e.Failed++
			if e.BookInflows != 0 {
				err = fmt.Errorf("book transfer %s failed after crediting its receiver", v.ID)
			}
		case "outflows.refunded":
			e.Refunded++
			if e.Completed != 1 {
				err = fmt.Errorf("transfer %s refunded after %d completions", v.ID, e.Completed)
			}
			if e.Type == "book-transfer" {
				err = fmt.Errorf("book transfer %s reversed", v.ID)
			}
		}
		if err == nil && (e.Completed+e.Failed > 1 || e.Refunded > 1) {
			err = fmt.Errorf("transfer %s ended more than once: %d completed, %d failed, %d refunded", v.ID, e.Completed, e.Failed, e.Refunded)
		}
		if t := st.byID[v.ID]; t != nil && err == nil && paymentsRank[v.Status] >= paymentsRank[t.Status] {
			t.Status = v.Status
		}
	})
	return err
}

// paymentsBookInflow counts a book transfer's credit to its receiver.
func paymentsBookInflow(s *Sim, ev ledger.Event) error {
	var in bookInflow
	if err := json.Unmarshal(ev.Object, &in); err != nil {
		return fmt.Errorf("inflow event object %s", ev.Object)
	}
	if in.Source != "book-transfer" {
		return nil
	}
	var err error
	paymentsLock(s, func(st *payState) {
		if st.ev[in.Reference] == nil {
			st.early[in.Reference] = append(st.early[in.Reference], in)
			return
		}
		err = applyBookInflow(st, in)
	})
	if err == nil {
		s.Count("payments.book_credited")
	}
	return err
}

// applyBookInflow checks a book inflow against its transfer's events.
func applyBookInflow(st *payState, in bookInflow) error {
	e := st.ev[in.Reference]
	switch {
	case e.Type != "book-transfer":
		return fmt.Errorf("book inflow for %s transfer %s", e.Type, in.Reference)
	case e.Completed+e.Failed > 0:
		return fmt.Errorf("book inflow for transfer %s after it ended", in.Reference)
	}
	e.BookInflows++
	e.BookInflowAmount += in.Amount
	switch d := st.detailsBy[e.Detail]; {
	case e.BookInflows > 1:
		return fmt.Errorf("book transfer %s credited its receiver %d times", in.Reference, e.BookInflows)
	case in.Currency != e.Currency || in.Amount != e.Amount:
		return fmt.Errorf("book transfer %s of %d %s credited %d %s", in.Reference, e.Amount, e.Currency, in.Amount, in.Currency)
	case d != nil && d.Receiver != in.AccountID:
		return fmt.Errorf("book transfer %s to %s credited account %s", in.Reference, d.Receiver, in.AccountID)
	}
	return nil
}

// paymentsEarly fails when a book inflow read in the step's events has
// no transfer creation in them.
func paymentsEarly(s *Sim) error {
	var err error
	paymentsLock(s, func(st *payState) {
		for ref, ins := range st.early {
			err = fmt.Errorf("book inflow to %s for transfer %q, never created", ins[0].AccountID, ref)
		}
	})
	return err
}
