package capital_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank/capital"
)

// TestJSONRoundTrip: the objects services answer read back from JSON as
// themselves (idempotent replays depend on it), and each type shows its
// own fields: payout_status (null until a payout begins) on a deposit,
// refund_status on a share holding, never the other type's.
func TestJSONRoundTrip(t *testing.T) {
	e := newEnv(t)
	acct := e.FundedAccount("USD", 1_000_000)
	dep := e.product(deposit())
	share := e.product(offering(100))
	fixed := e.confirm(e.depositOrder(dep, acct.ID, 100_000, false).ID)
	shares := e.confirm(e.order(capital.NewOrder{ProductID: share.ID, AccountID: acct.ID, Amount: ptr(int64(1_000))}).ID)
	for name, tc := range map[string]struct {
		v            any
		want, absent []string
	}{
		"Deposit": {fixed, []string{"payout_status", "accrued_interest", "early_withdrawal_at", "settlement_at"},
			[]string{"refund_status", "shares_purchased", "market_value"}},
		"Shares": {shares, []string{"refund_status", "shares_purchased", "market_value", "unallocated_value"},
			[]string{"payout_status", "accrued_interest"}},
		"Product": {dep, []string{"tenor_days", "annual_rate", "documents", "inventory"}, []string{"offer_price"}},
	} {
		t.Run(name, func(t *testing.T) {
			raw, err := json.Marshal(tc.v)
			if err != nil {
				t.Fatal(err)
			}
			var flat map[string]any
			json.Unmarshal(raw, &flat)
			keys := map[string]bool{}
			collect(flat, keys)
			for _, k := range tc.want {
				if !keys[k] {
					t.Errorf("%s missing from %s", k, raw)
				}
			}
			for _, k := range tc.absent {
				if keys[k] {
					t.Errorf("%s in %s", k, raw)
				}
			}
			back := newOf(tc.v)
			if err := json.Unmarshal(raw, back); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.v, back); diff != "" {
				t.Fatalf("round trip (-want +got)\n%s", diff)
			}
		})
	}
}

func collect(m map[string]any, keys map[string]bool) {
	for k, v := range m {
		keys[k] = true
		if sub, ok := v.(map[string]any); ok {
			collect(sub, keys)
		}
	}
}

func newOf(v any) any {
	switch v.(type) {
	case *capital.Order:
		return new(capital.Order)
	case *capital.Product:
		return new(capital.Product)
	}
	panic("unknown type")
}
