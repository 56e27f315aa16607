package payments_test

import (
	"errors"
	"testing"

	"github.com/corebank/corebank"
	"github.com/corebank/corebank/payments"
)

// Valid coordinates (check digits verified by ledger/coordinates).
const (
	ibanDE = "DE36379068449631930531"
	ibanAE = "AE626941770561078226483"
	ibanGB = "GB20LNAT57504290449762"
	clabe  = "016213868903593446"
	evm    = "0x82602E46E21b946EC7de2E9021B25BF0AFD7eCc1"
	solana = "HyqRNhr8fNDxaUR3oou8E43E8zXCWggnABii3ihYUFFe"
)

func TestCreatePaymentDetail(t *testing.T) {
	e := newMemEnv(t)
	cp := e.counterparty(t, "ent1")
	book := e.account(t, "ent9", "USD")
	d := func(method, currency, country, scheme string, f func(*payments.NewPaymentDetail)) payments.NewPaymentDetail {
		n := payments.NewPaymentDetail{CounterpartyID: cp.ID, PaymentMethod: method, Currency: currency,
			Country: country, Scheme: scheme, AccountHolderName: "Ada Lovelace"}
		if f != nil {
			f(&n)
		}
		return n
	}
	ach := func(f func(*payments.NewPaymentDetail)) payments.NewPaymentDetail {
		n := achDetail(cp.ID)
		if f != nil {
			f(&n)
		}
		return n
	}
	fps := func(n *payments.NewPaymentDetail) { n.SortCode, n.AccountNumber = "040099", "12345678" }
	eft := func(n *payments.NewPaymentDetail) {
		n.InstitutionNumber, n.TransitNumber, n.AccountNumber = "999", "00011", "1234567"
	}
	momo := func(n *payments.NewPaymentDetail) { n.PhoneNumber = "+254712345678" }
	wallet := func(network, addr string) func(*payments.NewPaymentDetail) {
		return func(n *payments.NewPaymentDetail) { n.BlockchainNetwork, n.WalletAddress = network, addr }
	}
	ok := []struct {
		name       string
		in         payments.NewPaymentDetail
		wantScheme string
	}{
		{"ACH", ach(nil), "ach"},
		{"Wire", ach(func(n *payments.NewPaymentDetail) { n.Scheme = "wire"; n.AccountType = "savings" }), "wire"},
		{"RTP", ach(func(n *payments.NewPaymentDetail) { n.Scheme = "rtp"; n.BankName = "Bank" }), "rtp"},
		{"FPS", d("bank-transfer", "GBP", "GB", "fps", fps), "fps"},
		{"CHAPS", d("bank-transfer", "GBP", "GB", "chaps", fps), "chaps"},
		{"SEPAIBANField", d("bank-transfer", "EUR", "DE", "", func(n *payments.NewPaymentDetail) { n.IBAN = ibanDE }), "sepa"},
		{"SEPAIBANInAccountNumber", d("bank-transfer", "EUR", "DE", "sepa", func(n *payments.NewPaymentDetail) { n.AccountNumber = "de36 3790 6844 9631 9305 31" }), "sepa"},
		{"EFT", d("bank-transfer", "CAD", "CA", "", eft), "eft"},
		{"AEIBAN", d("bank-transfer", "AED", "AE", "", func(n *payments.NewPaymentDetail) { n.AccountNumber = ibanAE }), "uaefts"},
		{"SPEI", d("bank-transfer", "MXN", "MX", "mx_spei", func(n *payments.NewPaymentDetail) { n.AccountNumber = clabe }), "mx_spei"},
		{"SWIFTIBANCountry", d("bank-transfer", "USD", "GB", "swift", func(n *payments.NewPaymentDetail) {
			n.SwiftCode, n.IBAN = "NWBKGB2L", ibanGB
		}), "swift"},
		{"SWIFTAccountNumber", d("bank-transfer", "USD", "NG", "swift", func(n *payments.NewPaymentDetail) {
			n.SwiftCode, n.AccountNumber = "GTBINGLAXXX", "0123456789"
		}), "swift"},
		{"ZARDefaultsToSWIFT", d("bank-transfer", "ZAR", "ZA", "", func(n *payments.NewPaymentDetail) {
			n.SwiftCode, n.AccountNumber = "SBZAZAJJ", "1234567"
		}), "swift"},
		{"Momo", d("momo-transfer", "KES", "KE", "mpesa", momo), "mpesa"},
		{"MomoUganda", d("momo-transfer", "UGX", "UG", "mtn", func(n *payments.NewPaymentDetail) { n.PhoneNumber = "+256712345678" }), "mtn"},
		{"StablecoinEVM", d("stablecoin-transfer", "USC", "", "", wallet("BASE_MAINNET", evm)), "stablecoin"},
		{"StablecoinLowercaseEVM", d("stablecoin-transfer", "UST", "", "stablecoin", wallet("ETH_MAINNET", "0x82602e46e21b946ec7de2e9021b25bf0afd7ecc1")), "stablecoin"},
		{"StablecoinSolana", d("stablecoin-transfer", "USC", "", "", wallet("SOLANA_MAINNET", solana)), "stablecoin"},
		{"Book", d("book-transfer", "USD", "", "", func(n *payments.NewPaymentDetail) { n.AccountNumber = book.ServiceBAN }), "book"},
	}
	for _, tc := range ok {
		t.Run("OK"+tc.name, func(t *testing.T) {
			got, err := e.svc.CreatePaymentDetail(ctx, corebank.As("ent1"), tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if got.Scheme != tc.wantScheme || got.CounterpartyID != cp.ID || got.EntityID != "ent1" {
				t.Errorf("%+v", got)
			}
			again, err := e.svc.GetPaymentDetail(ctx, corebank.As("ent1"), "", got.ID)
			if err != nil || again.Scheme != got.Scheme {
				t.Errorf("get: %v %+v", err, again)
			}
		})
	}
	bad := []struct {
		name   string
		in     payments.NewPaymentDetail
		fields []string
	}{
		{"ErrMethodRequired", d("", "USD", "US", "ach", nil), []string{"payment_method"}},
		{"ErrMethodUnknown", d("cash", "USD", "US", "ach", nil), []string{"payment_method"}},
		{"ErrCurrencyUnknown", d("bank-transfer", "XYZ", "US", "ach", nil), []string{"currency"}},
		{"ErrHolderRequired", ach(func(n *payments.NewPaymentDetail) { n.AccountHolderName = "" }), []string{"account_holder_name"}},
		{"ErrCounterpartyRequired", ach(func(n *payments.NewPaymentDetail) { n.CounterpartyID = "" }), []string{"counterparty_id"}},
		{"ErrSchemeRequiredUSD", ach(func(n *payments.NewPaymentDetail) { n.Scheme = "" }), []string{"scheme"}},
		{"ErrSchemeRequiredGBP", d("bank-transfer", "GBP", "GB", "", fps), []string{"scheme"}},
		{"ErrSchemeWrongCurrency", ach(func(n *payments.NewPaymentDetail) { n.Currency = "GBP" }), []string{"scheme"}},
		{"ErrABAChecksum", ach(func(n *payments.NewPaymentDetail) { n.RoutingNumber = "091000018" }), []string{"routing_number"}},
		{"ErrAccountType", ach(func(n *payments.NewPaymentDetail) { n.AccountType = "current" }), []string{"account_type"}},
		{"ErrAccountTypeRequired", ach(func(n *payments.NewPaymentDetail) { n.AccountType = "" }), []string{"account_type"}},
		{"ErrACHCountry", ach(func(n *payments.NewPaymentDetail) { n.Country = "GB" }), []string{"country"}},
		{"ErrCountryRequired", ach(func(n *payments.NewPaymentDetail) { n.Country = "" }), []string{"country"}},
		{"ErrCountryInvalid", ach(func(n *payments.NewPaymentDetail) { n.Country = "ZZ" }), []string{"country"}},
		{"ErrForeignField", ach(func(n *payments.NewPaymentDetail) { n.SortCode = "040099" }), []string{"sort_code"}},
		{"ErrSortCode", d("bank-transfer", "GBP", "GB", "fps", func(n *payments.NewPaymentDetail) { fps(n); n.SortCode = "04-00-99" }), []string{"sort_code"}},
		{"ErrUKAccountNumber", d("bank-transfer", "GBP", "GB", "chaps", func(n *payments.NewPaymentDetail) { fps(n); n.AccountNumber = "1234567" }), []string{"account_number"}},
		{"ErrInstitutionTransit", d("bank-transfer", "CAD", "CA", "eft", func(n *payments.NewPaymentDetail) {
			eft(n)
			n.InstitutionNumber, n.TransitNumber = "99", "0001"
		}), []string{"institution_number", "transit_number"}},
		{"ErrIBANCheckDigits", d("bank-transfer", "EUR", "DE", "", func(n *payments.NewPaymentDetail) { n.IBAN = "DE37379068449631930531" }), []string{"iban"}},
		{"ErrIBANMissing", d("bank-transfer", "EUR", "DE", "", nil), []string{"iban"}},
		{"ErrIBANCountryMismatch", d("bank-transfer", "EUR", "FR", "", func(n *payments.NewPaymentDetail) { n.IBAN = ibanDE }), []string{"iban"}},
		{"ErrAEIBANInAccountNumber", d("bank-transfer", "AED", "AE", "", func(n *payments.NewPaymentDetail) { n.AccountNumber = "AE626941770561078226484" }), []string{"account_number"}},
		{"ErrBIC", d("bank-transfer", "USD", "GB", "swift", func(n *payments.NewPaymentDetail) { n.SwiftCode, n.IBAN = "NWBK", ibanGB }), []string{"swift_code"}},
		{"ErrBICRequired", d("bank-transfer", "USD", "NG", "swift", func(n *payments.NewPaymentDetail) { n.AccountNumber = "0123456789" }), []string{"swift_code"}},
		{"ErrSWIFTNeedsIBAN", d("bank-transfer", "USD", "DE", "swift", func(n *payments.NewPaymentDetail) {
			n.SwiftCode, n.AccountNumber = "DEUTDEFF", "12345678"
		}), []string{"account_number"}},
		{"ErrCLABECheckDigit", d("bank-transfer", "MXN", "MX", "", func(n *payments.NewPaymentDetail) { n.AccountNumber = "016213868903593447" }), []string{"account_number"}},
		{"ErrCLABELength", d("bank-transfer", "MXN", "MX", "", func(n *payments.NewPaymentDetail) { n.AccountNumber = "01621386890359344" }), []string{"account_number"}},
		{"ErrBankForStablecoin", d("bank-transfer", "USC", "US", "", nil), []string{"currency"}},
		{"ErrMomoPhone", d("momo-transfer", "KES", "KE", "mpesa", func(n *payments.NewPaymentDetail) { n.PhoneNumber = "0712345678" }), []string{"phone_number"}},
		{"ErrMomoPhoneCountry", d("momo-transfer", "KES", "KE", "mpesa", func(n *payments.NewPaymentDetail) { n.PhoneNumber = "+447700900123" }), []string{"phone_number"}},
		{"ErrMomoSchemeRequired", d("momo-transfer", "KES", "KE", "", momo), []string{"scheme"}},
		{"ErrMomoSchemeUnknown", d("momo-transfer", "KES", "KE", "paypal", momo), []string{"scheme"}},
		{"ErrMomoNetworkCountry", d("momo-transfer", "KES", "KE", "mtn", momo), []string{"country"}},
		{"ErrMomoCurrency", d("momo-transfer", "USD", "KE", "mpesa", momo), []string{"currency"}},
		{"ErrMomoCountryRequired", d("momo-transfer", "KES", "", "mpesa", momo), []string{"country"}},
		{"ErrWalletChecksum", d("stablecoin-transfer", "USC", "", "", wallet("ETH_MAINNET", "0x82602E46E21b946EC7de2E9021B25BF0AFD7eCC1")), []string{"wallet_address"}},
		{"ErrWalletEVMOnSolana", d("stablecoin-transfer", "USC", "", "", wallet("SOLANA_MAINNET", evm)), []string{"wallet_address"}},
		{"ErrSolanaOnEVM", d("stablecoin-transfer", "USC", "", "", wallet("POLYGON_MAINNET", solana)), []string{"wallet_address"}},
		{"ErrNetwork", d("stablecoin-transfer", "USC", "", "", wallet("BTC_MAINNET", evm)), []string{"blockchain_network"}},
		{"ErrStablecoinScheme", d("stablecoin-transfer", "USC", "", "ach", wallet("BASE_MAINNET", evm)), []string{"scheme"}},
		{"ErrStablecoinCurrency", d("stablecoin-transfer", "USD", "", "", wallet("BASE_MAINNET", evm)), []string{"currency"}},
		{"ErrBookUnknownBAN", d("book-transfer", "USD", "", "", func(n *payments.NewPaymentDetail) { n.AccountNumber = "0000000000" }), []string{"account_number"}},
		{"ErrBookCurrency", d("book-transfer", "EUR", "", "", func(n *payments.NewPaymentDetail) { n.AccountNumber = book.ServiceBAN }), []string{"currency"}},
		{"ErrBookRequired", d("book-transfer", "USD", "", "", nil), []string{"account_number"}},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.svc.CreatePaymentDetail(ctx, corebank.As("ent1"), tc.in)
			wantFields(t, err, tc.fields...)
		})
	}
	t.Run("ErrCounterpartyOfAnotherEntity", func(t *testing.T) {
		_, err := e.svc.CreatePaymentDetail(ctx, corebank.As("ent2"), ach(nil))
		if !errors.Is(err, payments.ErrCounterpartyNotFound) {
			t.Fatal(err)
		}
	})
	t.Run("ErrInactiveCounterparty", func(t *testing.T) {
		c2, err := e.svc.CreateCounterparty(ctx, corebank.As("ent1"), individual("Old", "Friend", "old@example.com"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.svc.DeactivateCounterparty(ctx, corebank.As("ent1"), "", c2.ID); err != nil {
			t.Fatal(err)
		}
		_, err = e.svc.CreatePaymentDetail(ctx, corebank.As("ent1"), ach(func(n *payments.NewPaymentDetail) { n.CounterpartyID = c2.ID }))
		wantFields(t, err, "counterparty_id")
	})
}

func TestUpdatePaymentDetail(t *testing.T) {
	e := newMemEnv(t)
	cp := e.counterparty(t, "ent1")
	det := e.detail(t, "ent1", achDetail(cp.ID))
	t.Run("OK", func(t *testing.T) {
		got, err := e.svc.UpdatePaymentDetail(ctx, corebank.As("ent1"), "", det.ID, payments.PaymentDetailPatch{AccountNumber: strp("987654321"), BankName: strp("First Bank")})
		if err != nil {
			t.Fatal(err)
		}
		if got.AccountNumber != "987654321" || got.BankName != "First Bank" || got.RoutingNumber != det.RoutingNumber || got.Scheme != "ach" {
			t.Errorf("%+v", got)
		}
	})
	t.Run("ErrRevalidated", func(t *testing.T) {
		_, err := e.svc.UpdatePaymentDetail(ctx, corebank.As("ent1"), "", det.ID, payments.PaymentDetailPatch{RoutingNumber: strp("123456789")})
		wantFields(t, err, "routing_number")
	})
	t.Run("SwitchRailClearsOldFields", func(t *testing.T) {
		got, err := e.svc.UpdatePaymentDetail(ctx, corebank.As("ent1"), "", det.ID, payments.PaymentDetailPatch{
			Currency: strp("GBP"), Country: strp("GB"), Scheme: strp("fps"), SortCode: strp("040099"), AccountNumber: strp("12345678")})
		if err != nil {
			t.Fatal(err)
		}
		if got.RoutingNumber != "" || got.AccountType != "" || got.SortCode != "040099" || got.Scheme != "fps" {
			t.Errorf("%+v", got)
		}
	})
	t.Run("ErrSwitchRailMissingFields", func(t *testing.T) {
		_, err := e.svc.UpdatePaymentDetail(ctx, corebank.As("ent1"), "", det.ID, payments.PaymentDetailPatch{Scheme: strp("chaps")})
		wantFields(t, err, "sort_code", "account_number")
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		_, err := e.svc.UpdatePaymentDetail(ctx, corebank.As("ent2"), "", det.ID, payments.PaymentDetailPatch{})
		if !errors.Is(err, payments.ErrPaymentDetailNotFound) {
			t.Fatal(err)
		}
	})
	t.Run("ListByCounterparty", func(t *testing.T) {
		second := e.detail(t, "ent1", achDetail(cp.ID))
		p, err := e.svc.ListPaymentDetails(ctx, corebank.As("ent1"), payments.PaymentDetailFilter{CounterpartyID: cp.ID}, corebank.ListOptions{Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Items) != 1 || p.Items[0].ID != det.ID || !p.HasNext {
			t.Fatalf("%+v", p)
		}
		p, err = e.svc.ListPaymentDetails(ctx, corebank.As("ent1"), payments.PaymentDetailFilter{CounterpartyID: cp.ID}, corebank.ListOptions{After: p.Next})
		if err != nil || len(p.Items) != 1 || p.Items[0].ID != second.ID || p.HasNext {
			t.Fatalf("%v %+v", err, p)
		}
		if _, err := e.svc.ListPaymentDetails(ctx, corebank.As("ent2"), payments.PaymentDetailFilter{CounterpartyID: cp.ID}, corebank.ListOptions{}); !errors.Is(err, payments.ErrCounterpartyNotFound) {
			t.Fatal(err)
		}
	})
}
