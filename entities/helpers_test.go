package entities_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"log/slog"
	mrand "math/rand"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/entities"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/service"
	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/memory"
)

// RSA generation costs far more than everything else these tests do, so
// they share three keys, handed out in turn.
var (
	rsaOnce sync.Once
	rsaKeys [3]*rsa.PrivateKey
	rsaNext atomic.Uint64
)

func cachedKey() (*rsa.PrivateKey, error) {
	rsaOnce.Do(func() {
		for i := range rsaKeys {
			k, err := rsa.GenerateKey(rand.Reader, 2048)
			if err != nil {
				panic(err)
			}
			rsaKeys[i] = k
		}
	})
	return rsaKeys[rsaNext.Add(1)%uint64(len(rsaKeys))], nil
}

// start is the mock clock's start: 2026-11-22 10:00 UTC.
var start = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// env is one service over an in-memory store, bootstrapped.
type env struct {
	t     testing.TB
	db    storage.Backend
	clock *clock.Mock
	led   *ledger.Service
	s     *entities.Service
	root  *entities.BootstrapResult
	logs  *bytes.Buffer
}

type envOpt func(*entities.Options)

func newEnv(tb testing.TB, opts ...envOpt) *env {
	tb.Helper()
	return newEnvOn(tb, memory.New(), opts...)
}

func newEnvOn(tb testing.TB, db storage.Backend, opts ...envOpt) *env {
	tb.Helper()
	tb.Cleanup(func() { db.Close() })
	clk := clock.NewMock()
	clk.Set(start)
	ids := corebank.NewIDs(mrand.New(mrand.NewSource(1)))
	led := ledger.NewService(db, &ledger.Options{Deps: service.Deps{Clock: clk, IDs: ids}, Gate: entities.Gate{}})
	logs := &bytes.Buffer{}
	o := &entities.Options{Deps: service.Deps{Clock: clk, IDs: ids,
		Logger: slog.New(slog.NewJSONHandler(&lockedWriter{w: logs}, nil))}, GenerateKey: cachedKey}
	for _, f := range opts {
		f(o)
	}
	s := entities.NewService(db, led, mustSealer(tb), o)
	e := &env{t: tb, db: db, clock: clk, led: led, s: s, logs: logs}
	res, created, err := s.Bootstrap(context.Background())
	if err != nil || !created {
		tb.Fatalf("Bootstrap = %v, %v", created, err)
	}
	e.root = res
	tb.Cleanup(func() { e.assertNoSecrets(tb, "") })
	return e
}

// secrets lists every identity and document number the fixtures and tests
// store. None may ever appear unmasked in a response, event, log line or
// stored value.
var secrets = []string{"22212345678", "70012345678", "A12345678", "123456789", "NIN00998877", "987654321", "P99887766"}

// assertNoSecrets checks extra (response JSON), the env's log lines, every
// event payload and every stored value of the entities buckets for any
// unmasked secret, and API key secrets in logs and events.
func (e *env) assertNoSecrets(tb testing.TB, extra string) {
	tb.Helper()
	var all bytes.Buffer
	all.WriteString(extra)
	all.WriteString(e.logs.String())
	evs, err := e.led.Events(context.Background(), "", 1000)
	if errors.Is(err, storage.ErrClosed) {
		return // checked by the test that closed it
	} else if err != nil {
		tb.Fatal(err)
	}
	for _, ev := range evs {
		all.Write(ev.Object)
	}
	stored := e.stored(tb)
	for _, s := range secrets {
		if bytes.Contains(all.Bytes(), []byte(s)) {
			tb.Errorf("unmasked number %q appears in a response, event or log", s)
		}
		if bytes.Contains(stored, []byte(s)) {
			tb.Errorf("number %q is stored unsealed", s)
		}
	}
	logsAndEvents := all.Bytes()[len(extra):]
	for _, k := range []string{e.root.APIKey, e.root.ReadOnlyAPIKey} {
		if bytes.Contains(logsAndEvents, []byte(k)) || bytes.Contains(stored, []byte(k)) {
			tb.Errorf("an API key secret appears in logs, events or storage")
		}
	}
}

