package ledger_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/ledger/coordinates"
	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/bolt"
	"github.com/corebank/corebank/storage/memory"
)

// newDetailsEnv is newEnv with the details tests' ID seed.
func newDetailsEnv(tb testing.TB) *env {
	tb.Helper()
	db := memory.New()
	tb.Cleanup(func() { db.Close() })
	return newDetailsEnvOn(tb, db)
}

func newDetailsEnvOn(tb testing.TB, db storage.Backend) *env {
	tb.Helper()
	return newSeededEnv(tb, db, nil, 7)
}

func (e *env) details(tb testing.TB, n ledger.NewAccountDetails) *ledger.AccountDetails {
	tb.Helper()
	d, err := e.s.CreateAccountDetails(context.Background(), sys, n)
	if err != nil {
		tb.Fatalf("CreateAccountDetails(%+v): %v", n, err)
	}
	return d
}

// eventsOf returns the objects of every outbox event of type typ.
func (e *env) eventsOf(tb testing.TB, typ string) []ledger.AccountDetails {
	tb.Helper()
	evs, err := e.s.Events(context.Background(), "", 1000)
	if err != nil {
		tb.Fatal(err)
	}
	var out []ledger.AccountDetails
	for _, ev := range evs {
		if ev.Type != typ {
			continue
		}
		var d ledger.AccountDetails
		if err := json.Unmarshal(ev.Object, &d); err != nil {
			tb.Fatal(err)
		}
		out = append(out, d)
	}
	return out
}

func errCode(err error) string {
	var ce *corebank.Error
	if errors.As(err, &ce) {
		return ce.Code
	}
	if err != nil {
		return "plain: " + err.Error()
	}
	return ""
}

func errFields(err error) map[string]string {
	var ce *corebank.Error
	if errors.As(err, &ce) {
		return ce.Fields
	}
	return nil
}

func intp(v int) *int { return &v }

