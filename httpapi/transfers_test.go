package httpapi_test

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/corebank/corebank/storage/bolt"
)

func TestTransfers(t *testing.T) {
	e := newEnv(t)
	f := newPayFixture(e)
	tr := f.tr
	body := transferBody(tr.acctRoot, f.pd, "t-1", 2_500)
	r := e.must(201, "POST", "/transfers", e.key, with2(body, "meta", map[string]any{"invoice": "42"}))
	tx := r.data()
	if r.Body["status"] != "success" || tx["status"] != "pending" || tx["status_reason"] != "awaiting_processing" ||
		tx["type"] != "outflow" || tx["amount"] != 2500.0 || tx["applicable_fee"] != 0.0 || tx["currency"] != "USD" ||
		tx["counterparty_id"] != f.cp || tx["entity_id"] != e.root || tx["unique_reference"] != "t-1" {
		t.Fatalf("create: %s", r.Raw)
	}
	id := tx["id"].(string)
	// A duplicate unique_reference returns the original under data.
	r = e.must(409, "POST", "/transfers", e.key, with2(body, "amount", 7))
	if r.code() != "duplicate_reference" || r.str("data", "id") != id || r.data()["amount"] != 2500.0 {
		t.Fatalf("duplicate: %s", r.Raw)
	}
	long := strings.Repeat("x", 101)
	e.run(t, []call{
		{"CreateErrEmpty", "POST", "/transfers", map[string]any{}, e.key, 422, "validation_error", "account_id"},
		{"CreateErrAmount", "POST", "/transfers", with2(body, "amount", 0, "unique_reference", "v1"), e.key, 422, "validation_error", "amount"},
		{"CreateErrNarration", "POST", "/transfers", with2(body, "narration", long, "unique_reference", "v2"), e.key, 422, "validation_error", "narration"},
		{"CreateErrNarrationMissing", "POST", "/transfers", with2(body, "narration", nil, "unique_reference", "v2"), e.key, 422, "validation_error", "narration"},
		{"CreateErrReference", "POST", "/transfers", with2(body, "unique_reference", strings.Repeat("r", 65)), e.key, 422, "validation_error", "unique_reference"},
		{"CreateErrPaymentType", "POST", "/transfers", with2(body, "payment_type", "momo-transfer", "unique_reference", "v3"), e.key, 422, "validation_error", "payment_type"},
		{"CreateErrCurrency", "POST", "/transfers", with2(body, "currency", "EUR", "unique_reference", "v4"), e.key, 422, "validation_error", ""},
		{"CreateErrMeta", "POST", "/transfers", with2(body, "meta", map[string]any{"n": 1}, "unique_reference", "v5"), e.key, 422, "validation_error", "meta.n"},
		{"CreateErrUnknownField", "POST", "/transfers", with2(body, "entityid", tr.b, "unique_reference", "v6"), e.key, 422, "validation_error", "entityid"},
		{"CreateErrAmountType", "POST", "/transfers", with2(body, "amount", 1.5, "unique_reference", "v7"), e.key, 422, "validation_error", "amount"},
		{"CreateErrInsufficient", "POST", "/transfers", with2(body, "amount", 10_000_000, "unique_reference", "v8"), e.key, 422, "insufficient_funds", ""},
		{"CreateErrOtherTreeAccount", "POST", "/transfers", transferBody(tr.acctB, f.pdB, "v9", 1), tr.keyA, 404, "not_found", ""},
		{"CreateErrOtherTreeDetail", "POST", "/transfers", transferBody(tr.acctRoot, f.pdB, "v10", 1), e.key, 404, "not_found", ""},
		{"CreateErrOtherTreeEntity", "POST", "/transfers", with2(body, "entity_id", tr.b, "unique_reference", "v11"), tr.keyA, 404, "not_found", ""},
		{"CreateErrAccountNotEntitys", "POST", "/transfers", with2(body, "entity_id", tr.a, "unique_reference", "v12"), e.key, 404, "not_found", ""},
		{"CreateErrUnknownAccount", "POST", "/transfers", transferBody("01HZZZZZZZZZZZZZZZZZZZZZZZ", f.pd, "v13", 1), e.key, 404, "not_found", ""},
		{"CreateErrNoKey", "POST", "/transfers", body, "", 401, "unauthorized", ""},
		{"CreateErrReadOnly", "POST", "/transfers", body, e.roKey, 403, "forbidden", ""},
		{"GetOK", "GET", "/transfers/" + id, nil, e.key, 200, "", ""},
		{"GetOKReadOnly", "GET", "/transfers/" + id, nil, e.roKey, 200, "", ""},
		{"GetErrOtherTree", "GET", "/transfers/" + f.transfer2, nil, tr.keyA, 404, "not_found", ""},
		{"GetErrUp", "GET", "/transfers/" + id, nil, tr.keyA, 404, "not_found", ""},
		{"GetErrMissing", "GET", "/transfers/nope", nil, e.key, 404, "not_found", ""},
		{"GetErrNoKey", "GET", "/transfers/" + id, nil, "", 401, "unauthorized", ""},
		{"ListOK", "GET", "/transfers", nil, e.key, 200, "", ""},
		{"ListOKFilters", "GET", "/transfers?status=pending&account_id=" + tr.acctRoot + "&entity_id=" + e.root, nil, e.key, 200, "", ""},
		{"ListOKChild", "GET", "/transfers?entity_id=" + tr.b, nil, e.key, 200, "", ""},
		{"ListErrStatus", "GET", "/transfers?status=done", nil, e.key, 422, "validation_error", "status"},
		{"ListErrLimitLow", "GET", "/transfers?limit=0", nil, e.key, 422, "validation_error", "limit"},
		{"ListErrLimitHigh", "GET", "/transfers?limit=101", nil, e.key, 422, "validation_error", "limit"},
		{"ListErrCursor", "GET", "/transfers?cursor=" + url.QueryEscape("not a cursor"), nil, e.key, 422, "validation_error", "cursor"},
		{"ListErrOtherTreeAccount", "GET", "/transfers?account_id=" + tr.acctB, nil, tr.keyA, 404, "not_found", ""},
		{"ListErrOtherTreeEntity", "GET", "/transfers?entity_id=" + tr.b, nil, tr.keyA, 404, "not_found", ""},
		{"ListErrNoKey", "GET", "/transfers", nil, "", 401, "unauthorized", ""},
		{"SimulateErrOutcome", "POST", "/sandbox/transfers/" + id + "/simulate", map[string]any{"outcome": "lost"}, e.key, 422, "validation_error", "outcome"},
		{"SimulateErrMissing", "POST", "/sandbox/transfers/" + id + "/simulate", map[string]any{}, e.key, 422, "validation_error", "outcome"},
		{"SimulateErrState", "POST", "/sandbox/transfers/" + id + "/simulate", map[string]any{"outcome": "reversed"}, e.key, 409, "error_operation_invalid_for_state", ""},
		{"SimulateErrOtherTree", "POST", "/sandbox/transfers/" + f.transfer2 + "/simulate", map[string]any{"outcome": "failed"}, tr.keyA, 404, "not_found", ""},
		{"SimulateErrReadOnly", "POST", "/sandbox/transfers/" + id + "/simulate", map[string]any{"outcome": "failed"}, e.roKey, 403, "forbidden", ""},
		{"SimulateErrUnknown", "POST", "/sandbox/transfers/nope/simulate", map[string]any{"outcome": "failed"}, e.key, 404, "not_found", ""},
	})
	// The list filters by account and status, and defaults to 20.
	r = e.must(200, "GET", "/transfers?status=pending&account_id="+tr.acctRoot, e.key, nil)
	items := r.Body["data"].([]any)
	if len(items) != 2 || r.Body["meta"].(map[string]any)["pagination"].(map[string]any)["limit"] != 20.0 {
		t.Fatalf("list: %s", r.Raw)
	}
	fa := r.Body["meta"].(map[string]any)["filters_applied"].(map[string]any)
	if fa["account_id"] != tr.acctRoot || fa["status"] != "pending" || fa["entity_id"] != e.root {
		t.Fatalf("filters_applied: %s", r.Raw)
	}
	if r := e.must(200, "GET", "/transfers?status=successful", e.key, nil); len(r.Body["data"].([]any)) != 0 {
		t.Fatalf("successful list: %s", r.Raw)
	}
	// Another entity's list (B's, from the root) holds B's transfer only.
	r = e.must(200, "GET", "/transfers?entity_id="+tr.b, e.key, nil)
	if items := r.Body["data"].([]any); len(items) != 1 || items[0].(map[string]any)["id"] != f.transfer2 {
		t.Fatalf("B's list: %s", r.Raw)
	}
	// An account in a child's tree acts for the child without entity_id.
	cpA := e.counterparty(tr.keyA, "", "Child", "Vendor")
	pdA := e.achDetail(tr.keyA, cpA)
	e.fund(tr.keyA, tr.acctA, 1000)
	e.must(201, "POST", "/transfers", e.key, transferBody(tr.acctA, pdA, "child-1", 10))
	r = e.must(200, "GET", "/transfers?account_id="+tr.acctA, e.key, nil)
	if items := r.Body["data"].([]any); len(items) != 1 || items[0].(map[string]any)["entity_id"] != tr.a {
		t.Fatalf("child's transfer: %s", r.Raw)
	}
}

