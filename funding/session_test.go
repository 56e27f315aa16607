package funding_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/funding"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/service"
	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/bolt"
	"github.com/corebank/corebank/storage/memory"
)

// backends are the stores the session tests run on where storage matters.
var backends = []struct {
	name string
	open func(t *testing.T) storage.Backend
}{
	{"memory", func(*testing.T) storage.Backend { return memory.New() }},
	{"bolt", func(t *testing.T) storage.Backend {
		db, err := bolt.Open(filepath.Join(t.TempDir(), "s.db"), nil)
		if err != nil {
			t.Fatal(err)
		}
		return db
	}},
}

const owner = "01HZZZZZZZZZZZZZZZZZZZZZZZ"

type sfix struct {
	db       storage.Backend
	clk      *clock.Mock
	led      *ledger.Service
	ss       *funding.SessionService
	accts    map[string]*ledger.Account // by currency
	own      corebank.Caller
	redirect string
}

func newSessions(t *testing.T, db storage.Backend, o *funding.SessionOptions) *sfix {
	t.Helper()
	t.Cleanup(func() { db.Close() })
	clk := clock.NewMock()
	clk.Set(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	ids := corebank.NewIDs(rand.New(rand.NewSource(1)))
	led := ledger.NewService(db, &ledger.Options{Deps: service.Deps{Clock: clk, IDs: ids}})
	f := &sfix{db: db, clk: clk, led: led, accts: map[string]*ledger.Account{}, own: corebank.As(owner),
		redirect: "https://shop.example/back"}
	for _, c := range []string{"USD", "CAD", "USC", "KES", "TZS"} {
		if _, ok := ledger.CurrencyInfo(c); !ok {
			continue
		}
		a, err := led.CreateAccount(context.Background(), corebank.System(), ledger.NewAccount{
			EntityID: owner, Type: "checking", Currency: c, DisplayName: c})
		if err != nil {
			t.Fatal(err)
		}
		f.accts[c] = a
	}
	fund := funding.NewService(db, led, &funding.Options{Deps: service.Deps{Clock: clk, IDs: ids}})
	f.ss = funding.NewSessionService(fund, o)
	return f
}

func newSfix(t *testing.T) *sfix { return newSessions(t, memory.New(), nil) }

func (f *sfix) body(rail, currency, ref string, amount int64) funding.NewSession {
	in := funding.NewSession{Amount: amount, Currency: currency, AccountID: f.accts[currency].ID,
		UniqueReference: ref, FundingType: rail, RedirectURL: f.redirect}
	switch rail {
	case funding.Momo:
		in.RedirectURL = ""
		in.Meta = map[string]string{"channel": "KE-SAFARICOM-C2B", "msisdn": "254712345678"}
	case funding.ETransfer:
		in.Meta = map[string]string{"name": "Ada Lovelace", "email": "ada@example.com"}
	}
	return in
}

func (f *sfix) create(t *testing.T, in funding.NewSession) *funding.Session {
	t.Helper()
	s, err := f.ss.CreateSession(context.Background(), f.own, in)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (f *sfix) get(t *testing.T, id string) *funding.Session {
	t.Helper()
	s, err := f.ss.GetSession(context.Background(), f.own, "", id)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (f *sfix) balance(t *testing.T, currency string) ledger.AccountBalance {
	t.Helper()
	b, err := f.led.GetBalance(context.Background(), f.accts[currency].ID)
	if err != nil {
		t.Fatal(err)
	}
	return b.Summary()
}

func (f *sfix) count(t *testing.T, typ string) int {
	t.Helper()
	evs, err := f.led.Events(context.Background(), "", 1000)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range evs {
		if e.Type == typ {
			n++
		}
	}
	return n
}

// advance moves the clock by d and runs the sessions' due work.
func (f *sfix) advance(t *testing.T, d time.Duration) {
	t.Helper()
	f.clk.Add(d)
	if _, err := f.ss.RunDue(context.Background(), f.clk.Now()); err != nil {
		t.Fatal(err)
	}
}

func (f *sfix) simulate(t *testing.T, id, outcome, code string) *funding.Session {
	t.Helper()
	s, err := f.ss.SimulateSession(context.Background(), f.own, "", id, outcome, code)
	if err != nil {
		t.Fatalf("simulate %s: %v", outcome, err)
	}
	return s
}

func TestSessionCreatePerRail(t *testing.T) {
	f := newSfix(t)
	start := f.clk.Now().UnixMilli()
	ob := f.create(t, f.body(funding.OpenBanking, "USD", "ob-1", 1000))
	if ob.Status != funding.SessionAwaitingUser || ob.CheckoutURL == nil || !strings.HasPrefix(*ob.CheckoutURL, "/sandbox/checkout/") ||
		ob.CheckoutID != nil || ob.ExpiresAt == nil || *ob.ExpiresAt != start+30*60*1000 || ob.RedirectURL == nil {
		t.Errorf("open-banking: %+v", ob)
	}
	mo := f.create(t, f.body(funding.Momo, "USD", "momo-1", 1000))
	if mo.RedirectURL != nil || mo.CheckoutURL != nil || mo.ExpiresAt == nil || *mo.ExpiresAt != start+60*1000 ||
		mo.Country != "KE" || mo.Meta["msisdn"] != "+254712345678" || mo.Meta["channel"] != "KE-SAFARICOM-C2B" {
		t.Errorf("momo: %+v", mo)
	}
	cr := f.create(t, f.body(funding.Crypto, "USC", "cr-1", 5_000_000))
	if cr.CheckoutURL == nil || cr.CheckoutID == nil || cr.ExpiresAt != nil {
		t.Errorf("crypto: %+v", cr)
	}
	et := f.create(t, f.body(funding.ETransfer, "CAD", "et-1", 2500))
	if et.CheckoutURL != nil || et.ExpiresAt != nil || et.Meta["email"] != "ada@example.com" {
		t.Errorf("etransfer: %+v", et)
	}
	if *ob.CheckoutURL == *cr.CheckoutURL || len(*ob.CheckoutURL) < len("/sandbox/checkout/")+40 {
		t.Errorf("checkout tokens must be distinct and unguessable: %s %s", *ob.CheckoutURL, *cr.CheckoutURL)
	}
	if n := f.count(t, funding.EventSessionUpdated); n != 4 {
		t.Errorf("funding_sessions.updated on create: %d, want 4", n)
	}
}

func TestSessionValidation(t *testing.T) {
	f := newSfix(t)
	long := strings.Repeat("x", 256)
	cases := []struct {
		name  string
		edit  func(in *funding.NewSession)
		field string
	}{
		{"amount below 1", func(in *funding.NewSession) { in.Amount = 0 }, "amount"},
		{"narration over 255", func(in *funding.NewSession) { in.Narration = long }, "narration"},
		{"reference empty", func(in *funding.NewSession) { in.UniqueReference = "" }, "unique_reference"},
		{"reference over 255", func(in *funding.NewSession) { in.UniqueReference = long }, "unique_reference"},
		{"currency missing", func(in *funding.NewSession) { in.Currency = "" }, "currency"},
		{"currency not the account's", func(in *funding.NewSession) { in.Currency = "CAD" }, "currency"},
		{"funding_type unknown", func(in *funding.NewSession) { in.FundingType = "cheque" }, "funding_type"},
		{"redirect_url missing", func(in *funding.NewSession) { in.RedirectURL = "" }, "redirect_url"},
		{"redirect_url not https", func(in *funding.NewSession) { in.RedirectURL = "http://shop.example/back" }, "redirect_url"},
		{"country not alpha-2", func(in *funding.NewSession) { in.Country = "gbr" }, "country"},
		{"crypto on a fiat account", func(in *funding.NewSession) { in.FundingType = funding.Crypto }, "currency"},
		{"etransfer on a USD account", func(in *funding.NewSession) {
			in.FundingType = funding.ETransfer
			in.Meta = map[string]string{"name": "A", "email": "a@example.com"}
		}, "currency"},
		{"momo with redirect_url", func(in *funding.NewSession) {
			in.FundingType = funding.Momo
			in.Meta = map[string]string{"channel": "KE-SAFARICOM-C2B", "msisdn": "+254712345678"}
		}, "redirect_url"},
		{"momo unknown channel", func(in *funding.NewSession) {
			in.FundingType, in.RedirectURL = funding.Momo, ""
			in.Meta = map[string]string{"channel": "UG-MTN-C2B", "msisdn": "+254712345678"}
		}, "meta.channel"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := f.body(funding.OpenBanking, "USD", "v-"+c.name, 100)
			c.edit(&in)
			_, err := f.ss.CreateSession(context.Background(), f.own, in)
			var ce *corebank.Error
			if !errors.As(err, &ce) || ce.Kind != corebank.KindInvalid || ce.Fields[c.field] == "" {
				t.Fatalf("got %v, want a validation error naming %s", err, c.field)
			}
		})
	}
	t.Run("etransfer meta.name and meta.email", func(t *testing.T) {
		in := f.body(funding.ETransfer, "CAD", "v-et", 100)
		in.Meta = map[string]string{"email": "not an email"}
		_, err := f.ss.CreateSession(context.Background(), f.own, in)
		var ce *corebank.Error
		if !errors.As(err, &ce) || ce.Fields["meta.name"] == "" || ce.Fields["meta.email"] == "" {
			t.Fatalf("got %v", err)
		}
	})
	if n := f.count(t, funding.EventSessionUpdated); n != 0 {
		t.Errorf("bad requests wrote %d events", n)
	}
}

func TestSessionDuplicateReference(t *testing.T) {
	f := newSfix(t)
	orig := f.create(t, f.body(funding.OpenBanking, "USD", "dup", 1000))
	_, err := f.ss.CreateSession(context.Background(), f.own, f.body(funding.OpenBanking, "USD", "dup", 2000))
	var ce *corebank.Error
	if !errors.Is(err, funding.ErrDuplicateSession) || !errors.As(err, &ce) {
		t.Fatalf("got %v, want ErrDuplicateSession", err)
	}
	if diff := cmp.Diff(orig, ce.Data); diff != "" {
		t.Errorf("the duplicate's data is not the original (-want +got)\n%s", diff)
	}
	// Per entity: another rail of the same entity shares the reference space.
	if _, err := f.ss.CreateSession(context.Background(), f.own, f.body(funding.Momo, "USD", "dup", 10)); !errors.Is(err, funding.ErrDuplicateSession) {
		t.Errorf("momo with the same reference: %v", err)
	}
}

func TestSessionPendingSettlementIsAPendingCredit(t *testing.T) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			f := newSessions(t, be.open(t), nil)
			s := f.create(t, f.body(funding.OpenBanking, "USD", "p-1", 1000))
			f.simulate(t, s.ID, funding.SessionProcessing, "")
			f.simulate(t, s.ID, funding.SessionPendingSettlement, "")
			if got := f.balance(t, "USD"); got != (ledger.AccountBalance{Current: 1000, Available: 0}) {
				t.Errorf("pending_settlement: %+v, want current 1000, available 0", got)
			}
			if f.count(t, funding.EventInflowCompleted) != 0 {
				t.Error("inflows.completed before settlement")
			}
			// settled by itself SettleDelay later, on the due queue.
			f.advance(t, time.Minute)
			got := f.get(t, s.ID)
			if got.Status != funding.SessionSettled || got.InflowID == nil {
				t.Fatalf("after 60 s: %+v", got)
			}
			if b := f.balance(t, "USD"); b != (ledger.AccountBalance{Current: 1000, Available: 1000}) {
				t.Errorf("settled: %+v", b)
			}
			if n := f.count(t, funding.EventInflowCompleted); n != 1 {
				t.Errorf("inflows.completed %d times, want 1", n)
			}
			// create, processing, pending_settlement, settled.
			if n := f.count(t, funding.EventSessionUpdated); n != 4 {
				t.Errorf("funding_sessions.updated %d times, want 4", n)
			}
			in, err := f.ss.Inflows().GetInflow(context.Background(), *got.InflowID)
			if err != nil || in.Amount != 1000 || in.Source != funding.OpenBanking || in.Status != funding.StatusCompleted {
				t.Errorf("the session's inflow: %+v %v", in, err)
			}
			// Settling again changes nothing.
			f.simulate(t, s.ID, funding.SessionSettled, "")
			if b := f.balance(t, "USD"); b.Available != 1000 {
				t.Errorf("settled twice: %+v", b)
			}
		})
	}
}