func TestCreateAccountDetails(t *testing.T) {
	ctx := context.Background()
	ms := start.UnixMilli()
	t.Run("OK", func(t *testing.T) {
		for _, tc := range []struct {
			currency string
			check    func(d *ledger.AccountDetails) error
		}{
			{"USD", func(d *ledger.AccountDetails) error {
				if d.Issuer.Code != d.RoutingNumber {
					return errors.New("issuer code is not the routing number")
				}
				return errors.Join(coordinates.ValidateABA(d.RoutingNumber), coordinates.ValidateUSAccountNumber(d.AccountNumber))
			}},
			{"EUR", func(d *ledger.AccountDetails) error {
				if d.AccountNumber != d.IBAN {
					return errors.New("account_number is not the IBAN")
				}
				return errors.Join(coordinates.ValidateIBAN(d.IBAN), coordinates.ValidateBIC(d.Issuer.Code))
			}},
			{"GBP", func(d *ledger.AccountDetails) error {
				return errors.Join(coordinates.ValidateSortCode(d.SortCode), coordinates.ValidateUKAccountNumber(d.AccountNumber))
			}},
			{"CAD", func(d *ledger.AccountDetails) error {
				return errors.Join(coordinates.ValidateInstitutionNumber(d.InstitutionNumber),
					coordinates.ValidateTransitNumber(d.TransitNumber), coordinates.ValidateCAAccountNumber(d.AccountNumber))
			}},
			{"AED", func(d *ledger.AccountDetails) error {
				return errors.Join(coordinates.ValidateIBAN(d.IBAN), coordinates.ValidateBIC(d.Issuer.Code))
			}},
			{"NGN", func(d *ledger.AccountDetails) error {
				return coordinates.ValidateNUBANForBank(coordinates.SandboxNGNBankCode, d.AccountNumber)
			}},
			{"ZAR", func(d *ledger.AccountDetails) error {
				return errors.Join(coordinates.ValidateBranchCode(d.BranchCode), coordinates.ValidateZAAccountNumber(d.AccountNumber))
			}},
		} {
			t.Run(tc.currency, func(t *testing.T) {
				e := newDetailsEnv(t)
				a := e.MustAccount(t, "ent1", tc.currency)
				got := e.details(t, ledger.NewAccountDetails{AccountID: a.ID, Meta: map[string]string{"k": "v"}})
				if err := tc.check(got); err != nil {
					t.Errorf("coordinates: %v (%+v)", err, got)
				}
				want := *got // identifiers checked above
				want.EntityID, want.AccountID = "ent1", a.ID
				want.Account = ledger.AccountSummary{ID: a.ID, DisplayName: a.DisplayName, Currency: tc.currency}
				want.Kind, want.Currency = "fiat", tc.currency
				want.Issuer.Name = coordinates.SandboxBankName
				want.Chain, want.SupportedAssets = "", nil
				want.AccountHolderName, want.DisplayName = a.DisplayName, a.DisplayName
				want.Capabilities = ledger.AccountDetailsCapabilities{ReceiveInflows: true}
				want.Status, want.StatusReason = "active", ""
				want.TerminateAfter, want.ExpiresAt, want.Deleted = nil, nil, 0
				want.Meta = map[string]string{"k": "v"}
				want.Created, want.Updated = ms, ms
				if diff := cmp.Diff(&want, got); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
				if got.ID == "" || got.AccountNumber == "" || got.Issuer.Code == "" {
					t.Errorf("missing identifiers: %+v", got)
				}
				stored, err := e.s.GetAccountDetails(ctx, sys, "", got.ID)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(got, stored); diff != "" {
					t.Errorf("GetAccountDetails (-created +got):\n%s", diff)
				}
				if diff := cmp.Diff([]ledger.AccountDetails{*got}, e.eventsOf(t, ledger.EventAccountDetailsCreated)); diff != "" {
					t.Errorf("events (-want +got):\n%s", diff)
				}
			})
		}
	})

	t.Run("OKStablecoin", func(t *testing.T) {
		for _, chain := range []string{"eth", "base", "matic", "sol"} {
			t.Run(chain, func(t *testing.T) {
				e := newDetailsEnv(t)
				a := e.MustAccount(t, "ent1", "USC")
				got := e.details(t, ledger.NewAccountDetails{AccountID: a.ID, Chain: chain, TerminateAfter: intp(30)})
				if err := coordinates.ValidateWalletAddress(chain, got.AccountNumber); err != nil {
					t.Errorf("wallet %q: %v", got.AccountNumber, err)
				}
				exp := ms + 30*24*3600*1000
				want := ledger.AccountDetails{
					ID: got.ID, EntityID: "ent1", AccountID: a.ID,
					Account:           ledger.AccountSummary{ID: a.ID, DisplayName: "Main USC", Currency: "USC"},
					Kind:              "stablecoin",
					Currency:          "USC",
					AccountNumber:     got.AccountNumber,
					Issuer:            coordinates.Issuer{Name: got.Issuer.Name, Code: chain},
					Chain:             chain,
					SupportedAssets:   []string{"USDC", "USDT"},
					AccountHolderName: "Main USC",
					DisplayName:       "Main USC",
					Status:            "pending",
					StatusReason:      "provisioning",
					TerminateAfter:    intp(30),
					ExpiresAt:         &exp,
					Meta:              map[string]string{},
					Created:           ms,
					Updated:           ms,
				}
				if diff := cmp.Diff(&want, got); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
			})
		}
	})

	t.Run("OKHolderAndDisplayName", func(t *testing.T) {
		e := newDetailsEnv(t)
		a := e.MustAccount(t, "ent1", "GBP")
		got := e.details(t, ledger.NewAccountDetails{AccountID: a.ID, AccountHolderName: "Ada Lovelace Ltd", DisplayName: "Collections", ProviderID: "sandbox"})
		if got.AccountHolderName != "Ada Lovelace Ltd" || got.DisplayName != "Collections" || got.ProviderID != "sandbox" {
			t.Errorf("got %+v", got)
		}
	})

	t.Run("JSON", func(t *testing.T) {
		e := newDetailsEnv(t)
		fiat := e.details(t, ledger.NewAccountDetails{AccountID: e.MustAccount(t, "ent1", "USD").ID})
		coin := e.details(t, ledger.NewAccountDetails{AccountID: e.MustAccount(t, "ent1", "UST").ID, Chain: "sol"})
		keys := func(d *ledger.AccountDetails) map[string]json.RawMessage {
			raw, _ := json.Marshal(d)
			m := map[string]json.RawMessage{}
			if err := json.Unmarshal(raw, &m); err != nil {
				t.Fatal(err)
			}
			return m
		}
		f := keys(fiat)
		for _, k := range []string{"id", "entity_id", "account_id", "account", "kind", "currency", "account_number",
			"routing_number", "issuer", "account_holder_name", "display_name", "capabilities", "status",
			"terminate_after", "deleted", "meta", "created", "updated"} {
			if _, ok := f[k]; !ok {
				t.Errorf("fiat JSON lacks %q", k)
			}
		}
		for _, k := range []string{"chain", "supported_assets", "iban", "sort_code"} {
			if _, ok := f[k]; ok {
				t.Errorf("fiat USD JSON has %q", k)
			}
		}
		if string(f["terminate_after"]) != "null" || string(f["meta"]) != "{}" {
			t.Errorf("terminate_after = %s, meta = %s", f["terminate_after"], f["meta"])
		}
		c := keys(coin)
		if string(c["supported_assets"]) != `["USDC","USDT"]` || string(c["chain"]) != `"sol"` || string(c["status"]) != `"pending"` {
			t.Errorf("stablecoin JSON = %v", c)
		}
	})

	for _, tc := range []struct {
		name     string
		currency string // account currency; "" means no account
		n        func(accountID string) ledger.NewAccountDetails
		code     string
		fields   map[string]string
	}{
		{"ErrAccountRequired", "", func(string) ledger.NewAccountDetails { return ledger.NewAccountDetails{} },
			"validation_error", map[string]string{"account_id": "is required"}},
		{"ErrAccountNotFound", "", func(string) ledger.NewAccountDetails { return ledger.NewAccountDetails{AccountID: "nope"} },
			"not_found", nil},
		{"ErrChainOnFiat", "USD", func(id string) ledger.NewAccountDetails { return ledger.NewAccountDetails{AccountID: id, Chain: "eth"} },
			"validation_error", map[string]string{"chain": "is only allowed for stablecoin accounts"}},
		{"ErrChainRequired", "USC", func(id string) ledger.NewAccountDetails { return ledger.NewAccountDetails{AccountID: id} },
			"validation_error", map[string]string{"chain": "is required for stablecoin accounts; use one of eth, base, matic, sol"}},
		{"ErrChainUnknown", "USC", func(id string) ledger.NewAccountDetails { return ledger.NewAccountDetails{AccountID: id, Chain: "btc"} },
			"validation_error", map[string]string{"chain": `unknown chain "btc"; use one of eth, base, matic, sol`}},
		{"ErrProviderOnStablecoin", "RLD", func(id string) ledger.NewAccountDetails {
			return ledger.NewAccountDetails{AccountID: id, Chain: "base", ProviderID: "sandbox"}
		}, "validation_error", map[string]string{"provider_id": "is only allowed for fiat accounts"}},
		{"ErrProviderUnknown", "EUR", func(id string) ledger.NewAccountDetails {
			return ledger.NewAccountDetails{AccountID: id, ProviderID: "acme"}
		},
			"validation_error", map[string]string{"provider_id": `unknown provider "acme"`}},
		{"ErrTerminateAfter", "USD", func(id string) ledger.NewAccountDetails {
			return ledger.NewAccountDetails{AccountID: id, TerminateAfter: intp(0), Chain: "sol"}
		}, "validation_error", map[string]string{
			"terminate_after": "must be a number of days from 1 to 36500; omit it for permanent details",
			"chain":           "is only allowed for stablecoin accounts",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newDetailsEnv(t)
			id := ""
			if tc.currency != "" {
				id = e.MustAccount(t, "ent1", tc.currency).ID
			}
			_, err := e.s.CreateAccountDetails(ctx, sys, tc.n(id))
			if got := errCode(err); got != tc.code {
				t.Fatalf("code = %q (%v), want %q", got, err, tc.code)
			}
			if diff := cmp.Diff(tc.fields, errFields(err)); diff != "" {
				t.Errorf("fields (-want +got):\n%s", diff)
			}
			if n := len(e.eventsOf(t, ledger.EventAccountDetailsCreated)); n != 0 {
				t.Errorf("%d created events after a failure", n)
			}
		})
	}

	t.Run("ErrAccountDeleted", func(t *testing.T) {
		e := newDetailsEnv(t)
		a := e.MustAccount(t, "ent1", "USD")
		if _, err := e.s.DeleteAccount(ctx, sys, "", a.ID); err != nil {
			t.Fatal(err)
		}
		_, err := e.s.CreateAccountDetails(ctx, sys, ledger.NewAccountDetails{AccountID: a.ID})
		if !errors.Is(err, ledger.ErrAccountDeleted) {
			t.Errorf("err = %v, want ErrAccountDeleted", err)
		}
	})
}

