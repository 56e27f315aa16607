package verify_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/bank/verify"
	"github.com/corebank/corebank/corebanktest"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/payments"
	"github.com/corebank/corebank/storage"
)

// fixture is a bank after a realistic mix of work, with the IDs the
// damage tests corrupt.
type fixture struct {
	b        *corebanktest.Bank
	account  string // funded USD account
	pending  string // a pending transfer
	settled  string // a settled transfer
	auth     string // a pending card authorization
	card     string
	inflow   string // a pending inflow
	details  string // account details
	order    string // an approved capital order
	detailID string // a payment detail
}

// mixedBank builds a bank and does what a day of business does: accounts
// opened and funded, inflows settled and pending, transfers settled,
// failed and pending, card authorizations approved, cleared and declined,
// funding sessions settled, a card payment with a refund, account details
// and a capital order.
func mixedBank(t *testing.T) *fixture {
	t.Helper()
	b := corebanktest.New(t)
	hooks := b.CaptureWebhooks()
	f := &fixture{b: b}
	usd := b.FundedAccount("USD", 10_000_000)
	f.account = usd.ID
	eur := b.FundedAccount("EUR", 500_000)

	var inflow struct{ ID string }
	b.Call(http.StatusCreated, "POST", "/sandbox/inflows", map[string]any{"account_id": usd.ID, "amount": 7_000, "settle": false}, &inflow)
	f.inflow = inflow.ID
	var settledInflow struct{ ID string }
	b.Call(http.StatusCreated, "POST", "/sandbox/inflows", map[string]any{"account_id": eur.ID, "amount": 3_000, "settle": false}, &settledInflow)

	var vendor, detail struct{ ID string }
	b.Call(http.StatusCreated, "POST", "/counterparties", map[string]any{"type": "individual", "profile": map[string]any{
		"first_name": "Ada", "last_name": "Lovelace", "relationship": "employee", "email": "ada@example.com",
		"address": map[string]any{"line1": "12 St James's Sq", "city": "London", "country": "GB"},
	}}, &vendor)
	b.Call(http.StatusCreated, "POST", "/payment-details", map[string]any{
		"counterparty_id": vendor.ID, "payment_method": payments.BankTransfer, "currency": "USD", "country": "US",
		"scheme": payments.SchemeACH, "account_holder_name": "Ada Lovelace",
		"routing_number": "091000019", "account_number": "987654321", "account_type": "savings",
	}, &detail)
	f.detailID = detail.ID
	transfer := func(amount int64) string {
		var tr struct{ ID string }
		b.Call(http.StatusCreated, "POST", "/transfers", map[string]any{
			"account_id": usd.ID, "payment_detail_id": detail.ID, "amount": amount,
			"payment_type": payments.BankTransfer, "narration": "Salary", "unique_reference": "pay-" + strconv.FormatInt(amount, 10),
		}, &tr)
		return tr.ID
	}
	f.settled = transfer(10_000)
	// A book transfer to another account of the bank, and one reversed.
	other := b.FundedAccount("USD", 1_000)
	var book struct{ ID string }
	b.Call(http.StatusCreated, "POST", "/payment-details", map[string]any{
		"counterparty_id": vendor.ID, "payment_method": payments.BookTransfer, "currency": "USD",
		"account_holder_name": "Ada Lovelace", "account_number": other.ServiceBAN,
	}, &book)
	b.Call(http.StatusCreated, "POST", "/transfers", map[string]any{
		"account_id": usd.ID, "payment_detail_id": book.ID, "amount": 4_000,
		"payment_type": payments.BookTransfer, "narration": "Rent", "unique_reference": "book-1",
	}, nil)
	reversed := transfer(15_000)
	b.Call(http.StatusOK, "POST", "/sandbox/transfers/"+reversed+"/simulate", map[string]any{"outcome": "successful"}, nil)
	b.Call(http.StatusOK, "POST", "/sandbox/transfers/"+reversed+"/simulate", map[string]any{"outcome": "reversed"}, nil)
	failed := transfer(20_000)
	b.Call(http.StatusOK, "POST", "/sandbox/transfers/"+failed+"/simulate", map[string]any{"outcome": "failed"}, nil)

	card := b.IssueCard(usd.ID)
	f.card = card.ID
	authorize := func(amount int64) string {
		var tx struct{ ID string }
		b.Call(http.StatusCreated, "POST", "/sandbox/cards/"+card.ID+"/authorizations",
			map[string]any{"amount": amount, "mcc": 5812, "merchant_name": "Cafe"}, &tx)
		return tx.ID
	}
	cleared := authorize(1_500)
	b.Call(http.StatusOK, "POST", "/sandbox/card-transactions/"+cleared+"/clear", map[string]any{"amount": 1_200}, nil)
	authorize(100_000_000) // declined: more than the balance

	b.SettledSession("open-banking", usd.ID, 25_000)
	intent := b.CardPayment(usd.ID, 5_000, "4242")
	if intent.IntentAction != nil {
		b.RefundCardPayment(intent.IntentAction.ID, 1_000, true)
	}
	var det struct{ ID string }
	b.Call(http.StatusCreated, "POST", "/account-details", map[string]any{"account_id": usd.ID, "terminate_after": 30}, &det)
	f.details = det.ID

	product := b.FixedReturnProduct("USD", 90, "0.10")
	f.order = b.ApprovedOrder(product.ID, usd.ID, 100_000).ID

	b.Advance(61 * time.Second) // the first transfer settles, the pending inflows too
	b.Call(http.StatusCreated, "POST", "/sandbox/inflows", map[string]any{"account_id": usd.ID, "amount": 7_000, "settle": false}, &inflow)
	f.inflow = inflow.ID
	f.pending = transfer(30_000)
	f.auth = authorize(2_500)
	hooks.Wait("outflows.created")
	ended(t, b, usd.ID)
	return f
}

