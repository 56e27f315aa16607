package acquiring_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/acquiring"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/payments"
	"github.com/corebank/corebank/service"
	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/memory"
)

var (
	keyOnce sync.Once
	key     *rsa.PrivateKey
)

// keys is the CardKeys of one API key, "k1".
type keys struct{}

func (keys) CardKey(_ context.Context, id string) (*rsa.PrivateKey, error) {
	if id != "k1" {
		return nil, errors.New("unknown key")
	}
	return testKey(), nil
}

func testKey() *rsa.PrivateKey {
	keyOnce.Do(func() {
		var err error
		if key, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
			panic(err)
		}
	})
	return key
}

type env struct {
	t      *testing.T
	svc    *acquiring.Service
	led    *ledger.Service
	db     storage.Backend
	clock  *clock.Mock
	acct   string
	caller corebank.Caller
}

func newEnv(t *testing.T, fees payments.FeeSchedule) *env {
	t.Helper()
	return newEnvOn(t, memory.New(), fees)
}

// newEnvOn is newEnv over db.
func newEnvOn(t *testing.T, db storage.Backend, fees payments.FeeSchedule) *env {
	t.Helper()
	mock := clock.NewMock()
	mock.Set(time.Date(2026, 3, 15, 12, 0, 0, 0, time.UTC))
	led := ledger.NewService(db, &ledger.Options{Deps: service.Deps{Clock: mock}})
	acct, err := led.CreateAccount(context.Background(), corebank.System(), ledger.NewAccount{EntityID: "E1", Type: "checking", Currency: "USD", DisplayName: "Shop"})
	if err != nil {
		t.Fatal(err)
	}
	svc := acquiring.NewService(db, led, &acquiring.Options{Deps: service.Deps{Clock: mock}, Keys: keys{}, Fees: fees})
	return &env{t: t, svc: svc, led: led, db: db, clock: mock, acct: acct.ID, caller: corebank.Caller{EntityID: "E1", KeyID: "k1"}}
}

func encrypt(t *testing.T, number string) string {
	t.Helper()
	pt, _ := json.Marshal(map[string]any{"card_number": number, "expiration_month": 12, "expiration_year": "2030", "cvv": "123"})
	ct, err := rsa.EncryptOAEP(sha256.New(), rand.Reader, &testKey().PublicKey, pt, nil)
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(ct)
}

func cardParams(data, auth string) *acquiring.ActionParams {
	yes, no, n := true, false, 24
	return &acquiring.ActionParams{Action: "confirm", Category: "collections", PaymentType: acquiring.CardAcq,
		PaymentTypeData: &acquiring.TypeDataInput{Data: data, AuthModel: auth,
			BillingAddress: &acquiring.BillingAddress{Country: "GB", AddressLineOne: "1 Main St", City: "London", State: "LDN"},
			BrowserData: &acquiring.BrowserData{IPAddress: "203.0.113.7", UserAgent: "UA", AcceptHeader: "*/*", Language: "en",
				ColorDepth: &n, ScreenHeight: &n, ScreenWidth: &n, TimeZoneOffset: &n, JavaEnabled: &no, JavascriptEnabled: &yes}},
		Customer:  &acquiring.Customer{FirstName: "Ada", LastName: "Lovelace", Email: "ada@example.com"},
		ReturnURL: "https://shop.example/back"}
}