func TestActivateAccountDetails(t *testing.T) {
	ctx := context.Background()
	t.Run("OK", func(t *testing.T) {
		e := newDetailsEnv(t)
		d := e.details(t, ledger.NewAccountDetails{AccountID: e.MustAccount(t, "ent1", "USC").ID, Chain: "eth"})
		e.clock.Add(time.Minute)
		got, err := e.s.ActivateAccountDetails(ctx, sys, "", d.ID)
		if err != nil {
			t.Fatal(err)
		}
		want := *d
		want.Status, want.StatusReason = "active", ""
		want.Capabilities.ReceiveInflows = true
		want.Updated = start.Add(time.Minute).UnixMilli()
		if diff := cmp.Diff(&want, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
		again, err := e.s.ActivateAccountDetails(ctx, sys, "", d.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(got, again); diff != "" {
			t.Errorf("second activation changed details (-first +second):\n%s", diff)
		}
		if diff := cmp.Diff([]ledger.AccountDetails{*got}, e.eventsOf(t, ledger.EventAccountDetailsUpdated)); diff != "" {
			t.Errorf("updated events (-want +got):\n%s", diff)
		}
	})
	t.Run("ErrAccountDetailsNotFound", func(t *testing.T) {
		e := newDetailsEnv(t)
		if _, err := e.s.ActivateAccountDetails(ctx, sys, "", "nope"); !errors.Is(err, ledger.ErrAccountDetailsNotFound) {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("ErrAccountDetailsInactive", func(t *testing.T) {
		e := newDetailsEnv(t)
		d := e.details(t, ledger.NewAccountDetails{AccountID: e.MustAccount(t, "ent1", "USC").ID, Chain: "eth"})
		if _, err := e.s.DeleteAccountDetails(ctx, sys, "", d.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := e.s.ActivateAccountDetails(ctx, sys, "", d.ID); !errors.Is(err, ledger.ErrAccountDetailsInactive) {
			t.Errorf("err = %v", err)
		}
	})
}

func TestListAccountDetails(t *testing.T) {
	ctx := context.Background()
	e := newDetailsEnv(t)
	a1 := e.MustAccount(t, "ent1", "USD")
	a2 := e.MustAccount(t, "ent1", "EUR")
	b1 := e.MustAccount(t, "ent2", "GBP")
	var all, onA1, ent1, onB1 []string
	for i := 0; i < 3; i++ {
		for _, a := range []*ledger.Account{a1, a2, b1} {
			e.clock.Add(time.Millisecond)
			d := e.details(t, ledger.NewAccountDetails{AccountID: a.ID})
			all = append(all, d.ID)
			switch a {
			case a1:
				onA1 = append(onA1, d.ID)
				ent1 = append(ent1, d.ID)
			case a2:
				ent1 = append(ent1, d.ID)
			default:
				onB1 = append(onB1, d.ID)
			}
		}
	}
	ids := func(p *corebank.Page[ledger.AccountDetails]) []string {
		var out []string
		for _, d := range p.Items {
			out = append(out, d.ID)
		}
		return out
	}
	list := func(t *testing.T, f ledger.AccountDetailsFilter, o corebank.ListOptions) *corebank.Page[ledger.AccountDetails] {
		t.Helper()
		p, err := e.s.ListAccountDetails(ctx, sys, f, o)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	t.Run("OKFilters", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			f    ledger.AccountDetailsFilter
			want []string
		}{
			{"All", ledger.AccountDetailsFilter{}, all},
			{"Account", ledger.AccountDetailsFilter{AccountID: a1.ID}, onA1},
			{"Entity", ledger.AccountDetailsFilter{EntityID: "ent1"}, ent1},
			{"Both", ledger.AccountDetailsFilter{EntityID: "ent2", AccountID: b1.ID}, onB1},
		} {
			t.Run(tc.name, func(t *testing.T) {
				p := list(t, tc.f, corebank.ListOptions{Limit: 100})
				if diff := cmp.Diff(tc.want, ids(p)); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
				if p.Total != int64(len(tc.want)) || p.HasNext || p.HasPrevious {
					t.Errorf("total %d next %v prev %v", p.Total, p.HasNext, p.HasPrevious)
				}
			})
		}
	})
	t.Run("OKPages", func(t *testing.T) {
		f := ledger.AccountDetailsFilter{EntityID: "ent1"}
		p1 := list(t, f, corebank.ListOptions{Limit: 4})
		p2 := list(t, f, corebank.ListOptions{Limit: 4, After: p1.Next})
		if diff := cmp.Diff(ent1[:4], ids(p1)); diff != "" || !p1.HasNext || p1.HasPrevious {
			t.Errorf("page 1 (-want +got):\n%s next %v prev %v", diff, p1.HasNext, p1.HasPrevious)
		}
		if diff := cmp.Diff(ent1[4:], ids(p2)); diff != "" || p2.HasNext || !p2.HasPrevious {
			t.Errorf("page 2 (-want +got):\n%s next %v prev %v", diff, p2.HasNext, p2.HasPrevious)
		}
		back := list(t, f, corebank.ListOptions{Limit: 4, Before: p2.Previous})
		if diff := cmp.Diff(ent1[:4], ids(back)); diff != "" {
			t.Errorf("previous page (-want +got):\n%s", diff)
		}
	})
	t.Run("ErrLimit", func(t *testing.T) {
		_, err := e.s.ListAccountDetails(ctx, sys, ledger.AccountDetailsFilter{}, corebank.ListOptions{Limit: 101})
		if diff := cmp.Diff(map[string]string{"limit": "must be between 1 and 100"}, errFields(err)); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("ErrAccountNotFound", func(t *testing.T) {
		// An account outside the entity named beside it is not found there.
		_, err := e.s.ListAccountDetails(ctx, sys, ledger.AccountDetailsFilter{EntityID: "ent2", AccountID: a1.ID}, corebank.ListOptions{})
		if !errors.Is(err, ledger.ErrAccountNotFound) {
			t.Errorf("err = %v, want ErrAccountNotFound", err)
		}
	})
	t.Run("ErrCursor", func(t *testing.T) {
		_, err := e.s.ListAccountDetails(ctx, sys, ledger.AccountDetailsFilter{}, corebank.ListOptions{After: "a/b"})
		if diff := cmp.Diff(corebank.ErrCursor.Fields, errFields(err)); diff != "" {
			t.Errorf("err %v (-want +got):\n%s", err, diff)
		}
	})
}

func TestDeleteAccountDetails(t *testing.T) {
	ctx := context.Background()
	t.Run("OK", func(t *testing.T) {
		e := newDetailsEnv(t)
		a := e.MustAccount(t, "ent1", "NGN")
		d := e.details(t, ledger.NewAccountDetails{AccountID: a.ID, TerminateAfter: intp(1)})
		keep := e.details(t, ledger.NewAccountDetails{AccountID: a.ID})
		e.clock.Add(time.Second)
		got, err := e.s.DeleteAccountDetails(ctx, sys, "", d.ID)
		if err != nil {
			t.Fatal(err)
		}
		ms := start.Add(time.Second).UnixMilli()
		want := *d
		want.Deleted, want.Updated = ms, ms
		want.Status, want.StatusReason = "inactive", "deleted"
		want.Capabilities.ReceiveInflows = false
		if diff := cmp.Diff(&want, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
		again, err := e.s.DeleteAccountDetails(ctx, sys, "", d.ID)
		if err != nil || again.Deleted != ms {
			t.Errorf("second delete = %+v, %v", again, err)
		}
		stored, err := e.s.GetAccountDetails(ctx, sys, "", d.ID)
		if err != nil || stored.Deleted != ms {
			t.Errorf("GetAccountDetails after delete = %+v, %v", stored, err)
		}
		p, err := e.s.ListAccountDetails(ctx, sys, ledger.AccountDetailsFilter{AccountID: a.ID}, corebank.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Items) != 1 || p.Items[0].ID != keep.ID || p.Total != 1 {
			t.Errorf("list after delete: %d items, total %d", len(p.Items), p.Total)
		}
		if diff := cmp.Diff([]ledger.AccountDetails{*got}, e.eventsOf(t, ledger.EventAccountDetailsDeleted)); diff != "" {
			t.Errorf("deleted events (-want +got):\n%s", diff)
		}
		// The expiry of deleted details is cancelled.
		e.clock.Add(48 * time.Hour)
		if n, err := e.s.RunDue(ctx, e.clock.Now()); err != nil || n != 0 {
			t.Errorf("RunDue = %d, %v; want 0", n, err)
		}
	})
	t.Run("ErrAccountDetailsNotFound", func(t *testing.T) {
		e := newDetailsEnv(t)
		if _, err := e.s.DeleteAccountDetails(ctx, sys, "", "nope"); !errors.Is(err, ledger.ErrAccountDetailsNotFound) || errCode(err) != "not_found" {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("OKForAccount", func(t *testing.T) {
		e := newDetailsEnv(t)
		a := e.MustAccount(t, "ent1", "ZAR")
		other := e.MustAccount(t, "ent1", "ZAR")
		d1 := e.details(t, ledger.NewAccountDetails{AccountID: a.ID})
		d2 := e.details(t, ledger.NewAccountDetails{AccountID: a.ID})
		o := e.details(t, ledger.NewAccountDetails{AccountID: other.ID})
		var n int
		err := e.db.Update(ctx, func(tx storage.Tx) error {
			now := e.clock.Now()
			if _, err := e.s.DeleteAccountTx(tx, now, a.ID); err != nil {
				return err
			}
			var err error
			n, err = e.s.DeleteAccountDetailsForAccountTx(tx, now, a.ID)
			return err
		})
		if err != nil || n != 2 {
			t.Fatalf("DeleteAccountDetailsForAccountTx = %d, %v; want 2", n, err)
		}
		for _, id := range []string{d1.ID, d2.ID} {
			d, err := e.s.GetAccountDetails(ctx, sys, "", id)
			if err != nil || d.Deleted == 0 || d.StatusReason != "account_deleted" {
				t.Errorf("details %s after account deletion = %+v, %v", id, d, err)
			}
		}
		if d, _ := e.s.GetAccountDetails(ctx, sys, "", o.ID); d.Deleted != 0 {
			t.Errorf("details of another account deleted")
		}
		if got := len(e.eventsOf(t, ledger.EventAccountDetailsDeleted)); got != 2 {
			t.Errorf("%d deleted events, want 2", got)
		}
	})
}

func TestRunDueExpiresAccountDetails(t *testing.T) {
	ctx := context.Background()
	e := newDetailsEnv(t)
	a := e.MustAccount(t, "ent1", "USD")
	short := e.details(t, ledger.NewAccountDetails{AccountID: a.ID, TerminateAfter: intp(1)})
	long := e.details(t, ledger.NewAccountDetails{AccountID: a.ID, TerminateAfter: intp(2)})
	forever := e.details(t, ledger.NewAccountDetails{AccountID: a.ID})
	accepts := func(id string) error {
		return e.db.View(ctx, func(tx storage.Tx) error { return e.s.AcceptsInflowsTx(tx, e.clock.Now(), id) })
	}

	e.clock.Add(24*time.Hour - time.Millisecond)
	if n, err := e.s.RunDue(ctx, e.clock.Now()); err != nil || n != 0 {
		t.Fatalf("before expiry: RunDue = %d, %v", n, err)
	}
	if err := accepts(short.ID); err != nil {
		t.Errorf("AcceptsInflowsTx before expiry: %v", err)
	}

	e.clock.Add(time.Millisecond)
	// Past expiry but not yet processed: already refuses funds.
	if err := accepts(short.ID); !errors.Is(err, ledger.ErrAccountDetailsInactive) {
		t.Errorf("AcceptsInflowsTx at expiry = %v, want ErrAccountDetailsInactive", err)
	}
	if n, err := e.s.RunDue(ctx, e.clock.Now()); err != nil || n != 1 {
		t.Fatalf("at expiry: RunDue = %d, %v; want 1", n, err)
	}
	got, err := e.s.GetAccountDetails(ctx, sys, "", short.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := *short
	want.Status, want.StatusReason = "inactive", "expired"
	want.Capabilities.ReceiveInflows = false
	want.Updated = e.clock.Now().UnixMilli()
	if diff := cmp.Diff(&want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]ledger.AccountDetails{want}, e.eventsOf(t, ledger.EventAccountDetailsUpdated)); diff != "" {
		t.Errorf("updated events (-want +got):\n%s", diff)
	}
	if n, _ := e.s.RunDue(ctx, e.clock.Now()); n != 0 {
		t.Errorf("second run expired %d", n)
	}

	e.clock.Add(10 * 24 * time.Hour)
	if n, err := e.s.RunDue(ctx, e.clock.Now()); err != nil || n != 1 {
		t.Fatalf("later: RunDue = %d, %v; want 1", n, err)
	}
	for id, wantErr := range map[string]error{short.ID: ledger.ErrAccountDetailsInactive, long.ID: ledger.ErrAccountDetailsInactive, forever.ID: nil} {
		if err := accepts(id); !errors.Is(err, wantErr) && !(err == nil && wantErr == nil) {
			t.Errorf("AcceptsInflowsTx(%s) = %v, want %v", id, err, wantErr)
		}
	}
	// Expired details stay listed.
	p, err := e.s.ListAccountDetails(ctx, sys, ledger.AccountDetailsFilter{AccountID: a.ID}, corebank.ListOptions{})
	if err != nil || len(p.Items) != 3 {
		t.Errorf("list after expiry: %d items, %v", len(p.Items), err)
	}
}

func TestAccountDetailsInflows(t *testing.T) {
	ctx := context.Background()
	e := newDetailsEnv(t)
	fiat := e.details(t, ledger.NewAccountDetails{AccountID: e.MustAccount(t, "ent1", "GBP").ID})
	coin := e.details(t, ledger.NewAccountDetails{AccountID: e.MustAccount(t, "ent1", "USC").ID, Chain: "matic"})
	accepts := func(id string) error {
		return e.db.View(ctx, func(tx storage.Tx) error { return e.s.AcceptsInflowsTx(tx, e.clock.Now(), id) })
	}
	if err := accepts(fiat.ID); err != nil {
		t.Errorf("active fiat: %v", err)
	}
	if err := accepts(coin.ID); !errors.Is(err, ledger.ErrAccountDetailsPending) {
		t.Errorf("pending stablecoin: %v, want ErrAccountDetailsPending", err)
	}
	if err := accepts("nope"); !errors.Is(err, ledger.ErrAccountDetailsNotFound) {
		t.Errorf("unknown: %v", err)
	}

	st, err := e.s.GetAccountDetailsStats(ctx, sys, "", fiat.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&ledger.AccountDetailsStats{}, st); diff != "" {
		t.Errorf("initial stats (-want +got):\n%s", diff)
	}
	for _, amount := range []int64{1500, 250} {
		e.clock.Add(time.Minute)
		err := e.db.Update(ctx, func(tx storage.Tx) error { return e.s.RecordInflowTx(tx, e.clock.Now(), fiat.ID, amount) })
		if err != nil {
			t.Fatal(err)
		}
	}
	last := e.clock.Now().UnixMilli()
	st, err = e.s.GetAccountDetailsStats(ctx, sys, "", fiat.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&ledger.AccountDetailsStats{TotalInflowsCount: 2, TotalInflowsAmount: 1750, LastInflowAt: &last}, st); diff != "" {
		t.Errorf("stats (-want +got):\n%s", diff)
	}
	err = e.db.Update(ctx, func(tx storage.Tx) error { return e.s.RecordInflowTx(tx, e.clock.Now(), fiat.ID, 0) })
	if diff := cmp.Diff(map[string]string{"amount": "must be greater than zero"}, errFields(err)); diff != "" {
		t.Errorf("zero amount (-want +got):\n%s", diff)
	}
	if _, err := e.s.GetAccountDetailsStats(ctx, sys, "", "nope"); !errors.Is(err, ledger.ErrAccountDetailsNotFound) {
		t.Errorf("stats of unknown details: %v", err)
	}
}

func TestAccountDetailsByNumber(t *testing.T) {
	ctx := context.Background()
	e := newDetailsEnv(t)
	eur := e.details(t, ledger.NewAccountDetails{AccountID: e.MustAccount(t, "ent1", "EUR").ID})
	eth := e.details(t, ledger.NewAccountDetails{AccountID: e.MustAccount(t, "ent1", "USC").ID, Chain: "eth"})
	sol := e.details(t, ledger.NewAccountDetails{AccountID: e.MustAccount(t, "ent1", "UST").ID, Chain: "sol"})
	usd := e.details(t, ledger.NewAccountDetails{AccountID: e.MustAccount(t, "ent1", "USD").ID})
	for _, tc := range []struct {
		name, number, want string
	}{
		{"IBAN", eur.IBAN, eur.ID},
		{"IBANPrintForm", strings.ToLower(coordinates.FormatIBAN(eur.IBAN)), eur.ID},
		{"EVM", eth.AccountNumber, eth.ID},
		{"EVMLower", strings.ToLower(eth.AccountNumber), eth.ID},
		{"Solana", sol.AccountNumber, sol.ID},
		{"AccountNumber", usd.AccountNumber, usd.ID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := e.s.AccountDetailsByNumber(ctx, sys, tc.number)
			if err != nil || got.ID != tc.want {
				t.Errorf("AccountDetailsByNumber(%q) = %v, %v; want %s", tc.number, got, err, tc.want)
			}
		})
	}
	t.Run("ErrAccountDetailsNotFound", func(t *testing.T) {
		for _, n := range []string{"", strings.ToLower(sol.AccountNumber), "123"} {
			if _, err := e.s.AccountDetailsByNumber(ctx, sys, n); !errors.Is(err, ledger.ErrAccountDetailsNotFound) {
				t.Errorf("AccountDetailsByNumber(%q) err = %v", n, err)
			}
		}
	})
	t.Run("OfAccount", func(t *testing.T) {
		second := e.details(t, ledger.NewAccountDetails{AccountID: usd.AccountID})
		var got []ledger.AccountDetails
		err := e.db.View(ctx, func(tx storage.Tx) error {
			var err error
			got, err = e.s.AccountDetailsOfAccountTx(tx, usd.AccountID)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]ledger.AccountDetails{*usd, *second}, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
}

// TestAccountDetailsLifecycle runs create, list, activate, inflow, expiry
// and deletion on both backends, checking the list total and the outbox
// after every step.
func TestAccountDetailsLifecycle(t *testing.T) {
	backends := map[string]func(t *testing.T) storage.Backend{
		"memory": func(t *testing.T) storage.Backend {
			db := memory.New()
			t.Cleanup(func() { db.Close() })
			return db
		},
		"bolt": func(t *testing.T) storage.Backend {
			db, err := bolt.Open(filepath.Join(t.TempDir(), "db"), nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			return db
		},
	}
	for name, open := range backends {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			e := newDetailsEnvOn(t, open(t))
			acct := e.MustAccount(t, "ent1", "USC")
			check := func(step string, total int64, events map[string]int) {
				t.Helper()
				p, err := e.s.ListAccountDetails(ctx, sys, ledger.AccountDetailsFilter{EntityID: "ent1"}, corebank.ListOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if p.Total != total || int64(len(p.Items)) != total {
					t.Errorf("%s: total %d, %d items; want %d", step, p.Total, len(p.Items), total)
				}
				for typ, want := range events {
					if got := len(e.eventsOf(t, typ)); got != want {
						t.Errorf("%s: %d %s events, want %d", step, got, typ, want)
					}
				}
			}
			d1 := e.details(t, ledger.NewAccountDetails{AccountID: acct.ID, Chain: "base", TerminateAfter: intp(7)})
			d2 := e.details(t, ledger.NewAccountDetails{AccountID: acct.ID, Chain: "sol"})
			check("create", 2, map[string]int{ledger.EventAccountDetailsCreated: 2})
			for _, d := range []*ledger.AccountDetails{d1, d2} {
				if _, err := e.s.ActivateAccountDetails(ctx, sys, "", d.ID); err != nil {
					t.Fatal(err)
				}
			}
			check("activate", 2, map[string]int{ledger.EventAccountDetailsUpdated: 2})
			err := e.db.Update(ctx, func(tx storage.Tx) error {
				if err := e.s.AcceptsInflowsTx(tx, e.clock.Now(), d1.ID); err != nil {
					return err
				}
				return e.s.RecordInflowTx(tx, e.clock.Now(), d1.ID, 5_000_000)
			})
			if err != nil {
				t.Fatal(err)
			}
			e.clock.Add(7 * 24 * time.Hour)
			if n, err := e.s.RunDue(ctx, e.clock.Now()); err != nil || n != 1 {
				t.Fatalf("RunDue = %d, %v", n, err)
			}
			check("expire", 2, map[string]int{ledger.EventAccountDetailsUpdated: 3})
			if _, err := e.s.DeleteAccountDetails(ctx, sys, "", d2.ID); err != nil {
				t.Fatal(err)
			}
			check("delete", 1, map[string]int{ledger.EventAccountDetailsDeleted: 1})
			st, err := e.s.GetAccountDetailsStats(ctx, sys, "", d1.ID)
			if err != nil || st.TotalInflowsCount != 1 || st.TotalInflowsAmount != 5_000_000 {
				t.Errorf("stats = %+v, %v", st, err)
			}
			if got, err := e.s.AccountDetailsByNumber(ctx, sys, d2.AccountNumber); err != nil || got.Deleted == 0 {
				t.Errorf("AccountDetailsByNumber of deleted = %+v, %v", got, err)
			}
		})
	}
}
