package payments_test

import (
	"errors"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/payments"
)

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func TestConvertRoundsTowardZero(t *testing.T) {
	cases := []struct {
		name              string
		rate              string
		expFrom, expTo    int
		amountFrom, amtTo int64
		wantFrom, wantTo  int64
	}{
		{"FromExact", "0.79", 2, 2, 10000, 0, 10000, 7900},
		{"FromTruncates", "0.7999", 2, 2, 101, 0, 101, 80},            // 80.7899 -> 80
		{"ToTruncates", "0.79", 2, 2, 0, 7901, 10001, 7901},           // 10001.26... -> 10001
		{"FiatToStablecoin", "1", 2, 6, 12345, 0, 12345, 123450000},   // cents -> 10^-6
		{"StablecoinToFiat", "1", 6, 2, 1234567, 0, 1234567, 123},     // 123.4567 -> 123
		{"StablecoinToFiatAmountTo", "1", 6, 2, 0, 123, 1230000, 123}, // exact
		{"ToZeroExponent", "3700", 2, 0, 101, 0, 101, 3737},           // 3737 UGX
		{"FromZeroExponent", "0.00027", 0, 2, 10000, 0, 10000, 270},
		{"AmountToZeroExponent", "0.0002702702", 0, 2, 0, 100, 3700, 100}, // 3700.0007... -> 3700
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, to := payments.Convert(dec(tc.rate), tc.expFrom, tc.expTo, tc.amountFrom, tc.amtTo)
			if f != tc.wantFrom || to != tc.wantTo {
				t.Errorf("got (%d, %d), want (%d, %d)", f, to, tc.wantFrom, tc.wantTo)
			}
		})
	}
}

func TestCreateQuote(t *testing.T) {
	e := newMemEnv(t)
	t.Run("OKAmountFrom", func(t *testing.T) {
		q, err := e.svc.CreateQuote(ctx, corebank.As("ent1"), payments.NewQuote{FromCurrency: "USD", ToCurrency: "GBP", AmountFrom: 10_000})
		if err != nil {
			t.Fatal(err)
		}
		// mid 0.79 less 20 bps: 0.78842.
		if !q.Rate.Equal(dec("0.78842")) || q.AmountFrom != 10_000 || q.AmountTo != 7884 {
			t.Errorf("rate %s amounts %d -> %d", q.Rate, q.AmountFrom, q.AmountTo)
		}
		if q.Quote.Status != "active" || q.Quote.ValidFor != 180 || q.Quote.ExpiresAt != start.Add(180*time.Second).UnixMilli() || q.Quote.UsedAt != nil || q.Quote.UsedInPaymentID != nil {
			t.Errorf("%+v", q.Quote)
		}
	})
	t.Run("OKAmountTo", func(t *testing.T) {
		q, err := e.svc.CreateQuote(ctx, corebank.As("ent1"), payments.NewQuote{FromCurrency: "USD", ToCurrency: "GBP", AmountTo: 7884})
		if err != nil {
			t.Fatal(err)
		}
		// 7884 / 0.78842 = 9999.746... -> 9999
		if q.AmountFrom != 9999 || q.AmountTo != 7884 {
			t.Errorf("%d -> %d", q.AmountFrom, q.AmountTo)
		}
	})
	t.Run("OKStablecoinExponents", func(t *testing.T) {
		q, err := e.svc.CreateQuote(ctx, corebank.As("ent1"), payments.NewQuote{FromCurrency: "USD", ToCurrency: "USC", AmountFrom: 250})
		if err != nil {
			t.Fatal(err)
		}
		if !q.Rate.Equal(dec("1")) || q.AmountTo != 2_500_000 {
			t.Errorf("rate %s to %d", q.Rate, q.AmountTo)
		}
		q, err = e.svc.CreateQuote(ctx, corebank.As("ent1"), payments.NewQuote{FromCurrency: "UST", ToCurrency: "USD", AmountFrom: 1_234_567})
		if err != nil {
			t.Fatal(err)
		}
		if q.AmountTo != 123 {
			t.Errorf("to %d", q.AmountTo)
		}
	})
	t.Run("OKEveryPair", func(t *testing.T) {
		for _, f := range payments.Currencies() {
			for _, to := range payments.Currencies() {
				if f.Code == to.Code {
					continue
				}
				q, err := e.svc.CreateQuote(ctx, corebank.As("ent1"), payments.NewQuote{FromCurrency: f.Code, ToCurrency: to.Code, AmountFrom: 1_000_000})
				if err != nil {
					t.Fatalf("%s->%s: %v", f.Code, to.Code, err)
				}
				if !q.Rate.IsPositive() || q.AmountTo <= 0 {
					t.Errorf("%s->%s: %+v", f.Code, to.Code, q)
				}
			}
		}
	})
	bad := []struct {
		name   string
		in     payments.NewQuote
		fields []string
	}{
		{"ErrSameCurrency", payments.NewQuote{FromCurrency: "USD", ToCurrency: "USD", AmountFrom: 100}, []string{"to_currency"}},
		{"ErrUnsupportedTo", payments.NewQuote{FromCurrency: "USD", ToCurrency: "JPY", AmountFrom: 100}, []string{"to_currency"}},
		{"ErrUnsupportedFrom", payments.NewQuote{FromCurrency: "BTC", ToCurrency: "USD", AmountFrom: 100}, []string{"from_currency"}},
		{"ErrBothAmounts", payments.NewQuote{FromCurrency: "USD", ToCurrency: "EUR", AmountFrom: 100, AmountTo: 100}, []string{"amount_to"}},
		{"ErrNoAmount", payments.NewQuote{FromCurrency: "USD", ToCurrency: "EUR"}, []string{"amount_from"}},
		{"ErrAmountFromBelowMinimum", payments.NewQuote{FromCurrency: "USD", ToCurrency: "EUR", AmountFrom: 99}, []string{"amount_from"}},
		{"ErrAmountFromAboveMaximum", payments.NewQuote{FromCurrency: "USD", ToCurrency: "EUR", AmountFrom: 1 << 62}, []string{"amount_from"}},
		{"ErrAmountToBelowMinimumAmountFrom", payments.NewQuote{FromCurrency: "USD", ToCurrency: "EUR", AmountTo: 1}, []string{"amount_to"}},
		{"ErrRequired", payments.NewQuote{AmountFrom: 100}, []string{"from_currency", "to_currency"}},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.svc.CreateQuote(ctx, corebank.As("ent1"), tc.in)
			wantFields(t, err, tc.fields...)
		})
	}
	t.Run("ErrAccountOfAnotherEntity", func(t *testing.T) {
		a := e.account(t, "ent2", "USD")
		_, err := e.svc.CreateQuote(ctx, corebank.As("ent1"), payments.NewQuote{FromCurrency: "USD", ToCurrency: "EUR", AmountFrom: 100, AccountID: a.ID})
		if !errors.Is(err, payments.ErrAccountNotFound) {
			t.Fatal(err)
		}
		_, err = e.svc.CreateQuote(ctx, corebank.As("ent2"), payments.NewQuote{FromCurrency: "GBP", ToCurrency: "EUR", AmountFrom: 100, AccountID: a.ID})
		wantFields(t, err, "account_id")
	})
}