func TestSessionFailureVoidsTheHold(t *testing.T) {
	f := newSfix(t)
	s := f.create(t, f.body(funding.OpenBanking, "USD", "f-1", 700))
	f.simulate(t, s.ID, funding.SessionPendingSettlement, "")
	got := f.simulate(t, s.ID, funding.SessionFailed, funding.FailureInsufficientFunds)
	want := &funding.Failure{Code: funding.FailureInsufficientFunds, Stage: funding.SessionPendingSettlement, ProviderCode: "sandbox"}
	if diff := cmp.Diff(want, got.Failure); diff != "" {
		t.Errorf("failure (-want +got)\n%s", diff)
	}
	if b := f.balance(t, "USD"); b != (ledger.AccountBalance{}) {
		t.Errorf("balance after failure: %+v", b)
	}
	if f.count(t, funding.EventInflowFailed) != 1 {
		t.Error("no inflows.failed for a voided pending credit")
	}
	if _, err := f.ss.SimulateSession(context.Background(), f.own, "", s.ID, funding.SessionSettled, ""); !errors.Is(err, funding.ErrSessionInvalidForState) {
		t.Errorf("settling a failed session: %v", err)
	}
	t.Run("defaults", func(t *testing.T) {
		for outcome, code := range map[string]string{funding.SessionFailed: funding.FailureProviderError,
			funding.SessionExpired: funding.FailureSessionExpired, funding.SessionCancelled: funding.FailurePaymentCancelled} {
			s := f.create(t, f.body(funding.OpenBanking, "USD", "d-"+outcome, 700))
			got := f.simulate(t, s.ID, outcome, "")
			if got.Status != outcome || got.Failure == nil || got.Failure.Code != code || got.Failure.Stage != funding.SessionAwaitingUser {
				t.Errorf("%s: %+v %+v", outcome, got, got.Failure)
			}
		}
	})
	t.Run("bad failure_code", func(t *testing.T) {
		s := f.create(t, f.body(funding.OpenBanking, "USD", "bad-code", 700))
		_, err := f.ss.SimulateSession(context.Background(), f.own, "", s.ID, funding.SessionFailed, "card_declined")
		var ce *corebank.Error
		if !errors.As(err, &ce) || ce.Fields["failure_code"] == "" {
			t.Errorf("got %v", err)
		}
	})
}

