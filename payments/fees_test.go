package payments_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/ledger"
	"github.com/corebank/corebank/payments"
)

func TestParseFeeSchedule(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		got, err := payments.ParseFeeSchedule(" bank-transfer = 100 + 25bps, momo-transfer=50\n# comment\nstablecoin-transfer=10BPS,*=1 ")
		if err != nil {
			t.Fatal(err)
		}
		want := payments.FeeSchedule{
			"bank-transfer":       {Fixed: 100, BasisPoints: 25},
			"momo-transfer":       {Fixed: 50},
			"stablecoin-transfer": {BasisPoints: 10},
			"*":                   {Fixed: 1},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
		if got.For("book-transfer") != (payments.Fee{Fixed: 1}) {
			t.Errorf("default fee %+v", got.For("book-transfer"))
		}
		again, err := payments.ParseFeeSchedule(got.String())
		if err != nil || !cmp.Equal(got, again) {
			t.Errorf("round trip %q: %v", got.String(), err)
		}
	})
	t.Run("OKEmpty", func(t *testing.T) {
		got, err := payments.ParseFeeSchedule("")
		if err != nil || len(got) != 0 {
			t.Fatalf("%v %v", got, err)
		}
	})
	for _, bad := range []string{"bank-transfer", "bank-transfer=", "wire=10", "bank-transfer=-1", "bank-transfer=1.5",
		"bank-transfer=10bps+20bps", "bank-transfer=1+2", "bank-transfer=20000bps", "bank-transfer=1,bank-transfer=2"} {
		t.Run("Err"+bad, func(t *testing.T) {
			if _, err := payments.ParseFeeSchedule(bad); err == nil {
				t.Errorf("%q parsed", bad)
			}
		})
	}
}

func TestFeeRoundsTowardZero(t *testing.T) {
	f := payments.Fee{Fixed: 100, BasisPoints: 25}
	for amount, want := range map[int64]int64{10_000: 125, 10_039: 125, 10_400: 126, 0: 100, 3: 100} {
		if got := f.Of(amount); got != want {
			t.Errorf("fee of %d: got %d, want %d", amount, got, want)
		}
	}
}

