package payments_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/payments"
	"github.com/corebank/corebank/storage"
)

// stripPayeeRecords deletes every payee record (payments.hot), leaving the
// store as one written before they existed.
func stripPayeeRecords(tb testing.TB, db storage.Backend) int {
	tb.Helper()
	n, err := storage.Update(ctx, db, func(tx storage.Tx) (int, error) {
		var keys [][]byte
		if err := tx.Scan("payments.hot", storage.ScanOptions{}, func(k, _ []byte) error {
			keys = append(keys, append([]byte(nil), k...))
			return nil
		}); err != nil {
			return 0, err
		}
		for _, k := range keys {
			if err := tx.Delete("payments.hot", k); err != nil {
				return 0, err
			}
		}
		return len(keys), nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

// TestTransferWithoutPayeeRecords runs the same transfers on a store with
// the payee records of details and counterparties and on one without them:
// every outcome must be the same.
func TestTransferWithoutPayeeRecords(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			run := func(strip bool) []string {
				e := newEnv(t, b.open(t), nil)
				a, d := setupUSD(t, e, 100_000)
				other := e.detail(t, "ent2", achDetail(e.counterparty(t, "ent2").ID))
				maybeStrip := func() {
					if strip && stripPayeeRecords(t, e.db) == 0 {
						t.Fatal("no payee records to strip")
					}
				}
				maybeStrip()
				var out []string
				note := func(tr *payments.Transfer, err error) {
					if err != nil {
						var ce *corebank.Error
						data := ""
						if ok := asError(err, &ce); ok && ce.Data != nil {
							raw, _ := json.Marshal(ce.Data)
							data = string(raw)
						}
						out = append(out, fmt.Sprintf("error %s %v %s", err, fieldsOf(err), data))
						return
					}
					raw, _ := json.Marshal(tr)
					out = append(out, string(raw))
				}
				note(e.svc.CreateTransfer(ctx, corebank.As("ent1"), newTransfer(a, d, 1_000, "r1")))
				note(e.svc.CreateTransfer(ctx, corebank.As("ent1"), newTransfer(a, d, 1_000, "r1")))
				wrongType := newTransfer(a, d, 1_000, "r2")
				wrongType.PaymentType = "momo-transfer"
				note(e.svc.CreateTransfer(ctx, corebank.As("ent1"), wrongType))
				note(e.svc.CreateTransfer(ctx, corebank.As("ent1"), newTransfer(a, other, 1_000, "r3")))
				wrongCP := newTransfer(a, d, 1_000, "r4")
				wrongCP.CounterpartyID = other.CounterpartyID
				note(e.svc.CreateTransfer(ctx, corebank.As("ent1"), wrongCP))
				wrongCur := newTransfer(a, d, 1_000, "r5")
				wrongCur.Currency = "EUR"
				note(e.svc.CreateTransfer(ctx, corebank.As("ent1"), wrongCur))
				if _, err := e.svc.DeactivateCounterparty(ctx, corebank.As("ent1"), "", d.CounterpartyID); err != nil {
					t.Fatal(err)
				}
				maybeStrip()
				note(e.svc.CreateTransfer(ctx, corebank.As("ent1"), newTransfer(a, d, 1_000, "r6")))
				note(e.svc.GetTransfer(ctx, corebank.As("ent1"), "", "01HZZZZZZZZZZZZZZZZZZZZZZZ"))
				return out
			}
			want, got := run(false), run(true)
			if len(want) != 8 {
				t.Fatalf("%d outcomes", len(want))
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("without payee records (-with +without):\n%s", diff)
			}
		})
	}
}

func asError(err error, target **corebank.Error) bool { return errors.As(err, target) }

func fieldsOf(err error) any {
	var e *corebank.Error
	if errors.As(err, &e) {
		return e.Fields
	}
	return nil
}

// TestAccountSeenBefore checks CreateTransfer's account checks on accounts
// it has read before (their owner and currency are remembered): a deleted
// account, another entity's and a missing one are still not found.
func TestAccountSeenBefore(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			e := newEnv(t, b.open(t), nil)
			funded, d := setupUSD(t, e, 100_000)
			empty := e.account(t, "ent1", "USD")
			for i, want := range []string{"", ""} {
				if _, err := e.svc.CreateTransfer(ctx, corebank.As("ent1"), newTransfer(funded, d, 10, fmt.Sprint("ok", i))); errCode(err) != want {
					t.Fatalf("funded account, try %d: %v", i, err)
				}
			}
			if _, err := e.svc.CreateTransfer(ctx, corebank.As("ent2"), newTransfer(funded, d, 10, "other")); !errors.Is(err, payments.ErrAccountNotFound) {
				t.Fatalf("another entity's account: %v", err)
			}
			for i := 0; i < 2; i++ {
				if _, err := e.svc.CreateTransfer(ctx, corebank.As("ent1"), newTransfer(empty, d, 10, "empty")); errCode(err) != "insufficient_funds" {
					t.Fatalf("empty account: %v", err)
				}
			}
			if _, err := e.led.DeleteAccount(ctx, corebank.System(), "", empty.ID); err != nil {
				t.Fatal(err)
			}
			if _, err := e.svc.CreateTransfer(ctx, corebank.As("ent1"), newTransfer(empty, d, 10, "deleted")); !errors.Is(err, payments.ErrAccountNotFound) {
				t.Fatalf("deleted account: %v", err)
			}
			missing := *funded
			missing.ID = "01HZZZZZZZZZZZZZZZZZZZZZZZ"
			if _, err := e.svc.CreateTransfer(ctx, corebank.As("ent1"), newTransfer(&missing, d, 10, "missing")); !errors.Is(err, payments.ErrAccountNotFound) {
				t.Fatalf("missing account: %v", err)
			}
			e.checkBalanced(t)
		})
	}
}