// stored concatenates every key and value of the entities buckets.
func (e *env) stored(tb testing.TB) []byte {
	tb.Helper()
	var out []byte
	err := e.db.View(context.Background(), func(tx storage.Tx) error {
		for _, b := range []storage.Bucket{"entities", "entities.keys", "entities.docs", "entities.subs"} {
			if err := tx.Scan(b, storage.ScanOptions{}, func(k, v []byte) error {
				out = append(append(out, k...), v...)
				return nil
			}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, storage.ErrClosed) {
		tb.Fatal(err)
	}
	return out
}

type lockedWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func mustSealer(tb testing.TB) *corebank.Sealer {
	tb.Helper()
	s, err := corebank.NewSealer(bytes.Repeat([]byte{42}, 32))
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// individual returns a valid individual body; change it before use.
func individual() entities.NewIndividual {
	return entities.NewIndividual{
		Name: "Ada Obi",
		Person: &entities.PersonInput{FirstName: "Ada", LastName: "Obi", DateOfBirth: "1990-05-17",
			Email: "ada@example.com", Nationality: "NG", Gender: "f", Phonenumber: "+2348012345678",
			BVN: "22212345678", NIN: "70012345678"},
		Address: &entities.AddressInput{Line1: "1 Marina", City: "Lagos", State: "Lagos", PostalCode: "101001",
			CountryCode: "NG"},
		Identification: &entities.IdentificationInput{
			Document: &entities.DocumentInput{Type: "international_passport", Number: "A12345678",
				IssueDate: "2020-01-10", ExpiryDate: "2030-01-09", IssuingCountry: "NG"},
			ProofOfAddress: &entities.ProofOfAddressInput{Type: "utility_bill"},
		},
		Meta: map[string]string{"tax_id": "TIN-1"},
	}
}

// business returns a valid business body that meets every submission
// requirement except the certificate document.
func business() entities.NewBusiness {
	return entities.NewBusiness{
		Name: "Acme Ltd",
		Business: &entities.BusinessInput{LegalName: "Acme Limited", Type: "llc", Email: "ops@acme.example",
			RegistrationNumber: "RC123456", Phonenumber: "+14155552671", Website: "https://acme.example",
			IncorporationMeta: &entities.IncorporationMetaInput{Year: 2015, Month: 6, Country: "US", State: "DE"}},
		Address: &entities.AddressInput{Line1: "2 Main St", City: "Dover", State: "DE", PostalCode: "19901", CountryCode: "US"},
		BusinessOfficers: []entities.OfficerInput{{JobTitle: "CEO", IsControlPerson: true, IsBeneficialOwner: true,
			OwnershipPercentage: 60, Person: &entities.OfficerPersonInput{PersonInput: entities.PersonInput{
				FirstName: "Sam", LastName: "Lee", DateOfBirth: "1980-02-29", Email: "sam@acme.example",
				Nationality: "US", SSN: "123456789"}}}},
		Meta: entities.BusinessMetaInput{Strings: entities.Meta{"tax_id": "12-3456789"}, SalesChannels: []string{"online", "retail"}},
	}
}

func (e *env) individual(caller string, mutate func(*entities.NewIndividual)) *entities.Composite {
	e.t.Helper()
	in := individual()
	if mutate != nil {
		mutate(&in)
	}
	c, err := e.s.CreateIndividual(context.Background(), corebank.As(caller), in)
	if err != nil {
		e.t.Fatalf("CreateIndividual: %v", err)
	}
	return c
}

func (e *env) business(caller string) *entities.Composite {
	e.t.Helper()
	c, err := e.s.CreateBusiness(context.Background(), corebank.As(caller), business())
	if err != nil {
		e.t.Fatalf("CreateBusiness: %v", err)
	}
	return c
}

// events returns every event in the outbox.
func (e *env) events() []ledger.Event {
	e.t.Helper()
	evs, err := e.led.Events(context.Background(), "", 1000)
	if err != nil {
		e.t.Fatal(err)
	}
	return evs
}

func toJSON(tb testing.TB, v any) string {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// fieldsOf returns the Fields of a corebank validation error, failing the
// test for any other error.
func fieldsOf(tb testing.TB, err error) map[string]string {
	tb.Helper()
	ce, ok := err.(*corebank.Error)
	if !ok || ce.Kind != corebank.KindInvalid {
		tb.Fatalf("err = %v, want a validation error", err)
	}
	return ce.Fields
}

var ctx = context.Background()

const time1m = time.Minute

// sys is the trusted in-process caller, for setting up and inspecting.
var sys = corebank.System()