// TestTransferLifecycle runs transfers end to end over HTTP.
func TestTransferLifecycle(t *testing.T) {
	e := newEnv(t)
	acct := e.account(e.key, "", "USD")
	e.fund(e.key, acct, 100_000)
	cp := e.counterparty(e.key, "", "Ada", "Lovelace")
	pd := e.achDetail(e.key, cp)
	status := func(id string) string { return e.must(200, "GET", "/transfers/"+id, e.key, nil).str("data", "status") }
	wantBalance := func(avail, cur int64) {
		t.Helper()
		if a, c := e.balance(e.key, acct); a != avail || c != cur {
			t.Fatalf("balance available %d current %d, want %d %d", a, c, avail, cur)
		}
	}

	t.Run("OKSandboxRail", func(t *testing.T) {
		e.t = t
		id := e.must(201, "POST", "/transfers", e.key, transferBody(acct, pd, "life-1", 10_000)).str("data", "id")
		wantBalance(90_000, 90_000)
		e.advance(1)
		if s := status(id); s != "processing" {
			t.Fatalf("after 1 s: %s", s)
		}
		e.advance(4)
		if s := status(id); s != "successful" {
			t.Fatalf("after 5 s: %s", s)
		}
		wantBalance(90_000, 90_000)
		// Reversal returns the money.
		r := e.must(200, "POST", "/sandbox/transfers/"+id+"/simulate", e.key, map[string]any{"outcome": "reversed", "status_reason": "beneficiary_bank_returned"})
		if r.str("status") != "reversed" || r.str("status_reason") != "beneficiary_bank_returned" || r.Body["data"] != nil {
			t.Fatalf("reversed: %s", r.Raw)
		}
		wantBalance(100_000, 100_000)
		e.must(409, "POST", "/sandbox/transfers/"+id+"/simulate", e.key, map[string]any{"outcome": "failed"})
	})
	t.Run("OKFailedReturnsFunds", func(t *testing.T) {
		e.t = t
		id := e.must(201, "POST", "/transfers", e.key, transferBody(acct, pd, "life-2", 30_000)).str("data", "id")
		wantBalance(70_000, 70_000)
		r := e.must(200, "POST", "/sandbox/transfers/"+id+"/simulate", e.key, map[string]any{"outcome": "processing"})
		if r.str("status") != "processing" {
			t.Fatalf("processing: %s", r.Raw)
		}
		r = e.must(200, "POST", "/sandbox/transfers/"+id+"/simulate", e.key, map[string]any{"outcome": "failed", "status_reason": "invalid_account_details"})
		if r.str("status") != "failed" || r.str("status_reason") != "invalid_account_details" {
			t.Fatalf("failed: %s", r.Raw)
		}
		wantBalance(100_000, 100_000)
		e.advance(10)
		if s := status(id); s != "failed" {
			t.Fatalf("the rail moved a failed transfer: %s", s)
		}
	})
	t.Run("OKSimulateSuccessful", func(t *testing.T) {
		e.t = t
		id := e.must(201, "POST", "/transfers", e.key, transferBody(acct, pd, "life-3", 1_000)).str("data", "id")
		e.must(200, "POST", "/sandbox/transfers/"+id+"/simulate", e.key, map[string]any{"outcome": "successful"})
		wantBalance(99_000, 99_000)
		r := e.must(200, "GET", "/transfers?status=successful", e.key, nil)
		if items := r.Body["data"].([]any); len(items) != 1 || items[0].(map[string]any)["id"] != id {
			t.Fatalf("successful list: %s", r.Raw)
		}
	})
	t.Run("OKCrossCurrency", func(t *testing.T) {
		e.t = t
		sepa := map[string]any{"counterparty_id": cp, "payment_method": "bank-transfer", "currency": "EUR", "country": "DE",
			"account_holder_name": "Ada Lovelace", "iban": "DE36379068449631930531"}
		eur := e.must(201, "POST", "/payment-details", e.key, sepa).str("id")
		q := e.must(201, "POST", "/fx-quotes", e.key, map[string]any{"from_currency": "USD", "to_currency": "EUR", "amount_to": 5_000, "account_id": acct})
		qid, from := q.str("data", "id"), int64(q.data()["amount_from"].(float64))
		if q.data()["amount_to"] != 5000.0 || from <= 0 {
			t.Fatalf("quote: %s", q.Raw)
		}
		body := map[string]any{"account_id": acct, "payment_detail_id": eur, "amount": 5_000, "currency": "EUR",
			"payment_type": "bank-transfer", "narration": "euro invoice", "unique_reference": "fx-1"}
		e.must(422, "POST", "/transfers", e.key, with2(body, "unique_reference", "fx-0"))
		r := e.must(201, "POST", "/transfers", e.key, with2(body, "fx_quote_id", qid))
		if r.str("data", "currency") != "EUR" || r.data()["amount"] != 5000.0 || r.str("data", "fx_quote_id") != qid {
			t.Fatalf("fx transfer: %s", r.Raw)
		}
		wantBalance(99_000-from, 99_000-from)
		q = e.must(200, "GET", "/fx-quotes/"+qid, e.key, nil)
		if q.str("data", "quote", "status") != "used" || q.str("data", "quote", "used_in_payment_id") != r.str("data", "id") {
			t.Fatalf("used quote: %s", q.Raw)
		}
		// A used quote cannot pay again.
		if r := e.do("POST", "/transfers", e.key, with2(body, "fx_quote_id", qid, "unique_reference", "fx-2")); r.Status != 422 && r.Status != 409 {
			t.Fatalf("reused quote: %d %s", r.Status, r.Raw)
		}
		e.advance(5)
		wantBalance(99_000-from, 99_000-from)
	})
	t.Run("OKBookTransfer", func(t *testing.T) {
		e.t = t
		av, _ := e.balance(e.key, acct)
		tr := newTrees(e)
		ban := e.must(200, "GET", "/accounts/"+tr.acctB, e.key, nil).str("data", "service_ban")
		book := map[string]any{"counterparty_id": cp, "payment_method": "book-transfer", "currency": "USD",
			"account_holder_name": "B Ltd", "account_number": ban}
		bd := e.must(201, "POST", "/payment-details", e.key, book).str("id")
		body := with2(transferBody(acct, bd, "book-1", 2_000), "payment_type", "book-transfer")
		// Pending like every transfer (SPEC general rule 6): the funds held,
		// the receiver not yet credited.
		r := e.must(201, "POST", "/transfers", e.key, body)
		id := r.str("data", "id")
		if r.str("data", "status") != "pending" || r.str("data", "status_reason") != "awaiting_processing" {
			t.Fatalf("book transfer: %s", r.Raw)
		}
		if a, c := e.balance(tr.keyB, tr.acctB); a != 0 || c != 0 {
			t.Fatalf("receiver before settling: available %d current %d", a, c)
		}
		wantBalance(av-2_000, av-2_000) // a hold counts in both
		// The next due run settles it: no external rail to wait for.
		e.advance(1)
		if r := e.must(200, "GET", "/transfers/"+id, e.key, nil); r.str("data", "status") != "successful" {
			t.Fatalf("book transfer after the due run: %s", r.Raw)
		}
		if a, c := e.balance(tr.keyB, tr.acctB); a != 2_000 || c != 2_000 {
			t.Fatalf("receiver: available %d current %d", a, c)
		}
		wantBalance(av-2_000, av-2_000)
		e.must(409, "POST", "/sandbox/transfers/"+id+"/simulate", e.key, map[string]any{"outcome": "reversed"})

		// A receiving account deleted before the due run fails the
		// transfer and releases its funds, as a rail's failure does.
		ban = e.must(200, "GET", "/accounts/"+tr.acctA, e.key, nil).str("data", "service_ban")
		bd = e.must(201, "POST", "/payment-details", e.key, with2(book, "account_number", ban)).str("id")
		body = with2(transferBody(acct, bd, "book-2", 1_000), "payment_type", "book-transfer")
		id = e.must(201, "POST", "/transfers", e.key, body).str("data", "id")
		wantBalance(av-3_000, av-3_000)
		e.must(200, "DELETE", "/accounts/"+tr.acctA, tr.keyA, nil)
		e.advance(1)
		r = e.must(200, "GET", "/transfers/"+id, e.key, nil)
		if r.str("data", "status") != "failed" || r.str("data", "status_reason") != "invalid_account_details" {
			t.Fatalf("book transfer to a deleted account: %s", r.Raw)
		}
		wantBalance(av-2_000, av-2_000)
	})
	// Every move was reported through the outbox, the receiver's inflow too.
	e.t = t
	evs, err := e.led.Events(context.Background(), "", 1000)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, ev := range evs {
		got[ev.Type]++
	}
	for typ, n := range map[string]int{"outflows.created": 6, "outflows.completed": 4, "outflows.failed": 2, "outflows.refunded": 1} {
		if got[typ] != n {
			t.Errorf("%d %s events, want %d (all: %v)", got[typ], typ, n, got)
		}
	}
	if got["inflows.completed"] != 2 { // the funding and the book transfer's credit
		t.Errorf("inflows.completed: %v", got)
	}
}