// ended does what removes or ends objects: an account closed, a card
// deleted, a counterparty deactivated, account details deleted, a webhook
// deleted, and a child entity made.
func ended(t *testing.T, b *corebanktest.Bank, account string) {
	t.Helper()
	ctx := context.Background()
	root := corebank.As(b.Root.EntityID)
	a, err := b.Ledger.CreateAccount(ctx, root, ledger.NewAccount{EntityID: b.Root.EntityID, Type: ledger.TypeChecking, Currency: "GBP", DisplayName: "Closed"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Ledger.DeleteAccount(ctx, root, "", a.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Cards.DeleteCard(ctx, root, "", b.IssueCard(account).ID); err != nil {
		t.Fatal(err)
	}
	var cp, det, hook struct{ ID string }
	b.Call(http.StatusCreated, "POST", "/counterparties", map[string]any{"type": "individual", "profile": map[string]any{
		"first_name": "Grace", "last_name": "Hopper", "relationship": "vendor", "email": "grace@example.com",
		"address": map[string]any{"line1": "1 Navy Way", "city": "Arlington", "country": "US"}}}, &cp)
	if _, err := b.Payments.DeactivateCounterparty(ctx, root, "", cp.ID); err != nil {
		t.Fatal(err)
	}
	b.Call(http.StatusCreated, "POST", "/account-details", map[string]any{"account_id": account}, &det)
	if _, err := b.Ledger.DeleteAccountDetails(ctx, root, "", det.ID); err != nil {
		t.Fatal(err)
	}
	// The second webhook has a receiver of its own: the bank's Receiver
	// checks every delivery it gets against the first one's secret.
	sink := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(sink.Close)
	b.Call(http.StatusCreated, "POST", "/entity-webhooks", map[string]any{"url": sink.URL, "expires_in": 86400,
		"enabled_events": map[string]any{"all": true}, "description": "second"}, &hook)
	if _, err := b.Webhooks.DeleteWebhook(ctx, root, "", hook.ID); err != nil {
		t.Fatal(err)
	}
	b.Call(http.StatusCreated, "POST", "/individual-entities", map[string]any{
		"name": "Ada Obi",
		"person": map[string]any{"first_name": "Ada", "last_name": "Obi", "date_of_birth": "1990-04-01",
			"email": "ada@example.com", "nationality": "NG", "gender": "f", "phonenumber": "+2348012345678"},
		"address": map[string]any{"line_1": "1 Marina", "city": "Lagos", "state": "Lagos", "postal_code": "101001", "country_code": "NG"},
	}, nil)
}

// findings runs verify over db and returns the findings as lines.
func findings(t *testing.T, db storage.Backend) ([]string, verify.Summary) {
	t.Helper()
	var got []string
	sum, err := verify.Run(context.Background(), db, func(f storage.Finding) { got = append(got, f.String()) })
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	return got, sum
}

// TestClean: a bank after a realistic mix of work has nothing to report.
func TestClean(t *testing.T) {
	f := mixedBank(t)
	got, sum := findings(t, f.b.DB)
	for _, l := range got {
		t.Error(l)
	}
	if sum.Accounts < 3 || sum.Entries < 5 || sum.DueItems < 5 {
		t.Errorf("summary %+v: checked too little", sum)
	}
	t.Logf("%+v", sum)
}

// Buckets the damage below writes to, as the domains name them.
const (
	entries  = storage.Bucket("ledger.entries")
	balances = storage.Bucket("ledger.balances")
	history  = storage.Bucket("ledger.history")
	pending  = storage.Bucket("ledger.pending")
	cardTxs  = storage.Bucket("cards.transactions")
	cardIdx  = storage.Bucket("cards.index")
	payIdx   = storage.Bucket("payments.index")
)

// TestDamage corrupts a mixed bank's store one way at a time, writing raw
// keys behind the services' backs, and checks that verify reports exactly
// what that damage breaks: the kind and the objects of every finding.
func TestDamage(t *testing.T) {
	for _, tc := range []struct {
		name string
		// damage corrupts the store and returns the findings expected,
		// each "kind id...".
		damage func(t *testing.T, tx storage.Tx, f *fixture) []string
	}{
		{"EntryUnbalanced", func(t *testing.T, tx storage.Tx, f *fixture) []string {
			// The first entry (the first account's funding) gets one unit
			// more on its first line.
			id, raw := first(t, tx, entries, nil)
			e := decodeEntry(t, raw)
			e.lines[0].amount++
			put(t, tx, entries, []byte(id), e.encode())
			return []string{"entry_unbalanced " + id, "balance_mismatch " + e.lines[0].account}
		}},
		{"BalanceChanged", func(t *testing.T, tx storage.Tx, f *fixture) []string {
			raw := get(t, tx, balances, []byte(f.account))
			b := decodeBalance(t, raw)
			b.settled += 100
			put(t, tx, balances, []byte(f.account), b.encode())
			return []string{"balance_mismatch " + f.account, "history_mismatch " + f.account, "trial_balance USD"}
		}},
		{"HistoryLineLost", func(t *testing.T, tx storage.Tx, f *fixture) []string {
			k, _ := last(t, tx, history, []byte(f.account+"/S/"))
			del(t, tx, history, k)
			return []string{"history_mismatch " + f.account}
		}},
		{"AuthorizationAmountChanged", func(t *testing.T, tx storage.Tx, f *fixture) []string {
			var rec map[string]any
			unmarshal(t, get(t, tx, cardTxs, []byte(f.auth)), &rec)
			rec["amount_authorized"] = 9_999
			put(t, tx, cardTxs, []byte(f.auth), marshal(t, rec))
			return []string{"hold_mismatch " + f.auth + " " + rec["hold_id"].(string)}
		}},
		{"HoldNotPendingInIndex", func(t *testing.T, tx storage.Tx, f *fixture) []string {
			var rec struct {
				HoldID string `json:"hold_id"`
			}
			unmarshal(t, get(t, tx, cardTxs, []byte(f.auth)), &rec)
			k, _ := findKey(t, tx, pending, []byte(f.account+"/"), rec.HoldID)
			del(t, tx, pending, k)
			return []string{"index_missing " + rec.HoldID + " " + f.account}
		}},
		{"RecordCorrupt", func(t *testing.T, tx storage.Tx, f *fixture) []string {
			// The authorization no longer decodes: reported once, and its
			// hold is left without an owner; its list key and expiry,
			// which name it, are not reported again.
			var rec struct {
				HoldID string `json:"hold_id"`
			}
			unmarshal(t, get(t, tx, cardTxs, []byte(f.auth)), &rec)
			put(t, tx, cardTxs, []byte(f.auth), []byte("{not json"))
			return []string{"record_corrupt " + f.auth, "unclaimed " + rec.HoldID}
		}},
		{"TransferLost", func(t *testing.T, tx storage.Tx, f *fixture) []string {
			// The pending transfer's record goes: its holds are owned by
			// nothing, and its list keys, reference and check name nothing.
			var holds []string
			err := tx.Scan(storage.Bucket("ledger.holds"), storage.ScanOptions{}, func(k, v []byte) error {
				if bytes.Contains(v, []byte(f.pending)) {
					holds = append(holds, string(k))
				}
				return nil
			})
			if err != nil || len(holds) == 0 {
				t.Fatalf("holds of transfer %s: %v, %d found", f.pending, err, len(holds))
			}
			del(t, tx, storage.Bucket("payments.transfers"), []byte(f.pending))
			want := []string{"index_dangling " + f.pending, "index_dangling " + f.pending, "index_dangling " + f.pending,
				"due_orphan " + f.pending}
			for _, h := range holds {
				want = append(want, "unclaimed "+h)
			}
			return want
		}},
		{"IndexKeyMissing", func(t *testing.T, tx storage.Tx, f *fixture) []string {
			k, _ := findKey(t, tx, payIdx, []byte("tr/"), "/s:pending/"+f.pending)
			del(t, tx, payIdx, k)
			return []string{"index_missing " + f.pending}
		}},
		{"IndexKeyDangling", func(t *testing.T, tx storage.Tx, f *fixture) []string {
			const ghost = "01ZZZZZZZZZZZZZZZZZZZZZZZZ"
			put(t, tx, cardIdx, []byte("l/"+f.b.Root.EntityID+"/"+ghost), nil)
			return []string{"index_dangling " + ghost}
		}},
		{"IndexKeyStale", func(t *testing.T, tx storage.Tx, f *fixture) []string {
			// The pending transfer is listed as successful too.
			put(t, tx, payIdx, []byte("tr/"+f.b.Root.EntityID+"/s:successful/"+f.pending), nil)
			return []string{"index_stale " + f.pending}
		}},
		{"CountChanged", func(t *testing.T, tx storage.Tx, f *fixture) []string {
			var n [8]byte
			n[7] = 42
			put(t, tx, storage.Bucket("ledger.account_counts"), []byte("a/"), n[:])
			return []string{"count_mismatch a/"}
		}},
		{"DueItemOrphan", func(t *testing.T, tx storage.Tx, f *fixture) []string {
			const ghost = "01ZZZZZZZZZZZZZZZZZZZZZZZZ"
			if err := storage.Schedule(tx, "ledger.hold", 1, ghost); err != nil {
				t.Fatal(err)
			}
			return []string{"due_orphan " + ghost}
		}},
		{"DueItemUnknownKind", func(t *testing.T, tx storage.Tx, f *fixture) []string {
			if err := storage.Schedule(tx, "nobody.runs.this", 1, f.pending); err != nil {
				t.Fatal(err)
			}
			return []string{"due_unknown_kind " + f.pending}
		}},
		{"DueItemMissing", func(t *testing.T, tx storage.Tx, f *fixture) []string {
			k, _ := findKey(t, tx, storage.BucketDue, []byte("cards.authorization/"), f.auth)
			del(t, tx, storage.BucketDue, k)
			return []string{"due_missing " + f.auth}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := mixedBank(t)
			var want []string
			err := f.b.DB.Update(context.Background(), func(tx storage.Tx) error {
				want = tc.damage(t, tx, f)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			sum, err := verify.Run(context.Background(), f.b.DB, func(fd storage.Finding) {
				if fd.Detail == "" {
					t.Errorf("finding %s says nothing of what differs", fd)
				}
				got = append(got, fd.Kind+" "+strings.Join(fd.IDs, " "))
			})
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(want)
			slices.Sort(got)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
			if sum.Findings != len(got) {
				t.Errorf("summary counts %d findings, %d reported", sum.Findings, len(got))
			}
		})
	}
}

func get(t *testing.T, tx storage.Tx, b storage.Bucket, k []byte) []byte {
	t.Helper()
	v, err := tx.Get(b, k)
	if err != nil {
		t.Fatalf("get %s %q: %v", b, k, err)
	}
	return v
}

func put(t *testing.T, tx storage.Tx, b storage.Bucket, k, v []byte) {
	t.Helper()
	if err := tx.Put(b, k, v); err != nil {
		t.Fatalf("put %s %q: %v", b, k, err)
	}
}

func del(t *testing.T, tx storage.Tx, b storage.Bucket, k []byte) {
	t.Helper()
	if err := tx.Delete(b, k); err != nil {
		t.Fatalf("delete %s %q: %v", b, k, err)
	}
}

// first returns the first key under prefix and its value.
func first(t *testing.T, tx storage.Tx, b storage.Bucket, prefix []byte) (string, []byte) {
	t.Helper()
	return scanOne(t, tx, b, storage.ScanOptions{Prefix: prefix, Limit: 1})
}

// last returns the last key under prefix and its value.
func last(t *testing.T, tx storage.Tx, b storage.Bucket, prefix []byte) ([]byte, []byte) {
	t.Helper()
	k, v := scanOne(t, tx, b, storage.ScanOptions{Prefix: prefix, Reverse: true, Limit: 1})
	return []byte(k), v
}

func scanOne(t *testing.T, tx storage.Tx, b storage.Bucket, o storage.ScanOptions) (string, []byte) {
	t.Helper()
	var key string
	var val []byte
	err := tx.Scan(b, o, func(k, v []byte) error {
		key, val = string(k), bytes.Clone(v)
		return nil
	})
	if err != nil || key == "" {
		t.Fatalf("scan %s %q: %v, nothing found", b, o.Prefix, err)
	}
	return key, val
}

// findKey returns the key under prefix that contains part.
func findKey(t *testing.T, tx storage.Tx, b storage.Bucket, prefix []byte, part string) ([]byte, []byte) {
	t.Helper()
	var key, val []byte
	err := tx.Scan(b, storage.ScanOptions{Prefix: prefix}, func(k, v []byte) error {
		if bytes.Contains(k, []byte(part)) {
			key, val = bytes.Clone(k), bytes.Clone(v)
			return storage.ErrStop
		}
		return nil
	})
	if err != nil || key == nil {
		t.Fatalf("no key of %s under %q contains %q (%v)", b, prefix, part, err)
	}
	return key, val
}

func unmarshal(t *testing.T, raw []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatal(err)
	}
}

func marshal(t *testing.T, v any) []byte {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// entry is a journal entry as ledger/hot_records.go stores it (version 2:
// key, created, narration, reference, meta, then the lines), rebuilt here
// so that a test can corrupt one as a stray write would.
type entry struct {
	key                  string
	created              int64
	narration, reference string
	meta                 map[string]string
	lines                []entryLine
}

type entryLine struct {
	account  string
	side     byte
	amount   int64
	currency string
}

func decodeEntry(t *testing.T, raw []byte) *entry {
	t.Helper()
	d := storage.Decoder{B: raw}
	if v := d.Byte(); v != 2 {
		t.Fatalf("entry version %d, this test reads 2", v)
	}
	e := &entry{key: d.Str(), created: d.Varint(), narration: d.Str(), reference: d.Str(), meta: d.StrMap()}
	for n := d.Uvarint(); n > 0; n-- {
		e.lines = append(e.lines, entryLine{account: d.Str(), side: d.Byte(), amount: d.Varint(), currency: d.Str()})
	}
	if d.Err != nil {
		t.Fatal(d.Err)
	}
	return e
}

func (e *entry) encode() []byte {
	enc := storage.Encoder{}
	enc.Byte(2)
	enc.Str(e.key)
	enc.Varint(e.created)
	enc.Str(e.narration)
	enc.Str(e.reference)
	enc.StrMap(e.meta)
	enc.Uvarint(uint64(len(e.lines)))
	for _, l := range e.lines {
		enc.Str(l.account)
		enc.Byte(l.side)
		enc.Varint(l.amount)
		enc.Str(l.currency)
	}
	return enc.B
}

// balance is a balance record as ledger/hot_records.go stores it
// (version 1).
type balance struct {
	flags                                          byte
	currency                                       string
	entity                                         []byte
	settled, pendingDebits, pendingCredits, cr, dr int64
	seq                                            uint64
	lastMs                                         int64
}

func decodeBalance(t *testing.T, raw []byte) *balance {
	t.Helper()
	d := storage.Decoder{B: raw}
	if v := d.Byte(); v != 1 {
		t.Fatalf("balance version %d, this test reads 1", v)
	}
	b := &balance{flags: d.Byte(), currency: d.Str(), entity: d.Raw(), settled: d.Varint(), pendingDebits: d.Varint(),
		pendingCredits: d.Varint(), cr: d.Varint(), dr: d.Varint(), seq: d.Uvarint(), lastMs: d.Varint()}
	if d.Err != nil {
		t.Fatal(d.Err)
	}
	return b
}

func (b *balance) encode() []byte {
	e := storage.Encoder{}
	e.Byte(1)
	e.Byte(b.flags)
	e.Str(b.currency)
	e.Bytes(b.entity)
	for _, v := range []int64{b.settled, b.pendingDebits, b.pendingCredits, b.cr, b.dr} {
		e.Varint(v)
	}
	e.Uvarint(b.seq)
	e.Varint(b.lastMs)
	return e.B
}
