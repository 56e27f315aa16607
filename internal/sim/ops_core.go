package sim

import (
	"fmt"
	"math/rand/v2"
	"net/http"
)

// Currencies the simulator opens accounts in.
var fiat = []string{"USD", "EUR", "GBP", "NGN", "KES"}

func individualBody(r *rand.Rand, name, parent string) map[string]any {
	body := map[string]any{
		"name": name,
		"person": map[string]any{"first_name": "Ada", "last_name": "Obi",
			"date_of_birth": "1990-04-01", "email": "ada@example.com", "nationality": "NG", "gender": Choose(r, "f", "m"),
			"phonenumber": "+2348012345678", "bvn": "22212345678", "nin": "33398765432"},
		"address": map[string]any{"line_1": "1 Marina", "city": "Lagos", "state": "Lagos",
			"postal_code": "101001", "country_code": "NG"},
		"identification": map[string]any{
			"document": map[string]any{"type": "international_passport", "number": "A0P4SS9876",
				"issue_date": "2020-01-02", "expiry_date": "2030-01-01", "issuing_country": "NG"},
			"proof_of_address": map[string]any{"type": "utility_bill"},
		},
	}
	if parent != "" {
		body["parent_entity"] = parent
	}
	return body
}

func businessBody(name, parent string) map[string]any {
	body := map[string]any{
		"name": name,
		"business": map[string]any{"legal_name": name + " LLC", "type": "llc", "email": "ops@acme.example",
			"registration_number": "RC123456", "industry": "software",
			"incorporation_meta": map[string]any{"year": 2019, "month": 5, "country": "US", "state": "DE"}},
		"address": map[string]any{"line_1": "1 Main St", "city": "Dover", "state": "DE",
			"postal_code": "19901", "country_code": "US"},
		"business_officers": []any{map[string]any{"job_title": "CEO", "is_control_person": true, "is_beneficial_owner": true,
			"ownership_percentage": 60,
			"person": map[string]any{"first_name": "Sam", "last_name": "Lee", "date_of_birth": "1980-07-15",
				"email": "sam@example.com", "nationality": "US", "gender": "m", "phonenumber": "+12025550143",
				"ssn": "123450987",
				"identification": map[string]any{"document": map[string]any{"type": "drivers_license",
					"number": "D1234567", "issuing_country": "US"}}}}},
	}
	if parent != "" {
		body["parent_entity"] = parent
	}
	return body
}

// entityMachine is SPEC's onboarding machine (incomplete -> pending on
// submission -> a decision) with the moves entities/doc.go adds: the
// sandbox may decide on an entity never submitted, an approved entity can
// be suspended, a suspended one reinstated or rejected, and a rejected one
// must be submitted again.
var entityMachine = Machine{
	Initial: []string{"incomplete", "approved"},
	Edges: map[string][]string{
		"incomplete": {"pending", "approved", "rejected", "suspended"},
		"pending":    {"approved", "rejected", "suspended"},
		"approved":   {"suspended"},
		"suspended":  {"approved", "rejected"},
		"rejected":   {"pending"},
	},
}