func TestSessionStateMachine(t *testing.T) {
	f := newSfix(t)
	cases := []struct {
		path []string
		ok   bool
	}{
		{[]string{"processing", "pending_settlement", "settled"}, true},
		{[]string{"settled"}, true},
		{[]string{"pending_settlement", "processing"}, false},
		{[]string{"cancelled", "processing"}, false},
		{[]string{"expired", "settled"}, false},
		{[]string{"processing", "processing", "cancelled"}, true},
	}
	for i, c := range cases {
		t.Run(strings.Join(c.path, ">"), func(t *testing.T) {
			s := f.create(t, f.body(funding.OpenBanking, "USD", fmt.Sprint("sm-", i), 100))
			var err error
			for _, o := range c.path {
				if _, err = f.ss.SimulateSession(context.Background(), f.own, "", s.ID, o, ""); err != nil {
					break
				}
			}
			if c.ok != (err == nil) || (err != nil && !errors.Is(err, funding.ErrSessionInvalidForState)) {
				t.Errorf("got %v, want ok %v", err, c.ok)
			}
		})
	}
}

// neverMomo is a momo provider whose payer never answers.
type neverMomo struct{}

func (neverMomo) StartMomo(context.Context, *funding.StartRequest) (funding.Started, error) {
	return funding.Started{ProviderRef: "never"}, nil
}