func (e *env) balance(id string) int64 {
	e.t.Helper()
	b, err := e.led.GetBalance(context.Background(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	return b.Settled
}

// TestCompletedCreditsOnceLessFee: a completed card payment credits the
// account charge_amount minus the fee schedule's card-acq fee, the fee
// account the fee, from the card clearing account; repeating the outcome
// moves nothing more.
func TestCompletedCreditsOnceLessFee(t *testing.T) {
	e := newEnv(t, payments.FeeSchedule{"card-acq": {Fixed: 30, BasisPoints: 290}, "*": {Fixed: 5}})
	ctx := context.Background()
	in, err := e.svc.CreateIntent(ctx, e.caller, acquiring.NewIntent{Currency: "USD", Amount: 10000, AccountID: e.acct,
		Reference: "o-1", IntentAction: cardParams(encrypt(t, "4242424242424242"), acquiring.Auth3DSRequired)})
	if err != nil {
		t.Fatal(err)
	}
	a := in.IntentAction
	if a.ApplicableFee != 320 || a.ChargeAmount != 10000 || a.Status != acquiring.ActionPendingUserAction || in.Status != acquiring.IntentProcessing {
		t.Fatalf("action %+v", a)
	}
	if got := e.balance(e.acct); got != 0 {
		t.Fatalf("credited %d before completion", got)
	}
	for range 3 {
		if _, err := e.svc.SimulateAction(ctx, e.caller, "", a.ID, acquiring.ActionCompleted, ""); err != nil {
			t.Fatal(err)
		}
	}
	got := []int64{e.balance(e.acct), e.balance(e.led.SystemAccount("USD", ledger.PurposeFees)),
		e.balance(e.led.SystemAccount("USD", ledger.PurposeClearingCard))}
	if diff := cmp.Diff([]int64{9680, 320, -10000}, got); diff != "" {
		t.Errorf("account, fees, clearing (-want +got)\n%s", diff)
	}
	// The wallet's fee is the schedule's default.
	w, err := e.svc.CreateIntent(ctx, e.caller, acquiring.NewIntent{Currency: "USD", Amount: 100, AccountID: e.acct, Reference: "o-2",
		IntentAction: &acquiring.ActionParams{Action: "confirm", Category: "collections", PaymentType: acquiring.WalletPayAcq,
			PaymentTypeData: &acquiring.TypeDataInput{AuthModel: acquiring.Auth3DSDisabled, BillingAddress: &acquiring.BillingAddress{Country: "GB"}},
			Customer:        &acquiring.Customer{FirstName: "A", LastName: "L", Email: "a@example.com"}}})
	if err != nil {
		t.Fatal(err)
	}
	if w.IntentAction.ApplicableFee != 5 || e.balance(e.acct) != 9680+95 {
		t.Errorf("wallet fee %d, balance %d", w.IntentAction.ApplicableFee, e.balance(e.acct))
	}
}

// TestScope: another entity's caller sees a missing intent, a library
// caller without a key cannot send card data, a read-only one writes
// nothing.
func TestScope(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	in, err := e.svc.CreateIntent(ctx, e.caller, acquiring.NewIntent{Currency: "USD", Amount: 100, AccountID: e.acct, Reference: "s"})
	if err != nil {
		t.Fatal(err)
	}
	other := corebank.Caller{EntityID: "E2", KeyID: "k1"}
	if _, err := e.svc.GetIntent(ctx, other, "", in.ID); !errors.Is(err, acquiring.ErrIntentNotFound) {
		t.Errorf("foreign get: %v", err)
	}
	if _, err := e.svc.CancelIntent(ctx, other, "", in.ID, ""); !errors.Is(err, acquiring.ErrIntentNotFound) {
		t.Errorf("foreign cancel: %v", err)
	}
	_, err = e.svc.ConfirmIntent(ctx, corebank.Caller{EntityID: "E1"}, acquiring.Confirmation{PaymentIntentID: in.ID,
		IntentAction: cardParams(encrypt(t, "4242424242424242"), acquiring.Auth3DSDisabled)})
	var ce *corebank.Error
	if !errors.As(err, &ce) || ce.Fields["intent_action.payment_type_data.data"] == "" {
		t.Errorf("keyless card: %v", err)
	}
	if _, err := e.svc.CancelIntent(ctx, corebank.Caller{EntityID: "E1", ReadOnly: true}, "", in.ID, ""); !errors.Is(err, corebank.ErrForbidden) {
		t.Errorf("read-only cancel: %v", err)
	}
}

// TestChallengeExpiry: an unanswered challenge fails after ChallengeTTL
// through the due queue, once.
func TestChallengeExpiry(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	in, err := e.svc.CreateIntent(ctx, e.caller, acquiring.NewIntent{Currency: "USD", Amount: 100, AccountID: e.acct, Reference: "x",
		IntentAction: cardParams(encrypt(t, "4242424242424242"), acquiring.Auth3DSRequired)})
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Add(29 * time.Minute)
	if n, err := e.svc.RunDue(ctx, e.clock.Now()); n != 0 || err != nil {
		t.Fatalf("early: %d %v", n, err)
	}
	e.clock.Add(time.Minute)
	if n, err := e.svc.RunDue(ctx, e.clock.Now()); n != 1 || err != nil {
		t.Fatalf("due: %d %v", n, err)
	}
	got, err := e.svc.GetIntent(ctx, e.caller, "", in.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != acquiring.IntentFailed || *got.IntentAction.StatusReason != acquiring.ReasonAuthenticationTimeout {
		t.Errorf("after expiry: %+v", got)
	}
}

// TestMigrations: acquiring is new, so it has nothing to migrate.
func TestMigrations(t *testing.T) {
	e := newEnv(t, nil)
	if n, err := storage.Migrate(context.Background(), e.db, e.svc.Migrations()...); n != 0 || err != nil {
		t.Errorf("Migrate = %d, %v", n, err)
	}
}