func init() {
	registerMachine("entities", entityMachine)
	register(
		Op{Name: "entity.create", Weight: 3, Concurrent: true, Run: func(s *Sim, r *rand.Rand) error {
			parent := ""
			if p := s.PickEntity(r, nil); p != nil && r.IntN(3) == 0 {
				parent = p.ID
			}
			name := fmt.Sprintf("Sim %d-%d", s.step, r.IntN(1000))
			typ, path, body := "individual", "/individual-entities", individualBody(r, name, parent)
			if r.IntN(3) == 0 {
				typ, path, body = "business", "/business-entities", businessBody(name, parent)
			}
			resp := s.Do(r, Req{Method: http.MethodPost, Path: path, Body: body})
			if !resp.OK() {
				return nil
			}
			var c struct {
				Entity struct {
					ID     string `json:"id"`
					Status string `json:"status"`
				} `json:"entity"`
			}
			err := resp.Decode(&c)
			v := c.Entity
			if err != nil || v.ID == "" {
				return fmt.Errorf("create %s entity answered %s", typ, resp)
			}
			s.AddEntity(&Entity{ID: v.ID, Type: typ, Status: v.Status, Parent: parent})
			s.Acked("/entities/" + v.ID)
			return nil
		}},
		Op{Name: "entity.review", Weight: 3, Concurrent: true, Run: func(s *Sim, r *rand.Rand) error {
			e := s.PickEntity(r, func(e Entity) bool { return e.ID != s.world.Root.ID })
			if e == nil {
				return nil
			}
			decision := "approved"
			if r.IntN(6) == 0 {
				decision = Choose(r, "rejected", "suspended")
			}
			resp := s.Do(r, Req{Method: http.MethodPost, Path: "/sandbox/entities/" + e.ID + "/review", Body: map[string]string{"decision": decision}})
			if resp.OK() {
				s.Update(func(*World) { e.Status = decision })
			}
			return nil
		}},
		Op{Name: "entity.key", Weight: 1, Run: func(s *Sim, r *rand.Rand) error {
			// A full-access key of the entity's own, for requests in its scope.
			e := s.PickEntity(r, func(e Entity) bool { return e.Key == "" })
			if e == nil {
				return nil
			}
			resp := s.Do(r, Req{Method: http.MethodPost, Path: "/sandbox/api-keys", Body: map[string]any{"entity_id": e.ID}})
			var v struct {
				APIKey string `json:"api_key"`
			}
			if resp.OK() && resp.Decode(&v) == nil && v.APIKey != "" {
				s.Update(func(*World) { e.Key = v.APIKey })
			}
			return nil
		}},
		Op{Name: "account.create", Weight: 4, Concurrent: true, Run: func(s *Sim, r *rand.Rand) error {
			cur := Choose(r, fiat...)
			_, err := openAccount(s, r, cur, Choose(r, "checking", "debit"), cur+" account", true)
			return err
		}},
		Op{Name: "account.delete", Weight: 1, Run: func(s *Sim, r *rand.Rand) error {
			a := s.PickAccount(r, nil)
			if a == nil {
				return nil
			}
			resp := s.Do(r, Req{Method: http.MethodDelete, Path: "/accounts/" + a.ID})
			if resp.OK() {
				s.Update(func(*World) { a.Deleted = true })
			}
			return nil
		}},
		Op{Name: "account.rename", Weight: 1, Concurrent: true, Run: func(s *Sim, r *rand.Rand) error {
			a := s.PickAccount(r, nil)
			if a == nil {
				return nil
			}
			s.Do(r, Req{Method: http.MethodPatch, Path: "/accounts/" + a.ID, Body: map[string]any{"display_name": fmt.Sprintf("renamed %d", r.IntN(100))}})
			return nil
		}},
		Op{Name: "inflow", Weight: 8, Concurrent: true, Run: func(s *Sim, r *rand.Rand) error {
			a := s.PickAccount(r, nil)
			if a == nil {
				return nil
			}
			s.Do(r, Req{Method: http.MethodPost, Path: "/sandbox/inflows", Body: inflowBody(r, a.ID, "sim inflow")})
			return nil
		}},
		Op{Name: "account.statement", Weight: 1, Run: func(s *Sim, r *rand.Rand) error {
			a := s.PickAccount(r, nil)
			if a == nil {
				return nil
			}
			return checkStatement(s, r, a)
		}},
	)
}

// openAccount opens a typ account in currency, named name, for a random
// approved entity, and records it as acknowledged; nil when there is no
// approved entity or the bank refused. share adds it to the world's
// accounts, which every domain's ops use; a domain that must know every
// movement on its accounts keeps them to itself.
func openAccount(s *Sim, r *rand.Rand, currency, typ, name string, share bool) (*Account, error) {
	e := s.PickEntity(r, func(e Entity) bool { return e.Status == "approved" })
	if e == nil {
		return nil, nil
	}
	resp := s.Do(r, Req{Method: http.MethodPost, Path: "/accounts", Key: keyOf(s, r, e),
		Body: map[string]any{"entity_id": e.ID, "type": typ, "currency": currency, "display_name": name}})
	if !resp.OK() {
		return nil, nil
	}
	id := resp.ID()
	if id == "" {
		return nil, fmt.Errorf("create %s account answered %s", currency, resp)
	}
	a := &Account{ID: id, Entity: e.ID, Currency: currency}
	if share {
		s.AddAccount(a)
	}
	s.Acked("/accounts/" + id)
	return a, nil
}

// inflowBody is a sandbox inflow of up to 10,000.00 to account, a
// quarter of them left pending (settle false).
func inflowBody(r *rand.Rand, account, narration string) map[string]any {
	body := map[string]any{"account_id": account, "amount": 1 + r.Int64N(1_000_000), "narration": narration}
	if r.IntN(4) == 0 {
		body["settle"] = false
	}
	return body
}

// keyOf is the key a request about e goes out with: e's own when it has
// one (half the time), else the root's, which reaches its whole tree.
func keyOf(s *Sim, r *rand.Rand, e *Entity) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e.Key != "" && r.IntN(2) == 0 {
		return e.Key
	}
	return s.world.Root.Key
}

// checkStatement reads this month's statement of the account: it closes
// at the account's settled balance.
func checkStatement(s *Sim, r *rand.Rand, a *Account) error {
	before, err := s.banks[0].Ledger.GetBalance(s.ctx, a.ID)
	if err != nil {
		return nil
	}
	now := s.Now()
	st := s.Do(r, Req{Method: http.MethodGet, Path: fmt.Sprintf("/accounts/%s/statements?year=%d&month=%d&limit=1", a.ID, now.Year(), int(now.Month()))})
	after, err := s.banks[0].Ledger.GetBalance(s.ctx, a.ID)
	if !st.OK() || err != nil || before.Settled != after.Settled {
		return nil
	}
	var sv struct {
		Summary struct {
			ClosingBalance *int64 `json:"closing_balance"`
		} `json:"summary"`
	}
	if err := st.Decode(&sv); err != nil || sv.Summary.ClosingBalance == nil {
		return fmt.Errorf("statement of %s: no closing balance in %s", a.ID, st)
	}
	if after.Settled != *sv.Summary.ClosingBalance {
		return fmt.Errorf("account %s: settled balance %d, this month's statement closes at %d", a.ID, after.Settled, *sv.Summary.ClosingBalance)
	}
	return nil
}