func TestSessionExpiryPerRail(t *testing.T) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			f := newSessions(t, be.open(t), &funding.SessionOptions{Momo: neverMomo{}})
			ob := f.create(t, f.body(funding.OpenBanking, "USD", "x-ob", 100))
			mo := f.create(t, f.body(funding.Momo, "USD", "x-momo", 100))
			cr := f.create(t, f.body(funding.Crypto, "USC", "x-cr", 100))
			et := f.create(t, f.body(funding.ETransfer, "CAD", "x-et", 100))
			status := func() []string {
				return []string{f.get(t, ob.ID).Status, f.get(t, mo.ID).Status, f.get(t, cr.ID).Status, f.get(t, et.ID).Status}
			}
			f.advance(t, 59*time.Second)
			if diff := cmp.Diff([]string{"awaiting_user", "awaiting_user", "awaiting_user", "awaiting_user"}, status()); diff != "" {
				t.Errorf("at 59 s (-want +got)\n%s", diff)
			}
			f.advance(t, time.Second) // the momo prompt's 60 s
			if diff := cmp.Diff([]string{"awaiting_user", "expired", "awaiting_user", "awaiting_user"}, status()); diff != "" {
				t.Errorf("at 60 s (-want +got)\n%s", diff)
			}
			f.advance(t, 29*time.Minute) // open-banking's 30 min
			if diff := cmp.Diff([]string{"expired", "expired", "awaiting_user", "awaiting_user"}, status()); diff != "" {
				t.Errorf("at 30 min (-want +got)\n%s", diff)
			}
			f.advance(t, 30*24*time.Hour) // an e-Transfer never validated; crypto has no expiry
			if diff := cmp.Diff([]string{"expired", "expired", "awaiting_user", "expired"}, status()); diff != "" {
				t.Errorf("after 30 days (-want +got)\n%s", diff)
			}
			if fl := f.get(t, et.ID).Failure; fl == nil || fl.Code != funding.FailureSessionExpired || fl.Stage != funding.SessionAwaitingUser {
				t.Errorf("etransfer failure: %+v", fl)
			}
		})
	}
}

func TestMomoSandboxPayerApproves(t *testing.T) {
	f := newSfix(t)
	s := f.create(t, f.body(funding.Momo, "USD", "m-ok", 4200))
	f.advance(t, 5*time.Second)
	if got := f.get(t, s.ID); got.Status != funding.SessionPendingSettlement {
		t.Fatalf("after the payer's answer: %s", got.Status)
	}
	f.advance(t, time.Minute)
	if got := f.get(t, s.ID); got.Status != funding.SessionSettled || f.balance(t, "USD").Available != 4200 {
		t.Fatalf("after settlement: %s %+v", got.Status, f.balance(t, "USD"))
	}
}