// TestTransfersConcurrency races POST /transfers: duplicates of a
// unique_reference create exactly one transfer, and racing transfers
// never overdraw the account. Both backends.
func TestTransfersConcurrency(t *testing.T) {
	for _, b := range []struct {
		name string
		env  func(t *testing.T) *env
	}{
		{"memory", func(t *testing.T) *env { return newEnv(t) }},
		{"bolt", func(t *testing.T) *env {
			db, err := bolt.Open(filepath.Join(t.TempDir(), "db"), nil)
			if err != nil {
				t.Fatal(err)
			}
			return newEnvDB(t, db)
		}},
	} {
		t.Run(b.name, func(t *testing.T) {
			e := b.env(t)
			acct := e.account(e.key, "", "USD")
			e.fund(e.key, acct, 1_000)
			pd := e.achDetail(e.key, e.counterparty(e.key, "", "Race", "Payee"))
			race := func(n int, body func(i int) map[string]any) map[int]int {
				var mu sync.Mutex
				counts := map[int]int{}
				var wg sync.WaitGroup
				start := make(chan struct{})
				for i := 0; i < n; i++ {
					wg.Add(1)
					go func(i int) {
						defer wg.Done()
						<-start
						r := e.do("POST", "/transfers", e.key, body(i))
						mu.Lock()
						counts[r.Status]++
						mu.Unlock()
						if r.Status == 409 && r.code() != "duplicate_reference" || r.Status == 422 && r.code() != "insufficient_funds" {
							t.Errorf("%d %s", r.Status, r.Raw)
						}
					}(i)
				}
				close(start)
				wg.Wait()
				return counts
			}
			counts := race(50, func(i int) map[string]any { return transferBody(acct, pd, fmt.Sprintf("dup-%d", i%10), 1) })
			if counts[201] != 10 || counts[409] != 40 {
				t.Fatalf("duplicates: %v", counts)
			}
			r := e.must(200, "GET", "/transfers?limit=100", e.key, nil)
			if n := len(r.Body["data"].([]any)); n != 10 {
				t.Fatalf("%d transfers stored", n)
			}
			// 990 left: 50 racing transfers of 100 fit 9 times.
			counts = race(50, func(i int) map[string]any { return transferBody(acct, pd, fmt.Sprintf("od-%d", i), 100) })
			if counts[201] != 9 || counts[422] != 41 {
				t.Fatalf("overdraft race: %v", counts)
			}
			if a, c := e.balance(e.key, acct); a != 90 || c != 90 {
				t.Fatalf("balance available %d current %d, want 90", a, c)
			}
		})
	}
}