// downgradePayeeRecords rewrites every payment detail's payee record as
// version 1, without the receiving account, as earlier releases wrote
// them, and returns how many it rewrote.
func downgradePayeeRecords(tb testing.TB, db storage.Backend) int {
	tb.Helper()
	n, err := storage.Update(ctx, db, func(tx storage.Tx) (int, error) {
		old := map[string][]byte{}
		if err := tx.Scan("payments.hot", storage.ScanOptions{Prefix: []byte("d/")}, func(k, v []byte) error {
			dec := storage.Decoder{B: v}
			if dec.Byte() != 2 {
				return fmt.Errorf("payee record %s is not of version 2", k)
			}
			e := storage.Encoder{}
			e.Byte(1)
			for range 5 { // entity, counterparty, method, currency, account number
				e.Str(dec.Str())
			}
			dec.Str() // the receiving account
			if dec.Err != nil || len(dec.B) != 0 {
				return fmt.Errorf("payee record %s: %v", k, dec.Err)
			}
			old[string(k)] = e.B
			return nil
		}); err != nil {
			return 0, err
		}
		for k, v := range old {
			if err := tx.Put("payments.hot", []byte(k), v); err != nil {
				return 0, err
			}
		}
		return len(old), nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

// payeeReceiver returns the receiving account a detail's payee record
// names, and its version.
func payeeReceiver(tb testing.TB, db storage.Backend, detailID string) (byte, string) {
	tb.Helper()
	raw, err := storage.View(ctx, db, func(tx storage.Tx) ([]byte, error) {
		return tx.Get("payments.hot", []byte("d/"+detailID))
	})
	if err != nil {
		tb.Fatal(err)
	}
	dec := storage.Decoder{B: raw}
	version := dec.Byte()
	for range 5 {
		dec.Str()
	}
	receiver := ""
	if version == 2 {
		receiver = dec.Str()
	}
	if dec.Err != nil || len(dec.B) != 0 {
		tb.Fatalf("payee record of %s does not decode: %v", detailID, dec.Err)
	}
	return version, receiver
}

// TestBookTransferPayeeReceiver: a book transfer reads its receiving
// account through the account its detail's payee record names (version
// 2), through the BAN when the record is of version 1 or missing, and the
// migration payments.payee-receivers rewrites version 1 records: every
// way, the outcomes are the same.
func TestBookTransferPayeeReceiver(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			run := func(records string) []string {
				db := b.open(t)
				e := newEnv(t, db, nil)
				a, to, d := bookPair(t, e, "USD")
				gone := e.account(t, "ent2", "USD")
				dGone := e.detail(t, "ent1", payments.NewPaymentDetail{CounterpartyID: d.CounterpartyID, PaymentMethod: "book-transfer", Currency: "USD",
					AccountHolderName: "Gone", AccountNumber: gone.ServiceBAN})
				if _, err := e.led.DeleteAccount(ctx, corebank.System(), "", gone.ID); err != nil {
					t.Fatal(err)
				}
				if v, r := payeeReceiver(t, db, d.ID); v != 2 || r != to.ID {
					t.Fatalf("payee record of a new detail: version %d, receiver %q; want 2, %s", v, r, to.ID)
				}
				switch records {
				case "v1", "migrated":
					if n := downgradePayeeRecords(t, db); n != 2 {
						t.Fatalf("downgraded %d payee records, want 2", n)
					}
				case "none":
					stripPayeeRecords(t, db)
				}
				if records == "migrated" {
					if _, err := storage.Migrate(ctx, db, e.svc.Migrations()...); err != nil {
						t.Fatal(err)
					}
					for id, want := range map[string]string{d.ID: to.ID, dGone.ID: gone.ID} {
						if v, r := payeeReceiver(t, db, id); v != 2 || r != want {
							t.Errorf("migrated payee record of %s: version %d, receiver %q; want 2, %s", id, v, r, want)
						}
					}
				}
				var out []string
				for i, det := range []*payments.PaymentDetail{d, dGone, d} {
					tr, err := e.svc.CreateTransfer(ctx, corebank.As("ent1"), newTransfer(a, det, 100, fmt.Sprint("b", i)))
					if err != nil {
						out = append(out, fmt.Sprintf("error %v %v", err, fieldsOf(err)))
						continue
					}
					out = append(out, fmt.Sprintf("%s %s %d", tr.Status, tr.PaymentType, tr.Amount))
				}
				return out
			}
			want := run("v2")
			if len(want) != 3 || want[0] != "pending book-transfer 100" || want[1] == want[0] {
				t.Fatalf("outcomes %q", want)
			}
			for _, records := range []string{"v1", "none", "migrated"} {
				if diff := cmp.Diff(want, run(records)); diff != "" {
					t.Errorf("payee records %s (-v2 +%s):\n%s", records, records, diff)
				}
			}
		})
	}
}