func TestCryptoCreditsWhatArrived(t *testing.T) {
	tol := decimal.RequireFromString("0.01")
	cases := []struct {
		name     string
		pay      funding.ProviderEvent
		status   string
		outcome  string
		credited int64
	}{
		{"exact", funding.ProviderEvent{Received: 1_000_000}, funding.SessionSettled, "exact", 1_000_000},
		{"overpaid", funding.ProviderEvent{Received: 1_200_000}, funding.SessionSettled, "overpaid", 1_200_000},
		{"underpaid within tolerance", funding.ProviderEvent{Received: 995_000}, funding.SessionSettled, "underpaid", 995_000},
		{"underpaid beyond tolerance", funding.ProviderEvent{Received: 500_000}, funding.SessionFailed, "underpaid", 0},
		{"late", funding.ProviderEvent{Received: 1_000_000, Late: true}, funding.SessionSettled, "late", 1_000_000},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newSessions(t, memory.New(), &funding.SessionOptions{UnderpaymentTolerance: tol})
			s := f.create(t, f.body(funding.Crypto, "USC", "c", 1_000_000))
			ev := c.pay
			ev.Status = funding.SessionPendingSettlement
			if _, err := f.ss.HandleProviderEvent(context.Background(), s.ID, ev); err != nil {
				t.Fatal(err)
			}
			f.advance(t, time.Minute)
			got := f.get(t, s.ID)
			if got.Status != c.status || got.AmountReceived == nil || *got.AmountReceived != c.pay.Received ||
				got.PaymentOutcome == nil || *got.PaymentOutcome != c.outcome {
				t.Fatalf("got %+v", got)
			}
			if b := f.balance(t, "USC"); b.Available != c.credited || b.Current != c.credited {
				t.Errorf("balance %+v, want %d credited", b, c.credited)
			}
			if c.status == funding.SessionFailed && f.count(t, funding.EventInflowFailed) != 1 {
				t.Error("a refused payment reports no inflows.failed")
			}
		})
	}
}

// secretETransfer is an Interac provider whose transfers carry a known
// security answer.
type secretETransfer struct{}

const secretAnswer = "correct horse battery staple"

func (secretETransfer) StartETransfer(context.Context, *funding.StartRequest) (funding.Started, error) {
	return funding.Started{}, nil
}

func (secretETransfer) ValidateETransfer(_ context.Context, s *funding.Session) (funding.ETransferValidation, error) {
	return funding.ETransferValidation{ReferenceNumber: "CA123", PaymentID: "p-" + s.ID, RequiresAuthentication: true,
		SecurityQuestion: "Favourite words?", SecurityAnswer: secretAnswer,
		Answer: &funding.ProviderEvent{Status: funding.SessionPendingSettlement}}, nil
}

func TestETransferValidation(t *testing.T) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			f := newSessions(t, be.open(t), &funding.SessionOptions{ETransfer: secretETransfer{}})
			ctx := context.Background()
			s := f.create(t, f.body(funding.ETransfer, "CAD", "answer-me", 2500))
			got, err := f.ss.ValidateETransfer(ctx, f.own, "", s.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != funding.SessionProcessing || got.ReferenceNumber == nil || got.RequiresAuthentication == nil ||
				!*got.RequiresAuthentication || got.SecurityQuestion == nil || got.PaymentID == nil {
				t.Fatalf("validated: %+v", got)
			}
			// The security answer is neither returned nor stored, in clear
			// or as a hash.
			sum := sha256.Sum256([]byte(secretAnswer))
			forms := [][]byte{[]byte(secretAnswer), []byte(hex.EncodeToString(sum[:])), []byte(base64.StdEncoding.EncodeToString(sum[:])), sum[:]}
			if raw, _ := json.Marshal(got); bytes.Contains(raw, []byte(secretAnswer)) {
				t.Errorf("the answer is returned: %s", raw)
			}
			err = f.db.View(ctx, func(tx storage.Tx) error {
				for _, b := range []storage.Bucket{"funding.sessions", "funding.sessions.index"} {
					err := tx.Scan(b, storage.ScanOptions{}, func(k, v []byte) error {
						for _, f := range forms {
							if bytes.Contains(v, f) || bytes.Contains(k, f) {
								return fmt.Errorf("the security answer is stored in %s: %s", b, v)
							}
						}
						return nil
					})
					if err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Error(err)
			}
			if _, err := f.ss.ValidateETransfer(ctx, f.own, "", s.ID); !errors.Is(err, funding.ErrNotETransfer) {
				t.Errorf("validating twice: %v", err)
			}
			ob := f.create(t, f.body(funding.OpenBanking, "USD", "not-et", 100))
			if _, err := f.ss.ValidateETransfer(ctx, f.own, "", ob.ID); !errors.Is(err, funding.ErrNotETransfer) || corebank.KindOf(err) != corebank.KindBadRequest {
				t.Errorf("validating open-banking: %v", err)
			}
			f.advance(t, 5*time.Second)
			f.advance(t, time.Minute)
			if got := f.get(t, s.ID); got.Status != funding.SessionSettled || f.balance(t, "CAD").Available != 2500 {
				t.Errorf("after the bank accepted: %s %+v", got.Status, f.balance(t, "CAD"))
			}
		})
	}
}

