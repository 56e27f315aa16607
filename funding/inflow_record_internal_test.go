package funding

import (
	"context"
	"encoding/json"
	"math/rand"
	"reflect"
	"strconv"
	"testing"
	"testing/quick"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/service"
	"github.com/corebank/corebank/storage"
	"github.com/corebank/corebank/storage/memory"
)

// randomRecords returns n records with random fields (testing/quick's
// strings, nil and set pointers alike).
func randomRecords(t *testing.T, n int) []*record {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	var out []*record
	for i := range n {
		v, ok := quick.Value(reflect.TypeFor[record](), rng)
		if !ok {
			t.Fatal("quick.Value: no record")
		}
		r := v.Interface().(record)
		r.ID = strconv.Itoa(i) + "/" + r.ID // a key: not empty, not repeated
		out = append(out, &r)
	}
	return out
}

// plain is r through encoding/json, what earlier releases stored.
func plain(t *testing.T, r *record) ([]byte, *record) {
	t.Helper()
	raw, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var want record
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	return raw, &want
}

// TestInflowRecordEqualsJSON: an inflow record read back from its binary
// form is exactly what its JSON reads back as; a JSON record still reads;
// no truncation of a record decodes or panics.
func TestInflowRecordEqualsJSON(t *testing.T) {
	for _, r := range randomRecords(t, 500) {
		raw, want := plain(t, r)
		b := r.encode()
		got, err := decodeRecord(r.ID, b)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("binary record differs from JSON (-want +got):\n%s", diff)
		}
		if got, err := decodeRecord(r.ID, raw); err != nil || !cmp.Equal(want, got) {
			t.Fatalf("JSON record reads as %+v, %v", got, err)
		}
		for n := range len(b) {
			if _, err := decodeRecord(r.ID, b[:n]); err == nil {
				t.Fatalf("a record cut to %d of %d bytes decodes", n, len(b))
			}
		}
	}
}

// TestMigrateBinaryRecords: a store of JSON inflow records, as earlier
// releases wrote them, holds only binary ones after migrating, each
// reading back as before.
func TestMigrateBinaryRecords(t *testing.T) {
	db := memory.New()
	defer db.Close()
	ctx := context.Background()
	recs := randomRecords(t, 50)
	want := map[string]*record{}
	if err := db.Update(ctx, func(tx storage.Tx) error {
		for _, r := range recs {
			raw, w := plain(t, r)
			w.ID = r.ID
			want[r.ID] = w
			if err := tx.Put(bucket, []byte(r.ID), raw); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	s := &Service{}
	if n, err := storage.Migrate(ctx, db, s.Migrations()...); err != nil || n != len(s.Migrations()) {
		t.Fatalf("Migrate = %d, %v", n, err)
	}
	got := map[string]*record{}
	if err := db.View(ctx, func(tx storage.Tx) error {
		return tx.Scan(bucket, storage.ScanOptions{}, func(k, v []byte) error {
			if len(v) == 0 || v[0] == '{' {
				t.Errorf("record %q still JSON after migrating", k)
			}
			r, err := get(tx, string(k))
			got[string(k)] = r
			return err
		})
	}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("records after migrating (-want +got):\n%s", diff)
	}
}

// TestCompletedRecordStillReads: a settled inflow stored as earlier
// releases stored it (a completed record beside an entry with an ID of its
// own) reads as its record, with no migration.
func TestCompletedRecordStillReads(t *testing.T) {
	db := memory.New()
	defer db.Close()
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	clk := clock.NewMock()
	clk.Set(now)
	led := ledger.NewService(db, &ledger.Options{Deps: service.Deps{Clock: clk}})
	s := NewService(db, led, nil)
	acct, err := led.CreateAccount(ctx, corebank.System(), ledger.NewAccount{
		EntityID: "01HZZZZZZZZZZZZZZZZZZZZZZZ", Type: "checking", Currency: "USD", DisplayName: "Ops"})
	if err != nil {
		t.Fatal(err)
	}
	ms := now.UnixMilli()
	old := &record{Inflow: Inflow{ID: "01J00000000000000000000001", Type: "inflow", AccountID: acct.ID,
		EntityID: acct.EntityID, Amount: 9, Currency: "USD", Narration: "old", Source: SourceBank,
		Status: StatusCompleted, CompletedAt: &ms, Created: ms, Updated: ms}}
	if err := db.Update(ctx, func(tx storage.Tx) error {
		if _, err := led.PostTx(tx, now, ledger.Entry{Lines: []ledger.Line{
			{AccountID: led.SystemAccount("USD", ledger.PurposeClearingBank), Side: ledger.Debit, Amount: 9},
			{AccountID: acct.ID, Side: ledger.Credit, Amount: 9},
		}, Narration: "old"}); err != nil {
			return err
		}
		return put(tx, old)
	}); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetInflow(ctx, old.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&old.Inflow, got); diff != "" {
		t.Fatalf("GetInflow (-want +got)\n%s", diff)
	}
}
