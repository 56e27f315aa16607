package httpapi_test

import (
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCapitalDepositEarlyWithdrawal is issue 16's "whole life of a 30-day
// deposit" over HTTP on the mock clock: order, confirm, ten days,
// early withdrawal, settlement to CLOSED, the funding account credited as
// worked by hand above.
func TestCapitalDepositEarlyWithdrawal(t *testing.T) {
	e := newEnv(t)
	_, acct, order := e.depositOrder(t)
	id := order["id"].(string)
	if order["status"] != "RESERVED" || order["capital_account"] != nil || num(t, order, "amount") != depositPrincipal {
		t.Fatalf("order: %v", order)
	}
	if avail, cur := e.balance(e.key, acct); avail != depositFunds || cur != depositFunds {
		t.Fatalf("a reservation moved money: available %d, current %d", avail, cur)
	}

	confirmed := e.must(200, "POST", "/product-orders/"+id+"/confirm", e.key, nil, "Idempotency-Key", "confirm-1").data()
	if confirmed["status"] != "APPROVED" {
		t.Fatalf("confirm: %v", confirmed)
	}
	ca := confirmed["capital_account"].(map[string]any)
	if diff := cmp.Diff(map[string]any{"state": "ACTIVE", "payout_status": nil}, pick(ca["status"].(map[string]any), "state", "payout_status")); diff != "" {
		t.Errorf("capital account status (-want +got):\n%s", diff)
	}
	// Confirming again (a retry without the key) debits nothing more.
	again := e.must(200, "POST", "/product-orders/"+id+"/confirm", e.key, nil).data()
	if again["status"] != "APPROVED" || again["capital_account"].(map[string]any)["id"] != ca["id"] {
		t.Errorf("second confirm: %v", again)
	}
	if avail, cur := e.balance(e.key, acct); avail != depositFunds-depositPrincipal || cur != depositFunds-depositPrincipal {
		t.Fatalf("after confirm: available %d, current %d, want %d", avail, cur, depositFunds-depositPrincipal)
	}

	// Day 3: before the earliest action day.
	e.advanceDays(3)
	r := e.do("POST", "/product-orders/"+id+"/withdrawal", e.key, nil)
	if r.Status != http.StatusBadRequest || r.code() != "error_operation_invalid_for_state" {
		t.Errorf("withdrawal on day 3: %d %s", r.Status, r.Raw)
	}

	// Day 10.
	e.advanceDays(7)
	h := e.holding(t, id)
	if h == nil || num(t, h, "accrued_interest") != early10Gross {
		t.Fatalf("holding on day 10: %v", h)
	}
	sum, n := accruals(e.orderTxs(t, id))
	if sum != early10Gross || n != 10 {
		t.Errorf("day 10: %d accruals summing to %d, want 10 summing to %d", n, sum, early10Gross)
	}
	preview := e.must(200, "GET", "/product-orders/"+id+"/withdrawal/preview", e.key, nil).data()
	want := map[string]any{"principal": float64(depositPrincipal), "gross_interest": float64(early10Gross),
		"penalty_rate": "0.25", "penalty_amount": float64(early10Penalty), "total_deductions": float64(early10Withheld),
		"net_payout": float64(early10Net), "days_elapsed": float64(10), "capital_account_id": ca["id"], "entity_id": e.root}
	if diff := cmp.Diff(want, preview); diff != "" {
		t.Errorf("preview on day 10 (-want +got):\n%s", diff)
	}
	// The preview changed nothing: it answers the same again.
	if diff := cmp.Diff(preview, e.must(200, "GET", "/product-orders/"+id+"/withdrawal/preview", e.key, nil).data()); diff != "" {
		t.Errorf("second preview (-first +second):\n%s", diff)
	}

	w := e.must(200, "POST", "/product-orders/"+id+"/withdrawal", e.key, nil, "Idempotency-Key", "withdraw-1").data()
	if st := w["capital_account"].(map[string]any)["status"].(map[string]any); st["state"] != "EARLY_LIQUIDATING" {
		t.Errorf("withdrawal: %v", w)
	}
	r = e.do("POST", "/product-orders/"+id+"/withdrawal", e.key, nil)
	if r.Status != http.StatusBadRequest || r.code() != "error_operation_invalid_for_state" {
		t.Errorf("second withdrawal: %d %s", r.Status, r.Raw)
	}

	// Settlement runs on the clock.
	e.advanceDays(1)
	got := e.must(200, "GET", "/product-orders/"+id, e.key, nil).data()
	st := got["capital_account"].(map[string]any)["status"].(map[string]any)
	if diff := cmp.Diff(map[string]any{"state": "CLOSED", "payout_status": "completed"}, pick(st, "state", "payout_status")); diff != "" {
		t.Errorf("after settlement (-want +got):\n%s", diff)
	}
	if avail, cur := e.balance(e.key, acct); avail != depositFunds-depositPrincipal+early10Net || cur != avail {
		t.Errorf("funding account after settlement: available %d, current %d, want %d", avail, cur, depositFunds-depositPrincipal+early10Net)
	}
	txs := e.orderTxs(t, id)
	sum, n = accruals(txs)
	if sum != early10Gross || n != 10 {
		t.Errorf("after settlement: %d accruals summing to %d, want 10 summing to %d", n, sum, early10Gross)
	}
	var rest []capitalTx
	for _, tx := range txs {
		if tx.Type != "DAILY_ACCRUAL" {
			rest = append(rest, tx)
		}
	}
	wantTxs := []capitalTx{{"PURCHASE", depositPrincipal}, {"PENALTY", early10Penalty}, {"WITHHOLDING", early10Withheld}, {"PAYOUT", early10Net}}
	if diff := cmp.Diff(wantTxs, rest); diff != "" {
		t.Errorf("transactions but accruals (-want +got):\n%s", diff)
	}
	if e.holding(t, id) != nil {
		t.Errorf("a CLOSED deposit is still in the portfolio")
	}
	// Nothing moves later.
	e.advanceDays(30)
	if avail, _ := e.balance(e.key, acct); avail != depositFunds-depositPrincipal+early10Net {
		t.Errorf("funding account moved after CLOSED: %d", avail)
	}
}

// TestCapitalDepositHeldToMaturity: the same deposit held for its 30 days
// matures by itself on the clock, is withdrawn without penalty, and
// settles to CLOSED with the full interest less withholding.
func TestCapitalDepositHeldToMaturity(t *testing.T) {
	e := newEnv(t)
	_, acct, order := e.depositOrder(t)
	id := order["id"].(string)
	e.must(200, "POST", "/product-orders/"+id+"/confirm", e.key, map[string]any{"secondary_id": "ext-42"})

	e.advanceDays(29)
	if h := e.holding(t, id); h == nil || h["status"].(map[string]any)["state"] != "ACTIVE" {
		t.Fatalf("day 29: %v", h)
	}
	e.advanceDays(1)
	h := e.holding(t, id)
	if h == nil {
		t.Fatal("day 30: not in the portfolio")
	}
	if diff := cmp.Diff(map[string]any{"state": "MATURED", "accrued_interest": float64(mature30Gross), "secondary_id": "ext-42"},
		map[string]any{"state": h["status"].(map[string]any)["state"], "accrued_interest": h["accrued_interest"], "secondary_id": h["secondary_id"]}); diff != "" {
		t.Errorf("day 30 (-want +got):\n%s", diff)
	}
	if sum, n := accruals(e.orderTxs(t, id)); sum != mature30Gross || n != 30 {
		t.Errorf("day 30: %d accruals summing to %d, want 30 summing to %d", n, sum, mature30Gross)
	}
	// Accrual stops at the tenor.
	e.advanceDays(2)
	if h := e.holding(t, id); num(t, h, "accrued_interest") != mature30Gross {
		t.Errorf("day 32: accrued %v", h["accrued_interest"])
	}
	preview := e.must(200, "GET", "/product-orders/"+id+"/withdrawal/preview", e.key, nil).data()
	want := map[string]any{"principal": float64(depositPrincipal), "gross_interest": float64(mature30Gross),
		"penalty_rate": "0", "penalty_amount": float64(0), "total_deductions": float64(mature30Withheld),
		"net_payout": float64(mature30Net), "days_elapsed": float64(30), "capital_account_id": h["id"], "entity_id": e.root}
	if diff := cmp.Diff(want, preview); diff != "" {
		t.Errorf("preview at maturity (-want +got):\n%s", diff)
	}
	w := e.must(200, "POST", "/product-orders/"+id+"/withdrawal", e.key, nil).data()
	if st := w["capital_account"].(map[string]any)["status"].(map[string]any); st["state"] != "CLOSING" {
		t.Errorf("withdrawal at maturity: %v", w)
	}
	e.advanceDays(1)
	got := e.must(200, "GET", "/product-orders/"+id, e.key, nil).data()
	if st := got["capital_account"].(map[string]any)["status"].(map[string]any); st["state"] != "CLOSED" || st["payout_status"] != "completed" {
		t.Errorf("after settlement: %v", st)
	}
	if avail, cur := e.balance(e.key, acct); avail != depositFunds-depositPrincipal+mature30Net || cur != avail {
		t.Errorf("funding account after settlement: available %d, current %d, want %d", avail, cur, depositFunds-depositPrincipal+mature30Net)
	}
	var types []string
	for _, tx := range e.orderTxs(t, id) {
		if tx.Type != "DAILY_ACCRUAL" {
			types = append(types, fmt.Sprintf("%s %d", tx.Type, tx.Amount))
		}
	}
	if want := []string{"PURCHASE 1000000", "WITHHOLDING 833", "PAYOUT 1007500"}; !slices.Equal(want, types) {
		t.Errorf("transactions but accruals: %q, want %q", types, want)
	}
}

// TestCapitalConfirmRecovery: a confirmation that fails after its debit
// leaves the order RECOVERY_REQUIRED, and every confirm meanwhile is 409
// error_transfer_already_processing; the recovery job on the clock then
// completes it, APPROVED with one debit.
func TestCapitalConfirmRecovery(t *testing.T) {
	e := newEnv(t)
	_, acct, order := e.depositOrder(t)
	id := order["id"].(string)
	fail := func(string) error { return fmt.Errorf("injected: the process died after the debit") }
	e.afterDebit.Store(&fail)
	r := e.do("POST", "/product-orders/"+id+"/confirm", e.key, nil)
	e.afterDebit.Store(nil)
	if r.Status < 400 {
		t.Fatalf("confirm with a failure after the debit: %d %s", r.Status, r.Raw)
	}
	if got := e.must(200, "GET", "/product-orders/"+id, e.key, nil).data(); got["status"] != "RECOVERY_REQUIRED" {
		t.Fatalf("after the failure: %v", got)
	}
	for range 2 {
		r := e.do("POST", "/product-orders/"+id+"/confirm", e.key, nil)
		if r.Status != http.StatusConflict || r.code() != "error_transfer_already_processing" {
			t.Errorf("confirm while RECOVERY_REQUIRED: %d %s", r.Status, r.Raw)
		}
	}
	e.must(200, "POST", "/sandbox/clock/advance", e.key, map[string]any{"seconds": 60})
	got := e.must(200, "POST", "/product-orders/"+id+"/confirm", e.key, nil).data()
	if got["status"] != "APPROVED" || got["capital_account"] == nil {
		t.Errorf("after recovery: %v", got)
	}
	if avail, cur := e.balance(e.key, acct); avail != depositFunds-depositPrincipal || cur != avail {
		t.Errorf("after recovery: available %d, current %d, want one debit (%d)", avail, cur, depositFunds-depositPrincipal)
	}
	if txs := e.orderTxs(t, id); len(txs) != 1 || txs[0] != (capitalTx{"PURCHASE", depositPrincipal}) {
		t.Errorf("transactions after recovery: %v", txs)
	}
}