func TestSessionCheckoutByToken(t *testing.T) {
	f := newSfix(t)
	s := f.create(t, f.body(funding.OpenBanking, "USD", "co", 900))
	token := strings.TrimPrefix(*s.CheckoutURL, "/sandbox/checkout/")
	got, err := f.ss.CheckoutSession(context.Background(), token)
	if err != nil || got.ID != s.ID {
		t.Fatalf("by token: %v %v", got, err)
	}
	if _, err := f.ss.CheckoutSession(context.Background(), token+"x"); !errors.Is(err, funding.ErrSessionNotFound) {
		t.Errorf("a wrong token: %v", err)
	}
	got, err = f.ss.Checkout(context.Background(), token, funding.SessionSettled, "")
	if err != nil || got.Status != funding.SessionSettled || f.balance(t, "USD").Available != 900 {
		t.Fatalf("approve: %+v %v", got, err)
	}
}

func TestListSessions(t *testing.T) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			f := newSessions(t, be.open(t), nil)
			ctx := context.Background()
			var ids []string
			for i := range 5 {
				s := f.create(t, f.body(funding.OpenBanking, "USD", fmt.Sprint("l-", i), 100))
				ids = append(ids, s.ID)
				f.clk.Add(time.Second)
			}
			cad := f.create(t, f.body(funding.ETransfer, "CAD", "l-cad", 100))
			f.simulate(t, ids[1], funding.SessionCancelled, "")
			list := func(fl funding.SessionFilter, o corebank.ListOptions) *funding.SessionPage {
				t.Helper()
				p, err := f.ss.ListSessions(ctx, f.own, fl, o)
				if err != nil {
					t.Fatal(err)
				}
				return p
			}
			idsOf := func(p *funding.SessionPage) []string {
				var out []string
				for _, s := range p.Items {
					out = append(out, s.ID)
				}
				return out
			}
			if diff := cmp.Diff(append(append([]string{}, ids...), cad.ID), idsOf(list(funding.SessionFilter{}, corebank.ListOptions{}))); diff != "" {
				t.Errorf("all (-want +got)\n%s", diff)
			}
			if diff := cmp.Diff([]string{cad.ID}, idsOf(list(funding.SessionFilter{Currency: "CAD"}, corebank.ListOptions{}))); diff != "" {
				t.Errorf("currency (-want +got)\n%s", diff)
			}
			if diff := cmp.Diff([]string{ids[1]}, idsOf(list(funding.SessionFilter{Status: "cancelled"}, corebank.ListOptions{}))); diff != "" {
				t.Errorf("status (-want +got)\n%s", diff)
			}
			if diff := cmp.Diff([]string{cad.ID}, idsOf(list(funding.SessionFilter{AccountID: f.accts["CAD"].ID}, corebank.ListOptions{}))); diff != "" {
				t.Errorf("account (-want +got)\n%s", diff)
			}
			s1, s3 := f.get(t, ids[1]), f.get(t, ids[3])
			if diff := cmp.Diff([]string{ids[2]}, idsOf(list(funding.SessionFilter{CreatedAfter: s1.Created, CreatedBefore: s3.Created}, corebank.ListOptions{}))); diff != "" {
				t.Errorf("created range (-want +got)\n%s", diff)
			}
			p1 := list(funding.SessionFilter{}, corebank.ListOptions{Limit: 2})
			p2 := list(funding.SessionFilter{}, corebank.ListOptions{Limit: 2, After: p1.Next})
			back := list(funding.SessionFilter{}, corebank.ListOptions{Limit: 2, Before: p2.Previous})
			if diff := cmp.Diff(ids[2:4], idsOf(p2)); diff != "" || !p2.HasNext || !p2.HasPrevious {
				t.Errorf("page 2 (-want +got)\n%s %+v", diff, p2.Page)
			}
			if diff := cmp.Diff(ids[:2], idsOf(back)); diff != "" || back.HasPrevious {
				t.Errorf("previous page (-want +got)\n%s", diff)
			}
			if _, err := f.ss.ListSessions(ctx, f.own, funding.SessionFilter{Status: "done"}, corebank.ListOptions{}); corebank.KindOf(err) != corebank.KindInvalid {
				t.Errorf("bad status: %v", err)
			}
		})
	}
}

// TestSessionConcurrency is the issue's: 50 simultaneous creates with 10
// distinct references make exactly 10 sessions, and 20 simultaneous settle
// simulations of one session credit it exactly once.
func TestSessionConcurrency(t *testing.T) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			f := newSessions(t, be.open(t), nil)
			ctx := context.Background()
			var wg sync.WaitGroup
			errs := make(chan error, 50)
			for i := range 50 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, err := f.ss.CreateSession(ctx, f.own, f.body(funding.OpenBanking, "USD", fmt.Sprint("race-", i%10), 100))
					if err != nil && !errors.Is(err, funding.ErrDuplicateSession) {
						errs <- err
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			p, err := f.ss.ListSessions(ctx, f.own, funding.SessionFilter{}, corebank.ListOptions{Limit: 100})
			if err != nil || len(p.Items) != 10 {
				t.Fatalf("%d sessions, want 10 (%v)", len(p.Items), err)
			}
			id := p.Items[0].ID
			var ok sync.WaitGroup
			for range 20 {
				ok.Add(1)
				go func() {
					defer ok.Done()
					if _, err := f.ss.SimulateSession(ctx, f.own, "", id, funding.SessionSettled, ""); err != nil {
						t.Error(err)
					}
				}()
			}
			ok.Wait()
			if b := f.balance(t, "USD"); b != (ledger.AccountBalance{Current: 100, Available: 100}) {
				t.Errorf("balance after 20 settles: %+v, want 100 once", b)
			}
			if n := f.count(t, funding.EventInflowCompleted); n != 1 {
				t.Errorf("inflows.completed %d times, want 1", n)
			}
		})
	}
}