// TestJSONShapes checks the field names the API shows.
func TestJSONShapes(t *testing.T) {
	e := newMemEnv(t)
	a, d := setupUSD(t, e, 10_000)
	keys := func(v any) []string {
		t.Helper()
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		var out []string
		for k := range m {
			out = append(out, k)
		}
		return sortStrings(out)
	}
	tr, err := e.svc.CreateTransfer(ctx, corebank.As("ent1"), newTransfer(a, d, 100, "j1"))
	if err != nil {
		t.Fatal(err)
	}
	wantTransfer := sortStrings(strings.Fields("id account_id entity_id counterparty_id payment_detail_id type currency amount applicable_fee status status_reason payment_type narration unique_reference meta created updated"))
	if diff := cmp.Diff(wantTransfer, keys(tr)); diff != "" {
		t.Errorf("transfer (-want +got):\n%s", diff)
	}
	cp, _ := e.svc.GetCounterparty(ctx, corebank.As("ent1"), "", d.CounterpartyID)
	if diff := cmp.Diff(sortStrings(strings.Fields("id entity_id type nickname status profile meta deleted created updated")), keys(cp)); diff != "" {
		t.Errorf("counterparty (-want +got):\n%s", diff)
	}
	q, err := e.svc.CreateQuote(ctx, corebank.As("ent1"), payments.NewQuote{FromCurrency: "USD", ToCurrency: "EUR", AmountFrom: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(sortStrings(strings.Fields("id entity_id from to amount_from amount_to rate quote account_id created updated")), keys(q)); diff != "" {
		t.Errorf("quote (-want +got):\n%s", diff)
	}
	raw, _ := json.Marshal(q.Quote)
	want := `{"status":"active","expires_at":` + itoa64(start.Add(180*time.Second).UnixMilli()) + `,"valid_for":180,"used_at":null,"used_in_payment_id":null}`
	if string(raw) != want {
		t.Errorf("quote object %s, want %s", raw, want)
	}
	raw, _ = json.Marshal(q.Rate)
	if string(raw) != "0.91816" {
		t.Errorf("rate %s", raw)
	}
	var back payments.Quote
	if err := json.Unmarshal(mustJSON(t, q), &back); err != nil || !back.Rate.Equal(q.Rate.Decimal) {
		t.Errorf("quote round trip: %v %s", err, back.Rate)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func itoa64(v int64) string { b, _ := json.Marshal(v); return string(b) }

func sortStrings(s []string) []string {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s
}

// failingRail fails every transfer on its first check.
type failingRail struct{}

func (failingRail) Check(_ context.Context, t *payments.Transfer, asOf time.Time) (payments.PayoutResult, error) {
	return payments.PayoutResult{Status: payments.StatusFailed, StatusReason: "compliance_hold"}, nil
}

func TestPayoutProviderFailureRefunds(t *testing.T) {
	fees, _ := payments.ParseFeeSchedule("bank-transfer=30")
	e := newEnv(t, openMemory(t), &payments.Options{Payouts: failingRail{}, Fees: fees})
	a, d := setupUSD(t, e, 1_000)
	tr, err := e.svc.CreateTransfer(ctx, corebank.As("ent1"), newTransfer(a, d, 900, "f1"))
	if err != nil {
		t.Fatal(err)
	}
	n, err := e.svc.RunDue(ctx, e.clk.Now())
	if err != nil || n != 1 {
		t.Fatalf("RunDue %d %v", n, err)
	}
	got, _ := e.svc.GetTransfer(ctx, corebank.As("ent1"), "", tr.ID)
	if got.Status != "failed" || got.StatusReason != "compliance_hold" {
		t.Fatalf("%+v", got)
	}
	if b := e.balance(t, a.ID); b.Available() != 1_000 || b.Settled != 1_000 {
		t.Fatalf("%+v", b)
	}
	if b := e.balance(t, e.led.SystemAccount("USD", ledger.PurposeFees)); b.Settled != 0 || b.PendingCredits != 0 {
		t.Fatalf("fees kept: %+v", b)
	}
	evs, _ := e.led.Events(ctx, "", 100)
	if last := evs[len(evs)-1]; last.Type != "outflows.failed" {
		t.Errorf("last event %s", last.Type)
	}
	e.checkBalanced(t)
}

func TestCrossCurrencyReversalBalances(t *testing.T) {
	fees, _ := payments.ParseFeeSchedule("*=5+10bps")
	e := newEnv(t, openMemory(t), &payments.Options{Fees: fees})
	usc := e.account(t, "ent1", "USC")
	e.fund(t, usc, 500_000_000)
	cp := e.counterparty(t, "ent1")
	det := e.detail(t, "ent1", payments.NewPaymentDetail{CounterpartyID: cp.ID, PaymentMethod: "stablecoin-transfer", Currency: "UST",
		AccountHolderName: "Ada", BlockchainNetwork: "ETH_MAINNET", WalletAddress: evm})
	q, err := e.svc.CreateQuote(ctx, corebank.As("ent1"), payments.NewQuote{FromCurrency: "USC", ToCurrency: "UST", AmountTo: 123_456_789})
	if err != nil {
		t.Fatal(err)
	}
	in := newTransfer(usc, det, q.AmountTo, "sc1")
	in.FXQuoteID = q.ID
	tr, err := e.svc.CreateTransfer(ctx, corebank.As("ent1"), in)
	if err != nil {
		t.Fatal(err)
	}
	if tr.ApplicableFee != 5+q.AmountFrom*10/10_000 {
		t.Errorf("fee %d", tr.ApplicableFee)
	}
	for _, o := range []string{"successful", "reversed"} {
		if _, err := e.svc.SimulateTransfer(ctx, corebank.As("ent1"), "", tr.ID, o, ""); err != nil {
			t.Fatal(err)
		}
		e.checkBalanced(t)
	}
	if b := e.balance(t, usc.ID); b.Settled != 500_000_000 {
		t.Errorf("after reversal %+v", b)
	}
}