func TestQuoteProviderOutage(t *testing.T) {
	e := newMemEnv(t)
	e.svc.Rates().(*payments.SandboxRates).SetOutage(true)
	_, err := e.svc.CreateQuote(ctx, corebank.As("ent1"), payments.NewQuote{FromCurrency: "USD", ToCurrency: "EUR", AmountFrom: 100})
	if !errors.Is(err, payments.ErrFXProviderUnavailable) || corebank.KindOf(err) != corebank.KindUnavailable {
		t.Fatalf("want fx_provider_unavailable, got %v", err)
	}
	e.svc.Rates().(*payments.SandboxRates).SetOutage(false)
	if _, err := e.svc.CreateQuote(ctx, corebank.As("ent1"), payments.NewQuote{FromCurrency: "USD", ToCurrency: "EUR", AmountFrom: 100}); err != nil {
		t.Fatal(err)
	}
}

func TestQuoteExpiryAndValidFor(t *testing.T) {
	e := newEnv(t, openMemory(t), &payments.Options{QuoteValidity: 30 * time.Second})
	q, err := e.svc.CreateQuote(ctx, corebank.As("ent1"), payments.NewQuote{FromCurrency: "USD", ToCurrency: "EUR", AmountFrom: 100})
	if err != nil {
		t.Fatal(err)
	}
	if q.Quote.ValidFor != 30 {
		t.Fatalf("valid_for %d", q.Quote.ValidFor)
	}
	e.clk.Add(10500 * time.Millisecond)
	got, _ := e.svc.GetQuote(ctx, corebank.As("ent1"), "", q.ID)
	if got.Quote.ValidFor != 19 || got.Quote.Status != "active" {
		t.Fatalf("after 10.5 s: %+v", got.Quote)
	}
	e.clk.Add(19500 * time.Millisecond)
	got, _ = e.svc.GetQuote(ctx, corebank.As("ent1"), "", q.ID)
	if got.Quote.ValidFor != 0 || got.Quote.Status != "expired" {
		t.Fatalf("at expiry: %+v", got.Quote)
	}
	n, err := e.svc.RunDue(ctx, e.clk.Now())
	if err != nil || n != 1 {
		t.Fatalf("RunDue %d %v", n, err)
	}
	got, _ = e.svc.GetQuote(ctx, corebank.As("ent1"), "", q.ID)
	if got.Quote.Status != "expired" || got.Updated != e.clk.Now().UnixMilli() {
		t.Fatalf("stored: %+v", got)
	}
	if _, err := e.svc.GetQuote(ctx, corebank.As("ent2"), "", q.ID); !errors.Is(err, payments.ErrQuoteNotFound) {
		t.Fatal(err)
	}
}