// downBank is an open-banking provider that is down.
type downBank struct{}

var errDown = corebank.E(corebank.KindUnavailable, "provider_unavailable", "the bank is down")

func (downBank) StartOpenBanking(context.Context, *funding.StartRequest) (funding.Started, error) {
	return funding.Started{}, errDown
}

func TestSessionProviders(t *testing.T) {
	t.Run("CheckoutBase", func(t *testing.T) {
		f := newSessions(t, memory.New(), &funding.SessionOptions{CheckoutBase: "https://sandbox.bank.example"})
		s := f.create(t, f.body(funding.OpenBanking, "USD", "base", 100))
		if !strings.HasPrefix(*s.CheckoutURL, "https://sandbox.bank.example/sandbox/checkout/") {
			t.Errorf("checkout_url %s", *s.CheckoutURL)
		}
	})
	t.Run("ErrProviderDown writes nothing", func(t *testing.T) {
		f := newSessions(t, memory.New(), &funding.SessionOptions{OpenBanking: downBank{}})
		if _, err := f.ss.CreateSession(context.Background(), f.own, f.body(funding.OpenBanking, "USD", "down", 100)); !errors.Is(err, errDown) {
			t.Fatalf("got %v", err)
		}
		p, err := f.ss.ListSessions(context.Background(), f.own, funding.SessionFilter{}, corebank.ListOptions{})
		if err != nil || len(p.Items) != 0 || f.count(t, funding.EventSessionUpdated) != 0 {
			t.Errorf("a failed start left %d sessions (%v)", len(p.Items), err)
		}
		// The reference is still free.
		f.ss = funding.NewSessionService(f.ss.Inflows(), nil)
		f.create(t, f.body(funding.OpenBanking, "USD", "down", 100))
	})
	t.Run("HandleProviderEvent", func(t *testing.T) {
		f := newSfix(t)
		s := f.create(t, f.body(funding.OpenBanking, "USD", "cb", 100))
		ctx := context.Background()
		for _, ev := range []funding.ProviderEvent{{Status: "awaiting_user"}, {Status: "done"},
			{Status: funding.SessionSettled, FailureCode: funding.FailureProviderError}, {Status: funding.SessionFailed, FailureCode: "nope"}} {
			if _, err := f.ss.HandleProviderEvent(ctx, s.ID, ev); corebank.KindOf(err) != corebank.KindInvalid {
				t.Errorf("%+v: %v", ev, err)
			}
		}
		got, err := f.ss.HandleProviderEvent(ctx, s.ID, funding.ProviderEvent{Status: funding.SessionFailed,
			FailureCode: funding.FailureInstitutionUnavailable, ProviderCode: "BANK_DOWN"})
		if err != nil || got.Failure == nil || got.Failure.ProviderCode != "BANK_DOWN" || got.Failure.Stage != funding.SessionAwaitingUser {
			t.Errorf("failed: %+v %v", got, err)
		}
		if _, err := f.ss.HandleProviderEvent(ctx, "01HZZZZZZZZZZZZZZZZZZZZ000", funding.ProviderEvent{Status: funding.SessionSettled}); !errors.Is(err, funding.ErrSessionNotFound) {
			t.Errorf("unknown session: %v", err)
		}
	})
}

// TestSandboxMagicValues: a test picks an outcome without a simulate call.
// A momo MSISDN's last four digits (M-Pesa's result code) decide the
// sandbox payer's answer; a crypto amount's last two digits decide what the
// sandbox payer sends. Each row runs through the sandbox provider, the due
// queue and the clock, as funding/doc.go's table says.
func TestSandboxMagicValues(t *testing.T) {
	type want struct {
		status   string
		failure  string
		outcome  string // crypto payment_outcome
		credited int64
	}
	cases := []struct {
		name   string
		rail   string
		cur    string
		amount int64
		msisdn string
		want   want
	}{
		{"MomoApproves", funding.Momo, "USD", 4200, "+254712345678", want{status: funding.SessionSettled, credited: 4200}},
		{"MomoCancelledByUser", funding.Momo, "USD", 4200, "+254712341032", want{status: funding.SessionCancelled, failure: "payment_cancelled"}},
		{"MomoInsufficientFunds", funding.Momo, "USD", 4200, "+254712340001", want{status: funding.SessionFailed, failure: "insufficient_funds"}},
		{"MomoTimeout", funding.Momo, "USD", 4200, "+254712341037", want{status: funding.SessionExpired, failure: "session_expired"}},
		// Any other amount waits for the payer on the checkout page.
		{"CryptoNoMagic", funding.Crypto, "USC", 100_000, "", want{status: funding.SessionAwaitingUser}},
		{"CryptoOneUnitShort", funding.Crypto, "USC", 100_091, "", want{status: funding.SessionSettled, outcome: "underpaid", credited: 100_090}},
		{"CryptoHalf", funding.Crypto, "USC", 100_092, "", want{status: funding.SessionFailed, outcome: "underpaid", failure: "payment_rejected"}},
		{"CryptoTenthMore", funding.Crypto, "USC", 100_093, "", want{status: funding.SessionSettled, outcome: "overpaid", credited: 110_102}},
		{"CryptoLate", funding.Crypto, "USC", 100_094, "", want{status: funding.SessionSettled, outcome: "late", credited: 100_094}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newSessions(t, memory.New(), &funding.SessionOptions{UnderpaymentTolerance: decimal.RequireFromString("0.01")})
			in := f.body(c.rail, c.cur, "magic-"+c.name, c.amount)
			if c.msisdn != "" {
				in.Meta["msisdn"] = c.msisdn
			}
			s := f.create(t, in)
			// The payer answers after PayerDelay; a pending credit settles a
			// minute later; an unanswered prompt expires after its TTL.
			for range 3 {
				f.advance(t, time.Minute)
			}
			got := f.get(t, s.ID)
			g := want{status: got.Status}
			if got.Failure != nil {
				g.failure = got.Failure.Code
			}
			if got.PaymentOutcome != nil {
				g.outcome = *got.PaymentOutcome
			}
			g.credited = f.balance(t, c.cur).Available
			if diff := cmp.Diff(c.want, g, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

// TestSessionReportAfterDeadlineBeforeRunner: a report that arrives after
// a session's deadline, before the due runner has ticked, meets the
// session the deadline made (found by the simulator, internal/sim
// funding.session.late): an open-banking checkout past its 30 minutes is
// expired, so a late approval is refused and moves no money; a pending
// credit past its settlement is settled, so a late failure is refused; an
// e-Transfer past its 30 days cannot be validated.
func TestSessionReportAfterDeadlineBeforeRunner(t *testing.T) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			f := newSessions(t, be.open(t), nil)
			ctx := context.Background()
			ob := f.create(t, f.body(funding.OpenBanking, "USD", "late-ob", 100))
			pend := f.create(t, f.body(funding.OpenBanking, "USD", "late-pend", 250))
			f.simulate(t, pend.ID, funding.SessionPendingSettlement, "")
			f.clk.Add(30*time.Minute + time.Millisecond) // no RunDue: the runner is late
			_, err := f.ss.SimulateSession(ctx, f.own, "", ob.ID, funding.SessionSettled, "")
			if !errors.Is(err, funding.ErrSessionInvalidForState) {
				t.Fatalf("settling an open-banking session past its expiry: %v, want ErrSessionInvalidForState", err)
			}
			if s := f.get(t, ob.ID); s.Status != funding.SessionExpired || s.Failure == nil || s.Failure.Code != funding.FailureSessionExpired || s.InflowID != nil {
				t.Errorf("late-approved session: %+v, want expired (session_expired) without inflow", s)
			}
			_, err = f.ss.SimulateSession(ctx, f.own, "", pend.ID, funding.SessionFailed, "")
			if !errors.Is(err, funding.ErrSessionInvalidForState) {
				t.Fatalf("failing a pending credit past its settlement: %v, want ErrSessionInvalidForState", err)
			}
			if s := f.get(t, pend.ID); s.Status != funding.SessionSettled || s.InflowID == nil {
				t.Errorf("pending credit past its settlement: %+v, want settled", s)
			}
			if b := f.balance(t, "USD"); b.Available != 250 || b.Current != 250 {
				t.Errorf("balance %+v, want 250 settled (the expired session's 100 never credited)", b)
			}
			if n := f.count(t, funding.EventInflowCompleted); n != 1 {
				t.Errorf("%d inflows.completed, want 1", n)
			}
			// A report in time still moves the session as asked.
			ok := f.create(t, f.body(funding.OpenBanking, "USD", "late-ok", 7))
			if s := f.simulate(t, ok.ID, funding.SessionSettled, ""); s.Status != funding.SessionSettled {
				t.Errorf("in-time settlement: %s", s.Status)
			}

			et := f.create(t, f.body(funding.ETransfer, "CAD", "late-et", 100))
			f.clk.Add(30 * 24 * time.Hour)
			if _, err := f.ss.ValidateETransfer(ctx, f.own, "", et.ID); !errors.Is(err, funding.ErrNotETransfer) {
				t.Errorf("validating an e-Transfer past its 30 days: %v, want ErrNotETransfer", err)
			}
		})
	}
}
